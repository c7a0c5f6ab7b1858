#include "gateway/models/model_catalog.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <utility>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway {
namespace {

constexpr int kDefaultKvMemoryMb = 1024;  // smallmind-worker's --kv-memory-mb default

shared::Status BadFlag(std::string_view text, std::string_view why) {
  return shared::InvalidArgument(fmt::format(
      "--model `{}`: {}; give [NAME=]SPEC[,workers=N,threads=N,kv-memory-mb=N,chat-template=FILE]",
      text, why));
}

std::optional<int> ParsePositive(std::string_view digits, int max) {
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || value < 1 || value > max) {
    return std::nullopt;
  }
  return value;
}

// One ",key=value" option of a --model flag into `entry`.
shared::Status ApplyOption(std::string_view text, std::string_view option, CatalogEntry& entry) {
  const size_t eq = option.find('=');
  if (eq == std::string_view::npos)
    return BadFlag(text, fmt::format("`{}` is not key=value", option));
  const std::string_view key = option.substr(0, eq);
  if (key == "chat-template") {
    if (eq + 1 == option.size()) return BadFlag(text, "chat-template needs a FILE");
    entry.chat_template_file = std::string(option.substr(eq + 1));
    return shared::Status::Ok();
  }
  int* field = key == "workers"        ? &entry.workers
               : key == "threads"      ? &entry.threads
               : key == "kv-memory-mb" ? &entry.kv_memory_mb
                                       : nullptr;
  if (!field) {
    return BadFlag(
        text,
        fmt::format("unknown option `{}` (workers, threads, kv-memory-mb, chat-template)", key));
  }
  const int max = key == "kv-memory-mb" ? (1 << 24) : 1024;
  std::optional<int> value = ParsePositive(option.substr(eq + 1), max);
  if (!value) return BadFlag(text, fmt::format("{} must be an integer in [1, {}]", key, max));
  *field = *value;
  return shared::Status::Ok();
}

uint64_t FileBytes(const std::string& spec) {
  if (spec.starts_with("builtin:")) return 0;
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(spec, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

}  // namespace

shared::Result<CatalogEntry> ParseModelFlag(std::string_view text) {
  CatalogEntry entry;
  std::string_view head = text.substr(0, text.find(','));
  // NAME= only when what precedes '=' cannot be part of a path or a builtin: spec.
  const size_t eq = head.find('=');
  if (eq != std::string_view::npos && head.substr(0, eq).find_first_of("/:") == std::string::npos) {
    if (eq == 0) return BadFlag(text, "the name before `=` is empty");
    entry.names.emplace_back(head.substr(0, eq));
    head.remove_prefix(eq + 1);
  }
  if (head.empty()) return BadFlag(text, "no model SPEC");
  entry.spec = std::string(head);
  if (entry.names.empty()) {
    const size_t slash = head.rfind('/');
    entry.names.emplace_back(slash == std::string_view::npos ? head : head.substr(slash + 1));
  }
  std::string_view rest = text.substr(std::min(text.size(), text.find(',')));
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the comma
    const std::string_view option = rest.substr(0, rest.find(','));
    SM_RETURN_IF_ERROR(ApplyOption(text, option, entry));
    rest.remove_prefix(option.size());
  }
  entry.file_bytes = FileBytes(entry.spec);
  return entry;
}

shared::Result<std::vector<CatalogEntry>> ScanModelsDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    return shared::InvalidArgument(
        fmt::format("--models-dir {}: cannot be read ({})", dir, ec.message()));
  }
  std::vector<std::filesystem::path> files;
  for (const auto& item : it) {
    if (item.path().extension() == ".gguf" && item.is_regular_file(ec))
      files.push_back(item.path());
  }
  if (files.empty()) {
    return shared::InvalidArgument(fmt::format("--models-dir {}: holds no *.gguf file", dir));
  }
  std::sort(files.begin(), files.end());
  std::vector<CatalogEntry> entries;
  for (const std::filesystem::path& file : files) {
    CatalogEntry entry;
    entry.names = {file.stem().string()};
    entry.spec = file.string();
    entry.file_bytes = FileBytes(entry.spec);
    entries.push_back(std::move(entry));
  }
  return entries;
}

int KvMemoryMbFromWorkerFlags(const std::vector<std::string>& worker_flags) {
  constexpr std::string_view kFlag = "--kv-memory-mb";
  int mb = kDefaultKvMemoryMb;
  for (size_t i = 0; i < worker_flags.size(); ++i) {
    std::string_view flag = worker_flags[i];
    std::string_view value;
    if (flag == kFlag && i + 1 < worker_flags.size()) {
      value = worker_flags[i + 1];
    } else if (flag.starts_with(kFlag) && flag.size() > kFlag.size() && flag[kFlag.size()] == '=') {
      value = flag.substr(kFlag.size() + 1);
    } else {
      continue;
    }
    if (std::optional<int> parsed = ParsePositive(value, 1 << 24)) mb = *parsed;
  }
  return mb;
}

uint64_t EstimateResidentBytes(const CatalogEntry& entry, int workers, int kv_mb) {
  const uint64_t n = static_cast<uint64_t>(entry.workers > 0 ? entry.workers : workers);
  const uint64_t kv = static_cast<uint64_t>(entry.kv_memory_mb > 0 ? entry.kv_memory_mb : kv_mb);
  return entry.file_bytes + n * (kv << 20);
}

SupervisorOptions SupervisorOptionsFor(const CatalogEntry& entry, SupervisorOptions base) {
  if (entry.threads > 0) base.threads_per_worker = entry.threads;
  if (entry.kv_memory_mb > 0) {
    // Last wins in the worker's parser: the model's own budget over --worker-flags'.
    base.worker_flags.push_back("--kv-memory-mb");
    base.worker_flags.push_back(std::to_string(entry.kv_memory_mb));
  }
  return base;
}

shared::Result<ModelCatalog> ModelCatalog::Build(std::vector<CatalogEntry> entries,
                                                 const std::vector<std::string>& served_names) {
  if (entries.empty())
    return shared::InvalidArgument("no model to serve: give --model or --models-dir");
  if (!served_names.empty()) entries.front().names = served_names;
  std::vector<std::string_view> seen;
  for (const CatalogEntry& entry : entries) {
    for (const std::string& name : entry.names) {
      if (name.empty()) return shared::InvalidArgument("a served model name is empty");
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
        return shared::InvalidArgument(fmt::format(
            "the model name `{}` is given twice (--model NAME=SPEC, --models-dir file stems and "
            "--served-model-name must all differ)",
            name));
      }
      seen.push_back(name);
    }
  }
  ModelCatalog catalog;
  catalog.entries_ = std::move(entries);
  return catalog;
}

shared::Result<ModelCatalog> ModelCatalog::FromFlags(const std::vector<std::string>& model_flags,
                                                     const std::string& models_dir,
                                                     const std::vector<std::string>& served_names) {
  std::vector<CatalogEntry> entries;
  for (const std::string& flag : model_flags) {
    SM_ASSIGN_OR_RETURN(CatalogEntry entry, ParseModelFlag(flag));
    entries.push_back(std::move(entry));
  }
  if (!models_dir.empty()) {
    SM_ASSIGN_OR_RETURN(std::vector<CatalogEntry> scanned, ScanModelsDir(models_dir));
    for (CatalogEntry& entry : scanned) entries.push_back(std::move(entry));
  }
  return Build(std::move(entries), served_names);
}

int ModelCatalog::Find(std::string_view name) const {
  if (name.empty()) return entries_.empty() ? -1 : 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const auto& names = entries_[i].names;
    if (std::find(names.begin(), names.end(), name) != names.end()) return static_cast<int>(i);
  }
  return -1;
}

std::string ModelCatalog::NameList() const {
  std::string list;
  for (const CatalogEntry& entry : entries_) {
    for (const std::string& name : entry.names) {
      list += fmt::format("{}`{}`", list.empty() ? "" : ", ", name);
    }
  }
  return list;
}

shared::Status ModelCatalog::NotServed(std::string_view name) const {
  return shared::NotFound(
      fmt::format("the model `{}` is not served here; this server serves {}", name, NameList()));
}

}  // namespace smallmind::gateway

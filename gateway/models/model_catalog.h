// ModelCatalog: the models one gateway serves by name (issue 45): each `--model
// [NAME=]SPEC[,workers=N,threads=N,kv-memory-mb=N,chat-template=FILE]` and every *.gguf of
// `--models-dir`, with the memory each is estimated to hold once loaded (for --memory-budget).
// Built once in Gateway::Start from the flags, then read-only; thread-safe for reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/workers/worker_options.h"
#include "shared/status.h"

namespace smallmind::gateway {

// One served model, before anything is loaded.
struct CatalogEntry {
  // The names requests may give (the first is its id: /v1/models, responses, metrics); attached
  // workers' (--worker-endpoints) one model is named by what they report (Gateway::BuildCatalog).
  std::vector<std::string> names;
  std::string spec;         // builtin:NAME, a .gguf or a llama2.c .bin; "" = attached workers
  int workers = 0;          // 0 = --workers
  int threads = 0;          // 0 = --threads-per-worker
  int kv_memory_mb = 0;     // 0 = the workers' own (--worker-flags --kv-memory-mb, else 1024)
  uint64_t file_bytes = 0;  // the spec's file size (0 for builtin: models and attached workers)
  // A Jinja chat template file for this model's chat doors; "" = --chat-template, else the
  // model's own `tokenizer.chat_template` (gateway/http/chat_settings.h).
  std::string chat_template_file;

  const std::string& id() const { return names.front(); }
};

// "[NAME=]SPEC[,workers=N,threads=N,kv-memory-mb=N,chat-template=FILE]". NAME defaults to SPEC's
// file name without its folder ("/m/llama.Q4_0.gguf" -> "llama.Q4_0.gguf"; "builtin:tiny" stays),
// as the gateway named its one model before. INVALID_ARGUMENT naming --model otherwise.
shared::Result<CatalogEntry> ParseModelFlag(std::string_view text);

// Every *.gguf directly in `dir`, sorted by name, each named by its file stem ("llama.gguf" ->
// "llama"). INVALID_ARGUMENT when `dir` cannot be read or holds none.
shared::Result<std::vector<CatalogEntry>> ScanModelsDir(const std::string& dir);

// The MiB of KV pool a worker gets from `worker_flags` (`--kv-memory-mb N` or
// `--kv-memory-mb=N`), else the worker's default of 1024.
int KvMemoryMbFromWorkerFlags(const std::vector<std::string>& worker_flags);

// What `entry` holds in memory once loaded with `workers` workers of `kv_mb` MiB of KV each (its
// own settings win): the file once (its pages are shared by the workers) plus every KV pool.
uint64_t EstimateResidentBytes(const CatalogEntry& entry, int workers, int kv_mb);

// `base` (--threads-per-worker, --worker-flags) with `entry`'s own threads and KV budget applied.
SupervisorOptions SupervisorOptionsFor(const CatalogEntry& entry, SupervisorOptions base);

class ModelCatalog {
 public:
  ModelCatalog() = default;
  // `entries`: --model flags first (in order), then --models-dir's; `served_names`
  // (--served-model-name) rename the first. INVALID_ARGUMENT when two share a name.
  static shared::Result<ModelCatalog> Build(std::vector<CatalogEntry> entries,
                                            const std::vector<std::string>& served_names);
  // Build from the flags: each of `model_flags` (ParseModelFlag), then `models_dir` ("" = none).
  static shared::Result<ModelCatalog> FromFlags(const std::vector<std::string>& model_flags,
                                                const std::string& models_dir,
                                                const std::vector<std::string>& served_names);

  const std::vector<CatalogEntry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  // The entry a request's `model` names: "" = the first (the default model); -1 = none.
  int Find(std::string_view name) const;
  // Every name, entry by entry: "`a`, `b`", for NOT_FOUND messages.
  std::string NameList() const;
  // NOT_FOUND "the model `x` is not served here; this server serves `a`, `b`".
  shared::Status NotServed(std::string_view name) const;

 private:
  std::vector<CatalogEntry> entries_;
};

}  // namespace smallmind::gateway

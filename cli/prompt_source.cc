#include "cli/prompt_source.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace smallmind::cli {
namespace {

// Reads a whole stream, refusing more than PromptSource::kMaxBytes.
shared::Result<std::string> ReadAll(std::FILE* stream, const std::string& what) {
  std::string text;
  char chunk[1 << 16];
  while (true) {
    const size_t n = std::fread(chunk, 1, sizeof(chunk), stream);
    text.append(chunk, n);
    if (text.size() > PromptSource::kMaxBytes) {
      return shared::InvalidArgument(what + " holds more than " +
                                     std::to_string(PromptSource::kMaxBytes >> 20) + " MiB");
    }
    if (n < sizeof(chunk)) break;
  }
  if (std::ferror(stream)) {
    return shared::InvalidArgument("cannot read " + what + ": " + std::strerror(errno));
  }
  return text;
}

}  // namespace

void PromptSource::AddFlags(CLI::App& command, const std::string& name,
                            const std::string& meaning) {
  name_ = name;
  command.add_option(name, arguments_, meaning + "; - reads it from stdin")->default_str("");
  command.add_option("--prompt-file", file_, "read the " + name + " from FILE (- is stdin)")
      ->type_name("FILE")
      ->default_str("");
}

shared::Status PromptSource::Validate() const {
  if (!arguments_.empty() && !file_.empty()) {
    return shared::InvalidArgument("give the " + name_ +
                                   " once: as an argument or with --prompt-file, not both");
  }
  if (arguments_.size() > 1) {
    return shared::InvalidArgument("the " + name_ + " is one argument, got " +
                                   std::to_string(arguments_.size()) + " (quote text with spaces)");
  }
  if (!given()) {
    return shared::InvalidArgument("no " + name_ +
                                   ": give \"TEXT\", - (stdin) or --prompt-file FILE");
  }
  return shared::Status::Ok();
}

shared::Result<std::string> PromptSource::Read() const {
  const std::string path = file_.empty() ? arguments_.at(0) : file_;
  if (file_.empty() && path != "-") return path;
  if (path == "-") return ReadAll(stdin, "stdin");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) {
    return shared::InvalidArgument("--prompt-file " + path + ": " + std::strerror(errno));
  }
  return ReadAll(file.get(), "--prompt-file " + path);
}

}  // namespace smallmind::cli

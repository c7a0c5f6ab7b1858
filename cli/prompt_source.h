// PromptSource: where a command's text comes from: one positional argument, "-" for stdin, or
// --prompt-file FILE ("-" is stdin too), so prompts longer than the shell's ~128 KiB argument cap
// can be sent. Bound to a command's flags; not thread-safe.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "shared/status.h"

namespace smallmind::cli {

class PromptSource {
 public:
  // Larger inputs are refused rather than read (a gateway takes 4 MiB messages by default).
  static constexpr size_t kMaxBytes = size_t{64} << 20;

  // Adds the positional `name` (e.g. "prompt") and --prompt-file to `command`.
  void AddFlags(CLI::App& command, const std::string& name, const std::string& meaning);

  // Exactly one source was given: one argument or the file, not both, not several arguments.
  shared::Status Validate() const;
  bool given() const { return !arguments_.empty() || !file_.empty(); }
  // The positional arguments as given (tokenize --decode reads ids from them).
  const std::vector<std::string>& arguments() const { return arguments_; }
  const std::string& file() const { return file_; }

  // The text: the argument, or all of stdin / the file.
  shared::Result<std::string> Read() const;

 private:
  std::string name_ = "prompt";  // of the positional, for messages
  std::vector<std::string> arguments_;
  std::string file_;
};

}  // namespace smallmind::cli

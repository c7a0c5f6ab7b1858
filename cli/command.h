// Command: one subcommand of the `smallmind` client (generate, tokenize, info, health, bench,
// chat, models).
// Its constructor adds the subcommand and binds its flags to members; after the command line is
// parsed, main() calls Validate() (a usage error, exit 2) and then Run(). Built in main(), used by
// one thread; not movable (CLI11 holds pointers to the members).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "shared/status.h"

namespace smallmind::cli {

class Command {
 public:
  Command(CLI::App& parent, const std::string& name, const std::string& description)
      : app_(parent.add_subcommand(name, description)) {}
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  // Whether the command line named this command.
  bool chosen() const { return app_->parsed(); }
  const CLI::App& subcommand() const { return *app_; }

  // Checks what CLI11 cannot: combinations of flags and arguments, ranges.
  virtual shared::Status Validate() const { return shared::Status::Ok(); }
  // Does the work; returns the process exit code, or an error to print (exit 1).
  virtual shared::Result<int> Run() const = 0;

 protected:
  CLI::App& app() { return *app_; }

 private:
  CLI::App* app_;  // owned by the parent app
};

}  // namespace smallmind::cli

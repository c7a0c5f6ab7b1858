// `smallmind info`: prints the served model's ModelInfo, one "field: value" line per field.
// See cli/command.h.
#pragma once

#include "cli/client.h"
#include "cli/command.h"

namespace smallmind::cli {

class InfoCommand : public Command {
 public:
  explicit InfoCommand(CLI::App& parent);
  shared::Result<int> Run() const override;

 private:
  ClientFlags client_;
};

}  // namespace smallmind::cli

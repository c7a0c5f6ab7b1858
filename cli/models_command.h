// `smallmind models`: lists the models a gateway serves (GET /v1/models on its HTTP door), one
// line each with its facts: architecture, quantization, parameters, context length.
// See cli/command.h.
#pragma once

#include "cli/command.h"
#include "cli/http_flags.h"

namespace smallmind::cli {

class ModelsCommand : public Command {
 public:
  explicit ModelsCommand(CLI::App& parent);
  shared::Result<int> Run() const override;

 private:
  HttpFlags http_;
  bool json_ = false;
};

}  // namespace smallmind::cli

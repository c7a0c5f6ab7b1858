// `smallmind health`: asks grpc.health.v1.Health/Check of a gateway or a worker; prints SERVING
// (exit 0) or NOT_SERVING (exit 1). See cli/command.h.
#pragma once

#include "cli/client.h"
#include "cli/command.h"

namespace smallmind::cli {

class HealthCommand : public Command {
 public:
  explicit HealthCommand(CLI::App& parent);
  shared::Result<int> Run() const override;

 private:
  ClientFlags client_;
};

}  // namespace smallmind::cli

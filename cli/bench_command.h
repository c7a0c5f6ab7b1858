// `smallmind bench`: the load generator against a server (cli/load_bench.h), or with --offline
// the engine in-process, llama-bench style (cli/offline_bench.h). See cli/command.h.
#pragma once

#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/generate_command.h"
#include "cli/load_bench.h"
#include "cli/offline_bench.h"
#include "cli/prompt_source.h"

namespace smallmind::cli {

class BenchCommand : public Command {
 public:
  explicit BenchCommand(CLI::App& parent);
  shared::Status Validate() const override;
  shared::Result<int> Run() const override;

 private:
  shared::Result<int> RunLoad() const;
  shared::Result<int> RunOffline() const;

  ClientFlags client_;
  // Against a server.
  PromptSource prompt_;
  SamplingFlags sampling_;
  LoadBenchOptions load_;  // its request and api_key are filled in by RunLoad
  // --offline.
  bool offline_ = false;
  OfflineBenchOptions engine_;  // its modes come from paths_, recompute from no_recompute_
  std::vector<std::string> paths_ = {"par", "det"};
  bool no_recompute_ = false;
};

}  // namespace smallmind::cli

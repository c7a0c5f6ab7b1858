// `smallmind bench`: the load generator against a server (cli/load_bench.h), or with --offline
// the engine in-process, llama-bench style (cli/offline_bench.h). See cli/command.h.
#pragma once

#include <memory>
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
  // The flags of a load test against a server (returned, so --offline can exclude them) and
  // those of --offline (which need it).
  std::vector<CLI::Option*> AddLoadFlags(CLI::App& a);
  void AddOfflineFlags(CLI::App& a, CLI::Option* offline);
  // One of: a prompt (or --prompt-file), --prompt-list, --prompt-tokens / --shared-prefixes; the
  // error names what was given.
  shared::Status CheckOnePromptSource() const;
  shared::Result<int> RunLoad() const;
  shared::Result<int> RunOffline() const;
  // The plan of the run from the flags; asks the server for its vocabulary with --prompt-tokens.
  shared::Result<LoadPlan> MakePlan(const std::shared_ptr<grpc::Channel>& channel) const;

  ClientFlags client_;
  // Against a server.
  PromptSource prompt_;
  std::string prompt_list_;       // --prompt-list: one prompt per line
  std::string prompt_tokens_;     // --prompt-tokens N|MIN:MAX
  uint32_t shared_prefixes_ = 0;  // --shared-prefixes N
  uint32_t prefix_tokens_ = 512;  // --prefix-tokens T
  std::string max_tokens_;  // --max-tokens N|MIN:MAX (bench's own, in place of SamplingFlags')
  std::string duration_;    // --duration
  double cancel_fraction_ = 0;
  bool worker_ = false;  // --addr is a worker: Worker.Submit without the gateway
  bool json_ = false;
  SamplingFlags sampling_;
  LoadBenchOptions load_;  // its duration and api_key are filled in by RunLoad
  // --offline.
  bool offline_ = false;
  OfflineBenchOptions engine_;  // its modes come from paths_, recompute from no_recompute_
  std::vector<std::string> paths_ = {"par", "det"};
  bool no_recompute_ = false;
};

}  // namespace smallmind::cli

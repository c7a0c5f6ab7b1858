// `smallmind generate`: streams one completion of a prompt to stdout (summary line on stderr).
// SamplingFlags are the request flags `generate` and `bench` share. See cli/command.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/prompt_source.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::cli {

// What the request asks for; unset values are left to the server's defaults (inference.proto).
struct SamplingFlags {
  uint32_t max_tokens = 0;  // 0 = the server's default
  std::optional<float> temperature;
  std::optional<uint64_t> seed;
  uint32_t top_k = 0;
  std::optional<float> top_p;
  bool deterministic = false;
  bool no_speculation = false;
  bool json = false;        // response_format JSON_OBJECT
  std::string json_schema;  // response_format JSON_SCHEMA with this schema (empty: none)
  std::vector<std::string> stops;
  std::map<uint32_t, float> logit_bias;  // token id -> bias (sampling.logit_bias)

  // Adds the flags to `command`; returns them (bench --offline excludes them).
  std::vector<CLI::Option*> AddFlags(CLI::App& command);
  // --json-schema: the schema itself when it starts with '{', else the file it names.
  void SetJsonSchema(const std::string& arg);
  v1::GenerateRequest BuildRequest(std::string prompt) const;
};

class GenerateCommand : public Command {
 public:
  explicit GenerateCommand(CLI::App& parent);
  shared::Status Validate() const override;
  shared::Result<int> Run() const override;

 private:
  ClientFlags client_;
  PromptSource prompt_;
  SamplingFlags sampling_;
  bool print_ids_ = false;
};

}  // namespace smallmind::cli

// LoadPlan: what each request of a `smallmind bench` run sends, decided up front from a seed so a
// run can be repeated: its prompt (fixed text, a random line of a prompt list, or random token
// ids of a length drawn from a range, optionally after one of N shared prefixes), its
// max_new_tokens (drawn from a range), and whether and
// after how many tokens the client cancels it. Also the flag value parsers for ranges ("32:512")
// and durations ("2m"). Built once before the run; Request() is const and thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::cli {

// An inclusive range of counts; "N" is the range [N, N].
struct CountRange {
  uint32_t min = 0;
  uint32_t max = 0;
};

// "N" or "MIN:MAX" (MIN <= MAX), every value in [lo, hi]; `flag` names the flag in errors.
shared::Result<CountRange> ParseCountRange(std::string_view flag, std::string_view text,
                                           uint32_t lo, uint32_t hi);
// "90", "90s", "500ms", "2m", "1h" (a bare number is seconds); positive. `flag` as above.
shared::Result<std::chrono::duration<double>> ParseDuration(std::string_view flag,
                                                            std::string_view text);

struct LoadPlanOptions {
  // Exactly one prompt source: `prompts` (one is a fixed prompt; several are picked at random),
  // or `prompt_tokens` > 0 random token ids in [kFirstPlainTokenId, vocab_size).
  std::vector<std::string> prompts;
  CountRange prompt_tokens;
  uint32_t vocab_size = 0;
  // With token prompts: > 0 puts one of this many shared prefixes of `prefix_tokens` random ids
  // before each request's own ids (request i takes prefix i mod shared_prefixes), the mix of
  // shared system prompts that prefix caching and cache-aware routing are measured with.
  uint32_t shared_prefixes = 0;
  uint32_t prefix_tokens = 0;
  CountRange max_tokens;                // 0:0 = the server's default
  double cancel_fraction = 0;           // share of requests the client cancels mid-stream
  uint64_t seed = 0;                    // of the plan's draws (not the requests' sampling seeds)
  smallmind::v1::GenerateRequest base;  // sampling and stopping fields every request carries
};

// What request `index` does.
struct PlannedRequest {
  smallmind::v1::GenerateRequest request;
  // Cancel once this many tokens arrived; 0 = never. Drawn uniformly in [1, max_new_tokens - 1]
  // (1 when the request asks for one token or the server's default), so it lands mid-stream.
  uint32_t cancel_after_tokens = 0;
};

class LoadPlan {
 public:
  // Ids below this are left out of random prompts (llama2.c vocabularies: <unk>, <s>, </s>).
  static constexpr uint32_t kFirstPlainTokenId = 3;

  // Checks the options (one prompt source, vocab_size large enough for token prompts, shared
  // prefixes only with token prompts and with a length, fraction in [0, 1]).
  static shared::Result<LoadPlan> Make(LoadPlanOptions options);

  // Request `index` (any index; the same one always gives the same request). Its sampling seed,
  // when the base request has one, is offset by `index` so that streams differ.
  PlannedRequest Request(uint64_t index) const;

 private:
  explicit LoadPlan(LoadPlanOptions options);

  LoadPlanOptions options_;
  std::vector<std::vector<uint32_t>> prefixes_;  // [shared_prefixes][prefix_tokens]
};

}  // namespace smallmind::cli

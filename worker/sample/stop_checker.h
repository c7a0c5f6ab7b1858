// StopChecker: decides when one request's generation ends (max_new_tokens, EOS, stop strings that
// may span token boundaries) and which text is safe to stream. One per request, used by the
// scheduler thread only; not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "worker/sample/finish_reason.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

struct StopConfig {
  int max_new_tokens = 1;         // >= 1
  std::vector<std::string> stop;  // stop strings; empty ones are ignored
  bool ignore_eos = false;        // generate through EOS (and BOS when bos_ends)
  TokenId eos_id = -1;            // the model's end token; -1 for none
  TokenId eot_id = -1;            // end of turn (chat models): ends like EOS; -1 for none
  TokenId bos_id = -1;
  bool bos_ends = false;  // llama2.c models: a generated BOS ends the text as run.c does
};

class StopChecker {
 public:
  explicit StopChecker(StopConfig config);

  // Called once per generated token with the text the Detokenizer produced for it. Appends to
  // `emit_text` the text that can no longer be part of a stop string, holding back any suffix that
  // could still start one. Returns kNone to continue, or the reason generation ends:
  //  - kEos: `id` is the end token; the held text is released, the token's own text is not.
  //  - kStop: a stop string matched; the text before it is emitted, it and the rest are dropped.
  //  - kLength: this was the max_new_tokens-th token; all held text is released.
  // After kLength or kEos the caller appends Detokenizer::Flush(); after kStop it must not.
  FinishReason OnToken(TokenId id, std::string_view new_text, std::string* emit_text);

  // Releases held text when generation ends for another reason (cancel, context full).
  void Finish(std::string* emit_text);

  int num_tokens() const { return num_tokens_; }

 private:
  // Start of the earliest stop-string match in held_, or npos.
  size_t FindStop() const;
  // Length of the longest suffix of held_ that is a proper prefix of some stop string.
  size_t HeldBackLength() const;

  StopConfig config_;
  int num_tokens_ = 0;
  std::string held_;  // text withheld because it may begin a stop string
};

}  // namespace smallmind::worker

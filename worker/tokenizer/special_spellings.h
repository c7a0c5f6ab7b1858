// Special tokens recognised by their spelling, as llama.cpp does for files whose token types or
// special-token keys fall short: the end-of-turn token, and the types llama.cpp forces on
// end-of-generation, fill-in-the-middle and gpt-oss (harmony) tokens. Called by the tokenizers'
// Create; pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worker/types/token_id.h"

namespace smallmind::worker {

enum class SpmTokenType : int32_t;

// The end-of-turn token: the first of the usual spellings the vocabulary has, in this order:
// <|eot_id|> (Llama 3), <|im_end|> (ChatML: Qwen, SmolLM), <|end|> (Phi-3/4), <end_of_turn>
// (Gemma), <|endoftext|>, <|end_of_text|> (Granite), <EOT>; the lowest id of a spelling wins. In
// a harmony vocabulary (gpt-oss: <|return|> and <|call|> present) <|end|> only ends a message, so
// the turn ends at <|call|> (<|return|> is its EOS). -1 when none.
TokenId FindEndOfTurn(const std::vector<std::string>& tokens);

// llama.cpp's load-time overrides, applied to `types` ([tokens.size()]): a token spelled like an
// end-of-generation token (<|eot_id|>, <|im_end|>, <end_of_turn>, </s>, <eos>, ...) or a
// fill-in-the-middle one (<|fim_prefix|>, <fim_suffix>, <PRE>, ...) becomes a control token, so
// its text in a prompt stays text unless special tokens are parsed; gpt-oss's <|start|>,
// <|message|>, <|channel|>, <|constrain|> and, in a harmony vocabulary, <|end|> become
// user-defined, so they are always cut out of text and always decoded.
void OverrideTypesBySpelling(const std::vector<std::string>& tokens,
                             std::vector<SpmTokenType>* types);

// What the tokenizers' Create apply: OverrideTypesBySpelling, then the end of turn: `eot` (the
// file's, or -1) unless the overrides demoted it to user-defined (harmony's <|end|>), else
// FindEndOfTurn.
TokenId ApplySpecialSpellings(const std::vector<std::string>& tokens,
                              std::vector<SpmTokenType>* types, TokenId eot);

}  // namespace smallmind::worker

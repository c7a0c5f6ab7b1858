// FindEndOfTurn: the end-of-turn token of a chat vocabulary whose file does not name one, found by
// its spelling as llama.cpp does. Called by the tokenizers' Create; a pure function, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "worker/types/token_id.h"

namespace smallmind::worker {

// The id of the first of the usual end-of-turn spellings the vocabulary has, in this order:
// <|eot_id|> (Llama 3), <|im_end|> (ChatML: Qwen, SmolLM), <|end|> (Phi-3/4), <end_of_turn>
// (Gemma), <|endoftext|>, <|end_of_text|> (Granite), <EOT>; the lowest id of a spelling wins.
// -1 when the vocabulary has none of them.
TokenId FindEndOfTurn(const std::vector<std::string>& tokens);

}  // namespace smallmind::worker

// Chat tokens of a generated model (smallmind-modelgen --chat-template): the special tokens a
// chat template writes as text (`<|im_start|>`, `<start_of_turn>`, `[INST]`) become control
// tokens of the synthetic vocabulary, and BOS / EOS take the family's spelling (`<bos>`,
// `<|begin_of_text|>`, `<|im_end|>`), so a rendered prompt tokenizes as the family's does: each
// special token one id. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {

struct ChatTokens {
  std::string bos;                    // BOS's text; "" keeps the vocabulary's (<s>)
  std::string eos;                    // EOS's text; "" keeps the vocabulary's (</s>)
  std::vector<std::string> specials;  // control tokens the vocabulary must hold
};

// The `<|name|>` literals of a template (name: letters, digits, '_'), in order of first
// appearance: the spelling ChatML, Llama 3, Phi-3 and SmolLM3 give their special tokens. Other
// spellings (Gemma's <start_of_turn>, Mistral's [INST]) are named explicitly.
std::vector<std::string> TemplateSpecialTokens(std::string_view template_source);

// Respells vocab's BOS and EOS (the control tokens at bos_id / eos_id) and adds every special
// token it does not already hold as a control token, in the ids of its last normal pieces (the
// lowest-scored merges, so the vocabulary keeps its size and the rest of its merges). Returns one
// line per change for the generator's summary. InvalidArgument when a text is empty, holds a
// space or control character, is already a normal piece, when BOS and EOS would be spelled
// alike, or when there are fewer normal pieces than new tokens (naming --vocab).
shared::Result<std::vector<std::string>> ApplyChatTokens(const ChatTokens& tokens, SpmVocab* vocab);

}  // namespace smallmind::worker

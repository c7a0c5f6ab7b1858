// PreTokenizerFamily: the regex sequence and BPE options that a GGUF `tokenizer.ggml.pre` name
// selects (GPT-2, Llama 3, Qwen2, StarCoder, Falcon, DeepSeek, ...). Called by the GGUF tokenizer
// loader; pure functions over a constant table, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace smallmind::worker {

struct PreTokenizerFamily {
  std::string name;                   // the family's canonical name, e.g. "llama3"
  std::vector<std::string> patterns;  // PCRE2 syntax, applied in order by PreTokenizer
  bool ignore_merges = false;         // a piece that is already a token is emitted whole (Llama 3)
  bool add_bos = false;               // prepend BOS by default when the file does not say
};

// The family `pre` names. NotFound lists the supported names when `pre` is none of them.
shared::Result<PreTokenizerFamily> FindPreTokenizerFamily(std::string_view pre);

// Every `tokenizer.ggml.pre` value FindPreTokenizerFamily accepts, in table order.
std::vector<std::string_view> SupportedPreTokenizerNames();

}  // namespace smallmind::worker

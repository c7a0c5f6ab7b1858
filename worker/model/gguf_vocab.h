// GgufTokenizer: builds the model's tokenizer from a GGUF file's `tokenizer.ggml.*` metadata.
// Called once by the GGUF loader (and by tokenizer conformance tests); stateless, thread-safe.
#pragma once

#include <memory>

#include "shared/status.h"
#include "worker/model/gguf_reader.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

// SentencePiece-style (`tokenizer.ggml.model = llama`). Errors name the file and the key.
shared::Result<std::unique_ptr<Tokenizer>> GgufTokenizer(const GgufFile& file);

}  // namespace smallmind::worker

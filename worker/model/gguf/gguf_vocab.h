// GgufTokenizer: builds the model's tokenizer from a GGUF file's `tokenizer.ggml.*` metadata.
// Called once by the GGUF loader (and by tokenizer conformance tests); stateless, thread-safe.
#pragma once

#include <memory>

#include "shared/status.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

// `tokenizer.ggml.model = llama`: SentencePiece-style SpmTokenizer (scores, byte fallback, dummy
// prefix). `gpt2`: byte-level BpeTokenizer with the merges list and the pre-tokenizer named by
// `tokenizer.ggml.pre` ("default" when absent). `bert`: WordPieceTokenizer with
// [UNK]/[CLS]/[SEP]/[PAD]/ [MASK] from their keys. BOS/EOS (and EOT for BPE) ids and the
// add_bos/add_eos flags come from their keys when present. Errors name the file and the key; an
// unsupported model or pre-tokenizer is InvalidArgument listing what is supported.
shared::Result<std::unique_ptr<Tokenizer>> GgufTokenizer(const GgufFile& file);

}  // namespace smallmind::worker

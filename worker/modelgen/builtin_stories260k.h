// The builtin:stories260K model: llama2.c's tinyllamas stories260K (models/stories260K, MIT) whose
// checkpoint and tok512.bin are embedded in the binary at build time, loaded zero-copy through the
// llama2.c readers. The default model: it runs from any directory and says something readable.
// Called once at worker start; stateless, thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "shared/status.h"
#include "worker/model/weights.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

// The embedded files' bytes, 64-byte aligned, valid for the life of the process (defined in the
// source CMake generates with cmake/embed_files.cmake).
std::span<const std::byte> Stories260KCheckpointBytes();  // models/stories260K/stories260K.bin
std::span<const std::byte> Stories260KTokenizerBytes();   // models/stories260K/tok512.bin

struct BuiltinModel {
  LlamaModel llama;
  std::unique_ptr<Tokenizer> tokenizer;
};

// dim 64, hidden 172, 5 layers, 8 query heads, 4 KV heads, vocab 512, context 512, F32, tied
// classifier; weight views point into the embedded checkpoint. The SentencePiece vocabulary adds
// BOS and the dummy-prefix space as llama2.c's run.c does.
shared::Result<BuiltinModel> MakeBuiltinStories260K();

}  // namespace smallmind::worker

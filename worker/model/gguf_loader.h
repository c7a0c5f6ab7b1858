// LoadGgufModel: a GGUF v3 file of the llama family (llama, mistral-style, SmolLM2, TinyLlama) or
// qwen2 -> ModelConfig from metadata keys + zero-copy weight views + the tokenizer from
// tokenizer.ggml.*. Called once at worker start; stateless, thread-safe.
#pragma once

#include <memory>
#include <string>

#include "shared/status.h"
#include "worker/model/gguf_reader.h"
#include "worker/model/weights.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

struct GgufModel {
  LlamaModel llama;
  std::unique_ptr<Tokenizer> tokenizer;
  uint64_t file_size = 0;
};

shared::Result<GgufModel> LoadGgufModel(const std::string& path);

// The hyperparameters from `{arch}.*` metadata keys. Errors name the missing or bad key.
shared::Result<ModelConfig> GgufModelConfig(const GgufFile& file);

}  // namespace smallmind::worker

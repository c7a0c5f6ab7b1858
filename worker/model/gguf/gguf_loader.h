// LoadGgufModel: a GGUF v3 file of a family worker/model/arch/ describes (llama: Llama 1-3.x,
// mistral-style, SmolLM2, TinyLlama; qwen2) -> ModelConfig from metadata keys + zero-copy weight
// views + the tokenizer from tokenizer.ggml.*. A key or tensor the family's description does not
// cover refuses the file, naming it (no silent misreads). Called once at worker start; stateless,
// thread-safe.
#pragma once

#include <memory>
#include <string>

#include "shared/status.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/weights.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

struct GgufModel {
  LlamaModel llama;
  std::unique_ptr<Tokenizer> tokenizer;
  uint64_t file_size = 0;
  std::string chat_template;  // `tokenizer.chat_template`; "" when the file has none
};

shared::Result<GgufModel> LoadGgufModel(const std::string& path);

// Views of the llama tensors of `file` pointing into `storage`, which must hold the same bytes as
// the file (a mapping of it, or a copy); the returned Weights owns `storage`. Errors name the
// missing tensor, or a tensor of the file the architecture does not use.
shared::Result<Weights> MapGgufWeights(const GgufFile& file, const ModelConfig& config,
                                       WeightStorage storage);

// The hyperparameters from `{arch}.*` metadata keys. Errors name the missing or bad key, or a key
// the architecture's description does not implement (gguf_arch_keys.h).
shared::Result<ModelConfig> GgufModelConfig(const GgufFile& file);

}  // namespace smallmind::worker

// LoadModel: turns a model spec (a builtin: name, a GGUF file or a llama2.c checkpoint) into the
// weights, tokenizer and description a worker serves. Called once at worker start; thread-safe.
// It lives in its own layer above model/ (the file readers) and modelgen/ (which makes the
// builtin: models), the only unit that knows both, so the two stay one-way (worker/CMakeLists.txt).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shared/default_model.h"
#include "shared/status.h"
#include "worker/model/weights.h"
#include "worker/tokenizer/token_bytes.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

struct ModelSpec {
  std::string model = shared::kDefaultModel;  // a builtin: name (BuiltinModelNames()) or a path
  // llama2.c checkpoints only: the tokenizer.bin. Empty: "tokenizer.bin", then "tok<vocab>.bin",
  // next to the model file.
  std::string tokenizer;
};

struct LoadedModel {
  LlamaModel llama;
  std::unique_ptr<Tokenizer> tokenizer;
  // Every token's bytes, for the JSON output constraint (response_format JSON_OBJECT).
  std::unique_ptr<const TokenBytes> token_bytes;
  // MaxTokenTextBytes(*tokenizer): a prompt of more than (context - 1) times this many bytes is
  // refused before it is tokenized. 0 = not known (no such early refusal).
  size_t max_token_text_bytes = 0;
  std::string source;            // the spec's model string
  std::string tokenizer_source;  // where the tokenizer came from
  uint64_t file_size = 0;        // bytes of the model file (of the embedded one for builtin:)
  uint64_t parameter_count = 0;
  std::string quantization;               // type of the largest weights, e.g. "F32"
  std::vector<std::string> tensor_types;  // every type present
  // Per tensor type: how many tensors and their bytes (a tied classifier once), sorted by type.
  struct TensorTypeUse {
    std::string type;
    uint32_t tensors = 0;
    uint64_t bytes = 0;
  };
  std::vector<TensorTypeUse> tensor_mix;
  std::string chat_template;  // GGUF `tokenizer.chat_template`; "" when none
};

// "builtin:stories260K" (the default, embedded in the binary) and "builtin:tiny" (a synthetic
// model generated in memory, for tests), in that order.
std::vector<std::string> BuiltinModelNames();

// A builtin: name, else a GGUF file or a llama2.c checkpoint (told apart by DetectModelFormat).
// Errors say what is wrong: an unknown builtin: name lists the valid ones; a path that does not
// exist, a directory or a file of neither format says so; a malformed file names the problem.
shared::Result<std::unique_ptr<LoadedModel>> LoadModel(const ModelSpec& spec);

}  // namespace smallmind::worker

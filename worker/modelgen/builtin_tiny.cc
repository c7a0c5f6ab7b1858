#include "worker/modelgen/builtin_tiny.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/gguf/gguf_vocab.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

constexpr char kName[] = "builtin:tiny";

}  // namespace

ModelConfig BuiltinTinyConfig() {
  return GeneratorConfig(GeneratorOptions{});  // the defaults are the tiny preset
}

GgufModel MakeBuiltinTiny() { return MakeGeneratedModel(GeneratorOptions{}, kName); }

GgufModel MakeGeneratedModel(const GeneratorOptions& options, const std::string& name) {
  // Generated and parsed with the same code as every GGUF file; a failure here is a bug in the
  // generator (or options a caller did not validate), so it aborts.
  shared::Result<std::vector<uint8_t>> bytes = GenerateModelBuffer(options);
  SM_CHECK(bytes.ok()) << bytes.status().ToString();
  auto file = GgufFile::FromBuffer(*bytes, name);
  SM_CHECK(file.ok()) << file.status().ToString();
  GgufModel m;
  auto config = GgufModelConfig(**file);
  SM_CHECK(config.ok()) << config.status().ToString();
  m.llama.config = std::move(config).value();
  auto tokenizer = GgufTokenizer(**file);
  SM_CHECK(tokenizer.ok()) << tokenizer.status().ToString();
  m.tokenizer = std::move(tokenizer).value();
  // The weights live in their own 64-byte aligned copy of the file's bytes.
  WeightStorage storage = WeightStorage::Allocate(bytes->size());
  std::memcpy(storage.mutable_data(), bytes->data(), bytes->size());
  auto weights = MapGgufWeights(**file, m.llama.config, std::move(storage));
  SM_CHECK(weights.ok()) << weights.status().ToString();
  m.llama.weights = std::move(weights).value();
  const shared::Status valid = ValidateLlamaWeights(m.llama.config, m.llama.weights);
  SM_CHECK(valid.ok()) << valid.ToString();
  return m;
}

LlamaModel MakeBuiltinTinyModel() { return std::move(MakeBuiltinTiny().llama); }

}  // namespace smallmind::worker

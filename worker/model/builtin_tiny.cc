#include "worker/model/builtin_tiny.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "worker/model/gguf_reader.h"
#include "worker/model/gguf_vocab.h"
#include "worker/model/model_generator.h"

namespace smallmind::worker {
namespace {

constexpr char kName[] = "builtin:tiny";

// Views of the llama tensors of `f`, pointing into `storage`, which holds the same bytes as f.
TensorView View(const GgufFile& f, const WeightStorage& storage, const std::string& name) {
  const GgufTensorInfo* t = f.FindTensor(name);
  if (t == nullptr) return TensorView{};
  return TensorView{t->type, storage.data() + f.data_offset() + t->offset, t->n_rows(),
                    t->row_length()};
}

Weights MapWeights(const GgufFile& f, const ModelConfig& c, WeightStorage storage) {
  Weights w;
  w.token_embedding = View(f, storage, "token_embd.weight");
  w.final_norm = View(f, storage, "output_norm.weight");
  w.classifier = View(f, storage, "output.weight");
  if (!w.classifier.present()) w.classifier = w.token_embedding;  // tied
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; l++) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& lw = w.layers[l];
    const auto view = [&](const char* name) { return View(f, storage, p + name); };
    lw.attn_norm = view("attn_norm.weight");
    lw.wq = view("attn_q.weight");
    lw.wk = view("attn_k.weight");
    lw.wv = view("attn_v.weight");
    lw.wo = view("attn_output.weight");
    lw.ffn_norm = view("ffn_norm.weight");
    lw.w1 = view("ffn_gate.weight");
    lw.w2 = view("ffn_down.weight");
    lw.w3 = view("ffn_up.weight");
  }
  w.storage = std::move(storage);
  return w;
}

}  // namespace

ModelConfig BuiltinTinyConfig() {
  return GeneratorConfig(GeneratorOptions{});  // the defaults are the tiny preset
}

GgufModel MakeBuiltinTiny() {
  // Generated and parsed with the same code as every GGUF file; a failure here is a bug in the
  // generator, so it aborts.
  shared::Result<std::vector<uint8_t>> bytes = GenerateModelBuffer(GeneratorOptions{});
  SM_CHECK(bytes.ok()) << bytes.status().ToString();
  auto file = GgufFile::FromBuffer(*bytes, kName);
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
  m.llama.weights = MapWeights(**file, m.llama.config, std::move(storage));
  const shared::Status valid = ValidateLlamaWeights(m.llama.config, m.llama.weights);
  SM_CHECK(valid.ok()) << valid.ToString();
  return m;
}

LlamaModel MakeBuiltinTinyModel() { return std::move(MakeBuiltinTiny().llama); }

}  // namespace smallmind::worker

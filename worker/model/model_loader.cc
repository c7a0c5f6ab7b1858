#include "worker/model/model_loader.h"

#include <sys/stat.h>

#include <filesystem>

#include "worker/model/builtin_tiny.h"
#include "worker/model/llama2c_reader.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

constexpr char kBuiltinTiny[] = "builtin:tiny";

uint64_t CountParameters(const ModelConfig& c, bool shared_classifier) {
  const uint64_t dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  uint64_t per_layer = 2 * dim + dim * dim * 2 + 2 * kv * dim + 3 * hidden * dim;
  uint64_t total = per_layer * c.n_layers + dim + uint64_t(c.vocab_size) * dim;
  if (!shared_classifier) total += uint64_t(c.vocab_size) * dim;
  return total;
}

// tokenizer.bin, then tok<vocab>.bin, next to the model.
std::string FindLlama2cTokenizer(const std::string& model_path, int vocab_size) {
  std::filesystem::path dir = std::filesystem::path(model_path).parent_path();
  for (std::string name : {std::string("tokenizer.bin"), "tok" + std::to_string(vocab_size) + ".bin"}) {
    std::filesystem::path p = dir / name;
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return p.string();
  }
  return "";
}

shared::Result<std::unique_ptr<LoadedModel>> LoadBuiltinTiny() {
  auto m = std::make_unique<LoadedModel>();
  m->llama = MakeBuiltinTinyModel();
  m->tokenizer = MakeByteLevelTokenizer();
  m->source = kBuiltinTiny;
  m->tokenizer_source = "builtin byte-level vocabulary";
  return m;
}

shared::Result<std::unique_ptr<LoadedModel>> LoadLlama2c(const ModelSpec& spec) {
  auto m = std::make_unique<LoadedModel>();
  SM_ASSIGN_OR_RETURN(m->llama, LoadLlama2cCheckpoint(spec.model));
  const int vocab = m->llama.config.vocab_size;
  std::string tok_path = spec.tokenizer.empty() ? FindLlama2cTokenizer(spec.model, vocab)
                                                : spec.tokenizer;
  if (tok_path.empty()) {
    return shared::NotFound("no tokenizer for " + spec.model +
                            ": pass --tokenizer PATH (looked for tokenizer.bin and tok" +
                            std::to_string(vocab) + ".bin next to the model)");
  }
  SM_ASSIGN_OR_RETURN(m->tokenizer, LoadLlama2cTokenizer(tok_path, vocab));
  m->source = spec.model;
  m->tokenizer_source = tok_path;
  struct stat st {};
  if (stat(spec.model.c_str(), &st) == 0) m->file_size = static_cast<uint64_t>(st.st_size);
  return m;
}

}  // namespace

shared::Result<std::unique_ptr<LoadedModel>> LoadModel(const ModelSpec& spec) {
  shared::Result<std::unique_ptr<LoadedModel>> loaded =
      spec.model == kBuiltinTiny ? LoadBuiltinTiny() : LoadLlama2c(spec);
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<LoadedModel> m = std::move(loaded).value();
  const Weights& w = m->llama.weights;
  m->parameter_count =
      CountParameters(m->llama.config, w.classifier.data == w.token_embedding.data);
  m->quantization = "F32";
  m->tensor_types = {"F32"};
  return m;
}

}  // namespace smallmind::worker

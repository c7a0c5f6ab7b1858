#include "worker/loader/model_loader.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <set>

#include "kernels/kernels.h"

#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/llama2c/llama2c_reader.h"
#include "worker/model/model_format.h"
#include "worker/modelgen/builtin_stories260k.h"
#include "worker/modelgen/builtin_tiny.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

constexpr char kBuiltinPrefix[] = "builtin:";

// tokenizer.bin, then tok<vocab>.bin, next to the model.
std::string FindLlama2cTokenizer(const std::string& model_path, int vocab_size) {
  std::filesystem::path dir = std::filesystem::path(model_path).parent_path();
  for (std::string name :
       {std::string("tokenizer.bin"), "tok" + std::to_string(vocab_size) + ".bin"}) {
    std::filesystem::path p = dir / name;
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return p.string();
  }
  return "";
}

shared::Result<std::unique_ptr<LoadedModel>> LoadBuiltinTiny() {
  GgufModel g = MakeBuiltinTiny();
  auto m = std::make_unique<LoadedModel>();
  m->llama = std::move(g.llama);
  m->tokenizer = std::move(g.tokenizer);
  m->tokenizer_source = "builtin:tiny GGUF metadata (byte-level vocabulary)";
  return m;
}

shared::Result<std::unique_ptr<LoadedModel>> LoadBuiltinStories260K() {
  SM_ASSIGN_OR_RETURN(BuiltinModel b, MakeBuiltinStories260K());
  auto m = std::make_unique<LoadedModel>();
  m->llama = std::move(b.llama);
  m->tokenizer = std::move(b.tokenizer);
  m->tokenizer_source = "builtin:stories260K tok512.bin (embedded)";
  m->file_size = Stories260KCheckpointBytes().size();
  return m;
}

struct Builtin {
  const char* name;
  shared::Result<std::unique_ptr<LoadedModel>> (*load)();
};
constexpr Builtin kBuiltins[] = {
    {shared::kDefaultModel, LoadBuiltinStories260K},
    {"builtin:tiny", LoadBuiltinTiny},
};

shared::Result<std::unique_ptr<LoadedModel>> LoadBuiltin(const ModelSpec& spec) {
  for (const Builtin& b : kBuiltins) {
    if (spec.model != b.name) continue;
    SM_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> m, b.load());
    m->source = spec.model;
    return m;
  }
  std::string names;
  for (const std::string& n : BuiltinModelNames()) names += (names.empty() ? "" : ", ") + n;
  return shared::InvalidArgument("unknown builtin model '" + spec.model +
                                 "'; the builtin models are " + names);
}

shared::Result<std::unique_ptr<LoadedModel>> LoadLlama2c(const ModelSpec& spec) {
  auto m = std::make_unique<LoadedModel>();
  SM_ASSIGN_OR_RETURN(m->llama, LoadLlama2cCheckpoint(spec.model));
  const int vocab = m->llama.config.vocab_size;
  std::string tok_path =
      spec.tokenizer.empty() ? FindLlama2cTokenizer(spec.model, vocab) : spec.tokenizer;
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

shared::Result<std::unique_ptr<LoadedModel>> LoadGguf(const ModelSpec& spec) {
  SM_ASSIGN_OR_RETURN(GgufModel g, LoadGgufModel(spec.model));
  auto m = std::make_unique<LoadedModel>();
  m->llama = std::move(g.llama);
  m->tokenizer = std::move(g.tokenizer);
  m->source = spec.model;
  m->tokenizer_source = spec.model + " (tokenizer.ggml metadata)";
  m->file_size = g.file_size;
  m->chat_template = std::move(g.chat_template);
  return m;
}

// Every tensor type the forward pass meets must have a kernel; say which one does not.
shared::Status CheckKernelsExist(const LoadedModel& m) {
  const kernels::KernelTable table = kernels::RefKernelTable();
  const Weights& w = m.llama.weights;
  auto check = [&](const TensorView& t, const char* what) -> shared::Status {
    const kernels::DTypeTraits* traits = kernels::GetDTypeTraits(static_cast<uint32_t>(t.type));
    if (table.MatmulFor(t.type) != nullptr) return shared::Status::Ok();
    return shared::InvalidArgument(m.source + ": " + what + " weights of type " +
                                   (traits ? traits->name : "?") + " have no kernel yet");
  };
  SM_RETURN_IF_ERROR(check(w.classifier, "classifier"));
  if (table.DequantRowFor(w.token_embedding.type) == nullptr) {
    return shared::InvalidArgument(m.source + ": the token embedding's type has no kernel yet");
  }
  if (w.final_norm.type != kernels::DType::kF32) {
    return shared::InvalidArgument(m.source + ": norm and bias tensors must be F32");
  }
  for (const TensorView* t : MatricesOf(w)) SM_RETURN_IF_ERROR(check(*t, "layer"));
  for (const LayerWeights& l : w.layers) {
    for (const TensorView* t : {&l.attn_norm, &l.ffn_norm, &l.bq, &l.bk, &l.bv}) {
      if (t->present() && t->type != kernels::DType::kF32) {
        return shared::InvalidArgument(m.source + ": norm and bias tensors must be F32");
      }
    }
  }
  return shared::Status::Ok();
}

// One walk over the tensors: parameter_count (elements of every distinct tensor, biases
// included, a tied classifier once); tensor_types, every type present, and tensor_mix, their
// counts and bytes; quantization, the type of the FFN weights, which hold most of the parameters.
void DescribeTensors(LoadedModel* m) {
  const Weights& w = m->llama.weights;
  std::map<std::string, LoadedModel::TensorTypeUse> types;
  auto name = [](const TensorView& t) {
    const kernels::DTypeTraits* traits = kernels::GetDTypeTraits(static_cast<uint32_t>(t.type));
    return std::string(traits ? traits->name : "?");
  };
  auto note = [&](const TensorView& t, bool parameters = true) {
    if (!t.present()) return;
    LoadedModel::TensorTypeUse& use = types[name(t)];
    ++use.tensors;
    use.bytes += t.bytes();
    if (parameters) m->parameter_count += static_cast<uint64_t>(t.rows * t.cols);
  };
  m->parameter_count = 0;
  note(w.token_embedding);
  note(w.final_norm);
  note(w.rope_freqs, /*parameters=*/false);  // RoPE's frequency factors are not learned
  if (w.classifier.data != w.token_embedding.data) note(w.classifier);
  for (const LayerWeights& l : w.layers) {
    for (const TensorView* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w1, &l.w2,
                                &l.w3, &l.bq, &l.bk, &l.bv, &l.router}) {
      note(*t);
    }
    for (const ExpertsView* v : {&l.gate_exps, &l.up_exps, &l.down_exps}) {
      for (const TensorView& e : v->experts) note(e);
      // One 3-D tensor in the file: its bytes and parameters are its experts', it counts once.
      if (v->present()) types[name((*v)[0])].tensors -= static_cast<uint32_t>(v->count() - 1);
    }
  }
  const TensorView* ffn = w.layers.empty()                  ? &w.classifier
                          : w.layers[0].gate_exps.present() ? &w.layers[0].gate_exps[0]
                                                            : &w.layers[0].w1;
  m->quantization = name(*ffn);
  m->tensor_types.clear();
  m->tensor_mix.clear();
  for (auto& [type, use] : types) {
    m->tensor_types.push_back(type);
    use.type = type;
    m->tensor_mix.push_back(use);
  }
}

shared::Result<std::unique_ptr<LoadedModel>> LoadAnyModel(const ModelSpec& spec) {
  // A tokenizer the model would not use is refused rather than ignored: the user meant something.
  const auto no_tokenizer_flag = [&](const char* what) {
    return shared::InvalidArgument("--tokenizer " + spec.tokenizer +
                                   " is for llama2.c checkpoints only; " + spec.model + " " + what);
  };
  if (spec.model.starts_with(kBuiltinPrefix)) {
    if (!spec.tokenizer.empty()) return no_tokenizer_flag("carries its own vocabulary");
    return LoadBuiltin(spec);
  }
  SM_ASSIGN_OR_RETURN(const ModelFormat format, DetectModelFormat(spec.model));
  if (format == ModelFormat::kGguf) {
    if (!spec.tokenizer.empty()) return no_tokenizer_flag("is a GGUF with its tokenizer inside");
    return LoadGguf(spec);
  }
  return LoadLlama2c(spec);
}

}  // namespace

std::vector<std::string> BuiltinModelNames() {
  std::vector<std::string> names;
  for (const Builtin& b : kBuiltins) names.emplace_back(b.name);
  return names;
}

shared::Result<std::unique_ptr<LoadedModel>> LoadModel(const ModelSpec& spec) {
  SM_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> m, LoadAnyModel(spec));
  DescribeTensors(m.get());
  SM_RETURN_IF_ERROR(CheckKernelsExist(*m));
  m->token_bytes = std::make_unique<const TokenBytes>(*m->tokenizer);
  m->max_token_text_bytes = MaxTokenTextBytes(*m->tokenizer);
  return m;
}

}  // namespace smallmind::worker

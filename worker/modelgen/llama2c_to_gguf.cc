#include "worker/modelgen/llama2c_to_gguf.h"

#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>

#include "worker/model/llama2c/llama2c_reader.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

// The tokenizer's vocabulary back as data: pieces as normalised (' ' for space, <s>, </s>).
SpmVocab VocabOf(const SpmTokenizer& tok) {
  SpmVocab v;
  for (TokenId i = 0; i < tok.vocab_size(); i++) {
    v.pieces.emplace_back(tok.Piece(i));
    v.scores.push_back(tok.Score(i));
    v.types.push_back(tok.Type(i));
    if (v.unk_id < 0 && tok.Type(i) == SpmTokenType::kUnknown) v.unk_id = i;
  }
  v.bos_id = tok.bos_id();
  v.eos_id = tok.eos_id();
  v.add_bos = true;           // run.c's encode(text, bos=1, eos=0)
  v.add_space_prefix = true;  // run.c always encodes " " + text
  return v;
}

// Rows of an F32 view; `t` points into the checkpoint's mapping, which outlives the write.
LlamaGgufBuilder::RowSource RowsOf(const TensorView& t) {
  const float* data = t.f32();
  const int64_t cols = t.cols;
  return [data, cols](int64_t r, std::span<float> out) {
    std::memcpy(out.data(), data + r * cols, static_cast<size_t>(cols) * sizeof(float));
  };
}

void AddTensors(const LlamaModel& m, kernels::DType type, LlamaGgufBuilder* b) {
  const Weights& w = m.weights;
  const auto matrix = [&](const std::string& name, const TensorView& t) {
    b->AddMatrix(name, t.rows, t.cols, type, RowsOf(t));
  };
  const auto vector = [&](const std::string& name, const TensorView& t) {
    b->AddVector(name, t.cols, RowsOf(t));
  };
  matrix("token_embd.weight", w.token_embedding);
  for (size_t l = 0; l < w.layers.size(); l++) {
    const LayerWeights& lw = w.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    vector(p + "attn_norm.weight", lw.attn_norm);
    matrix(p + "attn_q.weight", lw.wq);
    matrix(p + "attn_k.weight", lw.wk);
    matrix(p + "attn_v.weight", lw.wv);
    matrix(p + "attn_output.weight", lw.wo);
    vector(p + "ffn_norm.weight", lw.ffn_norm);
    matrix(p + "ffn_gate.weight", lw.w1);
    matrix(p + "ffn_up.weight", lw.w3);
    matrix(p + "ffn_down.weight", lw.w2);
  }
  vector("output_norm.weight", w.final_norm);
  // A shared classifier is the embedding: GGUF expresses that by leaving output.weight out.
  if (w.classifier.data != w.token_embedding.data) matrix("output.weight", w.classifier);
}

}  // namespace

shared::Result<GgufBuildSummary> ConvertLlama2cToGguf(const Llama2cConversion& conv,
                                                      const std::string& out_path) {
  if (!IsWritableWeightType(conv.type)) {
    return shared::InvalidArgument(
        "llama2.c conversion: the weight type must be F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, "
        "IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS or MXFP4");
  }
  SM_ASSIGN_OR_RETURN(LlamaModel model, LoadLlama2cCheckpoint(conv.model_path));
  SM_ASSIGN_OR_RETURN(std::unique_ptr<SpmTokenizer> tokenizer,
                      LoadLlama2cTokenizer(conv.tokenizer_path, model.config.vocab_size));
  const std::string name =
      conv.name.empty() ? std::filesystem::path(conv.model_path).stem().string() : conv.name;
  LlamaGgufBuilder builder(model.config, name, conv.type);
  builder.AddSpmVocab(VocabOf(*tokenizer));
  AddTensors(model, conv.type, &builder);
  return builder.WriteFile(out_path);  // reads the mapping, so before `model` goes
}

}  // namespace smallmind::worker

// Weight values come from one SplitMix64 stream per seed, addressed by draw index (SplitMix64's
// state after i steps is seed + i * gamma, so any draw is computed directly). Matrices take their
// draws in llama2.c array order (token embedding, then wq of every layer, wk, wv, wo, w1, w2, w3,
// then the separate classifier), which keeps builtin:tiny's historical weights bit for bit; norm
// weights draw from a second stream so their noise never shifts the matrices.
#include "worker/modelgen/model_generator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "kernels/quant_blocks.h"
#include "worker/model/arch/arch_description.h"
#include "worker/model/gguf/yarn.h"
#include "worker/modelgen/chat_tokens.h"
#include "worker/modelgen/llama3_rope.h"
#include "worker/modelgen/longrope_factors.h"
#include "worker/modelgen/random_draws.h"

namespace smallmind::worker {

using kernels::DType;

namespace {

constexpr uint64_t kNormStreamTag = 0x6e6f726d73ULL;  // "norms"
constexpr uint64_t kBiasStreamTag = 0x6269617365ULL;  // "biase": gpt-oss's biases and sinks
// gpt-oss's draws of the bias stream: biases of spread kBiasSpread (they shift activations of
// unit scale visibly), sinks of spread kSinkSpread (logits beside attention scores of spread ~1,
// so a head's sink takes from a small share to most of its softmax), the router's bias
// kRouterBiasSpread (it moves which experts win).
constexpr float kBiasSpread = 0.2f;
constexpr float kSinkSpread = 2.0f;
constexpr float kRouterBiasSpread = 0.5f;
constexpr int kGptOssDefaultWindow = 128;  // gpt-oss-20b's attention.sliding_window
// gpt-oss's expert gate and up matrices are drawn this much wider than 1 / sqrt(fan_in): their
// outputs (of spread ~4) then pass the clamped SwiGLU's limit of 7 in a few percent of the
// elements, so the clamp acts (at spread 1 it never did, and a model without it conformed too).
constexpr float kGptOssGateUpGain = 4.0f;
constexpr int64_t kMaxDim = 1 << 16;  // the GGUF loader's bounds
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxContext = 1 << 24;

float Draw(WeightInit init, uint64_t seed, uint64_t i) {
  const uint64_t bits = DrawBits(seed, i);
  return init == WeightInit::kUniform ? UniformSigned(bits) : NearNormal(bits);
}

// Row r of a [rows, cols] matrix whose element (r, c) is spread * draw(offset + r * cols + c).
LlamaGgufBuilder::RowSource DrawnRows(const GeneratorOptions& o, uint64_t offset, int64_t cols,
                                      float spread) {
  return [init = o.init, seed = o.seed, offset, cols, spread](int64_t r, std::span<float> out) {
    const uint64_t base = offset + static_cast<uint64_t>(r * cols);
    for (int64_t c = 0; c < cols; c++) out[c] = spread * Draw(init, seed, base + c);
  };
}

// The rows of several sources one after another: a fused matrix ([sum of rows, cols]) whose
// parts are drawn as the separate matrices would be (phi3's attn_qkv and gate/up ffn_up).
LlamaGgufBuilder::RowSource StackedRows(
    std::vector<std::pair<int64_t, LlamaGgufBuilder::RowSource>> parts) {
  return [parts = std::move(parts)](int64_t r, std::span<float> out) {
    for (const auto& [rows, source] : parts) {
      if (r < rows) return source(r, out);
      r -= rows;
    }
    SM_CHECK(false) << "row past the stacked matrices";
  };
}

// A norm weight vector: 1 + norm_noise * draw, from the norm stream at `offset`.
LlamaGgufBuilder::RowSource NormRow(const GeneratorOptions& o, uint64_t offset) {
  return [init = o.init, seed = shared::Mix64(o.seed ^ kNormStreamTag), noise = o.norm_noise,
          offset](int64_t, std::span<float> out) {
    for (size_t c = 0; c < out.size(); c++) {
      out[c] = noise == 0.0f ? 1.0f : 1.0f + noise * Draw(init, seed, offset + c);
    }
  };
}

float FanInSpread(int64_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); }

// First draw of each matrix family (layer 0), in llama2.c order; layer l adds l * its size.
struct DrawLayout {
  uint64_t wq, wk, wv, wo, w1, w2, w3, output;
};

DrawLayout LayoutOf(const ModelConfig& c) {
  const uint64_t n = c.n_layers, dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), hidden = c.hidden_dim;
  DrawLayout d{};
  d.wq = uint64_t(c.vocab_size) * dim;  // after the token embedding
  d.wk = d.wq + n * q * dim;
  d.wv = d.wk + n * kv * dim;
  d.wo = d.wv + n * kv * dim;
  d.w1 = d.wo + n * dim * q;
  d.w2 = d.w1 + n * hidden * dim;
  d.w3 = d.w2 + n * dim * hidden;
  d.output = d.w3 + n * hidden * dim;
  return d;
}

bool IsGemma(const GeneratorOptions& o) {
  return o.architecture == "gemma2" || o.architecture == "gemma3";
}

bool IsGptOss(const GeneratorOptions& o) { return o.architecture == "gpt-oss"; }
bool IsQwen2Moe(const GeneratorOptions& o) { return o.architecture == "qwen2moe"; }
bool IsOlmoe(const GeneratorOptions& o) { return o.architecture == "olmoe"; }
// The families whose every layer is experts (--experts required).
bool NeedsExperts(const GeneratorOptions& o) {
  return o.architecture == "qwen3moe" || IsGptOss(o) || IsQwen2Moe(o) || IsOlmoe(o);
}

// Rows of `cols` from the bias stream at `offset` (row r at offset + r * cols), spread `spread`.
LlamaGgufBuilder::RowSource BiasRows(const GeneratorOptions& o, uint64_t offset, int64_t cols,
                                     float spread) {
  GeneratorOptions biases = o;
  biases.seed = shared::Mix64(o.seed ^ kBiasStreamTag);
  return DrawnRows(biases, offset, cols, spread);
}

// The bias stream's layout of one gpt-oss layer: q, k, v and output biases, sinks, the router's
// bias, then the experts' gate, up and down biases.
struct BiasLayout {
  uint64_t bq, bk, bv, bo, sinks, router, gate, up, down, per_layer;
};

BiasLayout BiasLayoutOf(const ModelConfig& c) {
  const uint64_t n = c.n_experts, ffn = c.expert_ffn_dim;
  BiasLayout b{};
  b.bk = b.bq + uint64_t(c.q_dim());
  b.bv = b.bk + uint64_t(c.kv_dim());
  b.bo = b.bv + uint64_t(c.kv_dim());
  b.sinks = b.bo + uint64_t(c.dim);
  b.router = b.sinks + uint64_t(c.n_heads);
  b.gate = b.router + n;
  b.up = b.gate + n * ffn;
  b.down = b.up + n * ffn;
  b.per_layer = b.down + n * uint64_t(c.dim);
  return b;
}

// gpt-oss's attention biases and sinks of layer `l` (prefix p).
void AddAttentionBiases(const GeneratorOptions& o, const ModelConfig& c, int l,
                        const std::string& p, LlamaGgufBuilder* b) {
  const BiasLayout bl = BiasLayoutOf(c);
  const uint64_t at = uint64_t(l) * bl.per_layer;
  b->AddVector(p + "attn_q.bias", c.q_dim(), BiasRows(o, at + bl.bq, c.q_dim(), kBiasSpread));
  b->AddVector(p + "attn_k.bias", c.kv_dim(), BiasRows(o, at + bl.bk, c.kv_dim(), kBiasSpread));
  b->AddVector(p + "attn_v.bias", c.kv_dim(), BiasRows(o, at + bl.bv, c.kv_dim(), kBiasSpread));
  b->AddVector(p + "attn_output.bias", c.dim, BiasRows(o, at + bl.bo, c.dim, kBiasSpread));
  b->AddVector(p + "attn_sinks.weight", c.n_heads,
               BiasRows(o, at + bl.sinks, c.n_heads, kSinkSpread));
}

// qwen2moe's q, k and v biases of layer `l` (prefix p): the bias stream's draws at gpt-oss's
// places (no output bias or sinks).
void AddQkvBiases(const GeneratorOptions& o, const ModelConfig& c, int l, const std::string& p,
                  LlamaGgufBuilder* b) {
  const BiasLayout bl = BiasLayoutOf(c);
  const uint64_t at = uint64_t(l) * bl.per_layer;
  b->AddVector(p + "attn_q.bias", c.q_dim(), BiasRows(o, at + bl.bq, c.q_dim(), kBiasSpread));
  b->AddVector(p + "attn_k.bias", c.kv_dim(), BiasRows(o, at + bl.bk, c.kv_dim(), kBiasSpread));
  b->AddVector(p + "attn_v.bias", c.kv_dim(), BiasRows(o, at + bl.bv, c.kv_dim(), kBiasSpread));
}

// qwen2moe's shared expert of layer `l` (prefix p): its gate vector ffn_gate_inp_shexp [dim] (F32,
// as llama.cpp's quantizer keeps 1-D tensors) and its SwiGLU FFN in the dense FFN's types, drawn
// after every layer's experts.
void AddSharedExpert(const GeneratorOptions& o, const ModelConfig& c, uint64_t after_experts, int l,
                     const std::string& p, LlamaGgufBuilder* b) {
  const uint64_t dim = c.dim, ffn = c.shared_expert_ffn_dim;
  const uint64_t first = after_experts + uint64_t(l) * (dim + 3 * ffn * dim);
  const auto type_of = [&](MixTensor tensor) {
    return QuantMixTensorType(o.mix, o.weight_type, tensor, l, c.n_layers, c.n_heads / c.n_kv_heads,
                              o.tied_embeddings);
  };
  b->AddVector(p + "ffn_gate_inp_shexp.weight", c.dim,
               DrawnRows(o, first, c.dim, FanInSpread(c.dim)));
  const uint64_t gate = first + dim, up = gate + ffn * dim, down = up + ffn * dim;
  b->AddMatrix(p + "ffn_gate_shexp.weight", ffn, dim, type_of(MixTensor::kFfnGate),
               DrawnRows(o, gate, c.dim, FanInSpread(c.dim)));
  b->AddMatrix(p + "ffn_up_shexp.weight", ffn, dim, type_of(MixTensor::kFfnUp),
               DrawnRows(o, up, c.dim, FanInSpread(c.dim)));
  b->AddMatrix(p + "ffn_down_shexp.weight", dim, ffn, type_of(MixTensor::kFfnDown),
               DrawnRows(o, down, c.shared_expert_ffn_dim, FanInSpread(c.shared_expert_ffn_dim)));
}

// gpt-oss's router and expert biases of layer `l` (prefix p): [n_experts] and [n_experts, width].
void AddExpertBiases(const GeneratorOptions& o, const ModelConfig& c, int l, const std::string& p,
                     LlamaGgufBuilder* b) {
  const BiasLayout bl = BiasLayoutOf(c);
  const uint64_t at = uint64_t(l) * bl.per_layer;
  const int64_t ffn = c.expert_ffn_dim;
  b->AddVector(p + "ffn_gate_inp.bias", c.n_experts,
               BiasRows(o, at + bl.router, c.n_experts, kRouterBiasSpread));
  b->AddMatrix(p + "ffn_gate_exps.bias", c.n_experts, ffn, DType::kF32,
               BiasRows(o, at + bl.gate, ffn, kBiasSpread));
  b->AddMatrix(p + "ffn_up_exps.bias", c.n_experts, ffn, DType::kF32,
               BiasRows(o, at + bl.up, ffn, kBiasSpread));
  b->AddMatrix(p + "ffn_down_exps.bias", c.n_experts, c.dim, DType::kF32,
               BiasRows(o, at + bl.down, c.dim, kBiasSpread));
}

// Layer l's router and experts. Their draws follow every dense draw (the classifier's too), so a
// model with experts keeps the attention weights of the same shape without them: per layer the
// router [n_experts, dim], then gate, up and down of all experts.
void AddExperts(const GeneratorOptions& o, const ModelConfig& c, const DrawLayout& d, int l,
                LlamaGgufBuilder* b) {
  const uint64_t dim = c.dim, ffn = c.expert_ffn_dim, n = c.n_experts;
  const uint64_t per_layer = n * dim + 3 * n * ffn * dim;
  const uint64_t first = d.output + uint64_t(c.vocab_size) * dim + l * per_layer;
  const std::string p = "blk." + std::to_string(l) + ".";
  b->AddMatrix(p + "ffn_gate_inp.weight", c.n_experts, c.dim, DType::kF32,
               DrawnRows(o, first, c.dim, FanInSpread(c.dim)));
  const uint64_t gate = first + n * dim, up = gate + n * ffn * dim, down = up + n * ffn * dim;
  const DType type = QuantMixTensorType(o.mix, o.weight_type, MixTensor::kFfnExperts, l, c.n_layers,
                                        c.n_heads / c.n_kv_heads, o.tied_embeddings);
  const float gain = IsGptOss(o) ? kGptOssGateUpGain : 1.0f;
  b->AddExperts(p + "ffn_gate_exps.weight", c.n_experts, ffn, dim, type,
                DrawnRows(o, gate, c.dim, gain * FanInSpread(c.dim)));
  b->AddExperts(p + "ffn_up_exps.weight", c.n_experts, ffn, dim, type,
                DrawnRows(o, up, c.dim, gain * FanInSpread(c.dim)));
  b->AddExperts(p + "ffn_down_exps.weight", c.n_experts, dim, ffn, type,
                DrawnRows(o, down, c.expert_ffn_dim, FanInSpread(c.expert_ffn_dim)));
  if (IsGptOss(o)) AddExpertBiases(o, c, l, p, b);
  if (c.shared_expert_ffn_dim > 0) {
    AddSharedExpert(o, c, d.output + uint64_t(c.vocab_size) * dim + c.n_layers * per_layer, l, p,
                    b);
  }
}

// The norms some families add to a layer (base layer ul, prefix p): qwen3's / gemma3's per-head
// q/k norms, olmoe's whole-row ones, gemma's post-attention / post-FFN norms.
void AddExtraNorms(const GeneratorOptions& o, const ModelConfig& c, uint64_t ul,
                   const std::string& p, LlamaGgufBuilder* b) {
  const uint64_t dim = c.dim;
  const uint64_t head = static_cast<uint64_t>(c.head_dim());
  const uint64_t qk_norms = (2 * uint64_t(c.n_layers) + 1) * dim;  // after every dim-wide norm
  if (o.architecture == "qwen3" || o.architecture == "qwen3moe" || o.architecture == "gemma3") {
    const uint64_t first = qk_norms + 2 * ul * head;
    b->AddVector(p + "attn_q_norm.weight", c.head_dim(), NormRow(o, first));
    b->AddVector(p + "attn_k_norm.weight", c.head_dim(), NormRow(o, first + head));
  }
  if (IsOlmoe(o)) {  // whole-row norms, after the per-head and gemma norms' draws
    const uint64_t first =
        qk_norms + 2 * uint64_t(c.n_layers) * (head + dim) + ul * uint64_t(c.q_dim() + c.kv_dim());
    b->AddVector(p + "attn_q_norm.weight", c.q_dim(), NormRow(o, first));
    b->AddVector(p + "attn_k_norm.weight", c.kv_dim(), NormRow(o, first + c.q_dim()));
  }
  if (IsGemma(o)) {  // after the q/k norms' draws
    const uint64_t first = qk_norms + 2 * uint64_t(c.n_layers) * head + 2 * ul * dim;
    b->AddVector(p + "post_attention_norm.weight", dim, NormRow(o, first));
    b->AddVector(p + "post_ffw_norm.weight", dim, NormRow(o, first + dim));
  }
}

// Layer `l` of the file: base layer `src` (< c.n_layers, the base model's config), its attn_output
// and ffn_down scaled by `out_scale` (1 for the base layers; grow_epsilon for a grown copy).
void AddLayer(const GeneratorOptions& o, const ModelConfig& c, const DrawLayout& d, int l, int src,
              float out_scale, LlamaGgufBuilder* b) {
  const int64_t dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), hidden = c.hidden_dim;
  const uint64_t ul = static_cast<uint64_t>(src);
  const std::string p = "blk." + std::to_string(l) + ".";
  // The mix's per-layer choice follows the base layer `src`, as the draws do.
  const auto type_of = [&](MixTensor tensor) {
    return QuantMixTensorType(o.mix, o.weight_type, tensor, src, c.n_layers,
                              c.n_heads / c.n_kv_heads, o.tied_embeddings);
  };
  const auto rows_of = [&](int64_t rows, int64_t cols, uint64_t first, float scale = 1.0f) {
    return DrawnRows(o, first + ul * rows * cols, cols, scale * FanInSpread(cols));
  };
  const auto matrix = [&](const char* name, MixTensor tensor, int64_t rows, int64_t cols,
                          uint64_t first, float scale = 1.0f) {
    b->AddMatrix(p + name, rows, cols, type_of(tensor), rows_of(rows, cols, first, scale));
  };
  const bool fused = o.architecture == "phi3";
  b->AddVector(p + "attn_norm.weight", dim, NormRow(o, ul * dim));
  // phi3's fused matrices take the type of their first part (a mix's rules are per part).
  if (fused) {
    b->AddMatrix(p + "attn_qkv.weight", q + 2 * kv, dim, type_of(MixTensor::kAttnQ),
                 StackedRows({{q, rows_of(q, dim, d.wq)},
                              {kv, rows_of(kv, dim, d.wk)},
                              {kv, rows_of(kv, dim, d.wv)}}));
  } else {
    matrix("attn_q.weight", MixTensor::kAttnQ, q, dim, d.wq);
    matrix("attn_k.weight", MixTensor::kAttnK, kv, dim, d.wk);
    matrix("attn_v.weight", MixTensor::kAttnV, kv, dim, d.wv);
  }
  matrix("attn_output.weight", MixTensor::kAttnOutput, dim, q, d.wo, out_scale);
  if (IsGptOss(o)) AddAttentionBiases(o, c, src, p, b);
  if (IsQwen2Moe(o)) AddQkvBiases(o, c, src, p, b);
  // gpt-oss's files name the FFN's pre-norm post_attention_norm (the same draws).
  b->AddVector(p + (IsGptOss(o) ? "post_attention_norm.weight" : "ffn_norm.weight"), dim,
               NormRow(o, (c.n_layers + ul) * dim));
  AddExtraNorms(o, c, ul, p, b);
  if (c.moe()) return AddExperts(o, c, d, l, b);  // grown models are dense (validated)
  if (fused) {
    b->AddMatrix(
        p + "ffn_up.weight", 2 * hidden, dim, type_of(MixTensor::kFfnUp),
        StackedRows({{hidden, rows_of(hidden, dim, d.w1)}, {hidden, rows_of(hidden, dim, d.w3)}}));
  } else {
    matrix("ffn_gate.weight", MixTensor::kFfnGate, hidden, dim, d.w1);
    matrix("ffn_up.weight", MixTensor::kFfnUp, hidden, dim, d.w3);
  }
  matrix("ffn_down.weight", MixTensor::kFfnDown, dim, hidden, d.w2, out_scale);
}

// rope_freqs.weight of a Llama 3.1/3.2 file: F32 divisors, one per RoPE pair of a head.
void AddLlama3RopeFreqs(const ModelConfig& c, LlamaGgufBuilder* b) {
  b->AddVector(
      "rope_freqs.weight", c.head_dim() / 2,
      [factors = Llama3RopeFactors(c.head_dim(), c.rope_theta)](int64_t, std::span<float> out) {
        std::copy(factors.begin(), factors.end(), out.begin());
      });
}

// Phi-3's LongRoPE tensors (F32, one divisor per rotated pair) and their keys.
void AddLongRope(const GeneratorOptions& o, const ModelConfig& c, LlamaGgufBuilder* b) {
  const LongRopeFactors f =
      MakeLongRopeFactors(c.rotary_dims(), c.context_length,
                          o.rope_orig_context > 0 ? o.rope_orig_context : c.context_length);
  for (const auto& [name, values] : {std::pair{"rope_factors_long.weight", f.long_factors},
                                     std::pair{"rope_factors_short.weight", f.short_factors}}) {
    b->AddVector(name, c.rotary_dims() / 2, [values](int64_t, std::span<float> out) {
      std::copy(values.begin(), values.end(), out.begin());
    });
  }
}

// The base model's config: the draws (and the _K_M layer choice) follow it, so a grown file's
// first layers are the base model's.
ModelConfig BaseConfig(const GeneratorOptions& o) {
  GeneratorOptions base = o;
  base.grow_layers = 0;
  return GeneratorConfig(base);
}

void AddTensors(const GeneratorOptions& o, LlamaGgufBuilder* b) {
  const ModelConfig c = BaseConfig(o);
  const DrawLayout d = LayoutOf(c);
  const auto mixed = [&](MixTensor tensor) {
    return QuantMixTensorType(o.mix, o.weight_type, tensor, 0, c.n_layers, c.n_heads / c.n_kv_heads,
                              o.tied_embeddings);
  };
  b->AddMatrix("token_embd.weight", c.vocab_size, c.dim,
               o.embedding_type.value_or(mixed(MixTensor::kTokenEmbd)),
               DrawnRows(o, 0, c.dim, o.embedding_spread));
  for (int l = 0; l < c.n_layers + o.grow_layers; l++) {
    const bool grown = l >= c.n_layers;
    AddLayer(o, c, d, l, l % c.n_layers, grown ? o.grow_epsilon : 1.0f, b);
  }
  b->AddVector("output_norm.weight", c.dim, NormRow(o, uint64_t(2) * c.n_layers * c.dim));
  if (!o.tied_embeddings) {
    b->AddMatrix("output.weight", c.vocab_size, c.dim, mixed(MixTensor::kOutput),
                 DrawnRows(o, d.output, c.dim, o.classifier_gain * FanInSpread(c.dim)));
  }
  if (o.llama3_rope_freqs) AddLlama3RopeFreqs(c, b);
  if (o.longrope) AddLongRope(o, c, b);
}

shared::Status CheckRange(const char* what, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return shared::Status::Ok();
  return shared::InvalidArgument(std::string(what) + " " + std::to_string(v) + " is outside [" +
                                 std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// Partial rotary, LongRoPE, the original context and the window are phi3's options; the rotated
// dims an even count up to the head size.
shared::Status CheckPhi3Options(const GeneratorOptions& o) {
  const bool phi3 = o.architecture == "phi3";
  if (!phi3 &&
      (o.longrope || (o.rope_orig_context != 0 && !IsGptOss(o)) || o.sliding_window != 0)) {
    return shared::InvalidArgument(
        "LongRoPE, the rope original context and the sliding window are written for phi3 only "
        "(the original context for gpt-oss's yarn too)");
  }
  if (o.yarn_factor != 0.0f &&
      (!IsGptOss(o) || !std::isfinite(o.yarn_factor) || o.yarn_factor < 1.0f)) {
    return shared::InvalidArgument("a yarn factor is written for gpt-oss only, finite and >= 1");
  }
  const int head = o.head_dim > 0 ? o.head_dim : o.dim / std::max(1, o.n_heads);
  if (o.rope_dims != 0 && (!phi3 || o.rope_dims < 2 || o.rope_dims > head || o.rope_dims % 2)) {
    return shared::InvalidArgument("rope dims " + std::to_string(o.rope_dims) +
                                   " must be an even count up to the head size (" +
                                   std::to_string(head) + "), below it for phi3 only");
  }
  SM_RETURN_IF_ERROR(CheckRange("rope original context", o.rope_orig_context, 0, kMaxContext));
  return CheckRange("sliding window", o.sliding_window, 0, kMaxContext);
}

// The window and soft-caps only where the family has them; gemma's embeddings are tied (llama.cpp
// reads no output.weight for gemma2).
shared::Status CheckGemmaOptions(const GeneratorOptions& o, const ArchDescription& d) {
  if ((o.window && d.swa_period < 0) || (o.attn_softcap && d.attn_softcap == 0.0f) ||
      (o.final_softcap && !d.final_softcap_key)) {
    return shared::InvalidArgument(
        "a sliding window and soft-caps are for gemma2 (both caps) and "
        "gemma3 (the window and the final cap)");
  }
  if (IsGemma(o) && (o.n_experts != 0 || o.n_experts_used != 0)) {
    return shared::InvalidArgument(o.architecture + " has no experts");
  }
  if (IsGptOss(o) && o.tied_embeddings) {
    return shared::InvalidArgument("gpt-oss models have an untied output.weight (drop --tied)");
  }
  if (IsGemma(o) && !o.tied_embeddings) {
    return shared::InvalidArgument(o.architecture + " models have tied embeddings (--tied)");
  }
  if (o.window && (*o.window < 1 || *o.window > kMaxContext)) {
    return shared::InvalidArgument("window " + std::to_string(*o.window) + " is outside [1, " +
                                   std::to_string(kMaxContext) + "]");
  }
  for (auto [what, cap] : {std::pair{"attention soft-cap", o.attn_softcap},
                           std::pair{"final soft-cap", o.final_softcap}}) {
    if (cap && !(std::isfinite(*cap) && *cap > 0.0f)) {
      return shared::InvalidArgument(std::string(what) + " " + std::to_string(*cap) +
                                     " must be finite and > 0");
    }
  }
  return shared::Status::Ok();
}

// Experts: none (both counts 0) for a dense llama or qwen3, else 1..256 experts (qwen3moe needs
// them) of which 1..n are used.
shared::Status CheckExperts(const GeneratorOptions& o) {
  constexpr int kMaxExperts = 256;
  if (o.architecture == "qwen3" && (o.n_experts != 0 || o.n_experts_used != 0)) {
    return shared::InvalidArgument("qwen3 has no experts: use --arch qwen3moe");
  }
  if (NeedsExperts(o) && o.n_experts == 0) {
    return shared::InvalidArgument(o.architecture + " is a mixture of experts: give --experts N");
  }
  if (o.shared_expert_ffn_dim != 0 &&
      (!IsQwen2Moe(o) || o.shared_expert_ffn_dim < 1 || o.shared_expert_ffn_dim > 4 * kMaxDim)) {
    return shared::InvalidArgument("a shared expert width is for qwen2moe only, in [1, " +
                                   std::to_string(4 * kMaxDim) + "]");
  }
  if (o.n_experts == 0 && o.n_experts_used == 0) return shared::Status::Ok();
  SM_RETURN_IF_ERROR(CheckRange("experts", o.n_experts, 1, kMaxExperts));
  return CheckRange("experts used per token", o.n_experts_used, 1, o.n_experts);
}

shared::Status CheckSpread(const char* what, float v, bool zero_ok) {
  if (std::isfinite(v) && (v > 0.0f || (zero_ok && v == 0.0f))) return shared::Status::Ok();
  return shared::InvalidArgument(std::string(what) + " " + std::to_string(v) + " must be " +
                                 (zero_ok ? "finite and >= 0" : "finite and > 0"));
}

// general.file_type: llama.cpp's for the mix, else the weight type's.
std::optional<uint32_t> LlamaFileTypeOf(const GeneratorOptions& o) {
  if (o.mix == QuantMix::kNone) return std::nullopt;
  return QuantMixFileType(o.mix);
}

}  // namespace

shared::Result<GeneratorOptions> GeneratorPreset(std::string_view preset) {
  GeneratorOptions o;  // the defaults are the tiny preset
  if (preset == "tiny") return o;
  const bool small = preset == "bench-110M";
  if (!small && preset != "bench-1B") {
    return shared::InvalidArgument("unknown preset '" + std::string(preset) +
                                   "' (presets: tiny, bench-110M, bench-1B)");
  }
  o.name = "smallmind-" + std::string(preset);
  o.dim = small ? 768 : 2048;
  o.hidden_dim = small ? 2048 : 5632;
  o.n_layers = small ? 12 : 22;
  o.n_heads = small ? 12 : 32;
  o.n_kv_heads = small ? 12 : 4;
  o.vocab_size = 32000;
  o.context_length = 2048;
  o.tied_embeddings = false;
  o.init = WeightInit::kGaussian;
  // Unit-RMS embeddings match the scale every block adds to the residual stream; a logit spread
  // of 4 over 32000 tokens leaves a clear but not one-hot top-1; 10% norm noise breaks the
  // symmetry of all-ones norms without changing scales.
  o.embedding_spread = 1.0f;
  o.classifier_gain = 4.0f;
  o.norm_noise = 0.1f;
  return o;
}

shared::Status SetWeightScheme(std::string_view name, GeneratorOptions* o) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::optional<QuantMix> mix = QuantMixFromName(lower);
  o->mix = mix.value_or(QuantMix::kNone);
  if (mix) {
    o->weight_type = QuantMixBaseType(*mix);
    return shared::Status::Ok();
  }
  shared::Result<DType> type = ParseWeightType(name);
  if (!type.ok()) {
    return shared::InvalidArgument(type.status().message() +
                                   ", or a mix: q4_k_m, q5_k_m, q2_k, q3_k_s, q3_k_m, mxfp4_moe");
  }
  o->weight_type = *type;
  return shared::Status::Ok();
}

shared::Status ValidateGeneratorOptions(const GeneratorOptions& o) {
  if (o.name.empty()) return shared::InvalidArgument("the model name must not be empty");
  const ArchDescription* arch = FindArch(o.architecture);
  if (arch == nullptr ||
      (o.architecture != "llama" && o.architecture != "qwen3" && o.architecture != "phi3" &&
       o.architecture != "smollm3" && !IsGemma(o) && !NeedsExperts(o))) {
    return shared::InvalidArgument("architecture '" + o.architecture +
                                   "' is not one modelgen writes (llama, qwen3, qwen3moe, phi3, "
                                   "smollm3, gemma2, gemma3, gpt-oss, qwen2moe, olmoe)");
  }
  SM_RETURN_IF_ERROR(CheckExperts(o));
  SM_RETURN_IF_ERROR(CheckGemmaOptions(o, *arch));
  if (o.architecture != "llama" && o.llama3_rope_freqs) {
    return shared::InvalidArgument("rope_freqs (llama3) is for the llama architecture");
  }
  SM_RETURN_IF_ERROR(CheckPhi3Options(o));
  SM_RETURN_IF_ERROR(CheckRange("dim", o.dim, 1, kMaxDim));
  SM_RETURN_IF_ERROR(CheckRange("ffn (hidden) size", o.hidden_dim, 1, 4 * kMaxDim));
  SM_RETURN_IF_ERROR(CheckRange("layers", o.n_layers, 1, kMaxLayers));
  SM_RETURN_IF_ERROR(CheckRange("grown layers", o.grow_layers, 0, kMaxLayers - o.n_layers));
  SM_RETURN_IF_ERROR(CheckSpread("grow_epsilon", o.grow_epsilon, true));
  if (o.grow_layers > 0 && o.n_experts > 0) {
    return shared::InvalidArgument("grown models (--grow-layers) are dense: drop --experts");
  }
  SM_RETURN_IF_ERROR(CheckRange("heads", o.n_heads, 1, o.dim));
  SM_RETURN_IF_ERROR(CheckRange("kv heads", o.n_kv_heads, 1, o.n_heads));
  SM_RETURN_IF_ERROR(CheckRange("context", o.context_length, 1, kMaxContext));
  SM_RETURN_IF_ERROR(CheckRange("vocab", o.vocab_size, kByteVocabSize, kMaxSyntheticVocabSize));
  SM_RETURN_IF_ERROR(CheckRange("head size", o.head_dim, 0, kMaxDim));
  const bool explicit_head = o.head_dim > 0;
  const int head = explicit_head ? o.head_dim : o.dim / o.n_heads;
  if ((!explicit_head && o.dim % o.n_heads != 0) || o.n_heads % o.n_kv_heads != 0 ||
      head % 2 != 0) {
    return shared::InvalidArgument(
        "heads must divide dim into an even head size (or --head-dim name an even one) and kv "
        "heads must divide heads (dim " +
        std::to_string(o.dim) + ", heads " + std::to_string(o.n_heads) + ", kv heads " +
        std::to_string(o.n_kv_heads) + ", head size " + std::to_string(head) + ")");
  }
  if (!IsWritableWeightType(o.weight_type) ||
      (o.embedding_type && !IsWritableWeightType(*o.embedding_type))) {
    return shared::InvalidArgument(
        "weight types must be F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, "
        "Q5_K, Q6_K, IQ4_XS or MXFP4");
  }
  if (o.mix != QuantMix::kNone && o.weight_type != QuantMixBaseType(o.mix)) {
    return shared::InvalidArgument(
        std::string("this mix needs the ") +
        kernels::GetDTypeTraits(static_cast<uint32_t>(QuantMixBaseType(o.mix)))->name +
        " weight type");
  }
  SM_RETURN_IF_ERROR(CheckSpread("rms_norm_eps", o.rms_norm_eps, false));
  SM_RETURN_IF_ERROR(CheckSpread("rope_theta", o.rope_theta, false));
  SM_RETURN_IF_ERROR(CheckSpread("embedding_spread", o.embedding_spread, false));
  SM_RETURN_IF_ERROR(CheckSpread("classifier_gain", o.classifier_gain, false));
  return CheckSpread("norm_noise", o.norm_noise, true);
}

namespace {

// What the GGUF loader reads back from a gpt-oss file the builder writes (gpt_oss_arch.cc).
void SetGptOssConfig(const GeneratorOptions& o, ModelConfig* c) {
  c->sliding_window = o.window.value_or(kGptOssDefaultWindow);
  c->swa_period = 2;
  c->ffn_activation = FfnActivation::kSwiGluOai;
  c->expert_weights_norm = false;
  c->expert_gating = ExpertGating::kTopKSoftmax;
  if (o.yarn_factor > 0.0f) {
    c->rope_freq_scale = 1.0f / o.yarn_factor;
    c->rope_yarn = true;
    c->rope_yarn_orig_context = o.rope_orig_context > 0 ? o.rope_orig_context : c->context_length;
    c->rope_attn_factor = YarnMscale(c->rope_freq_scale, 1.0f);
  }
}

}  // namespace

ModelConfig GeneratorConfig(const GeneratorOptions& o) {
  ModelConfig c;
  c.architecture = o.architecture;
  c.dim = o.dim;
  c.hidden_dim = o.hidden_dim;
  c.n_layers = o.n_layers + o.grow_layers;
  c.n_heads = o.n_heads;
  c.n_kv_heads = o.n_kv_heads;
  // Explicit only when it differs from dim / n_heads, as the GGUF loader reads it back.
  if (o.head_dim > 0 && int64_t{o.head_dim} * o.n_heads != o.dim) c.head_size = o.head_dim;
  c.vocab_size = o.vocab_size;
  c.context_length = o.context_length;
  c.rms_norm_eps = o.rms_norm_eps;
  c.rope_theta = o.rope_theta;
  c.rope_style = o.architecture == "llama" || o.architecture == "smollm3" ? RopeStyle::kInterleaved
                                                                          : RopeStyle::kNeox;
  if (const ArchDescription* d = FindArch(o.architecture); d != nullptr && IsGemma(o)) {
    // What the GGUF loader reads back (gguf_arch_options.cc) from the keys the builder writes.
    c.sliding_window = o.window.value_or(d->default_window);
    c.swa_period = c.sliding_window > 0 ? d->swa_period : 0;
    c.rope_theta_swa = c.sliding_window > 0 ? d->swa_rope_theta : 0.0f;
    c.rope_freq_scale_swa = c.sliding_window > 0 && d->swa_rope_theta > 0.0f ? 1.0f : 0.0f;
    c.attn_softcap = o.attn_softcap.value_or(d->attn_softcap);
    c.final_softcap = o.final_softcap.value_or(d->final_softcap);
    c.ffn_activation = d->ffn_activation;
    c.embedding_scale = std::sqrt(static_cast<float>(c.dim));
    const bool wide = c.n_layers == d->wide_query_scale_layers;
    c.query_scale = 1.0f / std::sqrt(static_cast<float>(wide ? c.dim / c.n_heads : c.head_dim()));
  }
  if (o.n_experts > 0) {  // as the GGUF loader reads the file back
    c.n_experts = o.n_experts;
    c.n_experts_used = o.n_experts_used;
    c.expert_ffn_dim = o.hidden_dim;
    // llama.cpp's llama and qwen3moe renormalise, qwen2moe and olmoe do not
    c.expert_weights_norm = !IsQwen2Moe(o) && !IsOlmoe(o);
  }
  if (IsQwen2Moe(o)) {
    c.shared_expert_ffn_dim = o.shared_expert_ffn_dim > 0 ? o.shared_expert_ffn_dim : o.hidden_dim;
  }
  c.qk_norm_whole_row = IsOlmoe(o);
  if (IsGptOss(o)) SetGptOssConfig(o, &c);
  if (o.rope_dims > 0 && o.rope_dims != c.head_dim()) c.rope_dims = o.rope_dims;
  if (o.longrope) {
    c.rope_attn_factor =
        MakeLongRopeFactors(c.rotary_dims(), c.context_length,
                            o.rope_orig_context > 0 ? o.rope_orig_context : c.context_length)
            .attn_factor;
  }
  if (o.architecture == "smollm3") c.no_rope_period = 4;
  return c;
}

namespace {

// phi3's own keys: the original context, the window, LongRoPE's attention factor.
void AddPhi3Keys(const GeneratorOptions& o, const ModelConfig& c, LlamaGgufBuilder* b) {
  if (o.rope_orig_context > 0 && !IsGptOss(o)) {  // gpt-oss's: AddYarnKeys
    b->AddArchU32("rope.scaling.original_context_length",
                  static_cast<uint32_t>(o.rope_orig_context));
  }
  if (o.sliding_window > 0) {
    b->AddArchU32("attention.sliding_window", static_cast<uint32_t>(o.sliding_window));
  }
  if (o.longrope) b->AddArchF32("rope.scaling.attn_factor", c.rope_attn_factor);
}

// gpt-oss's yarn keys, as llama.cpp's converter writes them for gpt-oss-20b.
void AddYarnKeys(const GeneratorOptions& o, const ModelConfig& c, LlamaGgufBuilder* b) {
  if (o.yarn_factor <= 0.0f) return;
  b->AddArchString("rope.scaling.type", "yarn");
  b->AddArchF32("rope.scaling.factor", o.yarn_factor);
  b->AddArchU32("rope.scaling.original_context_length",
                static_cast<uint32_t>(c.rope_yarn_orig_context));
}

// The whole generated model in a builder, ready to write (tensors are produced while writing).
shared::Result<std::unique_ptr<LlamaGgufBuilder>> GeneratedBuilder(const GeneratorOptions& o) {
  SM_RETURN_IF_ERROR(ValidateGeneratorOptions(o));
  SM_ASSIGN_OR_RETURN(SpmVocab vocab, MakeSyntheticSpmVocab(o.vocab_size));
  ChatTokens chat{o.bos_token, o.eos_token, o.special_tokens};
  for (std::string& token : TemplateSpecialTokens(o.chat_template)) {
    chat.specials.push_back(std::move(token));
  }
  SM_ASSIGN_OR_RETURN(std::vector<std::string> notes, ApplyChatTokens(chat, &vocab));
  auto builder = std::make_unique<LlamaGgufBuilder>(GeneratorConfig(o), o.name, o.weight_type,
                                                    LlamaFileTypeOf(o));
  builder->AddSpmVocab(vocab);
  if (!o.chat_template.empty()) {
    builder->AddChatTemplate(o.chat_template);
    notes.insert(notes.begin(),
                 "tokenizer.chat_template: " + std::to_string(o.chat_template.size()) + " bytes");
  }
  for (std::string& note : notes) builder->AddNote(std::move(note));
  AddPhi3Keys(o, GeneratorConfig(o), builder.get());
  AddYarnKeys(o, GeneratorConfig(o), builder.get());
  AddTensors(o, builder.get());
  return builder;
}

}  // namespace

shared::Result<GgufBuildSummary> WriteGeneratedModel(const GeneratorOptions& o,
                                                     const std::string& path,
                                                     const GgufWriter::Progress& progress) {
  SM_ASSIGN_OR_RETURN(std::unique_ptr<LlamaGgufBuilder> builder, GeneratedBuilder(o));
  return builder->WriteFile(path, progress);
}

shared::Result<std::vector<uint8_t>> GenerateModelBuffer(const GeneratorOptions& o,
                                                         GgufBuildSummary* summary) {
  SM_ASSIGN_OR_RETURN(std::unique_ptr<LlamaGgufBuilder> builder, GeneratedBuilder(o));
  return builder->WriteBuffer(summary);
}

}  // namespace smallmind::worker

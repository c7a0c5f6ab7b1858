// Test helpers for engine tests: seeded random llama models in memory with every matrix in a chosen
// weight type (norms F32, optional q/k/v biases), and the F32 copy of a model's dequantized
// weights. Header-only; thread-compatible.
#pragma once

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/low_bit_ref.h"
#include "worker/model/weights.h"

namespace smallmind::worker::testing {

struct RandomModelSpec {
  ModelConfig config;
  kernels::DType matrix_type = kernels::DType::kF32;     // wq..w3 and the classifier
  kernels::DType embedding_type = kernels::DType::kF32;  // token_embedding
  bool biases = false;                                   // qwen2-style q/k/v biases
  bool qk_norm = false;                                  // qwen3-style per-head q/k RMSNorm
  uint32_t seed = 1;
};

// dim 256, hidden 512 (multiples of every block size), 2 layers, 8 heads over 4 KV heads.
inline ModelConfig SmallConfig() {
  ModelConfig c;
  c.dim = 256;
  c.hidden_dim = 512;
  c.n_layers = 2;
  c.n_heads = 8;
  c.n_kv_heads = 4;
  c.vocab_size = 320;
  c.context_length = 256;
  return c;
}

// Fills `out` ([rows, cols] of `type`) from uniform floats in [-scale, scale): float types by
// conversion, quantized types with the reference quantizers (K-quants: dequantized Q8_0 values are
// re-packed by random quant bytes with sane scales, as kernel tests do).
inline void FillTensor(kernels::DType type, int64_t rows, int64_t cols, float scale,
                       std::mt19937& rng, uint8_t* out) {
  using kernels::DType;
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> row(static_cast<size_t>(cols));
  const size_t row_bytes = kernels::RowBytes(*kernels::GetDTypeTraits(uint32_t(type)), cols);
  for (int64_t r = 0; r < rows; r++, out += row_bytes) {
    for (float& v : row) v = dist(rng);
    if (type == DType::kF32) {
      std::memcpy(out, row.data(), row_bytes);
    } else if (type == DType::kF16 || type == DType::kBF16) {
      for (int64_t i = 0; i < cols; i++) {
        const uint16_t h =
            type == DType::kF16 ? kernels::Fp32ToFp16(row[i]) : kernels::Fp32ToBf16(row[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
    } else if (type == DType::kQ8_0) {
      kernels::QuantizeQ8_0Ref(row.data(), reinterpret_cast<kernels::BlockQ8_0*>(out), cols);
    } else if (type == DType::kQ4_0) {
      kernels::QuantizeQ4_0Ref(row.data(), reinterpret_cast<kernels::BlockQ4_0*>(out), cols);
    } else if (type == DType::kQ5_0) {
      kernels::QuantizeQ5_0Ref(row.data(), reinterpret_cast<kernels::BlockQ5_0*>(out), cols);
    } else if (type == DType::kIQ4_NL) {
      kernels::QuantizeIQ4_NLRef(row.data(), reinterpret_cast<kernels::BlockIQ4_NL*>(out), cols);
    } else if (type == DType::kQ4_1) {
      kernels::QuantizeQ4_1Ref(row.data(), reinterpret_cast<kernels::BlockQ4_1*>(out), cols);
    } else if (type == DType::kQ5_1) {
      kernels::QuantizeQ5_1Ref(row.data(), reinterpret_cast<kernels::BlockQ5_1*>(out), cols);
    } else if (type == DType::kQ2_K) {
      kernels::QuantizeQ2_KRef(row.data(), reinterpret_cast<kernels::BlockQ2_K*>(out), cols);
    } else if (type == DType::kQ3_K) {
      kernels::QuantizeQ3_KRef(row.data(), reinterpret_cast<kernels::BlockQ3_K*>(out), cols);
    } else if (type == DType::kMXFP4) {
      kernels::QuantizeMXFP4Ref(row.data(), reinterpret_cast<kernels::BlockMXFP4*>(out), cols);
    } else {  // K-quants: random quants, scales chosen so values stay within about +-scale
      for (size_t i = 0; i < row_bytes; i++) out[i] = static_cast<uint8_t>(rng());
      for (int64_t b = 0; b < cols / kernels::kQkK; b++) {
        if (type == DType::kQ4_K) {
          auto* blk = reinterpret_cast<kernels::BlockQ4_K*>(out) + b;
          blk->d = kernels::Fp32ToFp16(2 * scale / (15 * 63));
          blk->dmin = kernels::Fp32ToFp16(scale / 63);
        } else if (type == DType::kIQ4_XS) {
          reinterpret_cast<kernels::BlockIQ4_XS*>(out)[b].d =
              kernels::Fp32ToFp16(scale / (32 * 127));
        } else if (type == DType::kQ5_K) {
          auto* blk = reinterpret_cast<kernels::BlockQ5_K*>(out) + b;
          blk->d = kernels::Fp32ToFp16(2 * scale / (31 * 63));
          blk->dmin = kernels::Fp32ToFp16(scale / 63);
        } else {
          reinterpret_cast<kernels::BlockQ6_K*>(out)[b].d = kernels::Fp32ToFp16(scale / (32 * 127));
        }
      }
    }
  }
}

inline LlamaModel MakeRandomModel(const RandomModelSpec& spec) {
  using kernels::DType;
  const ModelConfig& c = spec.config;
  struct Entry {
    TensorView* view;
    DType type;
    int64_t rows, cols;
    float scale;
  };
  LlamaModel m;
  m.config = c;
  Weights& w = m.weights;
  w.layers.resize(c.n_layers);
  std::vector<Entry> entries = {{&w.token_embedding, spec.embedding_type, c.vocab_size, c.dim, 1},
                                {&w.final_norm, DType::kF32, 1, c.dim, 0},
                                {&w.classifier, spec.matrix_type, c.vocab_size, c.dim, 0.2f}};
  const float in_scale = 1.0f / std::sqrt(static_cast<float>(c.dim));
  const float hidden_scale = 1.0f / std::sqrt(static_cast<float>(c.hidden_dim));
  for (LayerWeights& l : w.layers) {
    const DType t = spec.matrix_type;
    entries.insert(entries.end(),
                   {{&l.attn_norm, DType::kF32, 1, c.dim, 0},
                    {&l.wq, t, c.q_dim(), c.dim, in_scale},
                    {&l.wk, t, c.kv_dim(), c.dim, in_scale},
                    {&l.wv, t, c.kv_dim(), c.dim, in_scale},
                    {&l.wo, t, c.dim, c.q_dim(), 1.0f / std::sqrt(static_cast<float>(c.q_dim()))},
                    {&l.ffn_norm, DType::kF32, 1, c.dim, 0},
                    {&l.w1, t, c.hidden_dim, c.dim, in_scale},
                    {&l.w2, t, c.dim, c.hidden_dim, hidden_scale},
                    {&l.w3, t, c.hidden_dim, c.dim, in_scale}});
    if (spec.qk_norm) {
      entries.insert(entries.end(), {{&l.q_norm, DType::kF32, 1, c.head_dim(), 0},
                                     {&l.k_norm, DType::kF32, 1, c.head_dim(), 0}});
    }
    if (spec.biases) {
      entries.insert(entries.end(), {{&l.bq, DType::kF32, 1, c.q_dim(), 0.5f},
                                     {&l.bk, DType::kF32, 1, c.kv_dim(), 0.5f},
                                     {&l.bv, DType::kF32, 1, c.kv_dim(), 0.5f}});
    }
  }
  size_t total = 0;
  std::vector<size_t> offsets;
  for (const Entry& e : entries) {
    offsets.push_back(total);
    total += (kernels::RowBytes(*kernels::GetDTypeTraits(uint32_t(e.type)), e.cols) * e.rows + 63) /
             64 * 64;
  }
  w.storage = WeightStorage::Allocate(total);
  std::mt19937 rng(spec.seed);
  for (size_t i = 0; i < entries.size(); i++) {
    const Entry& e = entries[i];
    uint8_t* out = reinterpret_cast<uint8_t*>(w.storage.mutable_data()) + offsets[i];
    if (e.scale == 0) {  // norm weights: 1 + small noise
      std::uniform_real_distribution<float> noise(0.9f, 1.1f);
      for (int64_t j = 0; j < e.cols; j++) reinterpret_cast<float*>(out)[j] = noise(rng);
    } else {
      FillTensor(e.type, e.rows, e.cols, e.scale, rng, out);
    }
    *e.view = TensorView{e.type, out, e.rows, e.cols};
  }
  return m;
}

// The same model with every tensor dequantized to F32 (exactly as kernels/ref/dequant_ref does).
inline LlamaModel DequantizedCopy(const LlamaModel& src) {
  LlamaModel m;
  m.config = src.config;
  const Weights& s = src.weights;
  Weights& w = m.weights;
  w.layers.resize(s.layers.size());
  std::vector<std::pair<const TensorView*, TensorView*>> pairs = {
      {&s.token_embedding, &w.token_embedding},
      {&s.final_norm, &w.final_norm},
      {&s.classifier, &w.classifier}};
  for (size_t l = 0; l < s.layers.size(); l++) {
    const LayerWeights& a = s.layers[l];
    LayerWeights& b = w.layers[l];
    pairs.insert(pairs.end(), {{&a.attn_norm, &b.attn_norm},
                               {&a.wq, &b.wq},
                               {&a.wk, &b.wk},
                               {&a.wv, &b.wv},
                               {&a.wo, &b.wo},
                               {&a.ffn_norm, &b.ffn_norm},
                               {&a.w1, &b.w1},
                               {&a.w2, &b.w2},
                               {&a.w3, &b.w3},
                               {&a.bq, &b.bq},
                               {&a.bk, &b.bk},
                               {&a.bv, &b.bv}});
  }
  size_t total = 0;
  for (const auto& [from, to] : pairs) total += from->present() ? from->rows * from->cols * 4 : 0;
  w.storage = WeightStorage::Allocate(total);
  auto* out = reinterpret_cast<float*>(w.storage.mutable_data());
  for (const auto& [from, to] : pairs) {
    if (!from->present()) continue;
    kernels::DequantizeRef(from->type, from->data, out, from->rows * from->cols);
    *to = TensorView{kernels::DType::kF32, out, from->rows, from->cols};
    out += from->rows * from->cols;
  }
  return m;
}

}  // namespace smallmind::worker::testing

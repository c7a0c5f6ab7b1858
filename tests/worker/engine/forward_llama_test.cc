// Checks the whole forward pass against an independent float64 llama written plainly below, on the
// builtin tiny model (GQA: 4 query heads over 2 KV heads), for both RoPE layouts.
#include "worker/engine/forward_llama.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "tests/worker/engine/moe_models.h"
#include "tests/worker/engine/test_models.h"
#include "worker/engine/engine.h"
#include "worker/modelgen/builtin_tiny.h"

namespace smallmind::worker {
namespace {

using Vec = std::vector<double>;

Vec MatVec(const TensorView& w, const Vec& x) {
  Vec y(w.rows, 0.0);
  for (int64_t r = 0; r < w.rows; r++) {
    for (int64_t j = 0; j < w.cols; j++) y[r] += w.f32()[r * w.cols + j] * x[j];
  }
  return y;
}

void AddBias(Vec& x, const TensorView& b) {
  if (!b.present()) return;
  for (size_t i = 0; i < x.size(); i++) x[i] += b.f32()[i];
}

Vec RmsNorm(const Vec& x, const TensorView& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double inv = 1.0 / std::sqrt(ss / x.size() + eps);
  Vec out(x.size());
  for (size_t i = 0; i < x.size(); i++) out[i] = w.f32()[i] * x[i] * inv;
  return out;
}

// Each head_dim-wide head of x RMS-normed by w (qwen3's q/k norm); nothing when w is absent.
void HeadNorm(Vec& x, const TensorView& w, int head_dim, double eps) {
  if (!w.present()) return;
  for (size_t h = 0; h * head_dim < x.size(); h++) {
    const Vec head(x.begin() + h * head_dim, x.begin() + (h + 1) * head_dim);
    const Vec normed = RmsNorm(head, w, eps);
    std::copy(normed.begin(), normed.end(), x.begin() + h * head_dim);
  }
}

void Rope(Vec& x, int n_heads, int head_dim, int pos, double theta, RopeStyle style) {
  for (int h = 0; h < n_heads; h++) {
    double* v = x.data() + h * head_dim;
    for (int i = 0; i < head_dim / 2; i++) {
      const int a = style == RopeStyle::kNeox ? i : 2 * i;
      const int b = style == RopeStyle::kNeox ? i + head_dim / 2 : 2 * i + 1;
      const double angle = pos * std::pow(theta, -2.0 * i / head_dim);
      const double v0 = v[a], v1 = v[b];
      v[a] = v0 * std::cos(angle) - v1 * std::sin(angle);
      v[b] = v0 * std::sin(angle) + v1 * std::cos(angle);
    }
  }
}

Vec SwiGluFfn(const TensorView& w1, const TensorView& w3, const TensorView& w2, const Vec& xb) {
  Vec g = MatVec(w1, xb), u = MatVec(w3, xb);
  for (size_t i = 0; i < g.size(); i++) g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
  return MatVec(w2, g);
}

// A mixture of experts' FFN: softmax of the router's scores, the top k (lower index on a tie),
// their weights renormalised when the config says so, the weighted sum of those experts' FFNs,
// plus a shared expert's FFN scaled by the sigmoid of its gate when the config has one.
Vec MoeFfnReference(const ModelConfig& c, const LayerWeights& lw, const Vec& xb) {
  Vec p = MatVec(lw.router, xb);
  const double max_p = *std::max_element(p.begin(), p.end());
  double sum = 0;
  for (double& v : p) sum += (v = std::exp(v - max_p));
  for (double& v : p) v /= sum;
  std::vector<int> order(p.size());
  for (size_t e = 0; e < order.size(); e++) order[e] = static_cast<int>(e);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
  double picked = 0;
  for (int j = 0; j < c.n_experts_used; j++) picked += p[order[j]];
  Vec out(c.dim, 0.0);
  for (int j = 0; j < c.n_experts_used; j++) {
    const int e = order[j];
    const double weight = c.expert_weights_norm ? p[e] / picked : p[e];
    const Vec y = SwiGluFfn(lw.gate_exps[e], lw.up_exps[e], lw.down_exps[e], xb);
    for (int i = 0; i < c.dim; i++) out[i] += weight * y[i];
  }
  if (c.shared_expert_ffn_dim > 0) {  // qwen2moe: + sigmoid(shexp_gate . xb) * its SwiGLU FFN
    const double gate = 1.0 / (1.0 + std::exp(-MatVec(lw.shexp_gate, xb)[0]));
    const Vec y = SwiGluFfn(lw.w1, lw.w3, lw.w2, xb);
    for (int i = 0; i < c.dim; i++) out[i] += gate * y[i];
  }
  return out;
}

// Logits of the last of `tokens` (at positions 0..n-1), computed in float64 with a contiguous
// cache.
Vec ReferenceLogits(const ModelConfig& c, const Weights& w, const std::vector<TokenId>& tokens) {
  const int hd = c.head_dim(), n = static_cast<int>(tokens.size());
  std::vector<std::vector<Vec>> k_cache(c.n_layers), v_cache(c.n_layers);  // [layer][pos][kv_dim]
  Vec x;
  for (int pos = 0; pos < n; pos++) {
    x.assign(w.token_embedding.f32() + tokens[pos] * c.dim,
             w.token_embedding.f32() + (tokens[pos] + 1) * c.dim);
    for (int l = 0; l < c.n_layers; l++) {
      const LayerWeights& lw = w.layers[l];
      Vec xb = RmsNorm(x, lw.attn_norm, c.rms_norm_eps);
      Vec q = MatVec(lw.wq, xb), k = MatVec(lw.wk, xb), v = MatVec(lw.wv, xb);
      AddBias(q, lw.bq);
      AddBias(k, lw.bk);
      AddBias(v, lw.bv);
      // olmoe: one "head" of the whole row
      HeadNorm(q, lw.q_norm, c.qk_norm_whole_row ? c.q_dim() : hd, c.rms_norm_eps);
      HeadNorm(k, lw.k_norm, c.qk_norm_whole_row ? c.kv_dim() : hd, c.rms_norm_eps);
      Rope(q, c.n_heads, hd, pos, c.rope_theta, c.rope_style);
      Rope(k, c.n_kv_heads, hd, pos, c.rope_theta, c.rope_style);
      k_cache[l].push_back(k);
      v_cache[l].push_back(v);
      Vec att(c.q_dim(), 0.0);
      for (int h = 0; h < c.n_heads; h++) {
        const int kv = (h / c.kv_group()) * hd;
        Vec s(pos + 1);
        double max_s = -1e300, sum = 0;
        for (int p = 0; p <= pos; p++) {
          s[p] = 0;
          for (int i = 0; i < hd; i++) s[p] += q[h * hd + i] * k_cache[l][p][kv + i];
          s[p] /= std::sqrt(static_cast<double>(hd));
          max_s = std::max(max_s, s[p]);
        }
        for (double& v : s) sum += (v = std::exp(v - max_s));
        for (int p = 0; p <= pos; p++) {
          for (int i = 0; i < hd; i++) att[h * hd + i] += s[p] / sum * v_cache[l][p][kv + i];
        }
      }
      Vec o = MatVec(lw.wo, att);
      for (int i = 0; i < c.dim; i++) x[i] += o[i];
      xb = RmsNorm(x, lw.ffn_norm, c.rms_norm_eps);
      const Vec d = c.moe() ? MoeFfnReference(c, lw, xb) : SwiGluFfn(lw.w1, lw.w3, lw.w2, xb);
      for (int i = 0; i < c.dim; i++) x[i] += d[i];
    }
  }
  return MatVec(w.classifier, RmsNorm(x, w.final_norm, c.rms_norm_eps));
}

// got within `tolerance` of want everywhere, and want large enough to tell logits apart.
void ExpectLogitsNear(std::span<const float> got, const Vec& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  double max_err = 0, max_abs = 0;
  for (size_t i = 0; i < want.size(); i++) {
    max_err = std::max(max_err, std::fabs(got[i] - want[i]));
    max_abs = std::max(max_abs, std::fabs(want[i]));
  }
  EXPECT_GT(max_abs, 0.5) << "logits too small to tell anything apart";
  EXPECT_LT(max_err, tolerance) << "largest |logit| " << max_abs;
}

void ExpectEngineMatchesReference(const ModelConfig& config, const Weights& weights) {
  KvPool pool(config, 8, 4);
  Engine engine(config, weights, &pool, EngineOptions{32, 1});
  const std::vector<TokenId> tokens = {1,  72,  101, 108, 108, 111, 44,
                                       32, 119, 111, 114, 108, 100, 33};
  const std::vector<int32_t> blocks = {6, 1, 4, 3};
  StepPlan plan;
  plan.seqs.push_back(SeqStep{tokens, 0, blocks, true});
  engine.Step(plan);
  ExpectLogitsNear(engine.Logits(0), ReferenceLogits(config, weights, tokens), 1e-4);
}

TEST(ForwardLlamaTest, MatchesAFloat64LlamaWithInterleavedRope) {
  const LlamaModel m = MakeBuiltinTinyModel();
  ExpectEngineMatchesReference(m.config, m.weights);
}

TEST(ForwardLlamaTest, MatchesAFloat64LlamaWithNeoxRope) {
  const LlamaModel m = MakeBuiltinTinyModel();
  ModelConfig neox = m.config;
  neox.rope_style = RopeStyle::kNeox;
  ExpectEngineMatchesReference(neox, m.weights);
}

TEST(ForwardLlamaTest, MatchesAFloat64LlamaWithQkvBiases) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.config.rope_style = RopeStyle::kNeox;  // as qwen2
  spec.biases = true;
  const LlamaModel m = testing::MakeRandomModel(spec);
  ExpectEngineMatchesReference(m.config, m.weights);
}

// Heads wider than dim / heads (Qwen3, Gemma): q and the attention output are n_heads x 64 = 512
// wide over a 256-wide embedding, and the KV rows n_kv_heads x 64.
TEST(ForwardLlamaTest, MatchesAFloat64LlamaWithAnExplicitHeadSize) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.config.head_size = 64;
  ASSERT_NE(spec.config.head_size * spec.config.n_heads, spec.config.dim);
  const LlamaModel m = testing::MakeRandomModel(spec);
  EXPECT_EQ(m.weights.layers[0].wq.rows, 512);
  EXPECT_EQ(m.weights.layers[0].wo.cols, 512);
  ExpectEngineMatchesReference(m.config, m.weights);
}

// Qwen3: each head's q and k RMS-normed (weights [head_dim]) before NeoX RoPE, heads of 64 over a
// 256-wide embedding.
TEST(ForwardLlamaTest, MatchesAFloat64LlamaWithPerHeadQkNorms) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.config.rope_style = RopeStyle::kNeox;
  spec.config.head_size = 64;
  spec.qk_norm = true;
  const LlamaModel m = testing::MakeRandomModel(spec);
  ASSERT_TRUE(m.weights.layers[0].q_norm.present());
  ExpectEngineMatchesReference(m.config, m.weights);
}

// Mixtures of experts (qwen3moe with per-head q/k norms and NeoX RoPE; Mixtral-style llama;
// qwen2moe with q/k/v biases, unrenormalised weights and a gated shared expert; olmoe with
// whole-row q/k norms and unrenormalised weights): a 14-token prompt in one step routes its tokens
// to different experts, which the engine groups by expert; each token must still get the float64
// mixture of its own top 2 of 8 experts.
TEST(ForwardLlamaTest, MixturesOfExpertsMatchAFloat64MixtureOnEveryThreadCount) {
  for (const char* arch : {"qwen3moe", "llama", "qwen2moe", "olmoe"}) {
    SCOPED_TRACE(arch);
    const LlamaModel m = testing::MakeMoeModel(arch, kernels::DType::kF32);
    ASSERT_TRUE(m.config.moe());
    ASSERT_EQ(m.weights.layers[0].gate_exps.count(), 8);
    ExpectEngineMatchesReference(m.config, m.weights);
    for (const int threads : {2, 3}) {
      KvPool pool(m.config, 8, 4);
      Engine engine(m.config, m.weights, &pool, EngineOptions{32, 1, threads});
      const std::vector<TokenId> tokens = {1, 72, 101, 108, 108, 111, 44, 32, 119};
      const std::vector<int32_t> blocks = {3, 0, 2};
      StepPlan plan;
      plan.seqs.push_back(SeqStep{tokens, 0, blocks, true});
      engine.Step(plan);
      ExpectLogitsNear(engine.Logits(0), ReferenceLogits(m.config, m.weights, tokens), 1e-4);
    }
  }
}

// A 16-token chunk 200 positions into the context, after a 200-token chunk, as a prefix-cache hit
// runs: its attention is one item per KV head that the engine cuts among its threads (the
// parallel path finer than one part a thread, taken as threads finish). Every path, thread count
// and cache type must still give the float64 logits of the whole prompt.
TEST(ForwardLlamaTest, AShortChunkDeepInTheContextMatchesAFloat64LlamaOnEveryThreadCount) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();  // 8 query heads over 4 KV heads
  const LlamaModel m = testing::MakeRandomModel(spec);
  const ModelConfig& c = m.config;
  constexpr int kFirst = 200, kTotal = 216, kBlock = 16, kBlocks = (kTotal + kBlock - 1) / kBlock;
  std::mt19937 rng(5);
  std::vector<TokenId> tokens(kTotal);
  for (TokenId& t : tokens) t = 1 + static_cast<TokenId>(rng() % (c.vocab_size - 1));
  const Vec want = ReferenceLogits(c, m.weights, tokens);
  std::vector<int32_t> blocks(kBlocks);
  for (int i = 0; i < kBlocks; i++) blocks[i] = (5 * i + 3) % kBlocks;  // scrambled pages
  const std::span<const TokenId> all(tokens);
  for (const kernels::KvType kv : {kernels::KvType::kF32, kernels::KvType::kF16}) {
    for (const kernels::ExecMode mode :
         {kernels::ExecMode::kParallel, kernels::ExecMode::kDeterministic}) {
      for (const int threads : {1, 2, 3}) {
        SCOPED_TRACE(::testing::Message()
                     << "kv " << kernels::KvTypeName(kv) << ", "
                     << (mode == kernels::ExecMode::kParallel ? "parallel" : "deterministic")
                     << ", " << threads << " threads");
        KvPool pool(c, kBlocks, kBlock, kv);
        EngineOptions options;
        options.max_step_tokens = kTotal;
        options.max_seqs = 1;
        options.num_threads = threads;
        Engine engine(c, m.weights, &pool, options);
        StepPlan plan;
        plan.mode = mode;
        plan.seqs.push_back(SeqStep{all.first(kFirst), 0, blocks, false});
        engine.Step(plan);
        plan.seqs[0] = SeqStep{all.subspan(kFirst), kFirst, blocks, true};
        engine.Step(plan);
        // An f16 cache rounds every K and V to 11 significant bits.
        ExpectLogitsNear(engine.Logits(0), want, kv == kernels::KvType::kF32 ? 1e-4 : 2e-2);
      }
    }
  }
}

}  // namespace
}  // namespace smallmind::worker

#include "worker/engine/moe_ffn.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace smallmind::worker {
namespace {

// Fills a->moe_first (each expert's first routed row; experts in index order, an expert's tokens
// in step order) and a->moe_row (the row of each (token, slot)) from a->moe_expert. Returns the
// number of routed rows, n * k.
int GroupByExpert(int n_experts, int k, int n, Activations* a) {
  int32_t* first = a->moe_first.data();  // [n_experts + 1]
  std::fill(first, first + n_experts + 1, 0);
  const int routed = n * k;
  for (int i = 0; i < routed; i++) first[a->moe_expert[i] + 1]++;
  for (int e = 0; e < n_experts; e++) first[e + 1] += first[e];
  // moe_row doubles as the fill cursor: each expert's next free row, taken in (token, slot) order.
  int32_t* cursor = a->moe_row.data();
  for (int i = 0; i < routed; i++) cursor[i] = first[a->moe_expert[i]]++;
  for (int e = n_experts; e > 0; e--) first[e] = first[e - 1];  // undo the cursor's advance
  first[0] = 0;
  return routed;
}

// The jobs of the experts some row uses: `m` (gate_exps, up_exps or down_exps; `second` a second
// one, or null) of expert e over its group of rows, outputs at row first[e] of y (and y2), rows
// `width` wide. Returns the number of jobs written to jobs.
int ExpertJobs(const ExpertsView& m, const ExpertsView* second, const int32_t* first, int n_experts,
               float* y, float* y2, int width, ExpertMatmul* jobs) {
  int n = 0;
  for (int e = 0; e < n_experts; e++) {
    const int rows = first[e + 1] - first[e];
    if (rows == 0) continue;
    const int64_t offset = static_cast<int64_t>(first[e]) * width;
    jobs[n++] = ExpertMatmul{&m[e], first[e], rows, y + offset};
    if (second != nullptr) jobs[n++] = ExpertMatmul{&(*second)[e], first[e], rows, y2 + offset};
  }
  return n;
}

// x[0, n) = its softmax in place: max, exp of the differences, their sum in double (as ggml sums a
// row), one scale.
void Softmax(float* x, int n) {
  const float max = *std::max_element(x, x + n);
  double sum = 0;
  for (int i = 0; i < n; i++) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float scale = static_cast<float>(1.0 / sum);
  for (int i = 0; i < n; i++) x[i] *= scale;
}

// Each expert's bias row (bias: [n_experts, width]) added to its group of rows of y ([rows,
// width], grouped as a->moe_first says).
void AddExpertBiases(const TensorView& bias, const int32_t* first, int n_experts, int width,
                     float* y, OpRunner& ops) {
  for (int e = 0; e < n_experts; e++) {
    const int rows = first[e + 1] - first[e];
    if (rows == 0) continue;
    TensorView row = bias;
    row.data = bias.f32() + static_cast<int64_t>(e) * width;
    row.rows = 1;
    ops.AddBias(y + static_cast<int64_t>(first[e]) * width, row, rows);
  }
}

// The shared expert of a qwen2moe layer over the step's n rows of xb (`in`): its SwiGLU FFN
// (w1, w3, w2) into a->shexp_out, and its gate sigmoid(shexp_gate . x) into a->shexp_gate.
void SharedExpert(const ModelConfig& c, const LayerWeights& w, MatmulSource* in, int n,
                  OpRunner& ops, Activations* a) {
  const int ffn = c.shared_expert_ffn_dim;
  float* gate = a->shexp_gate.data();  // [n]
  ops.Matmul(w.shexp_gate, in, gate);
  for (int t = 0; t < n; t++) gate[t] = 1.0f / (1.0f + std::exp(-gate[t]));
  float* hb = a->hb.data();    // [n, ffn]
  float* hb2 = a->hb2.data();  // [n, ffn]
  ops.Matmuls({{w.w1, hb}, {w.w3, hb2}}, in);
  ops.GatedActivation(c.ffn_activation, hb, hb2, n, ffn);
  MatmulSource hidden = OpRunner::Source(hb, n, ffn);
  ops.Matmul(w.w2, &hidden, a->shexp_out.data());
}

}  // namespace

void RouteToken(float* probs, int n_experts, int k, bool normalize, int32_t* experts,
                float* weights, ExpertGating gating) {
  if (gating == ExpertGating::kSoftmaxTopK) Softmax(probs, n_experts);
  // Top-k by repeated selection: the largest not yet taken, the lower index on a tie.
  double picked = 0;
  for (int j = 0; j < k; j++) {
    int best = -1;
    for (int e = 0; e < n_experts; e++) {
      const bool taken = std::find(experts, experts + j, e) != experts + j;
      if (!taken && (best < 0 || probs[e] > probs[best])) best = e;
    }
    experts[j] = best;
    weights[j] = probs[best];
    picked += probs[best];
  }
  if (gating == ExpertGating::kTopKSoftmax) {
    Softmax(weights, k);
    picked = 0;
    for (int j = 0; j < k; j++) picked += weights[j];
  }
  if (!normalize) return;
  const auto total = static_cast<float>(picked);
  for (int j = 0; j < k; j++) weights[j] /= total;
}

void MoeFfn(const ModelConfig& c, const LayerWeights& w, const float* xb, int n, OpRunner& ops,
            Activations* a, float* out) {
  const int n_experts = c.n_experts, k = c.n_experts_used, ffn = c.expert_ffn_dim;
  // Route: router scores [n, n_experts], then each token's k experts and weights.
  float* probs = a->router_probs.data();
  MatmulSource in = OpRunner::Source(xb, n, c.dim);
  ops.Matmul(w.router, &in, probs);
  if (w.router_b.present()) ops.AddBias(probs, w.router_b, n);
  if (c.shared_expert_ffn_dim > 0) SharedExpert(c, w, &in, n, ops, a);
  for (int t = 0; t < n; t++) {
    RouteToken(probs + static_cast<int64_t>(t) * n_experts, n_experts, k, c.expert_weights_norm,
               a->moe_expert.data() + t * k, a->moe_weight.data() + t * k, c.expert_gating);
  }
  const int routed = GroupByExpert(n_experts, k, n, a);

  // Gather each routed row's input, grouped by expert: x rows [routed, dim].
  float* x = a->moe_x.data();
  for (int i = 0; i < routed; i++) {
    std::memcpy(x + static_cast<int64_t>(a->moe_row[i]) * c.dim,
                xb + static_cast<int64_t>(i / k) * c.dim, sizeof(float) * c.dim);
  }
  const int32_t* first = a->moe_first.data();
  ExpertMatmul* jobs = a->moe_jobs.data();

  // Experts: gate and up of every used expert in one region (+ their biases), act(gate) * up, then
  // down (+ its bias).
  float* gate = a->moe_gate.data();  // [routed, ffn]
  float* up = a->moe_up.data();      // [routed, ffn]
  float* y = a->moe_y.data();        // [routed, dim]
  MatmulSource expert_in = OpRunner::Source(x, routed, c.dim);
  int n_jobs = ExpertJobs(w.gate_exps, &w.up_exps, first, n_experts, gate, up, ffn, jobs);
  ops.ExpertMatmuls(std::span<const ExpertMatmul>(jobs, n_jobs), &expert_in);
  if (w.gate_exps_b.present()) AddExpertBiases(w.gate_exps_b, first, n_experts, ffn, gate, ops);
  if (w.up_exps_b.present()) AddExpertBiases(w.up_exps_b, first, n_experts, ffn, up, ops);
  ops.GatedActivation(c.ffn_activation, gate, up, routed, ffn);
  MatmulSource hidden = OpRunner::Source(gate, routed, ffn);
  n_jobs = ExpertJobs(w.down_exps, nullptr, first, n_experts, y, nullptr, c.dim, jobs);
  ops.ExpertMatmuls(std::span<const ExpertMatmul>(jobs, n_jobs), &hidden);
  if (w.down_exps_b.present()) AddExpertBiases(w.down_exps_b, first, n_experts, c.dim, y, ops);

  // Combine: out[t] = sum_j weight[t, j] * y[row of (t, j)], slots in order.
  ops.WeightedRowSum(y, a->moe_row.data(), a->moe_weight.data(), k, n, c.dim, out);
  // A shared expert's gated output joins the sum (llama.cpp: moe_out + ffn_shexp * gate).
  if (c.shared_expert_ffn_dim > 0) {
    ops.AddScaledRows(out, a->shexp_out.data(), a->shexp_gate.data(), n, c.dim);
  }
}

}  // namespace smallmind::worker

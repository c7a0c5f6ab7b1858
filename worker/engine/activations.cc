#include "worker/engine/activations.h"

#include <algorithm>
#include <cstddef>

#include "kernels/q8_act.h"
#include "shared/check.h"

namespace smallmind::worker {

namespace {

// Lays buffers out one after another in a region, each 4 KiB aligned: first the sizes (Add),
// then, over the mapped region, the same calls again give each its span.
class Layout {
 public:
  explicit Layout(std::byte* base = nullptr) : base_(base) {}
  template <typename T>
  void Add(std::span<T>* out, size_t n) {
    constexpr size_t kAlign = 4096;
    offset_ = (offset_ + kAlign - 1) / kAlign * kAlign;
    if (base_ != nullptr) *out = std::span<T>(reinterpret_cast<T*>(base_ + offset_), n);
    offset_ += n * sizeof(T);
  }
  size_t bytes() const { return offset_; }

 private:
  std::byte* base_;
  size_t offset_ = 0;
};

// Room for a tile of a prefill chunk (up to kAttentionTileTokens tokens, every head), so the
// kernel reads the cache once for all its tokens, but not past ~768 KiB: the tile's scores are
// written, normalized and read again, and beyond L2 that traffic costs more than the cache
// reads it saves (measured on Zen 3: a 32-head GQA chunk at 2016 positions ran 0.7-0.9x the
// untiled kernel with 8-token tiles, 1.0x with 2; 12-head MHA 5x faster with 7-8). At least
// kAttentionHeadsPerPass rows of the whole context.
int64_t ScoresPerThread(const ModelConfig& c) {
  constexpr int64_t kMaxScoresPerThread = int64_t{3} << 16;  // floats
  const int64_t tile_rows = int64_t{kernels::kAttentionTileTokens} * c.n_heads;
  return std::max<int64_t>(kernels::kAttentionHeadsPerPass * c.context_length,
                           std::min(tile_rows * c.context_length, kMaxScoresPerThread));
}

}  // namespace

Activations::Activations(const ModelConfig& c, int max_step_tokens, int max_seqs_in,
                         int max_threads_in, int max_logit_rows_in)
    : max_tokens(max_step_tokens),
      max_seqs(max_seqs_in),
      max_threads(max_threads_in),
      max_logit_rows(std::max(max_seqs_in, max_logit_rows_in)),
      max_source_rows(max_step_tokens * (c.moe() ? std::max(1, c.n_experts_used) : 1)) {
  SM_CHECK(max_tokens > 0 && max_seqs > 0 && max_threads > 0) << "engine limits must be positive";
  const auto n = static_cast<size_t>(max_tokens);
  scores_per_thread = ScoresPerThread(c);
  // The widest row a matmul reads: dim, q_dim (wo), hidden (w2, a shared expert's), the experts'.
  const int hidden = std::max(c.hidden_dim, c.shared_expert_ffn_dim);
  const int widest = std::max({c.dim, c.q_dim(), hidden, c.expert_ffn_dim});
  const auto rows = static_cast<size_t>(max_source_rows);
  const size_t experts = c.moe() ? static_cast<size_t>(c.n_experts) : 0,
               routed = experts ? rows : 0;
  const auto place = [&](Layout& l) {
    l.Add(&x, n * c.dim);
    l.Add(&xb, n * std::max(c.dim, c.q_dim()));
    l.Add(&xb2, n * c.dim);
    l.Add(&q, n * c.q_dim());
    l.Add(&k, n * c.kv_dim());
    l.Add(&v, n * c.kv_dim());
    l.Add(&hb, n * hidden);
    l.Add(&hb2, n * hidden);
    l.Add(&xq, rows * kernels::Q8ActRowBytes(widest));
    l.Add(&xq_1, rows * kernels::Q8ActRowBytes(widest));
    l.Add(&xq_k, rows * kernels::Q8ActRowBytes(widest));
    l.Add(&xq_octets,
          kernels::Q8ActOctetsBytes(
              max_source_rows + kernels::kQ8ActOctet * static_cast<int>(experts), widest));
    l.Add(&scores, static_cast<size_t>(max_threads * scores_per_thread));
    l.Add(&last_x, static_cast<size_t>(max_logit_rows) * c.dim);
    l.Add(&logits, c.encoder ? 0 : static_cast<size_t>(max_logit_rows) * c.vocab_size);
    l.Add(&pooled, static_cast<size_t>(max_seqs) * c.dim);
    l.Add(&router_probs, experts * n);
    l.Add(&moe_x, routed * c.dim);
    l.Add(&moe_gate, routed * c.expert_ffn_dim);
    l.Add(&moe_up, routed * c.expert_ffn_dim);
    l.Add(&moe_y, routed * c.dim);
    l.Add(&shexp_out, c.shared_expert_ffn_dim > 0 ? n * c.dim : 0);
    l.Add(&shexp_gate, c.shared_expert_ffn_dim > 0 ? n : 0);
  };
  Layout sizes;
  place(sizes);
  arena = shared::HugeRegion(sizes.bytes());
  // Every page now, as the vectors these were did: no page fault in a step.
  const shared::Status faulted = arena.Prefault();
  SM_CHECK(faulted.ok()) << "activations (" << sizes.bytes() << " bytes): " << faulted.ToString();
  Layout spans(arena.data());
  place(spans);
  SizeStepIndex(c.encoder);
  SizeMoeIndex(routed, experts);
}

// The step's token and attention index vectors, sized once for the largest step.
void Activations::SizeStepIndex(bool encoder) {
  const auto n = static_cast<size_t>(max_tokens);
  token_ids.resize(n);
  positions.resize(n);
  // An encoder attends one call per query token (forward_bert.cc).
  attention.resize(static_cast<size_t>(encoder ? std::max(max_seqs, max_tokens) : max_seqs));
  // Runs of whole tokens (at most one per token), or when they are fewer than 4 a thread, cut
  // into up to 2 x 4 a thread.
  attention_items.resize(static_cast<size_t>(std::max(max_tokens, 8 * max_threads)));
  attention_items_dealt.resize(attention_items.size());
  logits_row.assign(static_cast<size_t>(max_seqs), -1);
}

// The routing's index vectors (the moe_* members), sized once for the largest step.
void Activations::SizeMoeIndex(size_t routed, size_t experts) {
  moe_expert.resize(routed);
  moe_weight.resize(routed);
  moe_row.resize(routed);
  moe_first.resize(experts + 1);
  moe_jobs.resize(2 * experts);
}

}  // namespace smallmind::worker

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

}  // namespace

Activations::Activations(const ModelConfig& c, int max_step_tokens, int max_seqs_in,
                         int max_threads_in)
    : max_tokens(max_step_tokens), max_seqs(max_seqs_in), max_threads(max_threads_in) {
  SM_CHECK(max_tokens > 0 && max_seqs > 0 && max_threads > 0) << "engine limits must be positive";
  const auto n = static_cast<size_t>(max_tokens);
  // Room for a tile of a prefill chunk (up to kAttentionTileTokens tokens, every head), so the
  // kernel reads the cache once for all its tokens, but not past ~768 KiB: the tile's scores are
  // written, normalized and read again, and beyond L2 that traffic costs more than the cache
  // reads it saves (measured on Zen 3: a 32-head GQA chunk at 2016 positions ran 0.7-0.9x the
  // untiled kernel with 8-token tiles, 1.0x with 2; 12-head MHA 5x faster with 7-8). At least
  // kAttentionHeadsPerPass rows of the whole context.
  constexpr int64_t kMaxScoresPerThread = int64_t{3} << 16;  // floats
  const int64_t tile_rows = int64_t{kernels::kAttentionTileTokens} * c.n_heads;
  scores_per_thread =
      std::max<int64_t>(kernels::kAttentionHeadsPerPass * c.context_length,
                        std::min(tile_rows * c.context_length, kMaxScoresPerThread));
  const auto place = [&](Layout& l) {
    l.Add(&x, n * c.dim);
    l.Add(&xb, n * c.dim);
    l.Add(&xb2, n * c.dim);
    l.Add(&q, n * c.dim);
    l.Add(&k, n * c.kv_dim());
    l.Add(&v, n * c.kv_dim());
    l.Add(&hb, n * c.hidden_dim);
    l.Add(&hb2, n * c.hidden_dim);
    l.Add(&xq, n * kernels::Q8ActRowBytes(std::max(c.dim, c.hidden_dim)));
    l.Add(&xq_1, n * kernels::Q8ActRowBytes(std::max(c.dim, c.hidden_dim)));
    l.Add(&xq_k, n * kernels::Q8ActRowBytes(std::max(c.dim, c.hidden_dim)));
    l.Add(&xq_octets, kernels::Q8ActOctetsBytes(max_tokens, std::max(c.dim, c.hidden_dim)));
    l.Add(&scores, static_cast<size_t>(max_threads * scores_per_thread));
    l.Add(&last_x, static_cast<size_t>(max_seqs) * c.dim);
    l.Add(&logits, static_cast<size_t>(max_seqs) * c.vocab_size);
  };
  Layout sizes;
  place(sizes);
  arena = shared::HugeRegion(sizes.bytes());
  // Every page now, as the vectors these were did: no page fault in a step.
  const shared::Status faulted = arena.Prefault();
  SM_CHECK(faulted.ok()) << "activations (" << sizes.bytes() << " bytes): " << faulted.ToString();
  Layout spans(arena.data());
  place(spans);
  token_ids.resize(n);
  positions.resize(n);
  attention.resize(static_cast<size_t>(max_seqs));
  // Runs of whole tokens (at most one per token), or when they are fewer than 4 a thread, cut
  // into up to 2 x 4 a thread.
  attention_items.resize(static_cast<size_t>(std::max(max_tokens, 8 * max_threads)));
  attention_items_dealt.resize(attention_items.size());
  logits_row.assign(static_cast<size_t>(max_seqs), -1);
}

}  // namespace smallmind::worker

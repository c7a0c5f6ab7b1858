#include "worker/engine/activations.h"

#include <algorithm>

#include "kernels/q8_act.h"
#include "shared/check.h"

namespace smallmind::worker {

Activations::Activations(const ModelConfig& c, int max_step_tokens, int max_seqs_in,
                         int max_threads_in)
    : max_tokens(max_step_tokens), max_seqs(max_seqs_in), max_threads(max_threads_in) {
  SM_CHECK(max_tokens > 0 && max_seqs > 0 && max_threads > 0) << "engine limits must be positive";
  const auto n = static_cast<size_t>(max_tokens);
  x.resize(n * c.dim);
  xb.resize(n * c.dim);
  xb2.resize(n * c.dim);
  q.resize(n * c.dim);
  k.resize(n * c.kv_dim());
  v.resize(n * c.kv_dim());
  hb.resize(n * c.hidden_dim);
  hb2.resize(n * c.hidden_dim);
  xq.resize(n * kernels::Q8ActRowBytes(std::max(c.dim, c.hidden_dim)));
  xq_octets.resize(kernels::Q8ActOctetsBytes(max_tokens, std::max(c.dim, c.hidden_dim)));
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
  scores.resize(static_cast<size_t>(max_threads * scores_per_thread));
  token_ids.resize(n);
  positions.resize(n);
  attention.resize(static_cast<size_t>(max_seqs));
  // Runs of whole tokens (at most one per token), or when they are fewer than 4 a thread, cut
  // into up to 2 x 4 a thread.
  attention_items.resize(static_cast<size_t>(std::max(max_tokens, 8 * max_threads)));
  attention_items_dealt.resize(attention_items.size());
  last_x.resize(static_cast<size_t>(max_seqs) * c.dim);
  logits.resize(static_cast<size_t>(max_seqs) * c.vocab_size);
  logits_row.assign(static_cast<size_t>(max_seqs), -1);
}

}  // namespace smallmind::worker

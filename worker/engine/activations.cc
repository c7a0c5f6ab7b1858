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
  scores.resize(static_cast<size_t>(max_threads) * kernels::kAttentionHeadsPerPass *
                c.context_length);
  token_ids.resize(n);
  positions.resize(n);
  attention.resize(static_cast<size_t>(max_seqs));
  attention_rows.resize(static_cast<size_t>(max_seqs) + 1);
  last_x.resize(static_cast<size_t>(max_seqs) * c.dim);
  logits.resize(static_cast<size_t>(max_seqs) * c.vocab_size);
  logits_row.assign(static_cast<size_t>(max_seqs), -1);
}

}  // namespace smallmind::worker

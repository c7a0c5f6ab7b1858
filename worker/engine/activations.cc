#include "worker/engine/activations.h"

#include "shared/check.h"

namespace smallmind::worker {

Activations::Activations(const ModelConfig& c, int max_step_tokens, int max_seqs_in)
    : max_tokens(max_step_tokens), max_seqs(max_seqs_in) {
  SM_CHECK(max_tokens > 0 && max_seqs > 0) << "engine limits must be positive";
  const auto n = static_cast<size_t>(max_tokens);
  x.resize(n * c.dim);
  xb.resize(n * c.dim);
  xb2.resize(n * c.dim);
  q.resize(n * c.dim);
  k.resize(n * c.kv_dim());
  v.resize(n * c.kv_dim());
  hb.resize(n * c.hidden_dim);
  hb2.resize(n * c.hidden_dim);
  scores.resize(static_cast<size_t>(c.context_length));
  positions.resize(n);
  last_x.resize(static_cast<size_t>(max_seqs) * c.dim);
  logits.resize(static_cast<size_t>(max_seqs) * c.vocab_size);
  logits_row.assign(static_cast<size_t>(max_seqs), -1);
}

}  // namespace smallmind::worker

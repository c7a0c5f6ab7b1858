#include "worker/model/model_fingerprint.h"

#include <bit>
#include <cstdio>
#include <iterator>

#include "shared/hash64.h"

namespace smallmind::worker {
namespace {

constexpr size_t kChunk = size_t{16} << 20;  // hash then drop 16 MiB at a time

void HashConfig(const ModelConfig& c, shared::StreamHasher* h) {
  h->Update(c.architecture.data(), c.architecture.size());
  for (int v : {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size,
                c.context_length, static_cast<int>(c.rope_style)}) {
    h->UpdateWord(static_cast<uint64_t>(v));
  }
  h->UpdateWord(std::bit_cast<uint32_t>(c.rms_norm_eps));
  h->UpdateWord(std::bit_cast<uint32_t>(c.rope_theta));
  // Only when set, so the fingerprints (and cached K/V) of models without it stay what they were.
  if (c.rope_freq_scale != 1.0f) h->UpdateWord(std::bit_cast<uint32_t>(c.rope_freq_scale));
  if (c.head_size != 0) h->UpdateWord(0x68656164u ^ static_cast<uint64_t>(c.head_size));  // "head"
  if (c.rope_dims != 0) h->UpdateWord(0x726f7464u ^ static_cast<uint64_t>(c.rope_dims));  // "rotd"
  if (c.rope_attn_factor != 1.0f) h->UpdateWord(std::bit_cast<uint32_t>(c.rope_attn_factor));
  if (c.no_rope_period != 0) h->UpdateWord(0x6e6f7270u ^ static_cast<uint64_t>(c.no_rope_period));
  // The window and gemma's pieces, likewise only when set (tagged, so no two collide).
  const float extras[] = {static_cast<float>(c.sliding_window),
                          static_cast<float>(c.swa_period),
                          c.rope_theta_swa,
                          c.rope_freq_scale_swa,
                          static_cast<float>(c.ffn_activation),
                          c.embedding_scale,
                          c.query_scale,
                          c.attn_softcap,
                          c.final_softcap};
  for (size_t i = 0; i < std::size(extras); i++) {
    if (extras[i] != 0.0f)
      h->UpdateWord((uint64_t{0x65787472} << 32 | i) ^ std::bit_cast<uint32_t>(extras[i]));
  }
  if (c.moe()) {  // a mixture of experts: its routing (dense models' fingerprints unchanged)
    h->UpdateWord(0x6d6f65u);  // "moe"
    for (int v : {c.n_experts, c.n_experts_used, c.expert_ffn_dim, c.expert_weights_norm ? 1 : 0}) {
      h->UpdateWord(static_cast<uint64_t>(v));
    }
    if (c.shared_expert_ffn_dim > 0) {  // qwen2moe's shared expert (the others' as before)
      h->UpdateWord(0x73686578u ^ static_cast<uint64_t>(c.shared_expert_ffn_dim));  // "shex"
    }
    if (c.expert_gating != ExpertGating::kSoftmaxTopK) {  // gpt-oss's (the others' as before)
      h->UpdateWord(0x67617465u ^ static_cast<uint64_t>(c.expert_gating));  // "gate"
    }
  }
  if (c.qk_norm_whole_row) h->UpdateWord(0x716b726fu);  // "qkro": olmoe's q/k norm of whole rows
  if (c.rope_yarn) {  // the rope_attn_factor above holds YaRN's temperature
    h->UpdateWord(0x7961726eu ^ static_cast<uint64_t>(c.rope_yarn_orig_context));  // "yarn"
  }
}

void HashTensor(const WeightStorage& storage, const TensorView& t, shared::StreamHasher* h) {
  h->UpdateWord(t.present() ? 1 : 0);
  if (!t.present()) return;
  h->UpdateWord(static_cast<uint64_t>(t.type));
  h->UpdateWord(static_cast<uint64_t>(t.rows));
  h->UpdateWord(static_cast<uint64_t>(t.cols));
  const auto* p = static_cast<const std::byte*>(t.data);
  const size_t bytes = t.bytes();
  const bool in_storage = p >= storage.data() && p + bytes <= storage.data() + storage.size();
  for (size_t done = 0; done < bytes; done += kChunk) {
    const size_t n = std::min(kChunk, bytes - done);
    h->Update(p + done, n);
    if (in_storage) storage.DropPages(p + done, n);
  }
}

}  // namespace

uint64_t ModelFingerprint(const LlamaModel& model) {
  shared::StreamHasher h(0x5EED'F1A6'E4B1ULL);
  HashConfig(model.config, &h);
  const Weights& w = model.weights;
  HashTensor(w.storage, w.token_embedding, &h);
  for (const LayerWeights& l : w.layers) {
    for (const TensorView* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w1, &l.w2,
                                &l.w3, &l.bq, &l.bk, &l.bv}) {
      HashTensor(w.storage, *t, &h);
    }
    for (const TensorView* t : {&l.q_norm, &l.k_norm, &l.router, &l.attn_post_norm,
                                &l.ffn_post_norm, &l.shexp_gate}) {  // absent: as before
      if (t->present()) HashTensor(w.storage, *t, &h);
    }
    // gpt-oss's sinks and biases (an encoder's bo is left out, as before)
    for (const TensorView* t : {&l.attn_sinks, &l.router_b, &l.gate_exps_b, &l.up_exps_b,
                                &l.down_exps_b, model.config.encoder ? nullptr : &l.bo}) {
      if (t != nullptr && t->present()) HashTensor(w.storage, *t, &h);
    }
    for (const ExpertsView* v : {&l.gate_exps, &l.up_exps, &l.down_exps}) {  // every expert
      for (const TensorView& e : v->experts) HashTensor(w.storage, e, &h);
    }
  }
  HashTensor(w.storage, w.final_norm, &h);
  const bool tied = w.classifier.data == w.token_embedding.data;
  h.UpdateWord(tied ? 1 : 0);  // a tied classifier is the embedding: no second pass over it
  if (!tied) HashTensor(w.storage, w.classifier, &h);
  if (w.rope_freqs.present()) HashTensor(w.storage, w.rope_freqs, &h);  // absent: as before
  return h.Finish();
}

std::string FormatFingerprint(uint64_t fingerprint) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(fingerprint));
  return buf;
}

}  // namespace smallmind::worker

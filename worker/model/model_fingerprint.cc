#include "worker/model/model_fingerprint.h"

#include <bit>
#include <cstdio>

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

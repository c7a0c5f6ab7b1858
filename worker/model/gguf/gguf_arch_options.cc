#include "worker/model/gguf/gguf_arch_options.h"

#include <cmath>
#include <optional>
#include <string>

namespace smallmind::worker {
namespace {

constexpr std::string_view kWindowKey = "attention.sliding_window";
constexpr std::string_view kPatternKey = "attention.sliding_window_pattern";
constexpr std::string_view kSwaBaseKey = "rope.freq_base_swa";
constexpr std::string_view kAttnCapKey = "attn_logit_softcapping";
constexpr std::string_view kFinalCapKey = "final_logit_softcapping";

std::string Key(const ArchDescription& d, std::string_view suffix) {
  return std::string(d.name) + "." + std::string(suffix);
}

// A float key >= 0 (0 where llama.cpp reads 0 as "none"), or `fallback` when absent.
shared::Result<float> NonNegative(const GgufFile& f, const std::string& key, float fallback) {
  if (f.Find(key) == nullptr) return fallback;
  SM_ASSIGN_OR_RETURN(float v, f.GetF32(key));
  if (!std::isfinite(v) || v < 0.0f) {
    return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                   std::to_string(v) + ", expected a finite value >= 0");
  }
  return v;
}

// attention.sliding_window_pattern: a period (llama.cpp's set_swa_pattern n), or one bool per
// layer (true: windowed), which must be such a period's pattern: c->swa_period is a period only.
shared::Status ReadPattern(const GgufFile& f, const ArchDescription& d, ModelConfig* c) {
  const std::string key = Key(d, kPatternKey);
  const GgufValue* v = f.Find(key);
  if (v == nullptr) return shared::Status::Ok();
  if (!v->is_array()) {
    SM_ASSIGN_OR_RETURN(int64_t n, f.GetInt(key));
    if (n < 0 || n > c->n_layers) {
      return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                     std::to_string(n) + ", outside [0, " +
                                     std::to_string(c->n_layers) + "]");
    }
    c->swa_period = static_cast<int>(n);
    return shared::Status::Ok();
  }
  std::vector<bool> windowed;
  for (uint64_t i = 0; i < v->size(); i++) {
    const std::optional<bool> b = v->FixedAt(i).AsBool();
    if (!b)
      return shared::InvalidArgument(f.path() + ": metadata key '" + key +
                                     "' is an array of something else than bools");
    windowed.push_back(*b);
  }
  for (int n = 0; n <= c->n_layers && static_cast<int>(windowed.size()) == c->n_layers; n++) {
    ModelConfig trial = *c;
    trial.sliding_window = 1;
    trial.swa_period = n;
    bool same = true;
    for (int l = 0; l < c->n_layers; l++) same = same && (trial.LayerWindow(l) > 0) == windowed[l];
    if (!same) continue;
    c->swa_period = n;
    return shared::Status::Ok();
  }
  return shared::InvalidArgument(f.path() + ": metadata key '" + key +
                                 "' names windowed layers that are no repeating pattern of " +
                                 "windowed layers then one global layer: not supported");
}

// The window, its pattern and the windowed layers' RoPE.
shared::Status ReadWindow(const GgufFile& f, const ArchDescription& d, ModelConfig* c) {
  const std::string key = Key(d, kWindowKey);
  int64_t window = d.default_window;
  if (f.Find(key) != nullptr) {
    SM_ASSIGN_OR_RETURN(window, f.GetInt(key));
  }
  if (window < 0 || window > (int64_t{1} << 24)) {
    return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                   std::to_string(window) + ", outside [0, 2^24]");
  }
  c->sliding_window = static_cast<int>(window);
  c->swa_period = d.swa_period;
  SM_RETURN_IF_ERROR(ReadPattern(f, d, c));
  const std::string base_key = Key(d, kSwaBaseKey);
  if (f.Find(base_key) != nullptr) {
    SM_ASSIGN_OR_RETURN(c->rope_theta_swa, f.GetF32(base_key));
    if (!(c->rope_theta_swa > 0.0f) || !std::isfinite(c->rope_theta_swa)) {
      return shared::InvalidArgument(f.path() + ": metadata key '" + base_key + "' must be > 0");
    }
  } else {
    c->rope_theta_swa = d.swa_rope_theta;  // 0: the global base
  }
  c->rope_freq_scale_swa = d.swa_rope_theta > 0.0f ? 1.0f : 0.0f;  // 0: the global scale
  if (c->sliding_window == 0) c->swa_period = 0;
  return shared::Status::Ok();
}

}  // namespace

std::vector<std::string_view> ArchOptionKeys(const ArchDescription& d) {
  std::vector<std::string_view> keys;
  if (d.swa_period >= 0) keys.insert(keys.end(), {kWindowKey, kPatternKey, kSwaBaseKey});
  if (d.attn_softcap > 0.0f) keys.push_back(kAttnCapKey);
  if (d.final_softcap_key) keys.push_back(kFinalCapKey);
  keys.insert(keys.end(), d.extra_keys.begin(), d.extra_keys.end());  // read elsewhere (phi3's)
  return keys;
}

shared::Status ReadArchOptions(const GgufFile& f, const ArchDescription& d, ModelConfig* c) {
  if (d.swa_period >= 0) SM_RETURN_IF_ERROR(ReadWindow(f, d, c));
  if (d.attn_softcap > 0.0f) {
    SM_ASSIGN_OR_RETURN(c->attn_softcap, NonNegative(f, Key(d, kAttnCapKey), d.attn_softcap));
  }
  if (d.final_softcap_key) {
    SM_ASSIGN_OR_RETURN(c->final_softcap, NonNegative(f, Key(d, kFinalCapKey), d.final_softcap));
  }
  if (d.query_scale) {
    const bool wide = c->n_layers == d.wide_query_scale_layers;
    c->query_scale =
        1.0f / std::sqrt(static_cast<float>(wide ? c->dim / c->n_heads : c->head_dim()));
  }
  if (d.embedding_scale) c->embedding_scale = std::sqrt(static_cast<float>(c->dim));
  c->ffn_activation = d.ffn_activation;
  return shared::Status::Ok();
}

}  // namespace smallmind::worker

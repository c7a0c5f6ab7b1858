#include "worker/model/gguf/yarn.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace smallmind::worker {
namespace {

// llama.cpp's ggml_rope_yarn_corr_dim: the dim at which a pair turns n_rot times over n_ctx_orig.
float CorrDim(int n_dims, int n_ctx_orig, float n_rot, float base) {
  return n_dims * std::log(n_ctx_orig / (n_rot * 2 * std::numbers::pi_v<float>)) /
         (2 * std::log(base));
}

}  // namespace

std::vector<float> YarnFactors(const ModelConfig& c, float theta) {
  const int n_dims = c.rotary_dims();
  const int orig = c.rope_yarn_orig_context > 0 ? c.rope_yarn_orig_context : c.context_length;
  const float low = std::max(0.0f, std::floor(CorrDim(n_dims, orig, kYarnBetaFast, theta)));
  const float high = std::min(static_cast<float>(n_dims - 1),
                              std::ceil(CorrDim(n_dims, orig, kYarnBetaSlow, theta)));
  const float s = c.rope_freq_scale;
  std::vector<float> factors(static_cast<size_t>(n_dims / 2));
  for (int i = 0; i < n_dims / 2; i++) {
    const float y = (static_cast<float>(i) - low) / std::max(0.001f, high - low);
    const float ramp = 1.0f - std::min(1.0f, std::max(0.0f, y));  // ext_factor 1
    factors[i] = 1.0f / (s * (1.0f - ramp) + ramp);
  }
  return factors;
}

float YarnMscale(float freq_scale, float file_attn_factor) {
  const float factor = 1.0f / freq_scale;
  float attn = factor <= 1.0f ? 1.0f : 0.1f * std::log(factor) + 1.0f;  // get_mscale(factor, 1)
  attn *= 1.0f / (1.0f + 0.1f * std::log(factor));
  attn *= file_attn_factor;
  return attn * (1.0f + 0.1f * std::log(1.0f / freq_scale));
}

shared::Status ReadYarn(const GgufFile& f, const std::string& arch, ModelConfig* c) {
  c->rope_yarn = true;
  c->rope_yarn_orig_context = c->context_length;
  const std::string key = arch + ".rope.scaling.original_context_length";
  if (f.Find(key) != nullptr) {
    SM_ASSIGN_OR_RETURN(int64_t orig, f.GetInt(key));
    if (orig < 1 || orig > (int64_t{1} << 24)) {
      return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                     std::to_string(orig) + ", outside [1, 2^24]");
    }
    c->rope_yarn_orig_context = static_cast<int>(orig);
  }
  c->rope_attn_factor = YarnMscale(c->rope_freq_scale, c->rope_attn_factor);
  return shared::Status::Ok();
}

}  // namespace smallmind::worker

#include "worker/model/gguf/longrope.h"

#include <cmath>

namespace smallmind::worker {

shared::Status ReadRopeAttnFactor(const GgufFile& f, const std::string& arch, ModelConfig* c) {
  const std::string key = arch + ".rope.scaling.attn_factor";
  if (f.Find(key) == nullptr) return shared::Status::Ok();
  SM_ASSIGN_OR_RETURN(float factor, f.GetF32(key));
  if (!(factor > 0.0f) || !std::isfinite(factor)) {
    return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                   std::to_string(factor) + ", expected a finite factor > 0");
  }
  c->rope_attn_factor = factor;
  return shared::Status::Ok();
}

shared::Result<bool> UsesLongRopeFactors(const GgufFile& f, const ModelConfig& c) {
  const std::string key = c.architecture + ".rope.scaling.original_context_length";
  int64_t original = c.context_length;
  if (f.Find(key) != nullptr) {
    SM_ASSIGN_OR_RETURN(original, f.GetInt(key));
    if (original < 1) {
      return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                     std::to_string(original) + ", expected >= 1");
    }
  }
  return int64_t{c.context_length} > original;
}

}  // namespace smallmind::worker

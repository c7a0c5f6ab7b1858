#include "worker/modelgen/longrope_factors.h"

#include <algorithm>
#include <cmath>

namespace smallmind::worker {

LongRopeFactors MakeLongRopeFactors(int rope_dims, int context, int original_context) {
  LongRopeFactors f;
  const int n = rope_dims / 2;
  const double scale = static_cast<double>(context) / std::max(1, original_context);
  for (int i = 0; i < n; i++) {
    const double u = n > 1 ? static_cast<double>(i) / (n - 1) : 0.0;
    f.long_factors.push_back(static_cast<float>(std::pow(std::max(scale, 1.0), u)));
    f.short_factors.push_back(static_cast<float>(1.0 + u * u / 4.0));
  }
  if (scale > 1.0 && original_context > 1) {
    f.attn_factor =
        static_cast<float>(std::sqrt(1.0 + std::log(scale) / std::log(original_context)));
  }
  return f;
}

}  // namespace smallmind::worker

#include "worker/engine/pooling.h"

#include <algorithm>
#include <cmath>

#include "shared/check.h"

namespace smallmind::worker {

bool PoolsInput(PoolingType pooling) {
  return pooling == PoolingType::kMean || pooling == PoolingType::kCls ||
         pooling == PoolingType::kLast;
}

void PoolHidden(PoolingType pooling, const float* hidden, int n, int dim, float* out) {
  SM_CHECK(PoolsInput(pooling) && n >= 1 && dim >= 1);
  if (pooling == PoolingType::kCls || pooling == PoolingType::kLast) {
    const float* row = hidden + (pooling == PoolingType::kCls ? 0 : int64_t{n - 1} * dim);
    std::copy(row, row + dim, out);
    return;
  }
  std::fill(out, out + dim, 0.0f);
  for (int t = 0; t < n; t++) {
    const float* row = hidden + int64_t{t} * dim;
    for (int i = 0; i < dim; i++) out[i] += row[i];
  }
  const float inv = 1.0f / static_cast<float>(n);
  for (int i = 0; i < dim; i++) out[i] *= inv;
}

void L2Normalize(std::span<float> v) {
  double sum = 0.0;
  for (float x : v) sum += static_cast<double>(x) * x;
  const float scale = sum > 0.0 ? static_cast<float>(1.0 / std::sqrt(sum)) : 0.0f;
  for (float& x : v) x *= scale;
}

}  // namespace smallmind::worker

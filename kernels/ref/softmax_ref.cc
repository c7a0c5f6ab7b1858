#include "kernels/ref/softmax_ref.h"

#include <cmath>
#include <cstdint>

namespace smallmind::kernels {

void SoftmaxRef(float* x, int row_len, RowRange rows) {
  for (int r = rows.begin; r < rows.end; r++) {
    float* row = x + static_cast<int64_t>(r) * row_len;  // [row_len]
    float max_val = row[0];                              // subtracted for numerical stability
    for (int i = 1; i < row_len; i++) {
      if (row[i] > max_val) max_val = row[i];
    }
    float sum = 0.0f;
    for (int i = 0; i < row_len; i++) {
      row[i] = std::exp(row[i] - max_val);
      sum += row[i];
    }
    for (int i = 0; i < row_len; i++) row[i] /= sum;
  }
}

}  // namespace smallmind::kernels

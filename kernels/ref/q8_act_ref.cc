#include "kernels/ref/q8_act_ref.h"

#include <cmath>
#include <cstdint>

#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"

namespace smallmind::kernels {
namespace {

// The exact integer dot product of one weight block with 32 activation quants.
int BlockDot(const BlockQ8_0& w, const int8_t* x) {
  int sum = 0;
  for (int j = 0; j < kQk8_0; j++) sum += w.qs[j] * x[j];
  return sum;
}
int BlockDot(const BlockQ4_0& w, const int8_t* x) {
  int sum = 0;
  for (int j = 0; j < kQk4_0 / 2; j++) {
    sum += ((w.qs[j] & 0x0f) - 8) * x[j];
    sum += ((w.qs[j] >> 4) - 8) * x[j + kQk4_0 / 2];
  }
  return sum;
}

template <typename Block>
void MatmulQ8Act(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                 RowRange rows) {
  const int n_blocks = in_dim / kQ8ActBlock;
  const size_t x_row_bytes = Q8ActRowBytes(in_dim);
  for (int r = rows.begin; r < rows.end; r++) {
    const Block* w_row = static_cast<const Block*>(w) + static_cast<int64_t>(r) * n_blocks;
    for (int t = 0; t < n_tokens; t++) {
      const void* x_row = static_cast<const uint8_t*>(xq) + x_row_bytes * t;
      const int8_t* qs = Q8ActQuants(x_row);
      const float* d = Q8ActScales(x_row, in_dim);
      float val = 0.0f;
      for (int b = 0; b < n_blocks; b++) {
        const float scale = Fp16ToFp32(w_row[b].d) * d[b];
        val += scale * static_cast<float>(BlockDot(w_row[b], qs + kQ8ActBlock * b));
      }
      y[static_cast<int64_t>(t) * out_dim + r] = val;
    }
  }
}

}  // namespace

void QuantizeQ8ActRef(const float* x, void* xq, int in_dim, RowRange tokens) {
  const size_t row_bytes = Q8ActRowBytes(in_dim);
  for (int t = tokens.begin; t < tokens.end; t++) {
    const float* in = x + static_cast<int64_t>(t) * in_dim;  // [in_dim]
    auto* row = static_cast<uint8_t*>(xq) + row_bytes * t;   // one Q8 row
    auto* qs = reinterpret_cast<int8_t*>(row);               // [in_dim]
    auto* d = reinterpret_cast<float*>(row + in_dim);        // [in_dim / 32]
    float* sums = d + in_dim / kQ8ActBlock;                  // [in_dim / 32]
    for (int b = 0; b < in_dim / kQ8ActBlock; b++) {
      const float* v = in + kQ8ActBlock * b;
      float amax = 0.0f;
      for (int j = 0; j < kQ8ActBlock; j++) amax = std::fmax(amax, std::fabs(v[j]));
      const float db = amax / 127.0f;
      const float id = db != 0.0f ? 1.0f / db : 0.0f;
      int sum = 0;
      for (int j = 0; j < kQ8ActBlock; j++) {
        const int q = static_cast<int>(std::nearbyint(v[j] * id));
        qs[kQ8ActBlock * b + j] = static_cast<int8_t>(q);
        sum += q;
      }
      d[b] = db;
      sums[b] = db * static_cast<float>(sum);
    }
  }
}

void MatmulQ8_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Act<BlockQ8_0>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ4_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Act<BlockQ4_0>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels

#include "kernels/ref/matmul_ref.h"

#include <cstdint>

#include "kernels/quant_blocks.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/low_bit_ref.h"

namespace smallmind::kernels {
namespace {

// The generic reference matmul over weight blocks of type Block holding kElems elements each,
// dequantized by `dequant` into a small stack buffer as the dot product walks the row.
template <typename Block, int kElems, void (*Dequant)(const Block*, float*, int64_t)>
void MatmulBlocks(const void* w, const void* x_in, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows) {
  const auto* weights = static_cast<const Block*>(w);
  const auto* x = static_cast<const float*>(x_in);
  const int blocks_per_row = in_dim / kElems;
  float buf[kElems];  // one dequantized block
  for (int r = rows.begin; r < rows.end; r++) {
    const Block* w_row = weights + static_cast<int64_t>(r) * blocks_per_row;  // [in_dim / kElems]
    for (int t = 0; t < n_tokens; t++) {
      const float* x_row = x + static_cast<int64_t>(t) * in_dim;  // [in_dim]
      float val = 0.0f;
      for (int b = 0; b < blocks_per_row; b++) {
        Dequant(w_row + b, buf, kElems);
        const float* xb = x_row + b * kElems;  // [kElems]
        for (int j = 0; j < kElems; j++) val += buf[j] * xb[j];
      }
      y[static_cast<int64_t>(t) * out_dim + r] = val;
    }
  }
}

void CopyF32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i];
}

}  // namespace

void MatmulF32Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows) {
  MatmulBlocks<float, 1, CopyF32>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulF16Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows) {
  MatmulBlocks<uint16_t, 1, DequantizeF16Ref>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulBf16Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<uint16_t, 1, DequantizeBf16Ref>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ8_0Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ8_0, kQk8_0, DequantizeQ8_0Ref>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ4_0Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ4_0, kQk4_0, DequantizeQ4_0Ref>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ5_0Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ5_0, kQk4_0, DequantizeQ5_0Ref>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulIQ4_NLRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                     RowRange rows) {
  MatmulBlocks<BlockIQ4_NL, kQk4_0, DequantizeIQ4_NLRef>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulMXFP4Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                    RowRange rows) {
  MatmulBlocks<BlockMXFP4, kQk4_0, DequantizeMXFP4Ref>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ4_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ4_K, kQkK, DequantizeQ4_KRef>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ5_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ5_K, kQkK, DequantizeQ5_KRef>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ6_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ6_K, kQkK, DequantizeQ6_KRef>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulIQ4_XSRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                     RowRange rows) {
  MatmulBlocks<BlockIQ4_XS, kQkK, DequantizeIQ4_XSRef>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ4_1Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ4_1, kQk4_0, DequantizeQ4_1Ref>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ5_1Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ5_1, kQk4_0, DequantizeQ5_1Ref>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ2_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ2_K, kQkK, DequantizeQ2_KRef>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ3_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulBlocks<BlockQ3_K, kQkK, DequantizeQ3_KRef>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels

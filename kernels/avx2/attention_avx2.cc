// AVX2 causal attention over the paged KV cache: the walk of attention_walk.h (float and half
// caches) and, for a kQ8 cache, the same walk with integer scores and int8 value sums
// (attention_q8_walk.h).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/attention_ref.h"
#include "kernels/x86/attention_q8_walk.h"
#include "kernels/x86/attention_walk.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::avx2 {

void attention::RowSoftmax(float* row, int row_len) { SoftmaxAvx2(row, row_len, RowRange{0, 1}); }

namespace {

using attention::kMaxHeadDim;
using attention::kTileTokens;
using attention::Tile;

// Query values a kQ8 tile holds (attention::QTileQ8): 8 KiB of quants, fewer tokens than
// kTileTokens for wide models.
constexpr int kQ8TileQuants = 8192;

}  // namespace

void AttentionAvx2(const AttentionArgs& a, RowRange rows) {
  if (a.head_dim > kMaxHeadDim) return AttentionRef(a, rows);
  if (a.kv.type == KvType::kQ8) {
    const int64_t max_tokens =
        std::min<int64_t>(kTileTokens, kQ8TileQuants / (a.n_heads * a.head_dim));
    attention::ForEachTile(a, rows, max_tokens, [&](const Tile& tile, float scale) {
      attention::AttendTileQ8<kQ8TileQuants>(a.kv, tile, scale);
    });
  } else if (a.kv.type == KvType::kF16) {
    attention::ForEachTile(a, rows, kTileTokens, [&](const Tile& tile, float scale) {
      attention::AttendTile<uint16_t>(a.kv, tile, scale);
    });
  } else {
    attention::ForEachTile(a, rows, kTileTokens, [&](const Tile& tile, float scale) {
      attention::AttendTile<float>(a.kv, tile, scale);
    });
  }
}

void F32ToF16Avx2(const float* x, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; i++) out[i] = Fp32ToFp16(x[i]);  // the same rounding, one at a time
}

void F32ToQ8Avx2(const float* x, int8_t* qs, float* d, int64_t n) {
  for (int64_t b = 0; b < n / kKvQ8Block; b++) {
    d[b] = QuantizeBlockQ8(x + kKvQ8Block * b, qs + kKvQ8Block * b);
  }
}

}  // namespace smallmind::kernels::avx2

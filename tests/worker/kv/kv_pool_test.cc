#include "worker/kv/kv_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "kernels/quant_blocks.h"

namespace smallmind::worker {
namespace {

ModelConfig SmallConfig() {
  ModelConfig c;
  c.dim = 16;
  c.hidden_dim = 32;
  c.n_layers = 3;
  c.n_heads = 4;
  c.n_kv_heads = 2;  // kv_dim = 8
  c.vocab_size = 10;
  c.context_length = 64;
  return c;
}

TEST(KvPoolTest, SizesStorageForEveryLayerOfEveryBlock) {
  const KvPool pool(SmallConfig(), 5, 4);
  EXPECT_EQ(pool.num_blocks(), 5);
  EXPECT_EQ(pool.block_size(), 4);
  EXPECT_EQ(pool.kv_dim(), 8);
  EXPECT_EQ(pool.bytes(),
            5 * 3 * 2 * 4 * 8 * 4);  // blocks x layers x (K, V) x slots x kv_dim x float
}

TEST(KvPoolTest, LaysOutEachBlockAsKThenVPerLayer) {
  KvPool pool(SmallConfig(), 5, 4);
  const float* base = pool.KRowF32(0, 0, 0);
  EXPECT_EQ(pool.KRowF32(0, 0, 1) - base, 8);              // slots are kv_dim apart
  EXPECT_EQ(pool.VRowF32(0, 0, 0) - base, 4 * 8);          // V follows the block_size K rows
  EXPECT_EQ(pool.KRowF32(0, 1, 0) - base, 2 * 4 * 8);      // next layer after K and V
  EXPECT_EQ(pool.KRowF32(1, 0, 0) - base, 3 * 2 * 4 * 8);  // next block after all layers
}

TEST(KvPoolTest, StartsZeroedAndKeepsEveryRowApart) {
  KvPool pool(SmallConfig(), 3, 2);
  for (int b = 0; b < 3; b++) {
    for (int l = 0; l < 3; l++) {
      for (int s = 0; s < 2; s++) {
        for (int i = 0; i < 8; i++) {
          ASSERT_EQ(pool.KRowF32(b, l, s)[i], 0.0f);
          pool.KRowF32(b, l, s)[i] = static_cast<float>(((b * 3 + l) * 2 + s) * 100 + i);
          pool.VRowF32(b, l, s)[i] = -static_cast<float>(((b * 3 + l) * 2 + s) * 100 + i);
        }
      }
    }
  }
  for (int b = 0; b < 3; b++) {
    for (int l = 0; l < 3; l++) {
      for (int s = 0; s < 2; s++) {
        const float want = static_cast<float>(((b * 3 + l) * 2 + s) * 100 + 7);
        EXPECT_EQ(pool.KRowF32(b, l, s)[7], want);
        EXPECT_EQ(pool.VRowF32(b, l, s)[7], -want);
      }
    }
  }
}

TEST(KvPoolTest, LayerViewFindsPositionsThroughTheBlockTable) {
  KvPool pool(SmallConfig(), 6, 4);
  const std::vector<int32_t> table = {5, 2, 0};  // positions 0-3 in block 5, 4-7 in 2, 8-11 in 0
  for (int pos = 0; pos < 12; pos++) {
    pool.KRowF32(table[pos / 4], 2, pos % 4)[0] = static_cast<float>(pos);
    pool.VRowF32(table[pos / 4], 2, pos % 4)[3] = static_cast<float>(1000 + pos);
  }
  const kernels::KvView view = pool.LayerView(2, table);
  EXPECT_EQ(view.type, kernels::KvType::kF32);
  const auto* k = static_cast<const float*>(view.k);
  const auto* v = static_cast<const float*>(view.v);
  for (int pos = 0; pos < 12; pos++) {
    EXPECT_EQ(k + view.Offset(pos), pool.KRow(table[pos / 4], 2, pos % 4));
    EXPECT_EQ(k[view.Offset(pos)], static_cast<float>(pos));
    EXPECT_EQ(v[view.Offset(pos) + 3], static_cast<float>(1000 + pos));
  }
}

TEST(KvPoolTest, HalfPoolStoresRoundedHalvesInHalfTheBytes) {
  const KvPool f32(SmallConfig(), 5, 4);
  KvPool pool(SmallConfig(), 5, 4, kernels::KvType::kF16);
  EXPECT_EQ(pool.bytes() * 2, f32.bytes());
  std::vector<float> k(8), v(8);
  for (int i = 0; i < 8; i++) {
    k[i] = 1.0f + 0.0001f * static_cast<float>(i);  // not exact in half: rounds to nearest
    v[i] = -65504.0f * static_cast<float>(i) / 7.0f;
  }
  const std::vector<int32_t> table = {3, 1};
  pool.StoreRow(1, 2, 3, k.data(), v.data(), kernels::RefKernelTable());  // position 7
  const kernels::KvView view = pool.LayerView(2, table);
  EXPECT_EQ(view.type, kernels::KvType::kF16);
  const auto* kh = static_cast<const uint16_t*>(view.k) + view.Offset(7);
  const auto* vh = static_cast<const uint16_t*>(view.v) + view.Offset(7);
  EXPECT_EQ(static_cast<const void*>(kh), pool.KRow(1, 2, 3));
  for (int i = 0; i < 8; i++) {
    EXPECT_EQ(kh[i], kernels::Fp32ToFp16(k[i])) << i;
    EXPECT_EQ(vh[i], kernels::Fp32ToFp16(v[i])) << i;
  }
  EXPECT_EQ(kernels::Fp16ToFp32(kh[0]), 1.0f);                        // 1.0000 is exact
  EXPECT_EQ(static_cast<const uint16_t*>(pool.KRow(1, 2, 2))[0], 0);  // the slot before: untouched
}

// A q8 pool: rows of kv_dim quants then a float scale per 32 values (1.125 bytes a value), written
// by the table's F32ToQ8 and described to the kernels by row_stride and scales_offset.
TEST(KvPoolTest, Q8PoolStoresQuantsAndScalesPerRow) {
  ModelConfig c = SmallConfig();
  c.n_kv_heads = c.n_heads;  // kv_dim 64: two blocks of 32 a row
  c.dim = 64;
  const KvPool f16(c, 5, 4, kernels::KvType::kF16);
  KvPool pool(c, 5, 4, kernels::KvType::kQ8);
  const int kv_dim = pool.kv_dim();
  ASSERT_EQ(kv_dim % 32, 0);
  EXPECT_EQ(pool.row_elems(), kv_dim + kv_dim / 8);
  EXPECT_EQ(pool.bytes() * 16, f16.bytes() * 9);
  EXPECT_EQ(pool.bytes(), KvPool::BytesFor(c, 5, 4, kernels::KvType::kQ8));
  std::vector<float> k(kv_dim), v(kv_dim);
  for (int i = 0; i < kv_dim; i++) {
    k[i] = std::sin(0.37f * static_cast<float>(i));
    v[i] = i < 32 ? 0.0f : 10.0f * std::cos(0.11f * static_cast<float>(i));  // a zero block
  }
  const std::vector<int32_t> table = {3, 1};
  pool.StoreRow(1, 2, 3, k.data(), v.data(), kernels::RefKernelTable());  // position 7
  const kernels::KvView view = pool.LayerView(2, table);
  EXPECT_EQ(view.type, kernels::KvType::kQ8);
  EXPECT_EQ(view.row_stride, pool.row_elems());
  EXPECT_EQ(view.scales_offset, kv_dim);
  const auto* kq = static_cast<const int8_t*>(view.k) + view.Offset(7);
  const auto* vq = static_cast<const int8_t*>(view.v) + view.Offset(7);
  EXPECT_EQ(static_cast<const void*>(kq), pool.KRow(1, 2, 3));
  const auto* kd = reinterpret_cast<const float*>(kq + view.scales_offset);
  const auto* vd = reinterpret_cast<const float*>(vq + view.scales_offset);
  EXPECT_EQ(vd[0], 0.0f);
  for (int i = 0; i < kv_dim; i++) {
    EXPECT_NEAR(kq[i] * kd[i / 32], k[i], 0.5f * kd[i / 32] + 1e-6f) << i;
    EXPECT_NEAR(vq[i] * vd[i / 32], v[i], 0.5f * vd[i / 32] + 1e-6f) << i;
  }
  int largest = 0;  // the block's largest magnitude is 127 steps
  for (int i = 0; i < 32; i++) largest = std::max(largest, std::abs(static_cast<int>(kq[i])));
  EXPECT_EQ(largest, 127);
}

}  // namespace
}  // namespace smallmind::worker

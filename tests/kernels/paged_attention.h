// Paged-cache AttentionArgs for the attention kernel tests (avx2_ops_test.cc,
// attention_avx512_test.cc): a cache of blocks of [K rows, V rows] read through a scrambled block
// table, as float, half or kQ8 rows.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/attention_ref.h"

namespace smallmind::kernels::testing {

// A block table of n_blocks ids in a scrambled order: entry b = (b * mul + add) % n_blocks (mul
// coprime with n_blocks).
inline std::vector<int32_t> ScrambledTable(int n_blocks, int mul, int add) {
  std::vector<int32_t> table(n_blocks);
  for (int b = 0; b < n_blocks; b++) table[b] = (b * mul + add) % n_blocks;
  return table;
}

// AttentionArgs over a paged cache: `storage` holds n_blocks blocks of [K rows, V rows] of
// block_size positions each; every pointer must outlive the args.
inline AttentionArgs PagedArgs(const std::vector<float>& storage, const std::vector<int32_t>& table,
                               const std::vector<float>& q, std::vector<float>* scores,
                               int block_size, int n_heads, int n_kv_heads, int head_dim,
                               int start_pos, int n_tokens) {
  const int kv_dim = n_kv_heads * head_dim;
  AttentionArgs a;
  a.q = q.data();
  a.scores = scores->data();
  a.n_tokens = n_tokens;
  a.start_pos = start_pos;
  a.n_heads = n_heads;
  a.n_kv_heads = n_kv_heads;
  a.head_dim = head_dim;
  a.kv.k = storage.data();
  a.kv.v = storage.data() + block_size * kv_dim;
  a.kv.block_table = table;
  a.kv.block_size = block_size;
  a.kv.block_stride = 2 * block_size * kv_dim;
  a.kv.row_stride = kv_dim;
  return a;
}

// The same cache as halves: every float of `storage` rounded to half (Fp32ToFp16).
inline std::vector<uint16_t> Halves(const std::vector<float>& storage) {
  std::vector<uint16_t> h(storage.size());
  for (size_t i = 0; i < h.size(); i++) h[i] = Fp32ToFp16(storage[i]);
  return h;
}

// The args of PagedArgs reading `halves` (a kF16 cache of the same layout) instead.
inline void UseHalves(const std::vector<uint16_t>& halves, int block_size, AttentionArgs* a) {
  a->kv.type = KvType::kF16;
  a->kv.k = halves.data();
  a->kv.v = halves.data() + int64_t{block_size} * a->kv.row_stride;
}

// The same cache as kQ8 rows: every kv_dim floats of `storage` (a row) quantized by F32ToQ8Ref into
// kv_dim quants and kv_dim / 32 float scales.
inline std::vector<int8_t> Q8Rows(const std::vector<float>& storage, int kv_dim) {
  const int64_t row = KvRowElems(KvType::kQ8, kv_dim);
  const size_t n_rows = storage.size() / kv_dim;
  std::vector<int8_t> q(n_rows * row);
  for (size_t r = 0; r < n_rows; r++) {
    int8_t* out = q.data() + r * row;
    F32ToQ8Ref(storage.data() + r * kv_dim, out, reinterpret_cast<float*>(out + kv_dim), kv_dim);
  }
  return q;
}

// The args of PagedArgs reading `q8` (Q8Rows of its storage) instead.
inline void UseQ8(const std::vector<int8_t>& q8, int block_size, int kv_dim, AttentionArgs* a) {
  const int64_t row = KvRowElems(KvType::kQ8, kv_dim);
  a->kv.type = KvType::kQ8;
  a->kv.k = q8.data();
  a->kv.v = q8.data() + block_size * row;
  a->kv.block_stride = 2 * block_size * row;
  a->kv.row_stride = row;
  a->kv.scales_offset = kv_dim;
}

}  // namespace smallmind::kernels::testing

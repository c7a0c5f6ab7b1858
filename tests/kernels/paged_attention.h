// Paged-cache AttentionArgs for the attention kernel tests (avx2_ops_test.cc,
// attention_avx512_test.cc): a cache of blocks of [K rows, V rows] read through a scrambled block
// table, as float or as half rows.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/quant_blocks.h"

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

}  // namespace smallmind::kernels::testing

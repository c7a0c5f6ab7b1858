// KvPool: the paged K/V cache storage of one worker: the data array of its KV segment (shared
// memory, worker/kv/kv_segment) or its own heap memory. Which block belongs to whom is BlockPool's
// business, not this class's.
// Rows are stored as floats, IEEE halves or 8-bit quants with a float scale per 32 values
// (kernels::KvType, --kv-dtype): StoreRow converts, the attention kernels read each through the
// KvView.
// The engine writes rows for the block ids a StepPlan names and hands KvViews to the attention
// kernel; not thread-safe for writers, but distinct rows may be written by distinct threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/kernels.h"
#include "shared/huge_region.h"
#include "shared/status.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

class KvPool {
 public:
  // Storage for num_blocks blocks of block_size positions of every layer of `config`, zeroed, on
  // the heap.
  KvPool(const ModelConfig& config, int num_blocks, int block_size,
         kernels::KvType type = kernels::KvType::kF32);
  // The same over `storage` owned elsewhere (a KV segment's data), which must hold exactly
  // BytesFor(...) bytes, aligned for floats, and outlive the pool.
  KvPool(const ModelConfig& config, int num_blocks, int block_size, kernels::KvType type,
         std::span<std::byte> storage);
  static int64_t BytesFor(const ModelConfig& config, int num_blocks, int block_size,
                          kernels::KvType type);
  // Whether rows of `type` can hold `config`'s K/V: kQ8 needs heads of a multiple of 32 dims up to
  // 256; the error names the model's and the way out.
  static shared::Status CheckType(const ModelConfig& config, kernels::KvType type);

  int num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  int n_layers() const { return n_layers_; }
  int kv_dim() const { return kv_dim_; }
  kernels::KvType type() const { return type_; }
  int64_t bytes() const { return total_elems_ * kernels::KvTypeBytes(type_); }
  int64_t row_elems() const { return row_elems_; }  // elements of one stored row (a KRow's)
  const void* data() const { return storage_; }     // bytes() bytes, for memory placement

  // The K or V row of position slot `slot` of block `block`, layer `layer`: row_elems() elements
  // of type(), so a float* only for kF32 pools (KRowF32 checks).
  void* KRow(int32_t block, int layer, int slot) { return At(RowOffset(block, layer, slot)); }
  void* VRow(int32_t block, int layer, int slot) {
    return At(RowOffset(block, layer, slot) + v_offset_);
  }
  const void* KRow(int32_t block, int layer, int slot) const {
    return At(RowOffset(block, layer, slot));
  }
  const void* VRow(int32_t block, int layer, int slot) const {
    return At(RowOffset(block, layer, slot) + v_offset_);
  }
  float* KRowF32(int32_t block, int layer, int slot);
  float* VRowF32(int32_t block, int layer, int slot);

  // Writes the [kv_dim] float rows k and v into the slot, converted to type() by the kernel
  // table's conversion (kF16: its round-to-nearest-even f32_to_f16, kQ8: its f32_to_q8).
  void StoreRow(int32_t block, int layer, int slot, const float* k, const float* v,
                const kernels::KernelTable& table);

  // What the attention kernel reads for `layer` of a sequence whose positions live in `block_table`
  // (position p in block block_table[p / block_size], slot p % block_size). The span must outlive
  // the view.
  kernels::KvView LayerView(int layer, std::span<const int32_t> block_table) const;

 private:
  int64_t RowOffset(int32_t block, int layer, int slot) const;  // elements
  void* At(int64_t elems) const { return storage_ + elems * kernels::KvTypeBytes(type_); }

  int num_blocks_;
  int block_size_;
  int n_layers_;
  int kv_dim_;
  kernels::KvType type_;
  int64_t row_elems_;     // elements per row: kernels::KvRowElems(type, kv_dim)
  int64_t v_offset_;      // elements from a K row to the V row of the same slot: block_size * row
  int64_t layer_stride_;  // elements per layer inside a block: 2 * block_size * row
  int64_t block_stride_;  // elements per block: n_layers * layer_stride
  int64_t total_elems_;
  shared::HugeRegion owned_;  // process memory (huge pages where THP allows), when none was given
  std::byte* storage_;        // [num_blocks][n_layers][K, V][block_size][row] of type_
};

}  // namespace smallmind::worker

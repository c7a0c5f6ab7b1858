// KvPool: the paged K/V cache storage of one worker: the data array of its KV segment (shared
// memory, worker/kv/kv_segment) or its own heap memory. Which block belongs to whom is BlockPool's
// business, not this class's.
// The engine writes rows for the block ids a StepPlan names and hands KvViews to the attention
// kernel; not thread-safe for writers, but distinct rows may be written by distinct threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "kernels/kernels.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

class KvPool {
 public:
  // Storage for num_blocks blocks of block_size positions of every layer of `config`, zeroed, on
  // the heap.
  KvPool(const ModelConfig& config, int num_blocks, int block_size);
  // The same over `storage` owned elsewhere (a KV segment's data), which must hold exactly
  // FloatsFor(...) floats and outlive the pool.
  KvPool(const ModelConfig& config, int num_blocks, int block_size, std::span<float> storage);
  static int64_t FloatsFor(const ModelConfig& config, int num_blocks, int block_size);

  int num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  int n_layers() const { return n_layers_; }
  int kv_dim() const { return kv_dim_; }
  int64_t bytes() const { return total_floats_ * static_cast<int64_t>(sizeof(float)); }
  const void* data() const { return storage_; }  // bytes() bytes, for memory placement

  // The [kv_dim] K or V row of position slot `slot` of block `block`, layer `layer`.
  float* KRow(int32_t block, int layer, int slot) {
    return storage_ + RowOffset(block, layer, slot);
  }
  float* VRow(int32_t block, int layer, int slot) { return KRow(block, layer, slot) + v_offset_; }
  const float* KRow(int32_t block, int layer, int slot) const {
    return storage_ + RowOffset(block, layer, slot);
  }
  const float* VRow(int32_t block, int layer, int slot) const {
    return KRow(block, layer, slot) + v_offset_;
  }

  // What the attention kernel reads for `layer` of a sequence whose positions live in `block_table`
  // (position p in block block_table[p / block_size], slot p % block_size). The span must outlive
  // the view.
  kernels::KvView LayerView(int layer, std::span<const int32_t> block_table) const;

 private:
  int64_t RowOffset(int32_t block, int layer, int slot) const;

  int num_blocks_;
  int block_size_;
  int n_layers_;
  int kv_dim_;
  int64_t v_offset_;      // floats from a K row to the V row of the same slot: block_size * kv_dim
  int64_t layer_stride_;  // floats per layer inside a block: 2 * block_size * kv_dim
  int64_t block_stride_;  // floats per block: n_layers * layer_stride
  int64_t total_floats_;
  std::unique_ptr<float[]> owned_;  // heap storage, when none was given
  float* storage_;                  // [num_blocks][n_layers][K, V][block_size][kv_dim]
};

}  // namespace smallmind::worker

#include "worker/kv/kv_pool.h"

#include "shared/check.h"

namespace smallmind::worker {

KvPool::KvPool(const ModelConfig& config, int num_blocks, int block_size)
    : KvPool(config, num_blocks, block_size, std::span<float>()) {}

int64_t KvPool::FloatsFor(const ModelConfig& config, int num_blocks, int block_size) {
  return int64_t{num_blocks} * config.n_layers * 2 * block_size * config.kv_dim();
}

KvPool::KvPool(const ModelConfig& config, int num_blocks, int block_size, std::span<float> storage)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      n_layers_(config.n_layers),
      kv_dim_(config.kv_dim()),
      v_offset_(int64_t{block_size} * kv_dim_),
      layer_stride_(2 * v_offset_),
      block_stride_(n_layers_ * layer_stride_),
      total_floats_(num_blocks * block_stride_) {
  SM_CHECK(num_blocks > 0 && block_size > 0)
      << "KvPool needs blocks, got " << num_blocks << " x " << block_size;
  SM_CHECK(n_layers_ > 0 && kv_dim_ > 0) << "KvPool needs a model with layers and KV heads";
  if (storage.data() == nullptr) {
    // Zeroed so that a slot read before it is written gives zeros, never stale garbage.
    owned_ = std::make_unique<float[]>(static_cast<size_t>(total_floats_));
    storage_ = owned_.get();
  } else {
    SM_CHECK(static_cast<int64_t>(storage.size()) == total_floats_)
        << "KV storage of " << storage.size() << " floats, the pool needs " << total_floats_;
    storage_ = storage.data();
  }
}

int64_t KvPool::RowOffset(int32_t block, int layer, int slot) const {
  SM_DCHECK(block >= 0 && block < num_blocks_) << "block " << block;
  SM_DCHECK(layer >= 0 && layer < n_layers_) << "layer " << layer;
  SM_DCHECK(slot >= 0 && slot < block_size_) << "slot " << slot;
  return block * block_stride_ + layer * layer_stride_ + int64_t{slot} * kv_dim_;
}

kernels::KvView KvPool::LayerView(int layer, std::span<const int32_t> block_table) const {
  SM_CHECK(layer >= 0 && layer < n_layers_) << "layer " << layer;
  kernels::KvView view;
  view.k = storage_ + layer * layer_stride_;
  view.v = view.k + v_offset_;
  view.block_table = block_table;
  view.block_size = block_size_;
  view.block_stride = block_stride_;
  view.row_stride = kv_dim_;
  return view;
}

}  // namespace smallmind::worker

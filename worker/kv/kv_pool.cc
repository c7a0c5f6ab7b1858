#include "worker/kv/kv_pool.h"

#include <algorithm>
#include <string>

#include "shared/check.h"

namespace smallmind::worker {

KvPool::KvPool(const ModelConfig& config, int num_blocks, int block_size, kernels::KvType type)
    : KvPool(config, num_blocks, block_size, type, std::span<std::byte>()) {}

int64_t KvPool::BytesFor(const ModelConfig& config, int num_blocks, int block_size,
                         kernels::KvType type) {
  return int64_t{num_blocks} * config.n_layers * 2 * block_size *
         kernels::KvRowElems(type, config.kv_dim()) * kernels::KvTypeBytes(type);
}

shared::Status KvPool::CheckType(const ModelConfig& config, kernels::KvType type) {
  const int head_dim = config.head_dim();
  if (type == kernels::KvType::kQ8 &&
      (head_dim % kernels::kKvQ8Block != 0 || head_dim > kernels::kKvQ8HeadDimMax)) {
    return shared::InvalidArgument(
        "--kv-dtype q8 needs a head size that is a multiple of " +
        std::to_string(kernels::kKvQ8Block) + " up to " + std::to_string(kernels::kKvQ8HeadDimMax) +
        "; this model's heads have " + std::to_string(head_dim) + " dims: use --kv-dtype f16");
  }
  return shared::Status::Ok();
}

KvPool::KvPool(const ModelConfig& config, int num_blocks, int block_size, kernels::KvType type,
               std::span<std::byte> storage)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      n_layers_(config.n_layers),
      kv_dim_(config.kv_dim()),
      type_(type),
      row_elems_(kernels::KvRowElems(type, kv_dim_)),
      v_offset_(int64_t{block_size} * row_elems_),
      layer_stride_(2 * v_offset_),
      block_stride_(n_layers_ * layer_stride_),
      total_elems_(num_blocks * block_stride_) {
  SM_CHECK(num_blocks > 0 && block_size > 0)
      << "KvPool needs blocks, got " << num_blocks << " x " << block_size;
  SM_CHECK(n_layers_ > 0 && kv_dim_ > 0) << "KvPool needs a model with layers and KV heads";
  SM_CHECK(type_ != kernels::KvType::kQ8 || kv_dim_ % kernels::kKvQ8Block == 0)
      << "a q8 KV pool needs kv_dim % 32 == 0, got " << kv_dim_;
  if (storage.data() == nullptr) {
    // Zeroed (fresh anonymous pages) so that a slot read before it is written gives zeros, never
    // stale garbage (a zero half is a zero float too); faulted in now, not in decode steps.
    owned_ = shared::HugeRegion(static_cast<size_t>(bytes()));
    const shared::Status faulted = owned_.Prefault();
    SM_CHECK(faulted.ok()) << "KV pool: " << faulted.ToString();
    storage_ = owned_.data();
  } else {
    SM_CHECK(static_cast<int64_t>(storage.size()) == bytes())
        << "KV storage of " << storage.size() << " bytes, the pool needs " << bytes();
    storage_ = storage.data();
  }
}

int64_t KvPool::RowOffset(int32_t block, int layer, int slot) const {
  SM_DCHECK(block >= 0 && block < num_blocks_) << "block " << block;
  SM_DCHECK(layer >= 0 && layer < n_layers_) << "layer " << layer;
  SM_DCHECK(slot >= 0 && slot < block_size_) << "slot " << slot;
  return block * block_stride_ + layer * layer_stride_ + int64_t{slot} * row_elems_;
}

float* KvPool::KRowF32(int32_t block, int layer, int slot) {
  SM_CHECK(type_ == kernels::KvType::kF32) << "KRowF32 of a pool of " << kernels::KvTypeName(type_);
  return static_cast<float*>(KRow(block, layer, slot));
}

float* KvPool::VRowF32(int32_t block, int layer, int slot) {
  SM_CHECK(type_ == kernels::KvType::kF32) << "VRowF32 of a pool of " << kernels::KvTypeName(type_);
  return static_cast<float*>(VRow(block, layer, slot));
}

void KvPool::StoreRow(int32_t block, int layer, int slot, const float* k, const float* v,
                      const kernels::KernelTable& table) {
  if (type_ == kernels::KvType::kF16) {
    table.f32_to_f16(k, static_cast<uint16_t*>(KRow(block, layer, slot)), kv_dim_);
    table.f32_to_f16(v, static_cast<uint16_t*>(VRow(block, layer, slot)), kv_dim_);
  } else if (type_ == kernels::KvType::kQ8) {
    for (auto [x, row] : {std::pair{k, KRow(block, layer, slot)}, {v, VRow(block, layer, slot)}}) {
      auto* qs = static_cast<int8_t*>(row);
      table.f32_to_q8(x, qs, reinterpret_cast<float*>(qs + kv_dim_), kv_dim_);
    }
  } else {
    std::copy(k, k + kv_dim_, static_cast<float*>(KRow(block, layer, slot)));
    std::copy(v, v + kv_dim_, static_cast<float*>(VRow(block, layer, slot)));
  }
}

kernels::KvView KvPool::LayerView(int layer, std::span<const int32_t> block_table) const {
  SM_CHECK(layer >= 0 && layer < n_layers_) << "layer " << layer;
  kernels::KvView view;
  view.k = At(layer * layer_stride_);
  view.v = At(layer * layer_stride_ + v_offset_);
  view.type = type_;
  view.block_table = block_table;
  view.block_size = block_size_;
  view.block_stride = block_stride_;
  view.row_stride = row_elems_;
  view.scales_offset = kv_dim_;
  return view;
}

}  // namespace smallmind::worker

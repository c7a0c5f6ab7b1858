// PackedWeights: repacked copies of the matrices whose matmul in some KernelTable has a PackFn (the
// AVX2 Q4_0/Q8_0 kernels), made once by the Engine's constructor. A matrix is packed once per
// PackFn, so tables that share a layout (the deterministic and parallel AVX2 tables) share one
// copy; other matrices are not copied. A matrix that every table reads packed, and that is not also
// the token embedding, has its mapped file pages dropped afterwards, so the model is resident once.
// Immutable after construction; thread-safe to read.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <tuple>
#include <vector>

#include "kernels/kernels.h"
#include "shared/huge_region.h"
#include "worker/model/weights.h"

namespace smallmind::worker {

class PackedWeights {
 public:
  // Packs every matrix of `w` (layers and classifier) whose matmul in any of `tables` has a PackFn.
  PackedWeights(const Weights& w, std::initializer_list<const kernels::KernelTable*> tables);

  // What `op` reads for `t`: the copy packed by op.pack, or t.data when op reads the stored layout.
  const void* Data(const TensorView& t, const kernels::MatmulOp& op) const;

  const void* storage() const { return storage_.data(); }
  size_t bytes() const { return bytes_; }

 private:
  using Key = std::tuple<const void*, kernels::PackFn>;  // (t.data, pack)
  // Every packed matrix, each 64-byte aligned, on huge pages where THP allows.
  shared::HugeRegion storage_;
  size_t bytes_ = 0;
  std::vector<std::pair<Key, const void*>> index_;  // (key, packed copy), sorted by key
};

}  // namespace smallmind::worker

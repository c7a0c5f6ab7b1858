// PackedWeights: repacked copies of the matrices whose matmul in a KernelTable has a PackFn (the
// AVX2 parallel Q4_0/Q8_0 kernels), made once by the Engine's constructor; other matrices are not
// copied. Immutable after construction; thread-safe to read.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "worker/model/weights.h"

namespace smallmind::worker {

class PackedWeights {
 public:
  // Packs every matrix of `w` (layers and classifier) whose matmul in `table` has a PackFn.
  PackedWeights(const Weights& w, const kernels::KernelTable& table);

  // What `table`'s matmul for `t` reads: its packed copy, or t.data when it is not packed.
  const void* Data(const TensorView& t) const;

  const void* storage() const { return storage_.get(); }
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> storage_;  // every packed matrix, each 64-byte aligned
  size_t bytes_ = 0;
  std::vector<std::pair<const void*, const void*>> index_;  // (t.data, packed), sorted by t.data
};

}  // namespace smallmind::worker

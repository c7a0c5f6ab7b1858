// TensorView: a typed 2-D view into the bytes of some WeightStorage (weights.h), the unit every
// matmul and lookup reads. Plain data; thread-safe to read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"
#include "shared/check.h"

namespace smallmind::worker {

// A 2-D tensor (a vector is one row) of `type` elements, row-major, inside some WeightStorage.
struct TensorView {
  kernels::DType type = kernels::DType::kF32;
  const void* data = nullptr;  // nullptr: the tensor is absent (optional tensors such as biases)
  int64_t rows = 0;
  int64_t cols = 0;

  bool present() const { return data != nullptr; }
  // Bytes of the whole tensor in its stored layout.
  size_t bytes() const {
    return kernels::RowBytes(*kernels::GetDTypeTraits(static_cast<uint32_t>(type)), cols) *
           static_cast<size_t>(rows);
  }
  const float* f32() const {
    SM_CHECK(type == kernels::DType::kF32) << "tensor is not F32";
    return static_cast<const float*>(data);
  }
};

}  // namespace smallmind::worker

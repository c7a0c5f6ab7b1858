// ExpertsView: the experts of one mixture-of-experts FFN matrix, a 3-D GGUF tensor [n_experts,
// rows, cols] (ffn_gate_exps / ffn_up_exps / ffn_down_exps) seen as one 2-D TensorView per expert,
// each a slice of the storage the tensor lies in (the mapped file: nothing is copied, and an
// expert no token uses is never read). Built by the GGUF loader; read-only, thread-safe to read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "worker/model/tensor_view.h"

namespace smallmind::worker {

struct ExpertsView {
  std::vector<TensorView> experts;  // [n_experts], each [rows, cols], consecutive in storage

  bool present() const { return !experts.empty(); }
  int count() const { return static_cast<int>(experts.size()); }
  const TensorView& operator[](int e) const { return experts[static_cast<size_t>(e)]; }

  // Views n_experts consecutive [rows, cols] matrices of `type` starting at `data`.
  static ExpertsView Slice(kernels::DType type, const void* data, int n_experts, int64_t rows,
                           int64_t cols) {
    ExpertsView v;
    v.experts.reserve(static_cast<size_t>(n_experts));
    const TensorView first{type, data, rows, cols};
    const size_t stride = first.bytes();
    for (int e = 0; e < n_experts; e++) {
      v.experts.push_back(
          TensorView{type, static_cast<const std::byte*>(data) + stride * e, rows, cols});
    }
    return v;
  }
};

}  // namespace smallmind::worker

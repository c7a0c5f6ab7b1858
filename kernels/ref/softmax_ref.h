// Scalar reference softmax over rows: the oracle for SIMD variants, also used inside attention.
// Thread-safe on disjoint row ranges. Reduction order: max, then one float sum of exp, left to
// right.
#pragma once

#include "kernels/partition.h"

namespace smallmind::kernels {

// x: [n_rows, row_len]; every row in rows becomes exp(x - max) / sum(exp(x - max)), in place.
void SoftmaxRef(float* x, int row_len, RowRange rows);

}  // namespace smallmind::kernels

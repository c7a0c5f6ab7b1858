// RowRange and StaticRows(): the split of output rows (or heads) among threads. The deterministic
// path may use only this split (STYLE §14). Pure functions; thread-safe.
#pragma once

namespace smallmind::kernels {

// Half-open range [begin, end) of output rows, heads or tokens a kernel call computes.
struct RowRange {
  int begin = 0;
  int end = 0;

  constexpr int size() const { return end - begin; }
  constexpr bool empty() const { return end <= begin; }
};

// Every row of an n-row output: the range one thread uses when nothing is split.
constexpr RowRange AllRows(int n_rows) { return RowRange{0, n_rows}; }

// Part `part` of n_rows split into n_parts contiguous pieces whose sizes differ by at most one (the
// first n_rows % n_parts parts get the extra row). Depends only on its arguments, so the same row
// always lands in the same part for the same (n_rows, n_parts).
constexpr RowRange StaticRows(int n_rows, int n_parts, int part) {
  const int base = n_rows / n_parts;
  const int extra = n_rows % n_parts;
  const int begin = part * base + (part < extra ? part : extra);
  const int size = base + (part < extra ? 1 : 0);
  return RowRange{begin, begin + size};
}

}  // namespace smallmind::kernels

#include "worker/model/gguf/fused_rows.h"

#include <string>

namespace smallmind::worker {

shared::Result<std::vector<TensorView>> SplitRows(const TensorView& fused,
                                                  std::span<const int64_t> rows,
                                                  std::string_view name) {
  int64_t total = 0;
  std::string parts;
  for (int64_t r : rows) {
    total += r;
    parts += (parts.empty() ? "" : " + ") + std::to_string(r);
  }
  if (total != fused.rows) {
    return shared::InvalidArgument("tensor " + std::string(name) + " has " +
                                   std::to_string(fused.rows) + " rows, expected " + parts + " = " +
                                   std::to_string(total));
  }
  const kernels::DTypeTraits* traits = kernels::GetDTypeTraits(static_cast<uint32_t>(fused.type));
  if (traits == nullptr) {
    return shared::InvalidArgument("tensor " + std::string(name) + " has an unknown type");
  }
  const size_t row_bytes = kernels::RowBytes(*traits, fused.cols);
  std::vector<TensorView> views;
  views.reserve(rows.size());
  int64_t first = 0;
  for (int64_t r : rows) {
    TensorView v = fused;
    v.data = static_cast<const std::byte*>(fused.data) + static_cast<size_t>(first) * row_bytes;
    v.rows = r;
    views.push_back(v);
    first += r;
  }
  return views;
}

}  // namespace smallmind::worker

#include "worker/engine/packed_weights.h"

#include <algorithm>
#include <new>

namespace smallmind::worker {
namespace {

size_t Align64(size_t n) { return (n + 63) / 64 * 64; }

// The matrices a forward pass multiplies by, each once (a tied classifier is the embedding).
std::vector<const TensorView*> Matrices(const Weights& w) {
  std::vector<const TensorView*> m = {&w.classifier};
  for (const LayerWeights& l : w.layers) {
    for (const TensorView* t : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) m.push_back(t);
  }
  return m;
}

}  // namespace

void PackedWeights::Free::operator()(std::byte* p) const {
  ::operator delete[](p, std::align_val_t(64));
}

PackedWeights::PackedWeights(const Weights& w, const kernels::KernelTable& table) {
  std::vector<std::pair<const TensorView*, size_t>> todo;  // (matrix, offset in storage_)
  for (const TensorView* t : Matrices(w)) {
    const kernels::MatmulOp* op = table.MatmulFor(t->type);
    if (op == nullptr || op->pack == nullptr) continue;
    const bool seen = std::any_of(todo.begin(), todo.end(),
                                  [&](const auto& e) { return e.first->data == t->data; });
    if (seen) continue;
    todo.emplace_back(t, bytes_);
    bytes_ += Align64(op->packed_bytes(static_cast<int>(t->rows), static_cast<int>(t->cols)));
  }
  if (bytes_ == 0) return;
  storage_.reset(static_cast<std::byte*>(::operator new[](bytes_, std::align_val_t(64))));
  for (const auto& [t, offset] : todo) {
    std::byte* dst = storage_.get() + offset;
    table.MatmulFor(t->type)->pack(t->data, dst, static_cast<int>(t->rows),
                                   static_cast<int>(t->cols));
    index_.emplace_back(t->data, dst);
  }
  std::sort(index_.begin(), index_.end());
}

const void* PackedWeights::Data(const TensorView& t) const {
  const auto it = std::lower_bound(index_.begin(), index_.end(),
                                   std::pair<const void*, const void*>(t.data, nullptr));
  return it != index_.end() && it->first == t.data ? it->second : t.data;
}

}  // namespace smallmind::worker

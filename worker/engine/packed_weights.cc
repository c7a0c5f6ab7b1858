#include "worker/engine/packed_weights.h"

#include <algorithm>
#include <chrono>
#include <functional>

#include <spdlog/spdlog.h>

#include "shared/check.h"
#include "shared/progress_meter.h"

namespace smallmind::worker {
namespace {

size_t Align64(size_t n) { return (n + 63) / 64 * 64; }

// Between two progress lines of the packing (a 1 GB model packs in ~10-20 s here).
constexpr std::chrono::seconds kProgressInterval{2};

// Orders keys by address and then by function address (std::less gives a total order on pointers).
bool KeyLess(const std::pair<std::tuple<const void*, kernels::PackFn>, const void*>& a,
             const std::pair<std::tuple<const void*, kernels::PackFn>, const void*>& b) {
  const auto& [ad, ap] = a.first;
  const auto& [bd, bp] = b.first;
  if (ad != bd) return std::less<const void*>()(ad, bd);
  return std::less<const void*>()(reinterpret_cast<const void*>(ap),
                                  reinterpret_cast<const void*>(bp));
}

// True when every table reads `t` packed and nothing reads it as stored (the token embedding's rows
// are looked up as stored).
bool OnlyReadPacked(const Weights& w, const TensorView& t,
                    std::initializer_list<const kernels::KernelTable*> tables) {
  if (t.data == w.token_embedding.data) return false;
  return std::all_of(tables.begin(), tables.end(), [&](const kernels::KernelTable* table) {
    const kernels::MatmulOp* op = table->MatmulFor(t.type);
    return op != nullptr && op->pack != nullptr;
  });
}

}  // namespace

PackedWeights::PackedWeights(const Weights& w,
                             std::initializer_list<const kernels::KernelTable*> tables) {
  struct Todo {
    const TensorView* t;
    const kernels::MatmulOp* op;
    size_t offset;  // in storage_
  };
  std::vector<Todo> todo;
  for (const kernels::KernelTable* table : tables) {
    for (const TensorView* t : MatricesOf(w)) {
      const kernels::MatmulOp* op = table->MatmulFor(t->type);
      if (op == nullptr || op->pack == nullptr) continue;
      const bool seen = std::any_of(todo.begin(), todo.end(), [&](const Todo& e) {
        return e.t->data == t->data && e.op->pack == op->pack;
      });
      if (seen) continue;
      todo.push_back(Todo{t, op, bytes_});
      bytes_ += Align64(op->packed_bytes(static_cast<int>(t->rows), static_cast<int>(t->cols)));
    }
  }
  if (bytes_ == 0) return;
  storage_ = shared::HugeRegion(bytes_);
  // A big model's packing reads every matrix from the mapped file (its page faults are most of a
  // start): a running percentage every few seconds (issue 39).
  shared::ProgressMeter progress(bytes_, kProgressInterval, shared::ProgressMeter::Clock::now());
  for (size_t i = 0; i < todo.size(); i++) {
    const Todo& e = todo[i];
    std::byte* dst = storage_.data() + e.offset;
    e.op->pack(e.t->data, dst, static_cast<int>(e.t->rows), static_cast<int>(e.t->cols));
    const size_t done = i + 1 < todo.size() ? todo[i + 1].offset : bytes_;
    if (const auto percent = progress.Update(done, shared::ProgressMeter::Clock::now())) {
      spdlog::info("packing weights: {}% ({:.0f} of {:.0f} MiB)", *percent, done / 1048576.0,
                   bytes_ / 1048576.0);
    }
    index_.emplace_back(Key(e.t->data, e.op->pack), dst);
    // Drop the stored copy as soon as its last packing is done, so that at most one matrix is
    // resident twice at any time.
    const bool last = std::none_of(todo.begin() + static_cast<std::ptrdiff_t>(i) + 1, todo.end(),
                                   [&](const Todo& later) { return later.t->data == e.t->data; });
    if (last && OnlyReadPacked(w, *e.t, tables)) w.storage.DropPages(e.t->data, e.t->bytes());
  }
  std::sort(index_.begin(), index_.end(), KeyLess);
}

const void* PackedWeights::Data(const TensorView& t, const kernels::MatmulOp& op) const {
  if (op.pack == nullptr) return t.data;
  const std::pair<Key, const void*> probe(Key(t.data, op.pack), nullptr);
  const auto it = std::lower_bound(index_.begin(), index_.end(), probe, KeyLess);
  SM_CHECK(it != index_.end() && it->first == probe.first) << "matrix was not packed for its op";
  return it->second;
}

}  // namespace smallmind::worker

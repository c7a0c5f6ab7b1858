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
bool KeyLess(const std::tuple<const void*, kernels::PackFn>& a,
             const std::tuple<const void*, kernels::PackFn>& b) {
  const auto& [ad, ap] = a;
  const auto& [bd, bp] = b;
  if (ad != bd) return std::less<const void*>()(ad, bd);
  return std::less<const void*>()(reinterpret_cast<const void*>(ap),
                                  reinterpret_cast<const void*>(bp));
}

// Whether `t` is one of an MoE layer's experts.
bool IsExpert(const Weights& w, const TensorView* t) {
  for (const LayerWeights& l : w.layers) {
    for (const ExpertsView* v : {&l.gate_exps, &l.up_exps, &l.down_exps}) {
      if (!v->experts.empty() && t >= &v->experts.front() && t <= &v->experts.back()) return true;
    }
  }
  return false;
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
                             std::initializer_list<const kernels::KernelTable*> tables,
                             bool lazy_experts)
    : stored_(w.storage) {
  struct Todo {
    const TensorView* t;
    const kernels::MatmulOp* op;
    size_t offset;  // in storage_
    bool expert;
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
      todo.push_back(Todo{t, op, bytes_, IsExpert(w, t)});
      bytes_ += Align64(op->packed_bytes(static_cast<int>(t->rows), static_cast<int>(t->cols)));
    }
  }
  if (bytes_ == 0) return;
  storage_ = shared::HugeRegion(bytes_);
  index_.reserve(todo.size());
  for (const Todo& e : todo) {
    index_.push_back(Entry{Key(e.t->data, e.op->pack), storage_.data() + e.offset, e.t, e.op,
                           OnlyReadPacked(w, *e.t, tables), false});
    experts_total_ += e.expert ? 1 : 0;
  }
  std::sort(index_.begin(), index_.end(),
            [](const Entry& a, const Entry& b) { return KeyLess(a.key, b.key); });
  // Eager packing of the dense matrices (and of the experts unless lazy). A big model's packing
  // reads every matrix from the mapped file (its page faults are most of a start): a running
  // percentage every few seconds (issue 39).
  size_t eager_bytes = 0, done = 0;
  for (const Todo& e : todo) {
    if (!(e.expert && lazy_experts)) {
      eager_bytes += e.op->packed_bytes(static_cast<int>(e.t->rows), static_cast<int>(e.t->cols));
    }
  }
  shared::ProgressMeter progress(eager_bytes, kProgressInterval,
                                 shared::ProgressMeter::Clock::now());
  for (const Todo& e : todo) {
    if (e.expert && lazy_experts) continue;
    const auto it = std::lower_bound(
        index_.begin(), index_.end(), Key(e.t->data, e.op->pack),
        [](const Entry& entry, const Key& key) { return KeyLess(entry.key, key); });
    Pack(*it);
    experts_packed_ += e.expert ? 1 : 0;
    done += e.op->packed_bytes(static_cast<int>(e.t->rows), static_cast<int>(e.t->cols));
    if (const auto percent = progress.Update(done, shared::ProgressMeter::Clock::now())) {
      spdlog::info("packing weights: {}% ({:.0f} of {:.0f} MiB)", *percent, done / 1048576.0,
                   eager_bytes / 1048576.0);
    }
  }
}

void PackedWeights::Pack(const Entry& e) const {
  e.op->pack(e.t->data, e.dst, static_cast<int>(e.t->rows), static_cast<int>(e.t->cols));
  e.packed = true;
  // Drop the stored copy once its last packing is done (the entries of one matrix are adjacent),
  // so that at most one matrix is resident twice at any time.
  if (!e.drop_stored) return;
  const auto first =
      std::lower_bound(index_.begin(), index_.end(), Key(e.t->data, nullptr),
                       [](const Entry& entry, const Key& key) { return KeyLess(entry.key, key); });
  for (auto it = first; it != index_.end() && std::get<0>(it->key) == e.t->data; ++it) {
    if (!it->packed) return;
  }
  stored_.DropPages(e.t->data, e.t->bytes());
}

const void* PackedWeights::Data(const TensorView& t, const kernels::MatmulOp& op) const {
  if (op.pack == nullptr) return t.data;
  const Key probe(t.data, op.pack);
  const auto it =
      std::lower_bound(index_.begin(), index_.end(), probe,
                       [](const Entry& entry, const Key& key) { return KeyLess(entry.key, key); });
  SM_CHECK(it != index_.end() && it->key == probe) << "matrix was not packed for its op";
  if (!it->packed) {  // an expert's first use
    Pack(*it);
    ++experts_packed_;
  }
  return it->dst;
}

}  // namespace smallmind::worker

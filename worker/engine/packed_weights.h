// PackedWeights: repacked copies of the matrices whose matmul in some KernelTable has a PackFn (the
// AVX2 / AVX-512 kernels of most quantized types). A matrix is packed once per PackFn, so tables
// that share a layout (the deterministic and parallel AVX2 tables) share one copy; other matrices
// are not copied. A matrix that every table reads packed, and that is not also the token embedding,
// has its mapped file pages dropped once packed, so the model is resident once.
//
// Dense matrices are packed by the constructor (the Engine's). The experts of a mixture-of-experts
// layer are packed on first use instead (issue 44: an expert no token picks is never copied nor
// read, so a 30B-A3B model is resident for the experts its traffic uses): their room is reserved in
// the anonymous region, which takes no memory until written, and Data() packs an expert the first
// time an op asks for it. Packing is deterministic, so lazily packed bits equal eagerly packed
// ones. Data() may pack, so it is called from one thread at a time (the engine thread, before it
// hands a region to the pool); everything else is immutable after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <tuple>
#include <vector>

#include "kernels/kernels.h"
#include "shared/huge_region.h"
#include "worker/model/weights.h"

namespace smallmind::worker {

class PackedWeights {
 public:
  // Packs every dense matrix of `w` (layers and classifier) whose matmul in any of `tables` has a
  // PackFn, and reserves room for its experts'; `lazy_experts` false packs the experts now too.
  PackedWeights(const Weights& w, std::initializer_list<const kernels::KernelTable*> tables,
                bool lazy_experts = true);

  // What `op` reads for `t`: the copy packed by op.pack (packed now when `t` is an expert not yet
  // packed), or t.data when op reads the stored layout. One thread at a time.
  const void* Data(const TensorView& t, const kernels::MatmulOp& op) const;

  const void* storage() const { return storage_.data(); }
  size_t bytes() const { return bytes_; }
  // Expert matrices (one per expert, layer, gate/up/down and PackFn) packed so far, of how many.
  int experts_packed() const { return experts_packed_; }
  int experts_total() const { return experts_total_; }

 private:
  using Key = std::tuple<const void*, kernels::PackFn>;  // (t.data, pack)
  struct Entry {
    Key key;
    std::byte* dst;       // the packed copy's room in storage_
    const TensorView* t;  // the stored matrix
    const kernels::MatmulOp* op;
    bool drop_stored;  // every table reads t packed: drop its file pages once packed
    mutable bool packed;
  };
  void Pack(const Entry& e) const;

  const WeightStorage& stored_;
  // Every packed matrix, each 64-byte aligned, on huge pages where THP allows.
  shared::HugeRegion storage_;
  size_t bytes_ = 0;
  std::vector<Entry> index_;  // sorted by key: the entries of one matrix are adjacent
  int experts_total_ = 0;
  mutable int experts_packed_ = 0;
};

}  // namespace smallmind::worker

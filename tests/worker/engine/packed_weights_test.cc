// PackedWeights (worker/engine/packed_weights.h): the experts of a mixture-of-experts model are
// packed on first use, to the same bytes eager packing writes, and only the experts asked for are;
// dense matrices are packed at construction as before.
#include "worker/engine/packed_weights.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/dispatch.h"
#include "tests/worker/engine/moe_models.h"

namespace smallmind::worker {
namespace {

using kernels::DType;
using kernels::ExecMode;
using kernels::Isa;

TEST(PackedWeightsTest, ExpertsArePackedOnFirstUseToTheEagerBytes) {
  if (!kernels::CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "the packing kernels are AVX2's";
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    const LlamaModel model = testing::MakeMoeModel("qwen3moe", type);
    const kernels::KernelTable det = kernels::SelectKernels(Isa::kAvx2, ExecMode::kDeterministic);
    const kernels::KernelTable par = kernels::SelectKernels(Isa::kAvx2, ExecMode::kParallel);
    const kernels::MatmulOp* op = det.MatmulFor(type);
    ASSERT_NE(op, nullptr);
    if (op->pack == nullptr) GTEST_SKIP() << "AVX2 reads this type unpacked";
    const PackedWeights eager(model.weights, {&det, &par}, /*lazy_experts=*/false);
    const PackedWeights lazy(model.weights, {&det, &par});
    const int experts = model.config.n_layers * model.config.n_experts * 3;
    EXPECT_EQ(eager.experts_total(), experts);
    EXPECT_EQ(eager.experts_packed(), experts);
    EXPECT_EQ(lazy.experts_total(), experts);
    EXPECT_EQ(lazy.experts_packed(), 0) << "nothing used yet";
    // Dense matrices are packed already, alike.
    const TensorView& wq = model.weights.layers[0].wq;
    EXPECT_EQ(std::memcmp(eager.Data(wq, *op), lazy.Data(wq, *op),
                          op->packed_bytes(static_cast<int>(wq.rows), static_cast<int>(wq.cols))),
              0);
    EXPECT_EQ(lazy.experts_packed(), 0);
    // Expert 3's up matrix of layer 1: packed when asked for, once, to the eager bytes.
    const TensorView& up = model.weights.layers[1].up_exps[3];
    const size_t bytes = op->packed_bytes(static_cast<int>(up.rows), static_cast<int>(up.cols));
    const void* first = lazy.Data(up, *op);
    EXPECT_EQ(lazy.experts_packed(), 1);
    EXPECT_EQ(std::memcmp(first, eager.Data(up, *op), bytes), 0);
    EXPECT_EQ(lazy.Data(up, *op), first);
    EXPECT_EQ(lazy.experts_packed(), 1) << "packed once";
    // Every other expert, asked for in turn, equals its eager copy too.
    for (const LayerWeights& l : model.weights.layers) {
      for (const ExpertsView* v : {&l.gate_exps, &l.up_exps, &l.down_exps}) {
        for (const TensorView& e : v->experts) {
          const size_t n = op->packed_bytes(static_cast<int>(e.rows), static_cast<int>(e.cols));
          ASSERT_EQ(std::memcmp(lazy.Data(e, *op), eager.Data(e, *op), n), 0);
        }
      }
    }
    EXPECT_EQ(lazy.experts_packed(), experts);
  }
}

}  // namespace
}  // namespace smallmind::worker

#include "worker/model/weights.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "worker/model/builtin_tiny.h"

namespace smallmind::worker {
namespace {

TEST(WeightsTest, AllocatedStorageIsZeroedAlignedAndKeepsItsBytesWhenMoved) {
  WeightStorage a = WeightStorage::Allocate(1000);
  ASSERT_EQ(a.size(), 1000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  for (size_t i = 0; i < a.size(); i++) ASSERT_EQ(a.data()[i], std::byte{0});
  const std::byte* bytes = a.data();
  WeightStorage b = std::move(a);
  EXPECT_EQ(b.data(), bytes);
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
}

TEST(WeightsTest, ValidationNamesAMisshapenTensor) {
  LlamaModel model = MakeBuiltinTinyModel();
  EXPECT_TRUE(ValidateLlamaWeights(model.config, model.weights).ok());
  model.weights.layers[1].wk.rows = 7;
  const shared::Status s = ValidateLlamaWeights(model.config, model.weights);
  EXPECT_EQ(s.message(), "tensor layer 1 wk has shape [7, 64], expected [32, 64]");
}

TEST(WeightsTest, ValidationRequiresEveryTensorButTheBiases) {
  LlamaModel model = MakeBuiltinTinyModel();
  model.weights.layers[0].bq =
      TensorView{kernels::DType::kF32, model.weights.final_norm.data, 1, 64};
  EXPECT_TRUE(ValidateLlamaWeights(model.config, model.weights).ok());
  model.weights.final_norm.data = nullptr;
  EXPECT_EQ(ValidateLlamaWeights(model.config, model.weights).message(),
            "missing tensor final_norm");
}

}  // namespace
}  // namespace smallmind::worker

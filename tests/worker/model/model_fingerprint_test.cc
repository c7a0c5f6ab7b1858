#include "worker/model/model_fingerprint.h"

#include <gtest/gtest.h>

#include "tests/worker/engine/test_models.h"

namespace smallmind::worker {
namespace {

testing::RandomModelSpec Spec() {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.config.n_layers = 1;
  spec.matrix_type = kernels::DType::kQ8_0;
  return spec;
}

TEST(ModelFingerprintTest, TwoLoadsOfTheSameModelHaveOneFingerprint) {
  EXPECT_EQ(ModelFingerprint(testing::MakeRandomModel(Spec())),
            ModelFingerprint(testing::MakeRandomModel(Spec())));
}

TEST(ModelFingerprintTest, ChangesWhenAnyWeightByteChanges) {
  LlamaModel m = testing::MakeRandomModel(Spec());
  const uint64_t before = ModelFingerprint(m);
  for (const TensorView* t :
       {&m.weights.layers[0].w2, &m.weights.final_norm, &m.weights.token_embedding}) {
    auto* byte = static_cast<uint8_t*>(const_cast<void*>(t->data)) + t->bytes() - 1;
    *byte ^= 1;
    EXPECT_NE(ModelFingerprint(m), before);
    *byte ^= 1;
  }
  EXPECT_EQ(ModelFingerprint(m), before);
}

TEST(ModelFingerprintTest, ChangesWithTheSeedTheTypeOrTheConfig) {
  const uint64_t base = ModelFingerprint(testing::MakeRandomModel(Spec()));
  testing::RandomModelSpec seed = Spec();
  seed.seed = 2;
  EXPECT_NE(ModelFingerprint(testing::MakeRandomModel(seed)), base);
  testing::RandomModelSpec type = Spec();
  type.matrix_type = kernels::DType::kQ4_0;
  EXPECT_NE(ModelFingerprint(testing::MakeRandomModel(type)), base);
  LlamaModel m = testing::MakeRandomModel(Spec());
  m.config.rope_theta = 500000.0f;  // same bytes, other computation
  EXPECT_NE(ModelFingerprint(m), base);
}

TEST(ModelFingerprintTest, FormatsAsSixteenHexDigits) {
  EXPECT_EQ(FormatFingerprint(0xabc), "0000000000000abc");
}

}  // namespace
}  // namespace smallmind::worker

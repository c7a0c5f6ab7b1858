// The BERT encoder's forward pass (worker/engine/forward_bert.h) on a generated bert-tiny file:
// an input's embedding is the same bits whatever it is batched with on the deterministic path,
// attention is bidirectional (the [CLS] state sees later tokens), and the GGUF loader reads the
// encoder's keys. Decoder last-token pooling: the pooled state is the one the classifier reads.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/scoped_temp_dir.h"
#include "tests/worker/conformance/embedding_runner.h"
#include "tests/worker/engine/test_models.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/modelgen/bert_generator.h"

namespace smallmind::worker {
namespace {

using testing::EmbedInputs;
using testing::EmbedOptions;
using testing::MakeRandomModel;
using testing::RandomModelSpec;
using testing::SmallConfig;

GgufModel LoadBert(PoolingType pooling, const smallmind::testing::ScopedTempDir& dir) {
  BertGeneratorOptions o;
  o.pooling = pooling;
  const std::string path = dir.File("bert.gguf");
  const shared::Status written = WriteBertModel(o, path);
  EXPECT_TRUE(written.ok()) << written.ToString();
  shared::Result<GgufModel> m = LoadGgufModel(path);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

TEST(ForwardBertTest, TheLoaderReadsAnEncoderWithItsPoolingAndEpsilon) {
  const smallmind::testing::ScopedTempDir dir("bert");
  const GgufModel m = LoadBert(PoolingType::kCls, dir);
  const ModelConfig& c = m.llama.config;
  EXPECT_TRUE(c.encoder);
  EXPECT_EQ(c.pooling, PoolingType::kCls);
  EXPECT_FLOAT_EQ(c.layer_norm_eps, 1e-12f);
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.context_length, 128);
  EXPECT_TRUE(m.llama.weights.position_embedding.present());
  EXPECT_FALSE(m.llama.weights.classifier.present());
}

TEST(ForwardBertTest, AnInputGetsTheSameBitsWhateverItIsBatchedWithOnTheDeterministicPath) {
  const smallmind::testing::ScopedTempDir dir("bert");
  const GgufModel m = LoadBert(PoolingType::kMean, dir);
  const std::vector<TokenId> a = {2, 60, 61, 62, 63, 64, 3};
  const std::vector<TokenId> b = {2, 10, 11, 3};
  std::vector<TokenId> c = {2};
  for (int i = 0; i < 40; i++) c.push_back(20 + i % 50);
  c.push_back(3);
  const EmbedOptions alone{kernels::ExecMode::kDeterministic, 1};
  const std::vector<float> reference = EmbedInputs(m.llama, {a}, alone)[0];
  for (int threads : {1, 2, 3, 4}) {
    const EmbedOptions batched{kernels::ExecMode::kDeterministic, threads};
    const auto got = EmbedInputs(m.llama, {b, c, a, b}, batched);
    ASSERT_EQ(got[2].size(), reference.size());
    for (size_t i = 0; i < reference.size(); i++) {
      ASSERT_EQ(got[2][i], reference[i]) << "element " << i << " with " << threads << " threads";
    }
    EXPECT_EQ(got[0], got[3]) << "the same input twice in one batch";
  }
}

TEST(ForwardBertTest, AttentionIsBidirectionalTheFirstTokenSeesLaterOnes) {
  const smallmind::testing::ScopedTempDir dir("bert");
  const GgufModel m = LoadBert(PoolingType::kCls, dir);
  const EmbedOptions o{kernels::ExecMode::kDeterministic, 1};
  const auto got = EmbedInputs(m.llama, {{2, 60, 61, 3}, {2, 60, 70, 3}, {2, 60, 61, 3}}, o);
  EXPECT_NE(got[0], got[1]) << "[CLS]'s state must change with a later token";
  EXPECT_EQ(got[0], got[2]);
}

TEST(ForwardBertTest, ADecodersLastTokenPoolingIsTheStateItsClassifierReads) {
  RandomModelSpec spec;
  spec.config = SmallConfig();
  const LlamaModel model = MakeRandomModel(spec);
  const ModelConfig& c = model.config;
  const std::vector<TokenId> prompt = {1,  5,  9,  13, 17, 21, 25, 29, 33,
                                       37, 41, 45, 49, 53, 57, 61, 65, 69};
  KvPool kv(c, 4, 16);
  EngineOptions eo;
  eo.max_step_tokens = 64;
  eo.max_seqs = 2;
  Engine engine(c, model.weights, &kv, eo);
  const std::vector<int32_t> table = {0, 1};
  StepPlan plan;
  plan.mode = kernels::ExecMode::kDeterministic;
  SeqStep seq{prompt, 0, table, true};
  seq.embed = PoolingType::kLast;
  plan.seqs.push_back(seq);
  engine.Step(plan);
  const std::span<const float> pooled = engine.Embedding(0);
  const std::span<float> logits = engine.Logits(0);
  ASSERT_EQ(static_cast<int>(pooled.size()), c.dim);
  const float* classifier = model.weights.classifier.f32();  // [vocab, dim]
  for (int r = 0; r < c.vocab_size; r += 37) {
    double dot = 0;
    for (int i = 0; i < c.dim; i++) dot += double(classifier[int64_t{r} * c.dim + i]) * pooled[i];
    EXPECT_NEAR(dot, logits[r], 1e-3 * (1 + std::abs(dot))) << "logit " << r;
  }
}

}  // namespace
}  // namespace smallmind::worker

// A cross-encoder reranker's classification head (worker/engine/rank_head.h) on a generated
// bert-tiny-rerank file: the loader reads pooling rank and the head, a pair's score is the head
// of its [CLS] state computed in double beside it, the same bits whatever the pair is batched
// with on the deterministic path, and both kernel paths agree; rank pooling without a head and a
// head without rank pooling are refused at load.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/scoped_temp_dir.h"
#include "tests/worker/conformance/embedding_runner.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/modelgen/bert_generator.h"

namespace smallmind::worker {
namespace {

using testing::EmbedInputs;
using testing::EmbedOptions;

GgufModel LoadReranker(const smallmind::testing::ScopedTempDir& dir, int outputs = 1) {
  shared::Result<BertGeneratorOptions> o = BertGeneratorPreset("bert-tiny-rerank");
  EXPECT_TRUE(o.ok());
  o->rank_outputs = outputs;
  const std::string path = dir.File("rerank.gguf");
  const shared::Status written = WriteBertModel(*o, path);
  EXPECT_TRUE(written.ok()) << written.ToString();
  shared::Result<GgufModel> m = LoadGgufModel(path);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

// y[rows] = w . x + b in double, w an F32 [rows, cols] view.
std::vector<double> Linear(const TensorView& w, const TensorView& b, const std::vector<double>& x) {
  std::vector<double> y(static_cast<size_t>(w.rows));
  for (int64_t r = 0; r < w.rows; r++) {
    double acc = b.present() ? b.f32()[r] : 0.0;
    for (int64_t c = 0; c < w.cols; c++) acc += double(w.f32()[r * w.cols + c]) * x[c];
    y[r] = acc;
  }
  return y;
}

const std::vector<TokenId> kPair = {2, 60, 61, 62, 3, 70, 71, 72, 73};  // [CLS] q [SEP] d

TEST(RankHeadTest, TheLoaderReadsRankPoolingAndTheHead) {
  const smallmind::testing::ScopedTempDir dir("rerank");
  const GgufModel m = LoadReranker(dir);
  EXPECT_EQ(m.llama.config.pooling, PoolingType::kRank);
  EXPECT_EQ(m.llama.config.rank_outputs, 1);
  EXPECT_EQ(m.llama.weights.cls.rows, m.llama.config.dim);
  EXPECT_EQ(m.llama.weights.cls_out.rows, 1);
  EXPECT_TRUE(m.llama.weights.cls_b.present());
  EXPECT_TRUE(m.llama.weights.cls_out_b.present());
}

TEST(RankHeadTest, AScoreIsTheHeadOfTheClsStateComputedInDouble) {
  const smallmind::testing::ScopedTempDir dir("rerank");
  const GgufModel m = LoadReranker(dir, 3);
  const Weights& w = m.llama.weights;
  for (kernels::ExecMode mode : {kernels::ExecMode::kDeterministic, kernels::ExecMode::kParallel}) {
    const EmbedOptions cls{mode, 2, PoolingType::kCls};
    const std::vector<float> state = EmbedInputs(m.llama, {kPair}, cls)[0];
    std::vector<double> h(state.begin(), state.end());
    h = Linear(w.cls, w.cls_b, h);
    for (double& v : h) v = std::tanh(v);
    const std::vector<double> want = Linear(w.cls_out, w.cls_out_b, h);
    const std::vector<float> got = EmbedInputs(m.llama, {kPair}, EmbedOptions{mode, 2})[0];
    ASSERT_EQ(got.size(), 3u) << "rank_outputs values, not the embedding width";
    for (size_t i = 0; i < want.size(); i++) {
      EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << "output " << i;
    }
  }
}

TEST(RankHeadTest, APairGetsTheSameBitsWhateverItIsBatchedWithOnTheDeterministicPath) {
  const smallmind::testing::ScopedTempDir dir("rerank");
  const GgufModel m = LoadReranker(dir);
  const std::vector<TokenId> other = {2, 10, 11, 3, 12};
  std::vector<TokenId> long_pair = {2, 40, 3};
  for (int i = 0; i < 40; i++) long_pair.push_back(20 + i % 50);
  const EmbedOptions alone{kernels::ExecMode::kDeterministic, 1};
  const float reference = EmbedInputs(m.llama, {kPair}, alone)[0][0];
  for (int threads : {1, 2, 3, 4}) {
    const EmbedOptions batched{kernels::ExecMode::kDeterministic, threads};
    const auto got = EmbedInputs(m.llama, {other, long_pair, kPair, other}, batched);
    EXPECT_EQ(got[2][0], reference) << threads << " threads";
    EXPECT_EQ(got[0], got[3]) << "the same pair twice in one batch";
    EXPECT_NE(got[0][0], got[1][0]) << "different pairs, different scores";
  }
}

// `path`'s bert.pooling_type value (a u32 right after the key and its type tag) set to `pooling`.
void PatchPooling(const std::string& path, uint32_t pooling) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string key = "bert.pooling_type";
  const size_t at = bytes.find(key);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(bytes.find(key, at + 1), std::string::npos) << "the key once";
  f.seekp(static_cast<std::streamoff>(at + key.size() + 4));  // after the type tag (u32)
  f.write(reinterpret_cast<const char*>(&pooling), sizeof(pooling));
  ASSERT_TRUE(f.good());
}

TEST(RankHeadTest, TheLoaderRefusesRankWithoutAHeadAndAHeadWithoutRankNamingIt) {
  const smallmind::testing::ScopedTempDir dir("rerank");
  BertGeneratorOptions embedder;  // bert-tiny: mean pooling, no head
  const std::string no_head = dir.File("no-head.gguf");
  ASSERT_TRUE(WriteBertModel(embedder, no_head).ok());
  PatchPooling(no_head, 4);
  shared::Result<GgufModel> refused = LoadGgufModel(no_head);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("no classification head"), std::string::npos)
      << refused.status().ToString();

  shared::Result<BertGeneratorOptions> reranker = BertGeneratorPreset("bert-tiny-rerank");
  ASSERT_TRUE(reranker.ok());
  const std::string head_only = dir.File("head-only.gguf");
  ASSERT_TRUE(WriteBertModel(*reranker, head_only).ok());
  PatchPooling(head_only, 1);  // mean
  refused = LoadGgufModel(head_only);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("tensor 'cls."), std::string::npos)
      << "the unused head is named: " << refused.status().ToString();
}

TEST(RankHeadTest, TheGeneratorRefusesRankPoolingWithoutAHeadAndAHeadWithoutRank) {
  shared::Result<BertGeneratorOptions> o = BertGeneratorPreset("bert-tiny-rerank");
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(ValidateBertGeneratorOptions(*o).ok());
  o->rank_outputs = 0;
  EXPECT_FALSE(ValidateBertGeneratorOptions(*o).ok());
  o->rank_outputs = 1;
  o->pooling = PoolingType::kMean;
  EXPECT_FALSE(ValidateBertGeneratorOptions(*o).ok());
}

}  // namespace
}  // namespace smallmind::worker

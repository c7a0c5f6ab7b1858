// qwen2moe and olmoe through the GGUF loader (docs/moe.md): what each family's description reads
// from a modelgen file (the shared expert and its gate, whole-row q/k norms, the routing that
// does not renormalise), what it refuses, and that the fingerprint covers the shared expert.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/worker/engine/moe_models.h"
#include "tests/worker/model/gguf_rewrite.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/model_fingerprint.h"
#include "worker/modelgen/gguf_writer.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

using testing::MoeOptions;

// Refused, the message holding `what` (a tensor or a key, quoted or not).
void ExpectRefusedMentioning(const std::vector<uint8_t>& bytes, const std::string& what) {
  const shared::Status s = LoadStatus(bytes);
  ASSERT_FALSE(s.ok()) << "expected " << what << " to be refused";
  EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
}

// `src` without its tensor `name` (the metadata kept).
std::vector<uint8_t> WithoutTensor(const std::vector<uint8_t>& src, const std::string& name) {
  return Rewritten(
      src, [](GgufWriter&) {}, "", name);
}

struct Loaded {
  ModelConfig config;
  Weights weights;
};

Loaded Load(const std::vector<uint8_t>& bytes) {
  std::unique_ptr<GgufFile> f = Parse(bytes);
  auto c = GgufModelConfig(*f);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  WeightStorage storage = WeightStorage::Allocate(f->file_size());
  std::memcpy(storage.mutable_data(), f->bytes().data(), f->file_size());
  auto w = MapGgufWeights(*f, *c, std::move(storage));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(ValidateLlamaWeights(*c, *w).ok());
  return Loaded{*c, std::move(w).value()};
}

// qwen2moe: the shared expert's matrices become the layer's w1 / w3 / w2 at
// expert_shared_feed_forward_length, its gate a [1, dim] vector; q/k/v biases; no
// renormalisation.
TEST(GgufMoeFamiliesTest, Qwen2MoeReadsItsSharedExpertAndGate) {
  auto bytes = GenerateModelBuffer(MoeOptions("qwen2moe", kernels::DType::kQ8_0));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  Loaded m = Load(*bytes);
  const ModelConfig& c = m.config;
  EXPECT_EQ(c.n_experts, 8);
  EXPECT_EQ(c.expert_ffn_dim, 96);
  EXPECT_EQ(c.shared_expert_ffn_dim, 128);
  EXPECT_FALSE(c.expert_weights_norm);
  EXPECT_EQ(c.rope_style, RopeStyle::kNeox);
  const LayerWeights& l = m.weights.layers[1];
  EXPECT_EQ(l.w1.rows, 128);
  EXPECT_EQ(l.w1.cols, 64);
  EXPECT_EQ(l.w2.rows, 64);
  EXPECT_EQ(l.w2.cols, 128);
  EXPECT_EQ(l.w1.type, kernels::DType::kQ8_0);
  EXPECT_EQ(l.shexp_gate.rows, 1);
  EXPECT_EQ(l.shexp_gate.cols, 64);
  EXPECT_EQ(l.shexp_gate.type, kernels::DType::kF32);
  EXPECT_TRUE(l.bq.present() && l.bk.present() && l.bv.present());

  // The fingerprint covers the shared expert's gate and its config.
  LlamaModel model{m.config, std::move(m.weights)};
  const uint64_t before = ModelFingerprint(model);
  const TensorView& gate = model.weights.layers[0].shexp_gate;
  auto* last = const_cast<std::byte*>(static_cast<const std::byte*>(gate.data)) + gate.bytes() - 1;
  *last ^= std::byte{1};
  EXPECT_NE(ModelFingerprint(model), before);
  *last ^= std::byte{1};
  EXPECT_EQ(ModelFingerprint(model), before);
  model.config.shared_expert_ffn_dim = 0;
  EXPECT_NE(ModelFingerprint(model), before);
}

// Without the key, the shared expert is feed_forward_length wide (llama.cpp's n_ff_shexp
// default): a file whose matrices are not is refused naming them.
TEST(GgufMoeFamiliesTest, Qwen2MoeSharedWidthDefaultsToTheFeedForwardLength) {
  GeneratorOptions o = MoeOptions("qwen2moe", kernels::DType::kF32);
  o.shared_expert_ffn_dim = 0;  // modelgen: hidden_dim, the key still written
  auto same = GenerateModelBuffer(o);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Load(Rewritten(
                     *same, [](GgufWriter&) {}, "qwen2moe.expert_shared_feed_forward_length"))
                .config.shared_expert_ffn_dim,
            96);
  auto wider = GenerateModelBuffer(MoeOptions("qwen2moe", kernels::DType::kF32));
  ASSERT_TRUE(wider.ok());
  ExpectRefusedMentioning(
      Rewritten(
          *wider, [](GgufWriter&) {}, "qwen2moe.expert_shared_feed_forward_length"),
      "ffn_gate_shexp");
}

// What would compute another model is refused naming it: renormalised weights (llama.cpp's
// qwen2moe and olmoe graphs never renormalise), a missing shared-expert tensor, a per-head q/k
// norm in olmoe, shared-expert tensors in olmoe, and an olmoe expert width other than
// feed_forward_length.
TEST(GgufMoeFamiliesTest, FilesThatComputeSomethingElseAreRefusedNamingWhat) {
  for (const char* arch : {"qwen2moe", "olmoe"}) {
    SCOPED_TRACE(arch);
    auto bytes = GenerateModelBuffer(MoeOptions(arch, kernels::DType::kF32));
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    const std::string key = std::string(arch) + ".expert_weights_norm";
    ExpectRefusedNaming(Rewritten(*bytes, [&](GgufWriter& w) { w.AddBool(key, true); }), key);
    EXPECT_TRUE(LoadStatus(Rewritten(*bytes, [&](GgufWriter& w) { w.AddBool(key, false); })).ok());
  }
  auto qwen2moe = GenerateModelBuffer(MoeOptions("qwen2moe", kernels::DType::kF32));
  ASSERT_TRUE(qwen2moe.ok());
  ExpectRefusedMentioning(WithoutTensor(*qwen2moe, "blk.1.ffn_gate_inp_shexp.weight"),
                          "blk.1.ffn_gate_inp_shexp.weight");

  auto olmoe = GenerateModelBuffer(MoeOptions("olmoe", kernels::DType::kF32));
  ASSERT_TRUE(olmoe.ok());
  const std::vector<uint8_t> data(64 * 96 * sizeof(float));
  const int64_t dims[] = {64, 96};
  ExpectRefusedNaming(Rewritten(*olmoe,
                                [&](GgufWriter& w) {
                                  w.AddTensor("blk.0.ffn_gate_shexp.weight", kernels::DType::kF32,
                                              dims, data);
                                }),
                      "blk.0.ffn_gate_shexp.weight");
  ExpectRefusedNaming(
      Rewritten(*olmoe,
                [](GgufWriter& w) { w.AddU32("olmoe.expert_shared_feed_forward_length", 96); }),
      "olmoe.expert_shared_feed_forward_length");
  // A per-head q norm ([head_dim], qwen3's shape) where olmoe norms the whole row.
  const std::vector<uint8_t> head_norm(16 * sizeof(float));
  const int64_t head_dims[] = {16};
  ExpectRefusedMentioning(Rewritten(WithoutTensor(*olmoe, "blk.0.attn_q_norm.weight"),
                                    [&](GgufWriter& w) {
                                      w.AddTensor("blk.0.attn_q_norm.weight", kernels::DType::kF32,
                                                  head_dims, head_norm);
                                    }),
                          "q_norm");
  // llama.cpp's olmoe sizes its experts by feed_forward_length and reads no
  // expert_feed_forward_length: the key is taken only when it agrees.
  ExpectRefusedNaming(
      Rewritten(*olmoe, [](GgufWriter& w) { w.AddU32("olmoe.expert_feed_forward_length", 64); }),
      "olmoe.expert_feed_forward_length");
  EXPECT_TRUE(LoadStatus(Rewritten(*olmoe, [](GgufWriter& w) {
                w.AddU32("olmoe.expert_feed_forward_length", 96);
              })).ok());
}

// olmoe: q and k norms over whole rows ([q_dim], [kv_dim]), NeoX RoPE, no renormalisation.
TEST(GgufMoeFamiliesTest, OlmoeReadsWholeRowQkNorms) {
  auto bytes = GenerateModelBuffer(MoeOptions("olmoe", kernels::DType::kF32));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  const Loaded m = Load(*bytes);
  const ModelConfig& c = m.config;
  EXPECT_TRUE(c.qk_norm_whole_row);
  EXPECT_FALSE(c.expert_weights_norm);
  EXPECT_EQ(c.shared_expert_ffn_dim, 0);
  EXPECT_EQ(c.rope_style, RopeStyle::kNeox);
  EXPECT_EQ(m.weights.layers[0].q_norm.cols, c.q_dim());
  EXPECT_EQ(m.weights.layers[0].k_norm.cols, c.kv_dim());
  EXPECT_FALSE(m.weights.layers[0].w1.present());
}

}  // namespace
}  // namespace smallmind::worker

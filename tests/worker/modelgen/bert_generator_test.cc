// The BERT generator writes llama.cpp's bert keys and tensors with the shapes a BERT encoder has,
// a WordPiece vocabulary the tokenizer loads (synthetic, or copied from bert-bge), and the same
// bytes for the same options.
#include "worker/modelgen/bert_generator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/gguf/gguf_vocab.h"

namespace smallmind::worker {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void ExpectShape(const GgufFile& f, const std::string& name, int64_t rows, int64_t cols) {
  const GgufTensorInfo* t = f.FindTensor(name);
  ASSERT_NE(t, nullptr) << name;
  EXPECT_EQ(t->n_rows(), rows) << name;
  EXPECT_EQ(t->row_length(), cols) << name;
}

TEST(BertGeneratorTest, WritesBertKeysTensorsAndALoadableWordPieceVocabulary) {
  testing::ScopedTempDir dir;
  BertGeneratorOptions o;
  o.pooling = PoolingType::kCls;
  o.weight_type = kernels::DType::kQ8_0;
  const std::string path = dir.path() + "/bert.gguf";
  ASSERT_TRUE(WriteBertModel(o, path).ok());
  auto f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const GgufFile& g = **f;
  EXPECT_EQ(*g.GetString("general.architecture"), "bert");
  EXPECT_EQ(*g.GetU32("bert.pooling_type"), 2u);
  EXPECT_EQ(*g.GetBool("bert.attention.causal"), false);
  EXPECT_EQ(*g.GetU32("bert.embedding_length"), 64u);
  const int64_t n_vocab = static_cast<int64_t>(SyntheticWordPieceTokens().size());
  ExpectShape(g, "token_embd.weight", n_vocab, 64);
  ExpectShape(g, "token_types.weight", 2, 64);
  ExpectShape(g, "position_embd.weight", 128, 64);
  ExpectShape(g, "token_embd_norm.bias", 1, 64);
  ExpectShape(g, "blk.1.attn_q.weight", 64, 64);
  ExpectShape(g, "blk.1.ffn_up.weight", 256, 64);
  ExpectShape(g, "blk.1.ffn_down.weight", 64, 256);
  ExpectShape(g, "blk.1.layer_output_norm.weight", 1, 64);
  EXPECT_EQ(g.FindTensor("blk.2.attn_q.weight"), nullptr);
  EXPECT_EQ(g.FindTensor("blk.0.attn_q.weight")->type, kernels::DType::kQ8_0);
  EXPECT_EQ(g.FindTensor("blk.0.attn_q.bias")->type, kernels::DType::kF32);
  auto tok = GgufTokenizer(g);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_EQ((*tok)->kind(), TokenizerKind::kWordPiece);
  const std::vector<TokenId> ids = (*tok)->Encode("Hello, embedding world!", true);
  EXPECT_EQ(ids.front(), 2);
  EXPECT_EQ(ids.back(), 3);
  for (TokenId id : ids) EXPECT_NE(id, 1) << "every ASCII word has pieces";

  const std::string again = dir.path() + "/again.gguf";
  ASSERT_TRUE(WriteBertModel(o, again).ok());
  EXPECT_EQ(Slurp(path), Slurp(again)) << "the same options give the same bytes";
}

TEST(BertGeneratorTest, CopiesTheBertBgeVocabulary) {
  SM_REQUIRE_SHARED_DATA("tokenizer-vectors/ggml-vocab-bert-bge.gguf");
  testing::ScopedTempDir dir;
  BertGeneratorOptions o;
  o.vocab_file = testing::SharedDataPath("tokenizer-vectors/ggml-vocab-bert-bge.gguf");
  const std::string path = dir.path() + "/bge.gguf";
  ASSERT_TRUE(WriteBertModel(o, path).ok());
  auto f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok());
  ExpectShape(**f, "token_embd.weight", 30522, 64);
  auto tok = GgufTokenizer(**f);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_EQ((*tok)->Encode("Hello world", true), (std::vector<TokenId>{101, 7592, 2088, 102}));
}

TEST(BertGeneratorTest, RefusesBadShapesTypesAndPresets) {
  BertGeneratorOptions o;
  o.n_heads = 5;
  EXPECT_FALSE(ValidateBertGeneratorOptions(o).ok()) << "5 heads do not divide 64";
  o = BertGeneratorOptions{};
  o.weight_type = kernels::DType::kQ4_K;
  EXPECT_FALSE(ValidateBertGeneratorOptions(o).ok());
  EXPECT_FALSE(BertGeneratorPreset("bert-huge").ok());
  auto base = BertGeneratorPreset("bench-110M-bert");
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(base->dim, 768);
  EXPECT_EQ(base->hidden_dim, 3072);
  EXPECT_TRUE(ValidateBertGeneratorOptions(*base).ok());
}

}  // namespace
}  // namespace smallmind::worker

// The embeddings oracle's stored cases (tests/data/conformance/*-embed.json, written by
// bench/compare/llama_cpp_embed_oracle.mjs): every text tokenizes with smallmind's WordPiece
// tokenizer to exactly the ids llama.cpp evaluated for it, on the synthetic vocabulary of
// smallmind-modelgen --bert and on bert-bge's, and every stored embedding is finite, of the
// model's width.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/testing/shared_data.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/gguf/gguf_vocab.h"
#include "worker/modelgen/bert_generator.h"
#include "worker/tokenizer/wordpiece_tokenizer.h"

namespace smallmind::worker {
namespace {

const std::string kDir = std::string(SMALLMIND_SOURCE_DIR) + "/tests/data/conformance";

nlohmann::json Load(const std::string& name) {
  std::ifstream in(kDir + "/" + name + "-embed.json");
  EXPECT_TRUE(in.good()) << name;
  return nlohmann::json::parse(in);
}

void ExpectIds(const Tokenizer& tok, const nlohmann::json& c, size_t dim) {
  ASSERT_FALSE(c.at("inputs").empty());
  for (const nlohmann::json& input : c.at("inputs")) {
    const std::string text = input.at("text").get<std::string>();
    const std::vector<TokenId> want = input.at("ids").get<std::vector<TokenId>>();
    EXPECT_EQ(tok.Encode(text, false), want) << c.at("case") << ": '" << text << "'";
    const std::vector<float> embedding = input.at("embedding").get<std::vector<float>>();
    ASSERT_EQ(embedding.size(), dim) << text;
    for (float x : embedding) ASSERT_TRUE(std::isfinite(x)) << text;
  }
}

TEST(EmbedOracleIdsTest, SyntheticVocabularyTokenizesAsLlamaCpp) {
  WordPieceVocab v;
  v.tokens = SyntheticWordPieceTokens();
  v.pad_id = 0;
  v.unk_id = 1;
  v.cls_id = 2;
  v.sep_id = 3;
  v.mask_id = 4;
  auto tok = WordPieceTokenizer::Create(v);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  for (const char* name : {"bert-tiny-f32", "bert-tiny-cls-f32", "bert-tiny-q8_0"}) {
    ExpectIds(**tok, Load(name), 64);
  }
}

TEST(EmbedOracleIdsTest, BertBgeVocabularyTokenizesAsLlamaCpp) {
  SM_REQUIRE_SHARED_DATA("tokenizer-vectors/ggml-vocab-bert-bge.gguf");
  auto file = GgufFile::Open(testing::SharedDataPath("tokenizer-vectors/ggml-vocab-bert-bge.gguf"));
  ASSERT_TRUE(file.ok());
  auto tok = GgufTokenizer(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  ExpectIds(**tok, Load("bert-bge-tiny-f32"), 64);
}

}  // namespace
}  // namespace smallmind::worker

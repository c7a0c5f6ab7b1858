// GgufTokenizer on small GGUF files written in memory: which tokenizer each model key builds, the
// BPE special-token keys and defaults, and the errors for what it does not support.
#include "worker/model/gguf/gguf_vocab.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worker/modelgen/gguf_writer.h"
#include "worker/tokenizer/bpe_tokenizer.h"
#include "worker/tokenizer/byte_level_map.h"

namespace smallmind::worker {
namespace {

// A byte-level vocabulary: ids 0..255 the single bytes, 256 "Ġh", 257 "<|eot_id|>" (control).
struct Gpt2Metadata {
  std::string model = "gpt2";
  const char* pre = "llama-bpe";  // nullptr: no tokenizer.ggml.pre key
  bool merges = true;
  int eot_key = -1;  // tokenizer.ggml.eot_token_id, written when >= 0
  int add_bos = -1;  // tokenizer.ggml.add_bos_token: -1 absent, else 0 / 1
};

std::unique_ptr<GgufFile> WriteGpt2(const Gpt2Metadata& m) {
  ByteLevelMap map;
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    tokens.emplace_back();
    map.AppendEncoded(std::string_view(&byte, 1), &tokens.back());
  }
  tokens.push_back("\xC4\xA0h");
  tokens.push_back("<|eot_id|>");
  std::vector<int32_t> types(tokens.size(), 1);
  types[257] = 3;
  const std::vector<std::string> merges = {"\xC4\xA0 h"};
  GgufWriter w;
  w.AddString("general.architecture", "llama");
  w.AddString("tokenizer.ggml.model", m.model);
  if (m.pre != nullptr) w.AddString("tokenizer.ggml.pre", m.pre);
  w.AddStringArray("tokenizer.ggml.tokens", tokens);
  w.AddI32Array("tokenizer.ggml.token_type", types);
  if (m.merges) w.AddStringArray("tokenizer.ggml.merges", merges);
  w.AddU32("tokenizer.ggml.bos_token_id", 'B');
  w.AddU32("tokenizer.ggml.eos_token_id", 'E');
  if (m.eot_key >= 0) w.AddU32("tokenizer.ggml.eot_token_id", static_cast<uint32_t>(m.eot_key));
  if (m.add_bos >= 0) w.AddBool("tokenizer.ggml.add_bos_token", m.add_bos == 1);
  auto bytes = w.WriteBuffer();
  SM_CHECK(bytes.ok()) << bytes.status().ToString();
  auto file = GgufFile::FromBuffer(*bytes, "vocab.gguf");
  SM_CHECK(file.ok()) << file.status().ToString();
  return std::move(file).value();
}

TEST(GgufVocabTest, Gpt2ModelBuildsAByteLevelBpeTokenizerFromTheMetadata) {
  auto file = WriteGpt2({});
  auto tok = GgufTokenizer(*file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const auto* bpe = dynamic_cast<const BpeTokenizer*>(tok->get());
  ASSERT_NE(bpe, nullptr);
  EXPECT_EQ(bpe->vocab_size(), 258);
  EXPECT_EQ(bpe->bos_id(), 'B');
  EXPECT_EQ(bpe->eos_id(), 'E');
  EXPECT_EQ(bpe->pre_tokenizer_name(), "llama3");
  EXPECT_TRUE(bpe->add_bos_default());  // Llama 3's default when the key is absent
  EXPECT_EQ(bpe->eot_id(), 257);        // found by its spelling
  EXPECT_EQ(bpe->Encode("a h", true), (std::vector<TokenId>{'B', 'a', 256}));
}

TEST(GgufVocabTest, ExplicitKeysOverrideFamilyDefaults) {
  Gpt2Metadata m;
  m.add_bos = 0;
  m.eot_key = 'T';
  auto tok = GgufTokenizer(*WriteGpt2(m));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const auto& bpe = dynamic_cast<const BpeTokenizer&>(**tok);
  EXPECT_FALSE(bpe.add_bos_default());
  EXPECT_EQ(bpe.eot_id(), 'T');
}

TEST(GgufVocabTest, MissingPreTokenizerKeyMeansTheDefaultFamily) {
  Gpt2Metadata m;
  m.pre = nullptr;
  auto tok = GgufTokenizer(*WriteGpt2(m));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_EQ(dynamic_cast<const BpeTokenizer&>(**tok).pre_tokenizer_name(), "default");
  EXPECT_FALSE((*tok)->add_bos_default());
}

TEST(GgufVocabTest, UnknownPreTokenizerIsRejectedNamingFileKeyAndSupportedValues) {
  Gpt2Metadata m;
  m.pre = "jais-2";
  auto tok = GgufTokenizer(*WriteGpt2(m));
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), shared::StatusCode::kInvalidArgument);
  const std::string& msg = tok.status().message();
  for (const char* part : {"vocab.gguf", "tokenizer.ggml.pre", "'jais-2'", "qwen2"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " missing from: " << msg;
  }
}

TEST(GgufVocabTest, Gpt2WithoutMergesIsRejected) {
  Gpt2Metadata m;
  m.merges = false;
  auto tok = GgufTokenizer(*WriteGpt2(m));
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("tokenizer.ggml.merges"), std::string::npos)
      << tok.status().message();
}

TEST(GgufVocabTest, UnsupportedTokenizerModelIsRejectedListingTheSupportedOnes) {
  Gpt2Metadata m;
  m.model = "t5";
  auto tok = GgufTokenizer(*WriteGpt2(m));
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(tok.status().message().find("'t5' is not supported (supported: llama, gpt2, bert)"),
            std::string::npos)
      << tok.status().message();
}

TEST(GgufVocabTest, OutOfRangeSpecialTokenIsRejectedNamingTheFile) {
  Gpt2Metadata m;
  m.eot_key = 5000;
  auto tok = GgufTokenizer(*WriteGpt2(m));
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("vocab.gguf"), std::string::npos);
  EXPECT_NE(tok.status().message().find("5000"), std::string::npos);
}

}  // namespace
}  // namespace smallmind::worker

// Tokenizer::EncodeSpecial: special-token spellings in a rendered chat prompt become those tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/testing/shared_data.h"
#include "worker/tokenizer/bpe_tokenizer.h"
#include "worker/tokenizer/byte_level_map.h"
#include "worker/tokenizer/pre_tokenizer_families.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

using Ids = std::vector<TokenId>;

// Ids 0..255 are the single bytes (GPT-2's alphabet); then <|im_start|> 256, <|im_end|> 257
// (control) and <sep> 258 (user-defined).
std::unique_ptr<BpeTokenizer> ChatBpe() {
  ByteLevelMap map;
  BpeVocab v;
  for (int b = 0; b < 256; ++b) {
    std::string s;
    const char byte = static_cast<char>(b);
    map.AppendEncoded(std::string_view(&byte, 1), &s);
    v.tokens.push_back(s);
  }
  for (const char* t : {"<|im_start|>", "<|im_end|>", "<sep>"}) v.tokens.push_back(t);
  v.types.assign(v.tokens.size(), SpmTokenType::kNormal);
  v.types[256] = v.types[257] = SpmTokenType::kControl;
  v.types[258] = SpmTokenType::kUserDefined;
  v.bos_id = 256;
  v.pre = *FindPreTokenizerFamily("gpt2");
  auto tok = BpeTokenizer::Create(std::move(v));
  SM_CHECK(tok.ok()) << tok.status().ToString();
  return std::move(tok).value();
}

Ids Concat(std::initializer_list<Ids> parts) {
  Ids out;
  for (const Ids& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(EncodeSpecialTest, ControlTokenSpellingsBecomeTheirTokensOnlyWhenAsked) {
  auto tok = ChatBpe();
  const std::string prompt = "<|im_start|>user\nhi<|im_end|>";
  EXPECT_EQ(tok->EncodeSpecial(prompt, false), (Ids{256, 'u', 's', 'e', 'r', '\n', 'h', 'i', 257}));
  const Ids plain = tok->Encode(prompt, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 256), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 257), 0);
}

TEST(EncodeSpecialTest, PrependsBosWhenAskedAndKeepsUserDefinedTokens) {
  auto tok = ChatBpe();
  EXPECT_EQ(tok->EncodeSpecial("a<sep><|im_end|>", true), (Ids{256, 'a', 258, 257}));
  EXPECT_EQ(tok->EncodeSpecial("", true), (Ids{256}));
  EXPECT_EQ(tok->EncodeSpecial("<|im_end|><|im_end|>", false), (Ids{257, 257}));
}

TEST(EncodeSpecialTest, SentencePieceRunsBetweenSpecialTokensEachGetTheDummyPrefix) {
  SM_REQUIRE_SHARED_DATA("models/tok512.bin");
  auto loaded = LoadLlama2cTokenizer(testing::SharedDataPath("models") + "/tok512.bin", 512);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const SpmTokenizer& tok = **loaded;
  ASSERT_EQ(tok.Piece(tok.bos_id()), "<s>");
  EXPECT_EQ(tok.EncodeSpecial("<s>Once upon</s>a time", false),
            Concat({{tok.bos_id()},
                    tok.Encode("Once upon", false),
                    {tok.eos_id()},
                    tok.Encode("a time", false)}));
  const Ids plain = tok.Encode("<s>Once", false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), tok.bos_id()), 0);
}

}  // namespace
}  // namespace smallmind::worker

#include "worker/tokenizer/spm_tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/shared_data.h"
#include "worker/tokenizer/detokenizer.h"

namespace smallmind::worker {
namespace {

const std::string kModels = testing::SharedDataPath("models");

std::unique_ptr<SpmTokenizer> LoadTok512() {
  auto tok = LoadLlama2cTokenizer(kModels + "/tok512.bin", 512);
  SM_CHECK(tok.ok()) << tok.status().ToString();
  return std::move(tok).value();
}

#define SKIP_WITHOUT_SHARED_MODELS()           \
  SM_REQUIRE_SHARED_DATA("models/tok512.bin"); \
  SM_REQUIRE_SHARED_DATA("models/golden-greedy.jsonl")

// Decodes ids with a fresh Detokenizer that starts after `prev`.
std::string Decode(const Tokenizer& tok, const std::vector<TokenId>& ids, TokenId prev) {
  Detokenizer detok(tok, prev);
  std::string out;
  for (TokenId id : ids) detok.Push(id, &out);
  detok.Flush(&out);
  return out;
}

std::vector<TokenId> Tail(const std::vector<TokenId>& ids) {
  return std::vector<TokenId>(ids.begin() + 1, ids.end());
}

TEST(SpmTokenizerTest, EncodesEveryGoldenPromptAsRunCDoes) {
  SKIP_WITHOUT_SHARED_MODELS();
  auto tok = LoadTok512();
  std::ifstream in(kModels + "/golden-greedy.jsonl");
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto golden = nlohmann::json::parse(line);
    const std::string prompt = golden["prompt"];
    EXPECT_EQ(tok->Encode(prompt, true), golden["prompt_token_ids"].get<std::vector<TokenId>>())
        << "prompt: " << prompt;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(SpmTokenizerTest, DecodesEveryGoldenOutputToItsText) {
  SKIP_WITHOUT_SHARED_MODELS();
  auto tok = LoadTok512();
  std::ifstream in(kModels + "/golden-greedy.jsonl");
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto golden = nlohmann::json::parse(line);
    std::vector<TokenId> ids = golden["token_ids"];
    ASSERT_EQ(ids.front(), tok->bos_id());
    std::vector<TokenId> generated = Tail(ids);
    if (golden["stop"] == "bos") generated.pop_back();
    // run.c skips unprintable single bytes; these goldens hold none (only <0x0A>), so the UTF-8
    // detokenizer output must equal run.c's stdout byte for byte.
    EXPECT_EQ(Decode(*tok, generated, tok->bos_id()), golden["text"].get<std::string>());
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(SpmTokenizerTest, LlamaTwoCVocabularyIsNormalised) {
  SKIP_WITHOUT_SHARED_MODELS();
  auto tok = LoadTok512();
  EXPECT_EQ(tok->vocab_size(), 512);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_EQ(tok->Piece(1), "<s>");
  EXPECT_EQ(tok->Piece(2), "</s>");
  EXPECT_EQ(tok->Type(0), SpmTokenType::kUnknown);
  EXPECT_EQ(tok->Type(1), SpmTokenType::kControl);
  EXPECT_EQ(tok->Type(3 + 0x41), SpmTokenType::kByte);
  EXPECT_EQ(tok->Type(259), SpmTokenType::kNormal);
  EXPECT_EQ(tok->Piece(410), " ");
  EXPECT_EQ(tok->Piece(-1), "");
  EXPECT_EQ(tok->Piece(512), "");
}

TEST(SpmTokenizerTest, EmptyTextGivesOnlyBosAndNoDummyPrefix) {
  SKIP_WITHOUT_SHARED_MODELS();
  auto tok = LoadTok512();
  EXPECT_EQ(tok->Encode("", true), std::vector<TokenId>{1});
  EXPECT_TRUE(tok->Encode("", false).empty());
}

TEST(SpmTokenizerTest, DummyPrefixMergesWithFirstWordAndIsDroppedAfterBos) {
  SKIP_WITHOUT_SHARED_MODELS();
  auto tok = LoadTok512();
  std::vector<TokenId> ids = tok->Encode("Once", true);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(tok->Piece(ids[1]), " Once");
  EXPECT_EQ(Decode(*tok, Tail(ids), tok->bos_id()), "Once");
  // Without BOS before it the space is real text.
  EXPECT_EQ(Decode(*tok, Tail(ids), -1), " Once");
  // A leading space in the text is kept: dummy prefix plus the text's own space.
  EXPECT_EQ(Decode(*tok, Tail(tok->Encode(" Once", true)), 1), " Once");
}

TEST(SpmTokenizerTest, UnicodeWithoutPiecesFallsBackToBytesAndRoundTrips) {
  SKIP_WITHOUT_SHARED_MODELS();
  auto tok = LoadTok512();
  const std::string text = "h\xC3\xA9llo \xF0\x9F\x98\x80";  // "héllo 😀"
  std::vector<TokenId> ids = tok->Encode(text, true);
  std::vector<TokenId> emoji(ids.end() - 4, ids.end());
  EXPECT_EQ(emoji, (std::vector<TokenId>{0xF0 + 3, 0x9F + 3, 0x98 + 3, 0x80 + 3}));
  int byte_tokens = 0;
  for (TokenId id : ids) byte_tokens += tok->Type(id) == SpmTokenType::kByte;
  EXPECT_EQ(byte_tokens, 4);  // only 😀: tok512 has a piece for é
  EXPECT_NE(std::find(ids.begin(), ids.end(), 485), ids.end());
  EXPECT_EQ(tok->Piece(485), "\xC3\xA9");
  EXPECT_EQ(Decode(*tok, Tail(ids), 1), text);
}

TEST(SpmTokenizerTest, PlainTextRoundTripsThroughEncodeAndDecode) {
  SKIP_WITHOUT_SHARED_MODELS();
  auto tok = LoadTok512();
  for (std::string text : {"The cat sat on the mat.", "  two leading spaces",
                           "tabs\tand\nnewlines\n", "Lily's mom said, \"Lily, let's go!\"",
                           "<s> is plain text here", "\xE2\x80\x8A hair space", "x"}) {
    EXPECT_EQ(Decode(*tok, Tail(tok->Encode(text, true)), 1), text) << text;
    // Special-token text is never a control token.
    for (TokenId id : tok->Encode(text, false)) EXPECT_NE(tok->Type(id), SpmTokenType::kControl);
  }
}

TEST(SpmTokenizerTest, ControlTokensDecodeToNothingAndBytesToTheirByte) {
  SKIP_WITHOUT_SHARED_MODELS();
  auto tok = LoadTok512();
  std::string out;
  tok->AppendTokenBytes(-1, 1, &out);
  tok->AppendTokenBytes(1, 2, &out);
  EXPECT_EQ(out, "");
  tok->AppendTokenBytes(1, 3 + 0x0A, &out);
  tok->AppendTokenBytes(1, 3 + 0xFF, &out);
  EXPECT_EQ(out, "\n\xFF");
  tok->AppendTokenBytes(-1, 0, &out);
  EXPECT_EQ(out, "\n\xFF<unk>");
  tok->AppendTokenBytes(-1, 9999, &out);
  EXPECT_EQ(out, "\n\xFF<unk>");
}

TEST(SpmTokenizerTest, GgufAndLlamaTwoCSpellingsOfOneVocabularyEncodeAlike) {
  auto make = [](bool gguf) {
    const std::string sp = gguf ? "\xE2\x96\x81" : " ";
    SpmVocab v;
    v.pieces = {"<unk>", gguf ? "<s>" : "<s>", "</s>", "<0x20>", sp, "a", "b", sp + "a", sp + "ab",
                "b" + sp};
    v.types = {SpmTokenType::kUnknown, SpmTokenType::kControl, SpmTokenType::kControl,
               SpmTokenType::kByte};
    v.types.resize(v.pieces.size(), SpmTokenType::kNormal);
    v.scores = {0, 0, 0, 0, -1, -1, -1, -2, -3, -4};
    v.unk_id = 0;
    v.bos_id = 1;
    v.eos_id = 2;
    return std::move(SpmTokenizer::Create(std::move(v))).value();
  };
  auto gguf = make(true);
  auto plain = make(false);
  for (std::string text : {"ab", "ab ab", "b a", " ", "aab b"}) {
    EXPECT_EQ(gguf->Encode(text, true), plain->Encode(text, true)) << text;
  }
  EXPECT_EQ(gguf->Encode("ab", false), std::vector<TokenId>{8});
  EXPECT_EQ(gguf->Piece(8), " ab");
}

TEST(SpmTokenizerTest, CreateRejectsInconsistentVocabularies) {
  auto base = [] {
    SpmVocab v;
    v.pieces = {"<unk>", "<s>", "<0x41>", "a"};
    v.types = {SpmTokenType::kUnknown, SpmTokenType::kControl, SpmTokenType::kByte,
               SpmTokenType::kNormal};
    v.scores = {0, 0, 0, 0};
    v.bos_id = 1;
    return v;
  };
  EXPECT_TRUE(SpmTokenizer::Create(base()).ok());
  SpmVocab v = base();
  v.scores.pop_back();
  EXPECT_EQ(SpmTokenizer::Create(v).status().code(), shared::StatusCode::kInvalidArgument);
  v = base();
  v.pieces[2] = "<0xG1>";
  EXPECT_NE(SpmTokenizer::Create(v).status().message().find("token 2"), std::string::npos);
  v = base();
  v.scores[3] = std::nanf("");
  EXPECT_NE(SpmTokenizer::Create(v).status().message().find("NaN"), std::string::npos);
  v = base();
  v.bos_id = 4;
  EXPECT_FALSE(SpmTokenizer::Create(v).ok());
  v = base();
  v.types[3] = static_cast<SpmTokenType>(9);
  EXPECT_FALSE(SpmTokenizer::Create(v).ok());
  EXPECT_FALSE(SpmTokenizer::Create(SpmVocab{}).ok());
}

TEST(SpmTokenizerTest, ByteLevelTokenizerEncodesEveryByteAsItsToken) {
  auto tok = MakeByteLevelTokenizer();
  EXPECT_EQ(tok->kind(), TokenizerKind::kByte);
  EXPECT_EQ(tok->vocab_size(), 259);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_EQ(tok->Encode("hi", true), (std::vector<TokenId>{1, 'h' + 3, 'i' + 3}));
  EXPECT_EQ(tok->Encode(" ", false), std::vector<TokenId>{' ' + 3});
  const std::string text = "h\xC3\xA9llo \xF0\x9F\x98\x80";
  std::vector<TokenId> ids = tok->Encode(text, false);
  ASSERT_EQ(ids.size(), text.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], static_cast<uint8_t>(text[i]) + 3);
  EXPECT_EQ(Decode(*tok, ids, 1), text);
  EXPECT_EQ(tok->Piece(3 + 0xAB), "<0xAB>");
}

}  // namespace
}  // namespace smallmind::worker

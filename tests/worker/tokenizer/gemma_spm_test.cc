// SpmTokenizer on a Gemma-shaped vocabulary (MakeSyntheticSpmVocab): user-defined pieces cut out
// before SentencePiece, no dummy prefix, byte fallback, newline runs as single pieces, the end of
// turn found by its spelling, and a 262,144-piece vocabulary (Gemma 3's size) that loads and
// round-trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "worker/tokenizer/detokenizer.h"
#include "worker/tokenizer/spm_tokenizer.h"
#include "worker/tokenizer/synthetic_vocab.h"

namespace smallmind::worker {
namespace {

using Ids = std::vector<TokenId>;

std::unique_ptr<SpmTokenizer> Gemma(int n_pieces = 2000) {
  auto tok = SpmTokenizer::Create(MakeSyntheticSpmVocab(SampleText(2048), 800, n_pieces));
  SM_CHECK(tok.ok()) << tok.status().ToString();
  return std::move(tok).value();
}

TokenId IdOf(const SpmTokenizer& tok, std::string_view piece) {
  for (TokenId id = 0; id < tok.vocab_size(); ++id) {
    if (tok.Piece(id) == piece) return id;
  }
  return -1;
}

std::string Decode(const Tokenizer& tok, const Ids& ids) {
  Detokenizer detok(tok, -1);
  std::string out;
  for (TokenId id : ids) detok.Push(id, &out);
  detok.Flush(&out);
  return out;
}

TEST(GemmaSpmTest, UserDefinedPiecesAndNewlineRunsAreCutOutWhole) {
  auto tok = Gemma();
  const TokenId start = IdOf(*tok, "<start_of_turn>");
  const TokenId end = IdOf(*tok, "<end_of_turn>");
  const TokenId nl = IdOf(*tok, "\n");
  const TokenId nl3 = IdOf(*tok, "\n\n\n");
  ASSERT_EQ(start, 4);
  ASSERT_EQ(end, 5);
  ASSERT_GE(nl3, 0);
  const Ids user = tok->Encode("user", false);
  Ids want = {start};
  want.insert(want.end(), user.begin(), user.end());
  want.push_back(nl);
  want.insert(want.end(), user.begin(), user.end());
  want.push_back(nl3);
  EXPECT_EQ(tok->Encode("<start_of_turn>user\nuser\n\n\n", false), want);
  // 40 newlines: the longest run (31), then a run of 9.
  EXPECT_EQ(tok->Encode(std::string(40, '\n'), false),
            (Ids{IdOf(*tok, std::string(31, '\n')), IdOf(*tok, std::string(9, '\n'))}));
}

TEST(GemmaSpmTest, EndOfTurnSpellingIsAControlTokenAsInLlamaCpp) {
  // <end_of_turn> is user-defined in the vocabulary, but llama.cpp makes every end-of-generation
  // spelling a control token: its text in a prompt stays text unless special tokens are parsed.
  auto tok = Gemma();
  EXPECT_EQ(tok->Type(5), SpmTokenType::kControl);
  const Ids plain = tok->Encode("a<end_of_turn>", false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 5), 0);
  const Ids special = tok->EncodeSpecial("a<end_of_turn>", false);
  ASSERT_FALSE(special.empty());
  EXPECT_EQ(special.back(), 5);
}

TEST(GemmaSpmTest, NoDummyPrefixAndALeadingSpaceSurvivesDecoding) {
  auto tok = Gemma();
  const Ids hello = tok->Encode("Hello", false);
  ASSERT_FALSE(hello.empty());
  EXPECT_NE(tok->Piece(hello.front()).front(), ' ');
  const Ids spaced = tok->Encode(" Hello", false);
  ASSERT_FALSE(spaced.empty());
  EXPECT_EQ(tok->Piece(spaced.front()).front(), ' ');
  EXPECT_EQ(Decode(*tok, tok->Encode(" Hello", true)), " Hello");
  EXPECT_EQ(tok->Encode("", true), (Ids{2}));
}

TEST(GemmaSpmTest, CodePointsWithoutPiecesFallBackToBytes) {
  auto tok = Gemma();
  const std::string omega = "\xCE\xA9";  // U+03A9, not in the sample text
  ASSERT_EQ(IdOf(*tok, omega), -1);
  EXPECT_EQ(tok->Encode(omega, false), (Ids{IdOf(*tok, "<0xCE>"), IdOf(*tok, "<0xA9>")}));
  EXPECT_EQ(Decode(*tok, tok->Encode("x" + omega + "y", true)), "x" + omega + "y");
}

TEST(GemmaSpmTest, EndOfTurnIsFoundBySpellingAndControlTextNeedsEncodeSpecial) {
  auto tok = Gemma();
  EXPECT_EQ(tok->eot_id(), 5);
  EXPECT_EQ(tok->bos_id(), 2);
  EXPECT_TRUE(tok->add_bos_default());
  const Ids special = tok->EncodeSpecial("<bos>hi", false);
  ASSERT_FALSE(special.empty());
  EXPECT_EQ(special.front(), 2);
  const Ids plain = tok->Encode("<bos>hi", false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0);
}

TEST(GemmaSpmTest, SpaceRunPiecesAreMergeableButNeverCutOutOfRawText) {
  // "▁▁" is user-defined; as stored it cannot match raw spaces (llama.cpp partitions raw text),
  // but SentencePiece merges reach it from two '▁' symbols.
  auto tok = Gemma();
  const TokenId two = IdOf(*tok, "  ");
  ASSERT_GE(two, 0);
  const Ids ids = tok->Encode("a  b", false);
  EXPECT_NE(std::find(ids.begin(), ids.end(), two), ids.end());
  EXPECT_EQ(Decode(*tok, ids), "a  b");
}

TEST(GemmaSpmTest, AGemmaSizedVocabularyLoadsAndRoundTrips) {
  constexpr int kGemma3Pieces = 262144;
  auto tok = Gemma(kGemma3Pieces);
  EXPECT_EQ(tok->vocab_size(), kGemma3Pieces);
  const std::string text = SampleText(10 * 1024);
  const Ids ids = tok->Encode(text, true);
  const auto code_points = std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<uint8_t>(c) & 0xC0) != 0x80; });
  EXPECT_LT(ids.size(), static_cast<size_t>(code_points) * 2 / 3);  // the learned merges apply
  EXPECT_EQ(Decode(*tok, ids), text);
}

}  // namespace
}  // namespace smallmind::worker

#include "worker/modelgen/synthetic_vocab.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace smallmind::worker {
namespace {

TEST(SyntheticVocabTest, HasExactlyTheRequestedSizeWithSpecialsAndBytesFirst) {
  for (int size : {kByteVocabSize, 260, 600, 32000}) {
    auto v = MakeSyntheticSpmVocab(size);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    ASSERT_EQ(v->pieces.size(), static_cast<size_t>(size));
    ASSERT_EQ(v->scores.size(), static_cast<size_t>(size));
    ASSERT_EQ(v->types.size(), static_cast<size_t>(size));
    EXPECT_EQ(v->pieces[0], "<unk>");
    EXPECT_EQ(v->types[0], SpmTokenType::kUnknown);
    EXPECT_EQ(v->pieces[1], "<s>");
    EXPECT_EQ(v->pieces[2], "</s>");
    EXPECT_EQ(v->types[2], SpmTokenType::kControl);
    EXPECT_EQ(v->pieces[3], "<0x00>");
    EXPECT_EQ(v->pieces[3 + 0x0A], "<0x0A>");
    EXPECT_EQ(v->pieces[258], "<0xFF>");
    EXPECT_EQ(v->types[258], SpmTokenType::kByte);
    EXPECT_EQ(v->add_space_prefix, size > kByteVocabSize);
    EXPECT_TRUE(v->add_bos);
    EXPECT_EQ(std::set<std::string>(v->pieces.begin(), v->pieces.end()).size(), v->pieces.size());
  }
}

TEST(SyntheticVocabTest, EveryLongerPieceExtendsAPresentPieceAndScoresDescend) {
  auto v = MakeSyntheticSpmVocab(32000);
  ASSERT_TRUE(v.ok());
  const std::set<std::string> pieces(v->pieces.begin(), v->pieces.end());
  for (size_t i = kByteVocabSize; i < v->pieces.size(); i++) {
    EXPECT_EQ(v->types[i], SpmTokenType::kNormal);
    if (i > kByteVocabSize) {
      EXPECT_LT(v->scores[i], v->scores[i - 1]) << i;
    }
    const std::string& p = v->pieces[i];
    if (p.size() > 1) {
      EXPECT_TRUE(pieces.count(p.substr(0, p.size() - 1))) << "'" << p << "'";
    }
  }
}

TEST(SyntheticVocabTest, TokenizesEnglishIntoMergedPieces) {
  auto v = MakeSyntheticSpmVocab(32000);
  ASSERT_TRUE(v.ok());
  auto tok = SpmTokenizer::Create(*std::move(v));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const std::vector<TokenId> ids = (*tok)->Encode("once upon a time the dog", true);
  std::vector<std::string> pieces;
  for (TokenId id : ids) pieces.emplace_back((*tok)->Piece(id));
  EXPECT_EQ(pieces,
            (std::vector<std::string>{"<s>", " once", " upon", " a", " time", " the", " dog"}));
  // Text with no pieces falls back to bytes and decodes back exactly.
  const std::string text = "\xE2\x82\xAC zq!";
  std::string decoded;
  TokenId prev = -1;
  for (TokenId id : (*tok)->Encode(text, true)) {
    (*tok)->AppendTokenBytes(prev, id, &decoded);
    prev = id;
  }
  EXPECT_EQ(decoded, text);
}

TEST(SyntheticVocabTest, RejectsSizesItCannotBuild) {
  EXPECT_FALSE(MakeSyntheticSpmVocab(258).ok());
  EXPECT_FALSE(MakeSyntheticSpmVocab(kMaxSyntheticVocabSize + 1).ok());
  auto largest = MakeSyntheticSpmVocab(kMaxSyntheticVocabSize);
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ(largest->pieces.size(), static_cast<size_t>(kMaxSyntheticVocabSize));
}

}  // namespace
}  // namespace smallmind::worker

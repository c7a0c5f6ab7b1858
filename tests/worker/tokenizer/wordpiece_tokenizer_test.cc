// WordPieceTokenizer on a small hand-made vocabulary: BERT's normaliser (case, accents, control
// characters, punctuation, CJK), greedy longest pieces, [UNK] for a word with an unmatched part,
// [CLS]/[SEP] with add_bos, and decoding.
#include "worker/tokenizer/wordpiece_tokenizer.h"

#include <gtest/gtest.h>

namespace smallmind::worker {
namespace {

// 0 [PAD] 1 [UNK] 2 [CLS] 3 [SEP] 4 [MASK], then word-initial pieces and continuations.
std::unique_ptr<WordPieceTokenizer> Make() {
  WordPieceVocab v;
  v.tokens = {"[PAD]",     "[UNK]",   "[CLS]",      "[SEP]",        "[MASK]",       "\u2581hello",
              "\u2581hel", "lo",      "\u2581un",   "aff",          "able",         "\u2581,",
              "\u2581!",   "\u2581a", "\u2581cafe", "\u2581\u4e2d", "\u2581\u6587", "s"};
  v.pad_id = 0;
  v.unk_id = 1;
  v.cls_id = 2;
  v.sep_id = 3;
  v.mask_id = 4;
  auto tok = WordPieceTokenizer::Create(std::move(v));
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  return std::move(tok).value();
}

using Ids = std::vector<TokenId>;

TEST(BertWordsTest, LowerCasesStripsAccentsAndSplitsPunctuationAndIdeographs) {
  EXPECT_EQ(BertWords("  Hello,\tWORLD!\n"),
            (std::vector<std::string>{"hello", ",", "world", "!"}));
  EXPECT_EQ(BertWords("Caf\u00e9 na\u00efve"), (std::vector<std::string>{"cafe", "naive"}));
  // A control character (ZWJ, U+0007) and NUL vanish without breaking the word.
  EXPECT_EQ(BertWords(std::string("a\u200db\x07") + '\0' + "c"), (std::vector<std::string>{"abc"}));
  EXPECT_EQ(BertWords("x\u4e2d\u6587y"), (std::vector<std::string>{"x", "\u4e2d", "\u6587", "y"}));
  // ASCII symbols split like punctuation; others ($ is ASCII, the euro sign is not) stay.
  EXPECT_EQ(BertWords("a$b\u20acc"), (std::vector<std::string>{"a", "$", "b\u20acc"}));
  EXPECT_TRUE(BertWords(" \n\t ").empty());
  EXPECT_EQ(BertWords("ok\xff!"), (std::vector<std::string>{"ok", "!"})) << "invalid byte dropped";
}

TEST(WordPieceTokenizerTest, TakesTheLongestPieceFromEachWordsStart) {
  auto tok = Make();
  EXPECT_EQ(tok->Encode("Hello", false), (Ids{5}));
  EXPECT_EQ(tok->Encode("hellos", false), (Ids{5, 17}));
  EXPECT_EQ(tok->Encode("helo", false), (Ids{1})) << "'▁hel' then 'o' matches nothing: [UNK]";
  EXPECT_EQ(tok->Encode("unaffable, a!", false), (Ids{8, 9, 10, 11, 13, 12}));
  EXPECT_EQ(tok->Encode("CAF\u00c9S \u4e2d\u6587", false), (Ids{14, 17, 15, 16}));
  EXPECT_EQ(tok->Encode("", false), (Ids{}));
}

TEST(WordPieceTokenizerTest, AddBosWrapsTheInputInClsAndSep) {
  auto tok = Make();
  EXPECT_EQ(tok->Encode("hello", true), (Ids{2, 5, 3}));
  EXPECT_EQ(tok->Encode("", true), (Ids{2, 3}));
  EXPECT_EQ(tok->bos_id(), 2);
  EXPECT_EQ(tok->sep_id(), 3);
  EXPECT_EQ(tok->eos_id(), -1) << "an encoder has no end of generation";
  EXPECT_TRUE(tok->add_bos_default());
}

TEST(WordPieceTokenizerTest, DecodesWordsWithSpacesBetween) {
  auto tok = Make();
  std::string out;
  const Ids ids = {2, 8, 9, 10, 11, 1, 3};
  for (size_t i = 0; i < ids.size(); ++i) tok->AppendTokenBytes(i ? ids[i - 1] : -1, ids[i], &out);
  EXPECT_EQ(out, "unaffable , [UNK]");
}

TEST(WordPieceTokenizerTest, RefusesAVocabularyWithoutUnknownOrWithSpecialsOutside) {
  WordPieceVocab v;
  v.tokens = {"[UNK]"};
  auto no_unk = WordPieceTokenizer::Create(v);
  ASSERT_FALSE(no_unk.ok());
  EXPECT_NE(no_unk.status().message().find("[UNK]"), std::string::npos);
  v.unk_id = 0;
  v.cls_id = 7;
  auto outside = WordPieceTokenizer::Create(v);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("7"), std::string::npos);
  EXPECT_FALSE(WordPieceTokenizer::Create(WordPieceVocab{}).ok());
}

}  // namespace
}  // namespace smallmind::worker

#include "worker/modelgen/chat_tokens.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/testing/scoped_temp_dir.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/modelgen/model_generator.h"
#include "worker/modelgen/synthetic_vocab.h"

namespace smallmind::worker {
namespace {

SpmVocab Vocab(int size) {
  auto v = MakeSyntheticSpmVocab(size);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return std::move(v).value();
}

TEST(ChatTokensTest, TemplateSpecialTokensAreItsPipeBracketLiteralsOnceEachInOrder) {
  const std::string source =
      "{{- '<|im_start|>' + role }}{{ '<|im_end|>\\n' }}<|im_start|> <| spaced |> <|open "
      "<|a_1|>|> <||>";
  EXPECT_EQ(TemplateSpecialTokens(source),
            (std::vector<std::string>{"<|im_start|>", "<|im_end|>", "<|a_1|>"}));
  EXPECT_TRUE(TemplateSpecialTokens("<start_of_turn>user [INST]").empty());
}

TEST(ChatTokensTest, RespellsBosAndEosAndPutsNewSpecialsInTheLastNormalPieces) {
  SpmVocab v = Vocab(400);
  const std::string last = v.pieces[399];
  auto notes = ApplyChatTokens({"<|begin_of_text|>",
                                "<|eot_id|>",
                                {"<|start_header_id|>", "<|eot_id|>", "</s>", "<unk>",
                                 "<|end_header_id|>", "<|start_header_id|>"}},
                               &v);
  ASSERT_TRUE(notes.ok()) << notes.status().ToString();
  ASSERT_EQ(v.pieces.size(), 400u);
  EXPECT_EQ(v.pieces[v.bos_id], "<|begin_of_text|>");
  EXPECT_EQ(v.pieces[v.eos_id], "<|eot_id|>");
  // </s> is no piece any more: it is added as a new control token, as the two header tokens.
  EXPECT_EQ(v.pieces[397], "<|start_header_id|>");
  EXPECT_EQ(v.pieces[398], "</s>");
  EXPECT_EQ(v.pieces[399], "<|end_header_id|>");
  for (int id : {397, 398, 399}) EXPECT_EQ(v.types[id], SpmTokenType::kControl) << id;
  EXPECT_EQ(std::count(v.pieces.begin(), v.pieces.end(), last), 0);
  EXPECT_EQ(notes->size(), 3u);  // BOS, EOS, the added tokens
}

TEST(ChatTokensTest, RefusesTokensThatCannotBeWholePiecesOrDoNotFit) {
  SpmVocab v = Vocab(400);
  for (const ChatTokens& bad : std::vector<ChatTokens>{{"<a>", "<a>", {}},
                                                       {"", "", {"has space"}},
                                                       {"", "", {""}},
                                                       {"", "", {"tab\t"}},
                                                       {"e", "", {}},
                                                       {"", "", {"e"}}}) {
    SpmVocab copy = v;
    EXPECT_FALSE(ApplyChatTokens(bad, &copy).ok()) << bad.bos << " " << bad.eos;
  }
  SpmVocab bytes = Vocab(kByteVocabSize);  // no normal piece to replace
  auto full = ApplyChatTokens({"", "", {"<|im_start|>"}}, &bytes);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.status().message().find("--vocab"), std::string::npos) << full.status().message();
}

TEST(ChatTokensTest, AGeneratedModelCarriesItsTemplateAndTokenizesItsSpecialsWhole) {
  GeneratorOptions o;
  o.vocab_size = 512;
  o.chat_template =
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
      "{% endfor %}";
  o.eos_token = "<|im_end|>";
  o.special_tokens = {"<think>"};
  const testing::ScopedTempDir dir("chat-tokens");
  const std::string path = dir.File("chat.gguf");
  auto summary = WriteGeneratedModel(o, path);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  auto m = LoadGgufModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->chat_template, o.chat_template);
  const Tokenizer& tok = *m->tokenizer;
  EXPECT_EQ(tok.vocab_size(), 512);
  EXPECT_EQ(tok.Piece(tok.eos_id()), "<|im_end|>");
  EXPECT_EQ(tok.Piece(tok.bos_id()), "<s>");
  const std::vector<TokenId> ids =
      tok.EncodeSpecial("<|im_start|>user\nHi<think><|im_end|>", false);
  std::vector<std::string> pieces;
  for (TokenId id : ids) pieces.emplace_back(tok.Piece(id));
  ASSERT_GE(pieces.size(), 4u);
  EXPECT_EQ(pieces.front(), "<|im_start|>");
  EXPECT_EQ(pieces[pieces.size() - 2], "<think>");
  EXPECT_EQ(pieces.back(), "<|im_end|>");
  EXPECT_EQ(ids.back(), tok.eos_id());
}

}  // namespace
}  // namespace smallmind::worker

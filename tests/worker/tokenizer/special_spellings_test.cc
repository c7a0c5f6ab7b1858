// Special tokens by spelling: the end of turn of each chat family, llama.cpp's type overrides, and
// what they do to encoding (gpt-oss's harmony tokens always cut out, end-of-generation text kept
// as text unless special tokens are parsed).
#include "worker/tokenizer/special_spellings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "worker/tokenizer/bpe_tokenizer.h"
#include "worker/tokenizer/pre_tokenizer_families.h"
#include "worker/tokenizer/spm_tokenizer.h"
#include "worker/tokenizer/synthetic_vocab.h"

namespace smallmind::worker {
namespace {

using Ids = std::vector<TokenId>;

TEST(SpecialSpellingsTest, FindsEachFamilysEndOfTurn) {
  EXPECT_EQ(FindEndOfTurn({"a", "<|end_of_text|>", "<|eot_id|>"}), 2);           // Llama 3
  EXPECT_EQ(FindEndOfTurn({"<|endoftext|>", "<|im_start|>", "<|im_end|>"}), 2);  // Qwen
  EXPECT_EQ(FindEndOfTurn({"<|endoftext|>", "<|end|>"}), 1);                     // Phi-3/4
  EXPECT_EQ(FindEndOfTurn({"<eos>", "<bos>", "<end_of_turn>"}), 2);              // Gemma
  EXPECT_EQ(FindEndOfTurn({"<|end_of_text|>"}), 0);                              // Granite
  EXPECT_EQ(FindEndOfTurn({"<s>", "</s>"}), -1);                                 // Llama 2
  // gpt-oss: <|end|> closes a message, <|return|> (EOS) and <|call|> end the turn.
  EXPECT_EQ(FindEndOfTurn({"<|return|>", "<|end|>", "<|call|>"}), 2);
}

TEST(SpecialSpellingsTest, OverridesFollowLlamaCpp) {
  const std::vector<std::string> tokens = {"<|im_end|>",  "<fim_prefix>", "</s>",
                                           "<|channel|>", "<|message|>",  "hello",
                                           "<|end|>",     "<|return|>",   "<|call|>"};
  std::vector<SpmTokenType> types(tokens.size(), SpmTokenType::kNormal);
  types[3] = types[4] = SpmTokenType::kControl;
  types[2] = SpmTokenType::kUserDefined;
  OverrideTypesBySpelling(tokens, &types);
  EXPECT_EQ(types,
            (std::vector<SpmTokenType>{
                SpmTokenType::kControl, SpmTokenType::kControl, SpmTokenType::kControl,
                SpmTokenType::kUserDefined, SpmTokenType::kUserDefined, SpmTokenType::kNormal,
                SpmTokenType::kUserDefined, SpmTokenType::kControl, SpmTokenType::kControl}));
  // Without <|return|> and <|call|> (Phi-3), <|end|> ends generation: control.
  std::vector<SpmTokenType> phi(1, SpmTokenType::kUserDefined);
  OverrideTypesBySpelling({"<|end|>"}, &phi);
  EXPECT_EQ(phi[0], SpmTokenType::kControl);
}

// A byte-level vocabulary with gpt-oss's structure tokens appended (all control, as converted).
std::unique_ptr<BpeTokenizer> Harmony(TokenId eot_from_loader) {
  BpeVocab v = MakeSyntheticBpeVocab(SampleText(0), 100, {});
  for (const char* t : {"<|start|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>"}) {
    v.tokens.push_back(t);
    v.types.push_back(SpmTokenType::kControl);
  }
  v.pre = *FindPreTokenizerFamily("gpt-4o");
  v.eos_id = static_cast<TokenId>(v.tokens.size()) - 2;
  v.eot_id = eot_from_loader < 0 ? -1 : static_cast<TokenId>(v.tokens.size()) - 3;
  auto tok = BpeTokenizer::Create(std::move(v));
  SM_CHECK(tok.ok()) << tok.status().ToString();
  return std::move(tok).value();
}

TEST(SpecialSpellingsTest, HarmonyTokensAreTextAndTheTurnEndsAtCall) {
  for (TokenId loader_eot : {-1, 1}) {  // none given, or the loader's pick of <|end|>
    auto tok = Harmony(loader_eot);
    const TokenId n = tok->vocab_size();
    const TokenId start = n - 5, message = n - 4, end = n - 3, call = n - 1;
    EXPECT_EQ(tok->eot_id(), call);
    EXPECT_EQ(tok->eos_id(), n - 2);
    const Ids ids = tok->Encode("<|start|>user<|message|>hi<|end|>", false);
    EXPECT_EQ(ids.front(), start);
    EXPECT_NE(std::find(ids.begin(), ids.end(), message), ids.end());
    EXPECT_EQ(ids.back(), end);
    std::string text;
    for (TokenId id : ids) tok->AppendTokenBytes(-1, id, &text);
    EXPECT_EQ(text, "<|start|>user<|message|>hi<|end|>");
  }
}

TEST(SpecialSpellingsTest, EndOfGenerationTextStaysTextInAPlainEncode) {
  BpeVocab v = MakeSyntheticBpeVocab(SampleText(0), 100, {});
  v.tokens.push_back("<|eot_id|>");
  v.types.push_back(SpmTokenType::kUserDefined);  // mistyped in the file
  v.pre = *FindPreTokenizerFamily("llama-bpe");
  auto tok = BpeTokenizer::Create(std::move(v));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const TokenId eot = (*tok)->vocab_size() - 1;
  EXPECT_EQ((*tok)->eot_id(), eot);
  EXPECT_EQ((*tok)->Type(eot), SpmTokenType::kControl);
  const Ids plain = (*tok)->Encode("x<|eot_id|>", false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), eot), 0);
  EXPECT_EQ((*tok)->EncodeSpecial("x<|eot_id|>", false).back(), eot);
}

}  // namespace
}  // namespace smallmind::worker

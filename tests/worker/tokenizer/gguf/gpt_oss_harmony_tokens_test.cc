// A gpt-oss file as modelgen writes it (its synthetic vocabulary with harmony's tokens added, as
// a chat template's literals or --special-token add them), read through GgufTokenizer: harmony's
// structure tokens are cut out of a rendered prompt and decode to their text, so the worker
// streams them to the gateway's HarmonyParser (docs/moe.md#gpt-oss); <|return|> is EOS and the
// turn ends at <|call|>, not at a message's <|end|>.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/gguf/gguf_vocab.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

TEST(GptOssHarmonyTokensTest, StructureTokensDecodeAsTextAndTheTurnEndsAtCall) {
  GeneratorOptions o;  // tiny, 259 byte-level pieces, plus the specials below
  o.architecture = "gpt-oss";
  o.tied_embeddings = false;
  o.n_experts = 2;
  o.n_experts_used = 1;
  o.vocab_size = 300;
  o.eos_token = "<|return|>";
  o.special_tokens = {"<|start|>", "<|message|>", "<|channel|>",
                      "<|end|>",   "<|call|>",    "<|constrain|>"};
  auto bytes = GenerateModelBuffer(o);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto file = GgufFile::FromBuffer(*bytes, "gpt-oss.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = GgufTokenizer(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const Tokenizer& t = **tok;

  const std::string reply =
      "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final"
      "<|message|>hi";
  const std::vector<TokenId> ids = t.EncodeSpecial(reply, false);
  std::string text;
  for (size_t i = 0; i < ids.size(); i++) {
    t.AppendTokenBytes(i == 0 ? -1 : ids[i - 1], ids[i], &text);
  }
  // Every marker came back as its text; the synthetic SentencePiece vocabulary starts each run
  // of text between them with its dummy-prefix space (o200k's BPE has none), so those go.
  std::erase(text, ' ');
  EXPECT_EQ(text, reply);
  for (const std::string& m : o.special_tokens) {
    const std::vector<TokenId> marker = t.EncodeSpecial(m, false);
    ASSERT_EQ(marker.size(), 1u) << m;  // one token, not its characters
    std::string piece;
    t.AppendTokenBytes(-1, marker[0], &piece);
    EXPECT_EQ(piece, m == "<|call|>" ? "" : m);  // <|call|> ends the turn, adding nothing
  }
  EXPECT_EQ(t.Piece(t.eos_id()), "<|return|>");
  EXPECT_EQ(t.Piece(t.eot_id()), "<|call|>");
  std::string none;
  t.AppendTokenBytes(-1, t.eos_id(), &none);  // the stop tokens end the reply, adding nothing
  EXPECT_EQ(none, "");
}

}  // namespace
}  // namespace smallmind::worker

// Loading a GGUF whose tokenizer.ggml.pre smallmind does not implement is refused, naming the
// value, the key and the file and listing the supported values; every supported value loads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/gguf/gguf_vocab.h"
#include "worker/modelgen/gguf_writer.h"
#include "worker/tokenizer/pre_tokenizer_families.h"
#include "worker/tokenizer/synthetic_vocab.h"

namespace smallmind::worker {
namespace {

shared::Result<std::unique_ptr<Tokenizer>> LoadWithPre(const std::string& pre) {
  static const BpeVocab v = MakeSyntheticBpeVocab(SampleText(0), 50, {});
  std::vector<int32_t> types;
  for (SpmTokenType t : v.types) types.push_back(static_cast<int32_t>(t));
  GgufWriter w;
  w.AddString("general.architecture", "llama");
  w.AddString("tokenizer.ggml.model", "gpt2");
  w.AddString("tokenizer.ggml.pre", pre);
  w.AddStringArray("tokenizer.ggml.tokens", v.tokens);
  w.AddI32Array("tokenizer.ggml.token_type", types);
  w.AddStringArray("tokenizer.ggml.merges", v.merges);
  w.AddU32("tokenizer.ggml.bos_token_id", 0);
  auto bytes = w.WriteBuffer();
  SM_CHECK(bytes.ok()) << bytes.status().ToString();
  auto file = GgufFile::FromBuffer(*bytes, "model-" + pre + ".gguf");
  SM_CHECK(file.ok()) << file.status().ToString();
  return GgufTokenizer(**file);
}

TEST(PreTokenizerRefusalTest, AnUnknownValueIsRefusedNamingItAndListingTheSupportedOnes) {
  // Values llama.cpp knows but smallmind does not implement, and a made-up one.
  for (const char* pre : {"superbpe", "kimi-k2", "jais-2", "bloom", "no-such-pre"}) {
    auto tok = LoadWithPre(pre);
    ASSERT_FALSE(tok.ok()) << pre;
    EXPECT_EQ(tok.status().code(), shared::StatusCode::kInvalidArgument);
    const std::string& msg = tok.status().message();
    for (const std::string part :
         {std::string("model-") + pre + ".gguf", std::string("tokenizer.ggml.pre"),
          "'" + std::string(pre) + "'", std::string("llama-bpe"), std::string("gpt-4o"),
          std::string("tekken")}) {
      EXPECT_NE(msg.find(part), std::string::npos) << part << " missing from: " << msg;
    }
  }
}

TEST(PreTokenizerRefusalTest, EverySupportedValueLoads) {
  for (std::string_view pre : SupportedPreTokenizerNames()) {
    auto tok = LoadWithPre(std::string(pre));
    ASSERT_TRUE(tok.ok()) << pre << ": " << tok.status().ToString();
    EXPECT_FALSE((*tok)->Encode("Hello, world 123", false).empty()) << pre;
  }
}

}  // namespace
}  // namespace smallmind::worker

// Tokenizer conformance: every vocabulary in ../shared/tokenizer-vectors is loaded through
// GgufTokenizer and each of its input strings must encode (no BOS/EOS, special-token text as plain
// text) to exactly the ids the model's reference tokenizer gives. A family smallmind does not
// implement is skipped by name with the reason, after checking that loading it is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/shared_data.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/gguf/gguf_vocab.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {
namespace {

const std::string kVectorsDir = testing::SharedDataPath("tokenizer-vectors");

struct VocabCase {
  const char* name;         // ggml-vocab-<name>.gguf
  TokenizerKind kind;       // what GgufTokenizer must build
  const char* unsupported;  // why the family is skipped; nullptr when it must pass
};

const VocabCase kCases[] = {
    {"llama-spm", TokenizerKind::kSpm, nullptr},
    {"phi-3", TokenizerKind::kSpm, nullptr},
    {"gpt-2", TokenizerKind::kBpe, nullptr},
    {"mpt", TokenizerKind::kBpe, nullptr},
    {"falcon", TokenizerKind::kBpe, nullptr},
    {"starcoder", TokenizerKind::kBpe, nullptr},
    {"refact", TokenizerKind::kBpe, nullptr},
    {"deepseek-coder", TokenizerKind::kBpe, nullptr},
    {"deepseek-llm", TokenizerKind::kBpe, nullptr},
    {"bert-bge", TokenizerKind::kWordPiece, nullptr},
};

void PrintTo(const VocabCase& c, std::ostream* os) { *os << c.name; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// .inp: every string followed by "\n__ggml_vocab_test__\n"; nothing is trimmed.
std::vector<std::string> ReadInputs(const std::string& path) {
  const std::string all = ReadAll(path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t pos = all.find(sep); pos != std::string::npos; pos = all.find(sep, start)) {
    out.push_back(all.substr(start, pos - start));
    start = pos + sep.size();
  }
  return out;
}

// .out: one line per input, each id preceded by a space.
std::vector<std::vector<TokenId>> ReadExpected(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<TokenId>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<TokenId> ids;
    for (long id; words >> id;) ids.push_back(static_cast<TokenId>(id));
    out.push_back(std::move(ids));
  }
  return out;
}

std::string Ids(const std::vector<TokenId>& ids) {
  std::string s;
  for (TokenId id : ids) s += " " + std::to_string(id);
  return s;
}

class TokenizerConformanceTest : public ::testing::TestWithParam<VocabCase> {};

TEST_P(TokenizerConformanceTest, EncodesEveryVectorToTheReferenceIds) {
  const VocabCase& c = GetParam();
  const std::string gguf = kVectorsDir + "/ggml-vocab-" + c.name + ".gguf";
  SM_REQUIRE_SHARED_DATA(std::string("tokenizer-vectors/ggml-vocab-") + c.name + ".gguf");
  auto file = GgufFile::Open(gguf);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = GgufTokenizer(**file);
  if (c.unsupported != nullptr) {
    // Refused, not silently accepted: a change that adds the family must move it to the list.
    ASSERT_FALSE(tok.ok()) << c.name << " loads now; add it to the supported cases";
    EXPECT_NE(tok.status().message().find("not supported"), std::string::npos)
        << tok.status().ToString();
    GTEST_SKIP() << c.name << " skipped: " << c.unsupported << " (" << tok.status().message()
                 << ")";
  }
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const Tokenizer& t = **tok;
  EXPECT_EQ(t.kind(), c.kind);

  const std::vector<std::string> inputs = ReadInputs(gguf + ".inp");
  const std::vector<std::vector<TokenId>> expected = ReadExpected(gguf + ".out");
  ASSERT_EQ(inputs.size(), 46u) << "the README promises 46 strings";
  ASSERT_EQ(expected.size(), inputs.size());
  int mismatches = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<TokenId> got = t.Encode(inputs[i], /*add_bos=*/false);
    if (got != expected[i]) ++mismatches;
    EXPECT_EQ(Ids(got), Ids(expected[i])) << c.name << " line " << i << ": '" << inputs[i] << "'";
    if (t.kind() != TokenizerKind::kBpe) continue;
    // Byte-level BPE loses nothing: the ids' bytes are the input again.
    std::string bytes;
    for (size_t k = 0; k < got.size(); ++k) t.AppendTokenBytes(k ? got[k - 1] : -1, got[k], &bytes);
    EXPECT_EQ(bytes, inputs[i]) << c.name << " line " << i << " does not decode back";
  }
  EXPECT_EQ(mismatches, 0) << c.name << ": " << mismatches << " of " << inputs.size()
                           << " lines differ";
}

INSTANTIATE_TEST_SUITE_P(Vocabs, TokenizerConformanceTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<VocabCase>& info) {
                           std::string name = info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(TokenizerConformanceCoverageTest, EveryVocabularyInTheVectorsDirectoryHasACase) {
  SM_REQUIRE_SHARED_DATA("tokenizer-vectors");
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kVectorsDir)) {
    const std::string file = entry.path().filename().string();
    const std::string prefix = "ggml-vocab-";
    const std::string suffix = ".gguf";
    if (file.rfind(prefix, 0) != 0 || file.size() <= prefix.size() + suffix.size() ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string name =
        file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    ++seen;
    EXPECT_TRUE(std::any_of(std::begin(kCases), std::end(kCases),
                            [&](const VocabCase& c) { return name == c.name; }))
        << file << " has vectors but no conformance case";
  }
  EXPECT_GT(seen, 0);
}

// A real chat vocabulary: Phi-3's adds <|user|>, <|end|>, <|assistant|> to LLaMA-2's as control
// tokens. A rendered Phi-3 prompt read with EncodeSpecial (what parse_special and the HTTP door's
// chat requests use) gives each of them as its one id, and every text run between them is
// SentencePiece-encoded on its own with its dummy prefix ("\n" -> "▁" 29871, <0x0A> 13), as
// Hugging Face's Llama tokenizer and llama.cpp tokenize Phi-3 prompts.
TEST(ChatVocabularyTest, Phi3PromptGivesEachSpecialTokenItsIdAndEncodesTheRunsBetween) {
  SM_REQUIRE_SHARED_DATA("tokenizer-vectors/ggml-vocab-phi-3.gguf");
  auto file = GgufFile::Open(kVectorsDir + "/ggml-vocab-phi-3.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto loaded = GgufTokenizer(**file);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Tokenizer& tok = **loaded;
  constexpr TokenId kAssistant = 32001, kEnd = 32007, kUser = 32010;
  std::string piece;
  tok.AppendTokenBytes(-1, kUser, &piece);
  EXPECT_EQ(piece, "") << "control tokens print nothing in generated text";

  const std::string prompt = "<|user|>\nHello<|end|>\n<|assistant|>\n";
  const std::vector<TokenId> ids = tok.EncodeSpecial(prompt, /*add_bos=*/true);
  EXPECT_EQ(Ids(ids), Ids({1, kUser, 29871, 13, 10994, kEnd, 29871, 13, kAssistant, 29871, 13}));
  std::vector<TokenId> runs = {1, kUser};
  for (const auto& [text, next] :
       std::vector<std::pair<std::string, TokenId>>{{"\nHello", kEnd}, {"\n", kAssistant}}) {
    const std::vector<TokenId> run = tok.Encode(text, false);
    runs.insert(runs.end(), run.begin(), run.end());
    runs.push_back(next);
  }
  const std::vector<TokenId> last = tok.Encode("\n", false);
  runs.insert(runs.end(), last.begin(), last.end());
  EXPECT_EQ(Ids(ids), Ids(runs));

  // Without parse_special a client's text never becomes a control token.
  const std::vector<TokenId> plain = tok.Encode(prompt, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), kUser), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), kEnd), 0);
  const auto chat_template = (*file)->GetString("tokenizer.chat_template");
  ASSERT_TRUE(chat_template.ok()) << chat_template.status().ToString();
  EXPECT_NE(chat_template->find("<|assistant|>"), std::string::npos)
      << "the vocabulary carries Phi-3's chat template";
}

}  // namespace
}  // namespace smallmind::worker

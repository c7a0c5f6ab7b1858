// Every tokenizer.ggml.pre family (and Gemma-style SentencePiece) against llama.cpp: a synthetic
// vocabulary of each (worker/tokenizer/synthetic_vocab.h) is written as a vocabulary-only GGUF with
// that pre value, loaded through GgufTokenizer, and must encode every input to the ids llama.cpp
// gives for the same file. Those ids are test data (testdata/llama_cpp_ids.json), made by
// bench/compare/tokenizer_oracle.sh, which runs this test with SMALLMIND_TOKENIZER_ORACLE_DUMP=DIR
// (the GGUF files and inputs are then also written to DIR) and tokenizes them with llama.cpp.
// The byte-level vocabularies are merges learned with no pre-tokenization, so they hold tokens
// that cross every kind of boundary: a pre-tokenizer that splits differently gives other ids.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/gguf/gguf_vocab.h"
#include "worker/modelgen/gguf_writer.h"
#include "worker/tokenizer/byte_level_map.h"
#include "worker/tokenizer/synthetic_vocab.h"

namespace smallmind::worker {
namespace {

using Ids = std::vector<TokenId>;

const char kIdsFile[] = "/tests/worker/tokenizer/gguf/testdata/llama_cpp_ids.json";

// Encoded as plain text (Tokenizer::Encode; llama.cpp parse_special = false), no BOS.
const std::vector<std::string> kPlain = {
    "", " ", "   ", "\t", "\n", "\n\n\n", " \n \n\n \t\t", "Hello world", " Hello world",
    "Hello World!", "  Hello,  world!  ",
    "I'M sure we've been told it's true, isn't it? YOU'LL see, we'D say.",
    "3 33 333 3333 33333 333333 3333333 33333333 333333333",
    "3.3 3..3 3...3 1,000,000 2024-01-15 v1.2.3 0x1F $9.99 (50%)",
    "def encode(text):\n    return [ord(c) for c in text]  # 42\n",
    "if (x >= 10 && y != 0) { z += x / y; } // done\n\n", "HTTPServer camelCase iPhone McDonald's",
    "\xC3\x89\x43OLE caf\xC3\xA9 na\xC3\xAFve cr\xC3\xA8me br\xC3\xBBl\xC3\xA9\x65",  // ÉCOLE café
                                                                                      // ...
    "e\xCC\x81te\xCC\x81 with combining accents",
    "a\xC3\x89\x62 x\xC3\x9Cy",  // aÉb xÜy: non-ASCII capitals after lower case
    "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBC\xD0\xB8\xD1\x80!",  // Привет, мир!
    "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xE3\x80\x82"  // 你好，世界。
    "\xE6\x88\x91\xE6\x83\xB3\xE5\x9C\xA8\x61pple\xE5\xB7\xA5\xE4\xBD\x9C\x31\x33\x31\x34",
    "\xE1\x9E\x80\xE1\x9E\xB6\xE1\x9E\x93\xE1\x9F\x8B\xE1\x9E\x8F\xE1\x9F\x82",  // Khmer
    "\xF0\x9F\x9A\x80 (normal) \xF0\x9F\x98\xB6\xE2\x80\x8D\xF0\x9F\x8C\xAB\xEF\xB8\x8F (zwj) "
    "\xE2\x9C\x85 \xF0\x9F\xA6\x99\xF0\x9F\xA6\x99",
    "------======= '''```\"\"\"\"......!!!!!!??????",
    "<html><body class=\"main\">Hello</body></html>",
    "The quick brown fox jumps over the lazy dog.",
    "zyzzyva Quokka ZYZZYVA",  // whole-word tokens no merge reaches (ignore_merges)
    "<|endoftext|> and <|im_start|>user", "a<|sep|>b <|sep|> c",
    "<start_of_turn>user\nHi<end_of_turn>\n", "Mixed\r\nline\rendings\r\n\r\n",
    "tabs\tand\t\tmore\t\t\ttabs", "trailing spaces   ", "   leading spaces",
    "\xCE\x93\xCE\xB5\xCE\xB9\xCE\xAC \xCF\x83\xCE\xBF\xCF\x85",                 // Γειά σου
    "\xD9\x85\xD9\x8E\xD8\xB1\xD9\x92\xD8\xAD\xD9\x8E\xD8\xA8\xD9\x8B\xD8\xA7",  // Arabic, harakat
    "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87",  // Devanagari
};

// Encoded with special-token spellings as their tokens (EncodeSpecial; parse_special = true).
const std::vector<std::string> kSpecial = {
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>Hi<|sep|>there",
    "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
    "<bos>Hi <eos> x",
};

// Where smallmind follows the Hugging Face regex and llama.cpp does not: llama.cpp rewrites
// o200k's and Tekken's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]* / [\p{Ll}\p{Lm}\p{Lo}\p{M}]+ classes as
// "a letter other than a-z" / "a letter other than A-Z", so combining marks (not letters) split
// words and any non-ASCII letter counts as both cases. bpe_pre_tokenizer_test.cc checks smallmind's
// splits of these inputs by hand; here they must differ from llama.cpp's, so a change on either
// side shows.
struct Divergence {
  const char* family;         // pre values with this regex
  std::vector<size_t> plain;  // indices into kPlain
};
const Divergence kDivergences[] = {
    {"tekken", {18, 19, 22}},  // combining accents, aÉb xÜy, Khmer vowel signs
    {"gpt-4o", {18, 19, 22}},
    {"llama4", {18, 19, 22}},
};

bool Diverges(const std::string& pre, size_t plain_index) {
  for (const Divergence& d : kDivergences) {
    if (pre != d.family) continue;
    for (size_t i : d.plain) {
      if (i == plain_index) return true;
    }
  }
  return false;
}

struct OracleCase {
  std::string name;               // file stem and key in the ids file
  std::string model;              // tokenizer.ggml.model: gpt2 or llama
  std::string pre;                // tokenizer.ggml.pre
  bool add_space_prefix = false;  // llama only
};

std::vector<OracleCase> Cases() {
  std::vector<OracleCase> cases;
  for (const char* pre :
       {"gpt-2",       "llama-bpe", "llama3",           "dbrx",   "smaug-bpe",      "chatglm-bpe",
        "glm4",        "qwen2",     "deepseek-r1-qwen", "qwen35", "tekken",         "gpt-4o",
        "llama4",      "smollm",    "starcoder",        "refact", "command-r",      "olmo",
        "mpt",         "exaone4",   "granite-docling",  "falcon", "deepseek-coder", "deepseek-llm",
        "deepseek-v3", "stablelm2", "default"}) {
    cases.push_back({std::string("bpe-") + pre, "gpt2", pre});
  }
  cases.push_back({"spm-gemma", "llama", "default", false});
  cases.push_back({"spm-llama", "llama", "default", true});
  return cases;
}

std::string Corpus() {
  std::string corpus = SampleText(2048);
  for (const std::string& s : kPlain) corpus += s;
  return corpus;
}

std::vector<int32_t> Types(const std::vector<SpmTokenType>& types) {
  std::vector<int32_t> out;
  for (SpmTokenType t : types) out.push_back(static_cast<int32_t>(t));
  return out;
}

TokenId IdOf(const std::vector<std::string>& tokens, std::string_view spelling) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == spelling) return static_cast<TokenId>(i);
  }
  SM_CHECK(false) << "no token " << spelling;
  return -1;
}

// Learned once per binary: every case of a kind shares its vocabulary.
const BpeVocab& SharedBpeVocab() {
  static const BpeVocab v =
      MakeSyntheticBpeVocab(Corpus(), 1500, {"zyzzyva", " zyzzyva", " Quokka", " ZYZZYVA"});
  return v;
}

const SpmVocab& SharedSpmVocab() {
  static const SpmVocab v = MakeSyntheticSpmVocab(Corpus(), 1500, 4000);
  return v;
}

std::vector<uint8_t> WriteBpe(const OracleCase& c) {
  const BpeVocab& v = SharedBpeVocab();
  GgufWriter w;
  w.AddString("general.architecture", "llama");
  w.AddString("tokenizer.ggml.model", c.model);
  w.AddString("tokenizer.ggml.pre", c.pre);
  w.AddStringArray("tokenizer.ggml.tokens", v.tokens);
  w.AddI32Array("tokenizer.ggml.token_type", Types(v.types));
  w.AddStringArray("tokenizer.ggml.merges", v.merges);
  const TokenId eot = IdOf(v.tokens, "<|endoftext|>");
  w.AddU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(eot));
  w.AddU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(eot));
  auto bytes = w.WriteBuffer();
  SM_CHECK(bytes.ok()) << bytes.status().ToString();
  return std::move(bytes).value();
}

std::vector<uint8_t> WriteSpm(const OracleCase& c) {
  const SpmVocab& v = SharedSpmVocab();
  GgufWriter w;
  w.AddString("general.architecture", "llama");
  w.AddString("tokenizer.ggml.model", c.model);
  w.AddString("tokenizer.ggml.pre", c.pre);
  w.AddStringArray("tokenizer.ggml.tokens", v.pieces);
  w.AddF32Array("tokenizer.ggml.scores", v.scores);
  w.AddI32Array("tokenizer.ggml.token_type", Types(v.types));
  w.AddU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos_id));
  w.AddU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos_id));
  w.AddU32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(v.unk_id));
  w.AddBool("tokenizer.ggml.add_bos_token", true);
  w.AddBool("tokenizer.ggml.add_space_prefix", c.add_space_prefix);
  auto bytes = w.WriteBuffer();
  SM_CHECK(bytes.ok()) << bytes.status().ToString();
  return std::move(bytes).value();
}

std::vector<uint8_t> WriteCase(const OracleCase& c) {
  return c.model == "gpt2" ? WriteBpe(c) : WriteSpm(c);
}

nlohmann::json ReadIds() {
  std::ifstream in(std::string(SMALLMIND_SOURCE_DIR) + kIdsFile);
  if (!in) return nullptr;
  return nlohmann::json::parse(in);
}

// With SMALLMIND_TOKENIZER_ORACLE_DUMP set: DIR/<case>.gguf and DIR/cases.json (name, file and
// the two input lists) for bench/compare/tokenizer_oracle.mjs.
void DumpForTheOracle(const std::vector<OracleCase>& cases) {
  const char* dir = std::getenv("SMALLMIND_TOKENIZER_ORACLE_DUMP");
  if (dir == nullptr || *dir == '\0') return;
  nlohmann::json index = nlohmann::json::array();
  for (const OracleCase& c : cases) {
    const std::string file = c.name + ".gguf";
    const std::vector<uint8_t> bytes = WriteCase(c);
    std::ofstream(std::filesystem::path(dir) / file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    index.push_back({{"name", c.name}, {"file", file}, {"plain", kPlain}, {"special", kSpecial}});
  }
  std::ofstream(std::filesystem::path(dir) / "cases.json") << index.dump(1) << "\n";
}

class LlamaCppOracleTest : public ::testing::TestWithParam<OracleCase> {};

void PrintTo(const OracleCase& c, std::ostream* os) { *os << c.name; }

TEST_P(LlamaCppOracleTest, EncodesEveryInputToLlamaCppsIds) {
  const OracleCase& c = GetParam();
  const nlohmann::json all = ReadIds();
  ASSERT_FALSE(all.is_null()) << kIdsFile << " is missing: run bench/compare/tokenizer_oracle.sh";
  ASSERT_TRUE(all["cases"].contains(c.name))
      << c.name << " is not in " << kIdsFile << ": run bench/compare/tokenizer_oracle.sh";
  const nlohmann::json& want = all["cases"][c.name];
  ASSERT_EQ(want["plain_inputs"].get<std::vector<std::string>>(), kPlain)
      << "the inputs changed since " << kIdsFile << " was made: rerun the script";
  ASSERT_EQ(want["special_inputs"].get<std::vector<std::string>>(), kSpecial);

  const std::vector<uint8_t> bytes = WriteCase(c);
  auto file = GgufFile::FromBuffer(bytes, c.name + ".gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = GgufTokenizer(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  for (size_t i = 0; i < kPlain.size(); ++i) {
    const Ids ids = (*tok)->Encode(kPlain[i], false);
    if (Diverges(c.pre, i)) {
      EXPECT_NE(ids, want["plain"][i].get<Ids>())
          << c.name << " plain input " << i << " now agrees with llama.cpp: update kDivergences";
      continue;
    }
    EXPECT_EQ(ids, want["plain"][i].get<Ids>())
        << c.name << " plain input " << i << ": \"" << kPlain[i] << "\"";
  }
  for (size_t i = 0; i < kSpecial.size(); ++i) {
    EXPECT_EQ((*tok)->EncodeSpecial(kSpecial[i], false), want["special"][i].get<Ids>())
        << c.name << " special input " << i << ": \"" << kSpecial[i] << "\"";
  }
}

INSTANTIATE_TEST_SUITE_P(Families, LlamaCppOracleTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<OracleCase>& info) {
                           std::string name = info.param.name;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// Runs once per binary (a global test, not per case), so the dump happens before the cases fail
// for want of data.
TEST(LlamaCppOracleDump, WritesTheOracleInputsWhenAsked) { DumpForTheOracle(Cases()); }

}  // namespace
}  // namespace smallmind::worker

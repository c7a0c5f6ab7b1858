// LoadLlama2cTokenizer on well-formed, truncated and corrupt tokenizer.bin files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

const std::string kTok512 = testing::SharedDataPath("models/tok512.bin");

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  SM_CHECK(out.good()) << path;
}

void AppendU32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}

void AppendToken(std::string* s, float score, const std::string& piece) {
  uint32_t bits;
  std::memcpy(&bits, &score, 4);
  AppendU32(s, bits);
  AppendU32(s, static_cast<uint32_t>(piece.size()));
  s->append(piece);
}

// A small valid file: <unk>, BOS, EOS, <0x20>, " ", "a", " a".
std::string SmallTokenizerBin(uint32_t max_len = 6) {
  std::string s;
  AppendU32(&s, max_len);
  AppendToken(&s, 0, "<unk>");
  AppendToken(&s, 0, "\n<s>\n");
  AppendToken(&s, 0, "\n</s>\n");
  AppendToken(&s, 0, "<0x20>");
  AppendToken(&s, -1, " ");
  AppendToken(&s, -2, "a");
  AppendToken(&s, -3, " a");
  return s;
}

class Llama2cTokenizerLoaderTest : public ::testing::Test {
 protected:
  std::string TempPath(const std::string& name) const { return tmp_.File(name); }

  shared::Status LoadBytes(const std::string& bytes, int vocab_size, const std::string& name) {
    const std::string path = TempPath(name);
    WriteFile(path, bytes);
    return LoadLlama2cTokenizer(path, vocab_size).status();
  }

  testing::ScopedTempDir tmp_;
};

TEST_F(Llama2cTokenizerLoaderTest, LoadsAWellFormedFileAndDetectsSpecialTokens) {
  const std::string path = TempPath("small_tokenizer.bin");
  WriteFile(path, SmallTokenizerBin());
  auto tok = LoadLlama2cTokenizer(path, 7);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_EQ((*tok)->bos_id(), 1);
  EXPECT_EQ((*tok)->eos_id(), 2);
  EXPECT_EQ((*tok)->Type(0), SpmTokenType::kUnknown);
  EXPECT_EQ((*tok)->Type(3), SpmTokenType::kByte);
  EXPECT_EQ((*tok)->Type(4), SpmTokenType::kNormal);
  EXPECT_EQ((*tok)->Encode("a", true), (std::vector<TokenId>{1, 6}));
  // 'b' is no piece and has no byte token: it becomes <unk>.
  EXPECT_EQ((*tok)->Encode("ab a", false), (std::vector<TokenId>{6, 0, 6}));
}

TEST_F(Llama2cTokenizerLoaderTest, MissingFileIsNotFoundAndNamesThePath) {
  auto tok = LoadLlama2cTokenizer(TempPath("no_such_tokenizer.bin"), 512);
  EXPECT_EQ(tok.status().code(), shared::StatusCode::kNotFound);
  EXPECT_NE(tok.status().message().find("no_such_tokenizer.bin"), std::string::npos);
}

TEST_F(Llama2cTokenizerLoaderTest, EveryTruncationOfARealFileIsAClearError) {
  SM_REQUIRE_SHARED_DATA("models/tok512.bin");
  std::ifstream in(kTok512, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 6227u);
  ASSERT_TRUE(LoadBytes(bytes, 512, "tok512_copy.bin").ok());
  // Every 37th length plus the edges: inside the header, at the first token, at the last byte.
  std::vector<size_t> cuts = {0, 1, 3, 4, 5, 8, 11, 12, 4099, 4100, bytes.size() - 1};
  for (size_t cut = 13; cut < bytes.size(); cut += 37) cuts.push_back(cut);
  for (size_t cut : cuts) {
    shared::Status s = LoadBytes(bytes.substr(0, cut), 512, "tok512_cut.bin");
    ASSERT_EQ(s.code(), shared::StatusCode::kInvalidArgument) << "cut at " << cut;
    EXPECT_NE(s.message().find("tok512_cut.bin"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
  }
}

TEST_F(Llama2cTokenizerLoaderTest, AbsurdLengthsAndCountsAreRejectedBeforeAllocating) {
  std::string bytes = SmallTokenizerBin();
  // A piece length far beyond max_token_length (and the file).
  std::string huge_len = bytes;
  huge_len[4 + 4] = '\xFF';
  huge_len[4 + 7] = '\x7F';
  shared::Status s = LoadBytes(huge_len, 7, "huge_len.bin");
  EXPECT_EQ(s.code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("token 0"), std::string::npos) << s.message();
  // A vocab_size the file cannot possibly hold.
  s = LoadBytes(bytes, 1 << 30, "huge_count.bin");
  EXPECT_NE(s.message().find("cannot hold"), std::string::npos) << s.message();
  // A max_token_length that is zero or larger than the file.
  EXPECT_FALSE(LoadBytes(SmallTokenizerBin(0), 7, "zero_max.bin").ok());
  EXPECT_FALSE(LoadBytes(SmallTokenizerBin(0xFFFFFFFF), 7, "big_max.bin").ok());
  // A piece longer than the declared max_token_length.
  EXPECT_FALSE(LoadBytes(SmallTokenizerBin(5), 7, "short_max.bin").ok());
  // vocab_size must be positive.
  EXPECT_FALSE(LoadBytes(bytes, 0, "zero_vocab.bin").ok());
}

TEST_F(Llama2cTokenizerLoaderTest, TrailingBytesMeanTheModelVocabularyIsSmallerThanTheFile) {
  shared::Status s = LoadBytes(SmallTokenizerBin(), 6, "trailing.bin");
  EXPECT_EQ(s.code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bytes after"), std::string::npos) << s.message();
}

TEST_F(Llama2cTokenizerLoaderTest, NanScoreIsRejected) {
  std::string bytes;
  AppendU32(&bytes, 4);
  AppendToken(&bytes, std::nanf(""), "a");
  shared::Status s = LoadBytes(bytes, 1, "nan_score.bin");
  EXPECT_NE(s.message().find("NaN"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace smallmind::worker

// DetectModelFormat: GGUF and llama2.c files are told apart by their first bytes, and every path
// that is neither (a text file, an empty file, a directory, a missing file) gets a message that
// says what it is.
#include "worker/model/model_format.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::worker {
namespace {

class ModelFormatTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.File(name);
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return path;
  }

  testing::ScopedTempDir dir_;
};

std::string Llama2cHeader(std::vector<int32_t> fields) {
  std::string bytes(fields.size() * 4, '\0');
  std::memcpy(bytes.data(), fields.data(), bytes.size());
  return bytes;
}

TEST_F(ModelFormatTest, RecognisesGgufByItsMagic) {
  auto format = DetectModelFormat(Write("m.gguf", std::string("GGUF\x03\0\0\0", 8)));
  ASSERT_TRUE(format.ok()) << format.status().ToString();
  EXPECT_EQ(*format, ModelFormat::kGguf);
}

TEST_F(ModelFormatTest, RecognisesALlama2cCheckpointByAPlausibleHeaderWhateverItsName) {
  // stories260K's header: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len.
  auto format = DetectModelFormat(Write("m.gguf", Llama2cHeader({64, 172, 5, 8, 4, 512, 512})));
  ASSERT_TRUE(format.ok()) << format.status().ToString();
  EXPECT_EQ(*format, ModelFormat::kLlama2c);
}

TEST_F(ModelFormatTest, TextFileNamedGgufIsNeitherFormatAndTheMessageSaysWhy) {
  const std::string path = Write("notes.gguf", "hello, this is a text file and not a model\n");
  auto format = DetectModelFormat(path);
  ASSERT_FALSE(format.ok());
  EXPECT_EQ(format.status().code(), shared::StatusCode::kInvalidArgument);
  const std::string& msg = format.status().message();
  EXPECT_NE(msg.find(path + " is neither a GGUF file (magic 'GGUF', found 'hell') nor a llama2.c "
                            "checkpoint (header field dim = "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("is outside [1, 65536]"), std::string::npos) << msg;
}

TEST_F(ModelFormatTest, ImplausibleHeaderNamesTheFieldThatIsWrong) {
  // n_heads 7 does not divide dim 64.
  auto format = DetectModelFormat(Write("m.bin", Llama2cHeader({64, 172, 5, 7, 7, 512, 512})));
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.status().message().find("n_heads = 7 does not divide dim = 64"),
            std::string::npos)
      << format.status().message();
}

TEST_F(ModelFormatTest, UnprintableMagicIsShownAsHexEscapes) {
  const std::string head = std::string(
                               "\x01\xff"
                               "ab",
                               4) +
                           std::string(24, '\xff');
  auto format = DetectModelFormat(std::as_bytes(std::span<const char>(head)), "blob");
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.status().message().find("found '\\x01\\xFFab'"), std::string::npos)
      << format.status().message();
}

TEST_F(ModelFormatTest, ShortFileSaysItIsTooShortForTheHeader) {
  auto format = DetectModelFormat(Write("short.bin", "GGU"));
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.status().message().find("3 bytes, too short for the 28-byte header"),
            std::string::npos)
      << format.status().message();
}

TEST_F(ModelFormatTest, EmptyFileSaysItIsEmpty) {
  const std::string path = Write("empty.gguf", "");
  auto format = DetectModelFormat(path);
  ASSERT_FALSE(format.ok());
  EXPECT_EQ(format.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(format.status().message().find(path + " is empty"), std::string::npos)
      << format.status().message();
}

TEST_F(ModelFormatTest, MissingFileSaysItDoesNotExist) {
  const std::string path = dir_.File("absent.gguf");
  auto format = DetectModelFormat(path);
  ASSERT_FALSE(format.ok());
  EXPECT_EQ(format.status().code(), shared::StatusCode::kNotFound);
  EXPECT_NE(format.status().message().find(path + " does not exist"), std::string::npos)
      << format.status().message();
}

TEST_F(ModelFormatTest, DirectorySaysItIsADirectory) {
  auto format = DetectModelFormat(dir_.path());
  ASSERT_FALSE(format.ok());
  EXPECT_EQ(format.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(format.status().message().find(dir_.path() + " is a directory"), std::string::npos)
      << format.status().message();
}

}  // namespace
}  // namespace smallmind::worker

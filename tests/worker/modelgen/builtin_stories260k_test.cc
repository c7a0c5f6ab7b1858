// builtin:stories260K: the bytes embedded in the binary are the files models/stories260K/README.md
// names (by SHA-256), 64-byte aligned, and load zero-copy into the model that README describes.
#include "worker/modelgen/builtin_stories260k.h"

#include <openssl/evp.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/shared_data.h"

namespace smallmind::worker {
namespace {

constexpr size_t kLlama2cHeaderBytes = 7 * sizeof(int32_t);

std::string Sha256Hex(std::span<const std::byte> bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EXPECT_EQ(EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr), 1);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

// The SHA-256 in the README table row of `file` ("| `file` | bytes | `sha256` | what |"); "" when
// the README has no such row.
std::string ReadmeSha256(const std::string& file) {
  std::ifstream in(std::string(SMALLMIND_SOURCE_DIR) + "/models/stories260K/README.md");
  const std::regex row("^\\| `" + file + "` \\|[^|]*\\| `([0-9a-f]{64})` \\|");
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, row)) return m[1];
  }
  return "";
}

TEST(BuiltinStories260KTest, EmbeddedCheckpointHasTheSha256TheModelReadmeGives) {
  const std::string want = ReadmeSha256("stories260K.bin");
  ASSERT_EQ(want.size(), 64u) << "no SHA-256 row for stories260K.bin in the README";
  EXPECT_EQ(Sha256Hex(Stories260KCheckpointBytes()), want);
}

TEST(BuiltinStories260KTest, EmbeddedTokenizerHasTheSha256TheModelReadmeGives) {
  const std::string want = ReadmeSha256("tok512.bin");
  ASSERT_EQ(want.size(), 64u) << "no SHA-256 row for tok512.bin in the README";
  EXPECT_EQ(Sha256Hex(Stories260KTokenizerBytes()), want);
}

TEST(BuiltinStories260KTest, EmbeddedFilesStartOn64ByteBoundaries) {
  EXPECT_EQ(reinterpret_cast<uintptr_t>(Stories260KCheckpointBytes().data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(Stories260KTokenizerBytes().data()) % 64, 0u);
}

TEST(BuiltinStories260KTest, EmbeddedCheckpointIsTheSharedTestDataFileByteForByte) {
  SM_REQUIRE_SHARED_DATA("models/stories260K.bin");
  std::ifstream in(testing::SharedDataPath("models/stories260K.bin"), std::ios::binary);
  const std::vector<char> file((std::istreambuf_iterator<char>(in)), {});
  const std::span<const std::byte> embedded = Stories260KCheckpointBytes();
  ASSERT_EQ(embedded.size(), file.size());
  EXPECT_EQ(std::memcmp(embedded.data(), file.data(), file.size()), 0);
}

TEST(BuiltinStories260KTest, LoadsTheReadmeShapeWithWeightsPointingIntoTheEmbeddedBytes) {
  auto model = MakeBuiltinStories260K();
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ModelConfig& c = model->llama.config;
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.context_length, 512);
  const Weights& w = model->llama.weights;
  // Zero-copy: the token embedding is the first array after the 7-int header, in place.
  EXPECT_EQ(static_cast<const void*>(w.token_embedding.data),
            static_cast<const void*>(Stories260KCheckpointBytes().data() + kLlama2cHeaderBytes));
  EXPECT_EQ(w.classifier.data, w.token_embedding.data);  // shared classifier
  EXPECT_EQ(w.storage.data(), Stories260KCheckpointBytes().data());
}

TEST(BuiltinStories260KTest, EncodesAPromptAsLlama2cRunCDoes) {
  auto model = MakeBuiltinStories260K();
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // run.c's encoding of "Once upon a time" (../shared/models/golden-greedy.jsonl): BOS, then the
  // merged pieces " Once", " upon", " a", " time" (the dummy-prefix space merged into the first).
  EXPECT_EQ(model->tokenizer->Encode("Once upon a time", /*add_bos=*/true),
            (std::vector<TokenId>{1, 403, 407, 261, 378}));
  EXPECT_EQ(model->tokenizer->vocab_size(), 512);
}

}  // namespace
}  // namespace smallmind::worker

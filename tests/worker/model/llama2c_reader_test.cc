#include "worker/model/llama2c/llama2c_reader.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"

namespace smallmind::worker {
namespace {

const std::string kStories = testing::SharedDataPath("models/stories260K.bin");

std::vector<char> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

// A header followed by `floats` float32 values 0, 1, 2, ...
std::vector<char> MakeFile(std::vector<int32_t> header, int64_t floats) {
  std::vector<char> bytes(header.size() * 4 + floats * 4);
  std::memcpy(bytes.data(), header.data(), header.size() * 4);
  for (int64_t i = 0; i < floats; i++) {
    const float f = static_cast<float>(i);
    std::memcpy(bytes.data() + header.size() * 4 + i * 4, &f, 4);
  }
  return bytes;
}

class Llama2cReaderTest : public ::testing::Test {
 protected:
  std::string WriteTemp(const std::string& name, const std::vector<char>& bytes) {
    const std::string path = tmp_.File(name + ".bin");
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  // Loads bytes written to a temp file and returns the error, which must name the file.
  std::string LoadError(const std::string& name, const std::vector<char>& bytes) {
    const std::string path = WriteTemp(name, bytes);
    auto model = LoadLlama2cCheckpoint(path);
    EXPECT_FALSE(model.ok()) << name;
    if (model.ok()) return "";
    EXPECT_EQ(model.status().code(), shared::StatusCode::kInvalidArgument) << name;
    EXPECT_NE(model.status().message().find(path), std::string::npos) << model.status().message();
    return model.status().message();
  }

  testing::ScopedTempDir tmp_;
};

TEST_F(Llama2cReaderTest, LoadsStories260KWithTheShapeItsHeaderGives) {
  SM_REQUIRE_SHARED_DATA("models/stories260K.bin");
  auto model = LoadLlama2cCheckpoint(kStories);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ModelConfig& c = model->config;
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.context_length, 512);
  EXPECT_EQ(c.head_dim(), 8);
  EXPECT_EQ(c.kv_dim(), 32);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-5f);
  EXPECT_FLOAT_EQ(c.rope_theta, 10000.0f);
  EXPECT_EQ(c.rope_style, RopeStyle::kInterleaved);
  const Weights& w = model->weights;
  EXPECT_EQ(w.classifier.data, w.token_embedding.data) << "positive vocab_size = shared classifier";
  // The embedding starts right after the header, and the final norm sits just before the RoPE
  // tables; compare both against the raw file bytes.
  const std::vector<char> bytes = ReadBytes(kStories);
  EXPECT_EQ(std::memcmp(w.token_embedding.data, bytes.data() + 28, 64 * 4), 0);
  const int64_t final_norm_at = 28 + 4 * (Llama2cCoreFloats(c) - c.dim);
  EXPECT_EQ(std::memcmp(w.final_norm.data, bytes.data() + final_norm_at, 64 * 4), 0);
  EXPECT_EQ(w.layers[4].w3.rows, 172);
  EXPECT_EQ(w.layers[4].w2.cols, 172);
}

TEST_F(Llama2cReaderTest, PlacesASeparateClassifierAfterTheRopeTables) {
  // dim 4, hidden 6, 1 layer, 2 heads (head 2), 1 KV head, vocab -3 (separate), seq_len 2.
  const ModelConfig c{.dim = 4,
                      .hidden_dim = 6,
                      .n_layers = 1,
                      .n_heads = 2,
                      .n_kv_heads = 1,
                      .vocab_size = 3,
                      .context_length = 2};
  const int64_t core = Llama2cCoreFloats(c), rope = 2 * 2, classifier = 3 * 4;
  const std::string path =
      WriteTemp("separate", MakeFile({4, 6, 1, 2, 1, -3, 2}, core + rope + classifier));
  auto model = LoadLlama2cCheckpoint(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->config.vocab_size, 3);
  ASSERT_NE(model->weights.classifier.data, model->weights.token_embedding.data);
  EXPECT_EQ(model->weights.classifier.f32()[0], static_cast<float>(core + rope));
  EXPECT_EQ(model->weights.layers[0].wk.f32()[0], static_cast<float>(3 * 4 + 4 + 16));
}

TEST_F(Llama2cReaderTest, ReportsAMissingFileAsNotFound) {
  auto model = LoadLlama2cCheckpoint(tmp_.File("no_such_model.bin"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), shared::StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find("no_such_model.bin"), std::string::npos);
}

TEST_F(Llama2cReaderTest, RejectsFilesTooShortForTheHeader) {
  EXPECT_NE(LoadError("empty", {}).find("too short for the 28-byte header"), std::string::npos);
  EXPECT_NE(LoadError("short", std::vector<char>(27, 1)).find("27 bytes"), std::string::npos);
}

TEST_F(Llama2cReaderTest, RejectsTruncatedWeights) {
  EXPECT_NE(LoadError("header_only", MakeFile({64, 172, 5, 8, 4, 512, 512}, 0)).find("truncated"),
            std::string::npos);
  SM_REQUIRE_SHARED_DATA("models/stories260K.bin");
  std::vector<char> bytes = ReadBytes(kStories);
  const ModelConfig c{.dim = 64,
                      .hidden_dim = 172,
                      .n_layers = 5,
                      .n_heads = 8,
                      .n_kv_heads = 4,
                      .vocab_size = 512,
                      .context_length = 512};
  bytes.resize(28 + 4 * Llama2cCoreFloats(c) - 1);  // one byte short of the final norm
  const std::string error = LoadError("stories_cut", bytes);
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_NE(error.find("dim=64 hidden_dim=172 n_layers=5"), std::string::npos) << error;
}

TEST_F(Llama2cReaderTest, RejectsFilesLongerThanTheHeaderImplies) {
  const ModelConfig c{.dim = 4,
                      .hidden_dim = 6,
                      .n_layers = 1,
                      .n_heads = 2,
                      .n_kv_heads = 1,
                      .vocab_size = 3,
                      .context_length = 2};
  const int64_t core = Llama2cCoreFloats(c);
  EXPECT_TRUE(
      LoadLlama2cCheckpoint(WriteTemp("exact", MakeFile({4, 6, 1, 2, 1, 3, 2}, core))).ok());
  EXPECT_TRUE(
      LoadLlama2cCheckpoint(WriteTemp("rope", MakeFile({4, 6, 1, 2, 1, 3, 2}, core + 4))).ok());
  const std::string error = LoadError("long", MakeFile({4, 6, 1, 2, 1, 3, 2}, core + 1));
  EXPECT_NE(error.find("implies"), std::string::npos) << error;
}

TEST_F(Llama2cReaderTest, RejectsOutOfRangeHeaderFields) {
  EXPECT_NE(LoadError("dim0", MakeFile({0, 172, 5, 8, 4, 512, 512}, 0)).find("dim = 0"),
            std::string::npos);
  EXPECT_NE(LoadError("dimneg", MakeFile({-64, 172, 5, 8, 4, 512, 512}, 0)).find("dim = -64"),
            std::string::npos);
  EXPECT_NE(LoadError("dimhuge", MakeFile({1 << 30, 172, 5, 8, 4, 512, 512}, 0)).find("outside"),
            std::string::npos);
  EXPECT_NE(LoadError("layers", MakeFile({64, 172, 100000, 8, 4, 512, 512}, 0)).find("n_layers"),
            std::string::npos);
  EXPECT_NE(LoadError("vocabmin", MakeFile({64, 172, 5, 8, 4, INT_MIN, 512}, 0)).find("vocab_size"),
            std::string::npos);
  EXPECT_NE(LoadError("seq0", MakeFile({64, 172, 5, 8, 4, 512, 0}, 0)).find("seq_len"),
            std::string::npos);
  EXPECT_NE(LoadError("kvheads", MakeFile({64, 172, 5, 8, 16, 512, 512}, 0)).find("n_kv_heads"),
            std::string::npos);
}

TEST_F(Llama2cReaderTest, RejectsInconsistentHeads) {
  EXPECT_NE(LoadError("heads", MakeFile({64, 172, 5, 7, 7, 512, 512}, 0))
                .find("n_heads = 7 does not divide dim = 64"),
            std::string::npos);
  EXPECT_NE(LoadError("kvdiv", MakeFile({64, 172, 5, 8, 3, 512, 512}, 0))
                .find("n_kv_heads = 3 does not divide n_heads = 8"),
            std::string::npos);
  EXPECT_NE(LoadError("odd", MakeFile({12, 8, 1, 4, 4, 8, 8}, 0)).find("odd"), std::string::npos);
}

TEST_F(Llama2cReaderTest, PointsAtTheGgufReaderForGgufFiles) {
  std::vector<char> bytes = MakeFile({3, 0, 0, 0, 0, 0, 0}, 4);
  std::memcpy(bytes.data(), "GGUF", 4);
  EXPECT_NE(LoadError("gguf", bytes).find("GGUF"), std::string::npos);
}

}  // namespace
}  // namespace smallmind::worker

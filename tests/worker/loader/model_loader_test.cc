// LoadModel: the default is the embedded stories260K, builtin: names are checked against the list
// of builtin models, and a path that is not a model says what it is instead of failing inside a
// reader.
#include "worker/loader/model_loader.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/testing/scoped_temp_dir.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

TEST(ModelLoaderTest, TheDefaultSpecLoadsTheEmbeddedStories260K) {
  auto model = LoadModel(ModelSpec{});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->source, "builtin:stories260K");
  EXPECT_EQ((*model)->llama.config.vocab_size, 512);
  EXPECT_EQ((*model)->llama.config.n_layers, 5);
  EXPECT_EQ((*model)->tokenizer->vocab_size(), 512);
  EXPECT_EQ((*model)->parameter_count, 260032u);  // the model card's count, tied classifier once
  EXPECT_EQ((*model)->quantization, "F32");
}

TEST(ModelLoaderTest, BuiltinTinyStillLoadsForTests) {
  auto model = LoadModel(ModelSpec{"builtin:tiny", ""});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->source, "builtin:tiny");
  EXPECT_EQ((*model)->llama.config.vocab_size, 259);
}

TEST(ModelLoaderTest, BuiltinNamesListTheDefaultFirst) {
  EXPECT_EQ(BuiltinModelNames(), (std::vector<std::string>{"builtin:stories260K", "builtin:tiny"}));
}

TEST(ModelLoaderTest, UnknownBuiltinNameListsTheValidOnes) {
  auto model = LoadModel(ModelSpec{"builtin:stories", ""});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_EQ(model.status().message(),
            "unknown builtin model 'builtin:stories'; the builtin models are "
            "builtin:stories260K, builtin:tiny");
}

TEST(ModelLoaderTest, ATokenizerForABuiltinModelIsRefusedNotIgnored) {
  auto model = LoadModel(ModelSpec{"builtin:tiny", "tok512.bin"});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_EQ(model.status().message(),
            "--tokenizer tok512.bin is for llama2.c checkpoints only; builtin:tiny carries its own "
            "vocabulary");
}

TEST(ModelLoaderTest, ATokenizerForAGgufIsRefusedNotIgnored) {
  testing::ScopedTempDir dir;
  const std::string path = dir.File("tiny.gguf");
  ASSERT_TRUE(WriteGeneratedModel(GeneratorOptions{}, path).ok());
  ASSERT_TRUE(LoadModel(ModelSpec{path, ""}).ok());
  auto model = LoadModel(ModelSpec{path, "tok512.bin"});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_EQ(model.status().message(), "--tokenizer tok512.bin is for llama2.c checkpoints only; " +
                                          path + " is a GGUF with its tokenizer inside");
}

TEST(ModelLoaderTest, TextFileRenamedGgufIsReportedAsNeitherFormat) {
  testing::ScopedTempDir dir;
  const std::string path = dir.File("model.gguf");
  std::ofstream(path) << "this is a text file, not a model\n";
  auto model = LoadModel(ModelSpec{path, ""});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(model.status().message().find(path + " is neither a GGUF file (magic 'GGUF', found "
                                                 "'this') nor a llama2.c checkpoint"),
            std::string::npos)
      << model.status().message();
}

TEST(ModelLoaderTest, MissingFileSaysItDoesNotExist) {
  testing::ScopedTempDir dir;
  const std::string path = dir.File("absent.gguf");
  auto model = LoadModel(ModelSpec{path, ""});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), shared::StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find(path + " does not exist"), std::string::npos)
      << model.status().message();
}

TEST(ModelLoaderTest, DirectorySaysItIsADirectory) {
  testing::ScopedTempDir dir;
  auto model = LoadModel(ModelSpec{dir.path(), ""});
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find(dir.path() + " is a directory"), std::string::npos)
      << model.status().message();
}

TEST(ModelLoaderTest, TheShippedCheckpointFileLoadsLikeTheEmbeddedOne) {
  // models/stories260K in the source tree, served as a file: tok512.bin is found beside it.
  const std::string path =
      std::string(SMALLMIND_SOURCE_DIR) + "/models/stories260K/stories260K.bin";
  auto file = LoadModel(ModelSpec{path, ""});
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto builtin = LoadModel(ModelSpec{});
  ASSERT_TRUE(builtin.ok()) << builtin.status().ToString();
  EXPECT_EQ((*file)->file_size, (*builtin)->file_size);
  EXPECT_EQ((*file)->parameter_count, (*builtin)->parameter_count);
  EXPECT_EQ((*file)->tokenizer->Encode("The cat", true),
            (*builtin)->tokenizer->Encode("The cat", true));
}

}  // namespace
}  // namespace smallmind::worker

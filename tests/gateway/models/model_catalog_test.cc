#include "gateway/models/model_catalog.h"

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway {
namespace {

TEST(ModelCatalogTest, APlainSpecIsNamedByItsFileNameAsBefore) {
  shared::Result<CatalogEntry> e = ParseModelFlag("/models/llama-7b.Q4_0.gguf");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->names, (std::vector<std::string>{"llama-7b.Q4_0.gguf"}));
  EXPECT_EQ(e->spec, "/models/llama-7b.Q4_0.gguf");
  EXPECT_EQ(e->workers, 0);
  shared::Result<CatalogEntry> builtin = ParseModelFlag("builtin:stories260K");
  ASSERT_TRUE(builtin.ok());
  EXPECT_EQ(builtin->id(), "builtin:stories260K");
  EXPECT_EQ(builtin->file_bytes, 0u);
}

TEST(ModelCatalogTest, ParsesNameAndPerModelOptions) {
  shared::Result<CatalogEntry> e =
      ParseModelFlag("small=builtin:tiny,workers=3,threads=2,kv-memory-mb=64");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->id(), "small");
  EXPECT_EQ(e->spec, "builtin:tiny");
  EXPECT_EQ(e->workers, 3);
  EXPECT_EQ(e->threads, 2);
  EXPECT_EQ(e->kv_memory_mb, 64);
  EXPECT_EQ(e->chat_template_file, "");
}

TEST(ModelCatalogTest, TakesAPerModelChatTemplateFile) {
  shared::Result<CatalogEntry> e =
      ParseModelFlag("qwen=/m/qwen.gguf,chat-template=/t/qwen2.5.jinja,workers=1");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->id(), "qwen");
  EXPECT_EQ(e->chat_template_file, "/t/qwen2.5.jinja");
  EXPECT_EQ(e->workers, 1);
}

TEST(ModelCatalogTest, AnEqualsSignInAPathIsNoName) {
  shared::Result<CatalogEntry> e = ParseModelFlag("/data/a=b/m.gguf");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->spec, "/data/a=b/m.gguf");
  EXPECT_EQ(e->id(), "m.gguf");
}

TEST(ModelCatalogTest, RejectsBadFlagsNamingTheProblem) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"=m.gguf", "the name before `=` is empty"},
      {"a=", "no model SPEC"},
      {"m.gguf,workers=0", "workers must be an integer in [1, 1024]"},
      {"m.gguf,threads=x", "threads must be an integer"},
      {"m.gguf,color=red", "unknown option `color`"},
      {"m.gguf,workers", "`workers` is not key=value"},
      {"m.gguf,chat-template=", "chat-template needs a FILE"},
  };
  for (const auto& [flag, why] : cases) {
    shared::Result<CatalogEntry> e = ParseModelFlag(flag);
    ASSERT_FALSE(e.ok()) << flag;
    EXPECT_NE(e.status().message().find(why), std::string::npos) << e.status().message();
    EXPECT_NE(e.status().message().find("--model `"), std::string::npos);
  }
}

TEST(ModelCatalogTest, ScansAModelsDirectoryForGgufFilesByStem) {
  testing::ScopedTempDir dir;
  for (const char* name : {"b.gguf", "a.gguf", "notes.txt"}) {
    std::ofstream(dir.File(name)) << "1234567";
  }
  shared::Result<std::vector<CatalogEntry>> entries = ScanModelsDir(dir.path());
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].id(), "a");
  EXPECT_EQ((*entries)[0].spec, dir.File("a.gguf"));
  EXPECT_EQ((*entries)[0].file_bytes, 7u);
  EXPECT_EQ((*entries)[1].id(), "b");
  EXPECT_FALSE(ScanModelsDir(dir.File("missing")).ok());
}

TEST(ModelCatalogTest, AnEmptyModelsDirectoryIsAnError) {
  testing::ScopedTempDir dir;
  shared::Result<std::vector<CatalogEntry>> entries = ScanModelsDir(dir.path());
  ASSERT_FALSE(entries.ok());
  EXPECT_NE(entries.status().message().find("holds no *.gguf"), std::string::npos);
}

TEST(ModelCatalogTest, FindsByAnyNameAndTheEmptyNameIsTheFirst) {
  shared::Result<ModelCatalog> c =
      ModelCatalog::FromFlags({"builtin:stories260K", "tiny=builtin:tiny"}, "", {"story", "s"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->Find(""), 0);
  EXPECT_EQ(c->Find("story"), 0);
  EXPECT_EQ(c->Find("s"), 0);
  EXPECT_EQ(c->Find("tiny"), 1);
  EXPECT_EQ(c->Find("builtin:stories260K"), -1);  // renamed by --served-model-name
  EXPECT_EQ(c->NotServed("gpt-4").message(),
            "the model `gpt-4` is not served here; this server serves `story`, `s`, `tiny`");
  EXPECT_EQ(c->NotServed("gpt-4").code(), shared::StatusCode::kNotFound);
}

TEST(ModelCatalogTest, RefusesTwoModelsOfOneName) {
  shared::Result<ModelCatalog> c = ModelCatalog::FromFlags({"x=builtin:tiny", "x=m.gguf"}, "", {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("`x` is given twice"), std::string::npos);
  EXPECT_FALSE(ModelCatalog::FromFlags({}, "", {}).ok());
}

TEST(ModelCatalogTest, EstimatesFilePlusEveryWorkersKvPool) {
  CatalogEntry e;
  e.file_bytes = 1000;
  EXPECT_EQ(EstimateResidentBytes(e, 2, 8), 1000u + 2 * (8u << 20));
  e.workers = 1;
  e.kv_memory_mb = 4;
  EXPECT_EQ(EstimateResidentBytes(e, 2, 8), 1000u + (4u << 20));
}

TEST(ModelCatalogTest, ReadsTheKvBudgetOutOfWorkerFlags) {
  EXPECT_EQ(KvMemoryMbFromWorkerFlags({}), 1024);
  EXPECT_EQ(KvMemoryMbFromWorkerFlags({"--max-seqs", "4", "--kv-memory-mb", "64"}), 64);
  EXPECT_EQ(KvMemoryMbFromWorkerFlags({"--kv-memory-mb=32"}), 32);
}

}  // namespace
}  // namespace smallmind::gateway

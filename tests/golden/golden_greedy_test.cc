// Golden greedy outputs of llama2.c's run.c on stories260K, reproduced through a real gateway and a
// real worker process over gRPC, on both kernel paths.
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"

namespace smallmind {
namespace {

struct GoldenCase {
  std::string prompt;
  int steps;
  std::vector<uint32_t> token_ids;
  std::vector<uint32_t> prompt_token_ids;
  std::string stop;
  std::string text;
};

std::vector<GoldenCase> LoadGoldens(const std::string& path) {
  std::vector<GoldenCase> cases;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    cases.push_back(
        {j["prompt"], j["steps"], j["token_ids"], j["prompt_token_ids"], j["stop"], j["text"]});
  }
  return cases;
}

struct GoldenParam {
  std::string model_file;  // under ../shared/models, or kConverted
  bool deterministic;
};

// stories260K.bin + tok512.bin converted by `smallmind-modelgen --from-llama2c` at test time.
constexpr char kConverted[] = "converted.gguf";

// Runs the converter into `dir`; returns the GGUF path or "" on failure.
std::string ConvertStories(const std::string& shared_dir, const testing::ScopedTempDir& dir) {
  const std::string out = dir.File("stories260K-converted.gguf");
  auto child =
      testing::ChildProcess::Spawn({testing::BinaryPath("smallmind-modelgen"), "--from-llama2c",
                                    shared_dir + "/models/stories260K.bin", "--tokenizer",
                                    shared_dir + "/models/tok512.bin", "--type", "f32", "-o", out});
  if (!child.ok()) return "";
  int status = (*child)->Wait(std::chrono::milliseconds(60000));
  return status == 0 ? out : "";
}

// One gateway (one worker) per model file, started on first use and kept for the suite.
class GoldenGreedyTest : public ::testing::TestWithParam<GoldenParam> {
 protected:
  static void TearDownTestSuite() {
    gateways_.clear();
    converted_dir_.reset();  // after the gateway that serves the converted file
  }

  static testing::GatewayFixture* GatewayFor(const std::string& model_path) {
    auto it = gateways_.find(model_path);
    if (it != gateways_.end()) return it->second.get();
    testing::GatewayOptions options;
    options.model = model_path;
    options.workers = 1;
    auto started = testing::GatewayFixture::Start(options);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return nullptr;
    return (gateways_[model_path] = std::move(started).value()).get();
  }

  static std::map<std::string, std::unique_ptr<testing::GatewayFixture>> gateways_;
  static std::unique_ptr<testing::ScopedTempDir> converted_dir_;
};

std::map<std::string, std::unique_ptr<testing::GatewayFixture>> GoldenGreedyTest::gateways_;
std::unique_ptr<testing::ScopedTempDir> GoldenGreedyTest::converted_dir_;

TEST_P(GoldenGreedyTest, GeneratedTokensAndTextEqualRunC) {
  SM_REQUIRE_SHARED_DATA("models/golden-greedy.jsonl");
  const std::string shared_dir = testing::SharedDataDir();
  std::string model = shared_dir + "/models/" + GetParam().model_file;
  if (GetParam().model_file == kConverted) {
    if (converted_dir_ == nullptr)
      converted_dir_ = std::make_unique<testing::ScopedTempDir>("golden");
    model = ConvertStories(shared_dir, *converted_dir_);
    ASSERT_FALSE(model.empty()) << "smallmind-modelgen --from-llama2c failed";
  }
  testing::GatewayFixture* gateway = GatewayFor(model);
  ASSERT_NE(gateway, nullptr);
  std::vector<GoldenCase> cases = LoadGoldens(shared_dir + "/models/golden-greedy.jsonl");
  ASSERT_FALSE(cases.empty());
  for (const GoldenCase& g : cases) {
    SCOPED_TRACE("prompt '" + g.prompt + "'");
    v1::GenerateRequest req;
    req.set_prompt(g.prompt);
    req.mutable_sampling()->set_temperature(0);
    // run.c runs `steps` positions; position 0 is BOS, so steps + 1 tokens in all.
    const int max_new = g.steps + 1 - static_cast<int>(g.prompt_token_ids.size());
    req.mutable_stopping()->set_max_new_tokens(max_new);
    req.mutable_runtime()->set_deterministic(GetParam().deterministic);
    testing::GenerateOutcome out = testing::RunGenerate(gateway->stub(), req);
    ASSERT_TRUE(out.status.ok()) << out.status.error_message();

    std::vector<uint32_t> want(g.token_ids.begin() + g.prompt_token_ids.size(), g.token_ids.end());
    if (g.stop == "bos") want.pop_back();  // the model produced BOS: run.c stops, we end the stream
    EXPECT_EQ(out.token_ids(), want);
    ASSERT_NE(out.last(), nullptr);
    EXPECT_EQ(out.last()->finish_reason(), g.stop == "bos" ? v1::EOS : v1::LENGTH);
    EXPECT_EQ(out.last()->usage().prompt_tokens(), g.prompt_token_ids.size());
    EXPECT_EQ(out.last()->usage().completion_tokens(), want.size());
    // run.c prints the prompt's pieces too; the stream carries only the new text.
    ASSERT_EQ(g.text.substr(0, g.prompt.size()), g.prompt);
    EXPECT_EQ(out.text(), g.text.substr(g.prompt.size()));
  }
}

// The llama2.c checkpoint, the same model as GGUF (tokenizer from its metadata) on both paths, and
// our own conversion of the checkpoint.
INSTANTIATE_TEST_SUITE_P(ModelsAndPaths, GoldenGreedyTest,
                         ::testing::Values(GoldenParam{"stories260K.bin", false},
                                           GoldenParam{"stories260K.bin", true},
                                           GoldenParam{"stories260K.gguf", false},
                                           GoldenParam{"stories260K.gguf", true},
                                           GoldenParam{kConverted, false}),
                         [](const auto& info) {
                           std::string name = info.param.model_file == kConverted ? "Converted"
                                              : info.param.model_file.ends_with(".gguf")
                                                  ? "Gguf"
                                                  : "Llama2c";
                           return name + (info.param.deterministic ? "Deterministic" : "Parallel");
                         });

}  // namespace
}  // namespace smallmind

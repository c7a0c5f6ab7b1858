// The GGUF that smallmind-modelgen --from-llama2c makes of stories260K must generate exactly the
// tokens llama2.c run.c picks from the .bin (../shared/models/golden-greedy.jsonl), with the
// prompt encoded by the tokenizer in the GGUF's metadata.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"
#include "worker/engine/engine.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/modelgen/llama2c_to_gguf.h"

namespace smallmind::worker {
namespace {

const std::string kModels = smallmind::testing::SharedDataPath("models");
constexpr TokenId kBos = 1;
constexpr int kBlockSize = 16;

// Lowest id wins an exact tie, as run.c's argmax does.
TokenId Argmax(std::span<const float> logits) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(logits.size()); i++) {
    if (logits[i] > logits[best]) best = i;
  }
  return best;
}

// run.c's loop: the prompt forced one token per position, then argmax, until `steps` positions
// have run or BOS comes out. Returns the token at every position, BOS first.
std::vector<TokenId> GenerateGreedy(const GgufModel& m, std::vector<TokenId> tokens, int steps) {
  const int blocks = (steps + 1 + kBlockSize - 1) / kBlockSize;
  KvPool pool(m.llama.config, blocks, kBlockSize);
  Engine engine(m.llama.config, m.llama.weights, &pool, EngineOptions{1, 1});
  std::vector<int32_t> table(blocks);
  for (int i = 0; i < blocks; i++) table[i] = i;
  const size_t prompt = tokens.size();
  for (int pos = 0; pos < steps; pos++) {
    StepPlan plan;
    plan.seqs.push_back(SeqStep{std::span<const TokenId>(tokens).subspan(pos, 1), pos, table,
                                pos + 1 >= static_cast<int>(prompt)});
    engine.Step(plan);
    if (pos + 1 < static_cast<int>(prompt)) continue;
    tokens.push_back(Argmax(engine.Logits(0)));
    if (tokens.back() == kBos) break;
  }
  return tokens;
}

TEST(Llama2cGgufGoldenTest, ConvertedStoriesModelGeneratesRunCsGreedyTokens) {
  SM_REQUIRE_SHARED_DATA("models/stories260K.bin");
  SM_REQUIRE_SHARED_DATA("models/tok512.bin");
  SM_REQUIRE_SHARED_DATA("models/golden-greedy.jsonl");
  const smallmind::testing::ScopedTempDir tmp;
  const std::string path = tmp.File("stories260K.gguf");
  Llama2cConversion conv{kModels + "/stories260K.bin", kModels + "/tok512.bin",
                         kernels::DType::kF32, ""};
  auto converted = ConvertLlama2cToGguf(conv, path);
  ASSERT_TRUE(converted.ok()) << converted.status().ToString();
  auto model = LoadGgufModel(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();

  std::ifstream in(kModels + "/golden-greedy.jsonl");
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string prompt = j.at("prompt").get<std::string>();
    const std::vector<TokenId> prompt_ids = model->tokenizer->Encode(prompt, true);
    ASSERT_EQ(prompt_ids, j.at("prompt_token_ids").get<std::vector<TokenId>>()) << prompt;
    EXPECT_EQ(GenerateGreedy(*model, prompt_ids, j.at("steps").get<int>()),
              j.at("token_ids").get<std::vector<TokenId>>())
        << "prompt \"" << prompt << "\"";
    checked++;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace smallmind::worker

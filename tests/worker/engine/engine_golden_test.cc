// Golden greedy test: the engine on stories260K must pick exactly the tokens llama2.c run.c picks
// (../shared/models/golden-greedy.jsonl), whether the prompt is fed token by token, as one chunk,
// or beside another sequence in the same steps; with the reference kernels and with the best this
// CPU runs, on both the deterministic and the parallel path, on one and on two threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/shared_data.h"
#include "worker/engine/engine.h"
#include "worker/model/llama2c/llama2c_reader.h"

namespace smallmind::worker {
namespace {

const std::string kModels = smallmind::testing::SharedDataPath("models");
constexpr TokenId kBos = 1;
constexpr int kBlockSize = 16;
constexpr int kNumBlocks = 64;

struct Golden {
  std::string prompt;
  int steps = 0;
  std::vector<TokenId> token_ids;         // token at every position, BOS first
  std::vector<TokenId> prompt_token_ids;  // BOS + encoded prompt
};

std::vector<Golden> LoadGoldens() {
  std::vector<Golden> goldens;
  std::ifstream in(kModels + "/golden-greedy.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    goldens.push_back(Golden{j.at("prompt").get<std::string>(), j.at("steps").get<int>(),
                             j.at("token_ids").get<std::vector<TokenId>>(),
                             j.at("prompt_token_ids").get<std::vector<TokenId>>()});
  }
  return goldens;
}

// Lowest id wins an exact tie, as run.c's argmax does.
TokenId Argmax(std::span<const float> logits) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(logits.size()); i++) {
    if (logits[i] > logits[best]) best = i;
  }
  return best;
}

// One sequence generated as run.c does: BOS at position 0, the prompt forced, then argmax, until
// `steps` positions have run or BOS comes out. The prompt is fed at most `chunk` tokens per step.
class GreedySeq {
 public:
  GreedySeq(const Golden& g, int chunk, std::vector<int32_t> blocks)
      : prompt_size_(static_cast<int>(g.prompt_token_ids.size())),
        steps_(g.steps),
        chunk_(chunk),
        tokens_(g.prompt_token_ids),
        blocks_(std::move(blocks)) {}

  bool done() const { return done_; }
  const std::vector<TokenId>& tokens() const { return tokens_; }

  SeqStep Next() {
    fed_ = pos_ < prompt_size_ ? std::min(chunk_, prompt_size_ - pos_) : 1;
    fed_ = std::min(fed_, steps_ - pos_);
    SeqStep s;
    s.tokens = std::span<const TokenId>(tokens_).subspan(pos_, fed_);
    s.start_pos = pos_;
    s.block_table = blocks_;
    s.want_logits = pos_ + fed_ >= prompt_size_;  // the next token is not forced
    return s;
  }

  // After the step that ran Next(): `logits` are its last token's (empty when not wanted).
  void Advance(std::span<const float> logits) {
    pos_ += fed_;
    if (pos_ >= prompt_size_) {
      tokens_.push_back(Argmax(logits));
      if (tokens_.back() == kBos) done_ = true;
    }
    if (pos_ >= steps_) done_ = true;
  }

 private:
  int prompt_size_, steps_, chunk_;
  std::vector<TokenId> tokens_;  // tokens_[i] is the token at position i
  std::vector<int32_t> blocks_;
  int pos_ = 0;  // positions run so far
  int fed_ = 0;  // tokens in the current step
  bool done_ = false;
};

// Blocks first, first + stride, ... (ceil(201 / kBlockSize) of them), so each sequence is spread
// over non-contiguous, unordered pages.
std::vector<int32_t> Blocks(int first, int stride) {
  std::vector<int32_t> table;
  for (int i = 0; i < (201 + kBlockSize - 1) / kBlockSize; i++) table.push_back(first + i * stride);
  return table;
}

struct GoldenParam {
  kernels::Isa isa;
  kernels::ExecMode mode;
  int threads;
};

class EngineGoldenTest : public ::testing::TestWithParam<GoldenParam> {
 protected:
  void SetUp() override {
    SM_REQUIRE_SHARED_DATA("models/stories260K.bin");
    SM_REQUIRE_SHARED_DATA("models/golden-greedy.jsonl");
    auto model = LoadLlama2cCheckpoint(kModels + "/stories260K.bin");
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::make_unique<LlamaModel>(std::move(model).value());
    goldens_ = LoadGoldens();
    ASSERT_EQ(goldens_.size(), 3u) << "golden-greedy.jsonl should hold 3 prompts";
  }

  // Runs all `seqs` together, one step each, until every one is done.
  void RunBatched(std::vector<GreedySeq*> seqs) {
    KvPool pool(model_->config, kNumBlocks, kBlockSize);
    EngineOptions options{64, 4};
    options.isa = GetParam().isa;
    options.num_threads = GetParam().threads;
    options.parallel_threshold = 1;
    Engine engine(model_->config, model_->weights, &pool, options);
    while (true) {
      StepPlan plan;
      plan.mode = GetParam().mode;
      std::vector<GreedySeq*> running;
      for (GreedySeq* s : seqs) {
        if (s->done()) continue;
        plan.seqs.push_back(s->Next());
        running.push_back(s);
      }
      if (running.empty()) return;
      engine.Step(plan);
      for (size_t i = 0; i < running.size(); i++) {
        running[i]->Advance(plan.seqs[i].want_logits ? engine.Logits(static_cast<int>(i))
                                                     : std::span<float>());
      }
    }
  }

  std::unique_ptr<LlamaModel> model_;
  std::vector<Golden> goldens_;
};

TEST_P(EngineGoldenTest, MatchesRunCTokenByToken) {
  for (const Golden& g : goldens_) {
    GreedySeq seq(g, 1, Blocks(40, -3));
    RunBatched({&seq});
    EXPECT_EQ(seq.tokens(), g.token_ids) << "prompt \"" << g.prompt << "\"";
  }
}

TEST_P(EngineGoldenTest, MatchesRunCWithThePromptPrefilledInOneChunk) {
  for (const Golden& g : goldens_) {
    GreedySeq seq(g, 1000, Blocks(7, 4));
    RunBatched({&seq});
    EXPECT_EQ(seq.tokens(), g.token_ids) << "prompt \"" << g.prompt << "\"";
  }
}

TEST_P(EngineGoldenTest, MatchesRunCForTwoSequencesBatchedInTheSameSteps) {
  for (size_t i = 0; i < goldens_.size(); i++) {
    const Golden& a = goldens_[i];
    const Golden& b = goldens_[(i + 1) % goldens_.size()];
    GreedySeq seq_a(a, 1000, Blocks(0, 2));  // even blocks, prompt in one chunk
    GreedySeq seq_b(b, 2, Blocks(51, -2));   // odd blocks, prompt two tokens per step
    RunBatched({&seq_a, &seq_b});
    EXPECT_EQ(seq_a.tokens(), a.token_ids)
        << "prompt \"" << a.prompt << "\" beside \"" << b.prompt << "\"";
    EXPECT_EQ(seq_b.tokens(), b.token_ids)
        << "prompt \"" << b.prompt << "\" beside \"" << a.prompt << "\"";
  }
}

INSTANTIATE_TEST_SUITE_P(
    KernelsAndPaths, EngineGoldenTest,
    ::testing::Values(GoldenParam{kernels::Isa::kRef, kernels::ExecMode::kDeterministic, 1},
                      GoldenParam{kernels::Isa::kBest, kernels::ExecMode::kDeterministic, 1},
                      GoldenParam{kernels::Isa::kBest, kernels::ExecMode::kDeterministic, 2},
                      GoldenParam{kernels::Isa::kBest, kernels::ExecMode::kParallel, 1},
                      GoldenParam{kernels::Isa::kBest, kernels::ExecMode::kParallel, 2}),
    [](const ::testing::TestParamInfo<GoldenParam>& info) {
      return std::string(kernels::IsaName(info.param.isa)) +
             (info.param.mode == kernels::ExecMode::kDeterministic ? "Deterministic" : "Parallel") +
             std::to_string(info.param.threads) + "Threads";
    });

}  // namespace
}  // namespace smallmind::worker

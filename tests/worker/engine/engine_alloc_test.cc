// Counts heap allocations made during Engine::Step and during whole EngineLoop iterations
// (commands, schedule, engine step, sampling, detokenizing, output published and taken): a steady
// decode step must make none (DESIGN §4). This binary replaces the global operator new to count;
// the counter is the only global here.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "shared/json_schema.h"
#include "tests/worker/engine/moe_models.h"
#include "tests/worker/engine/test_models.h"
#include "worker/engine/engine.h"
#include "worker/engine/engine_loop.h"
#include "worker/modelgen/builtin_tiny.h"
#include "worker/sample/json_constraint.h"
#include "worker/sample/token_picker.h"
#include "worker/tokenizer/spm_tokenizer.h"
#include "worker/tokenizer/token_bytes.h"

namespace {
std::atomic<long> g_allocations{0};  // NOLINT: the counter a replaced operator new needs
}  // namespace

void* operator new(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace smallmind::worker {
namespace {

// Prefill then 35 decode steps of two sequences, on `threads` threads in `mode`: returns the heap
// allocations made inside those steps.
long AllocationsInSteps(const LlamaModel& model, int threads, kernels::ExecMode mode) {
  KvPool pool(model.config, 16, 16);
  EngineOptions options{32, 2};
  options.num_threads = threads;
  options.parallel_threshold = 1;
  Engine engine(model.config, model.weights, &pool, options);
  const std::vector<TokenId> prompt = {1, 40, 41, 42, 43};
  const std::vector<int32_t> blocks_a = {0, 1, 2}, blocks_b = {3, 4, 5};
  std::vector<TokenId> next = {7, 8};

  StepPlan plan;  // built before counting: its vector is the scheduler's, reused every step
  plan.seqs.reserve(2);
  plan.mode = mode;
  const long before = g_allocations.load();
  plan.seqs.push_back(SeqStep{prompt, 0, blocks_a, true});
  engine.Step(plan);
  for (int pos = 5; pos < 40; pos++) {
    plan.seqs.clear();
    plan.seqs.push_back(SeqStep{std::span<const TokenId>(next).subspan(0, 1), pos, blocks_a, true});
    plan.seqs.push_back(
        SeqStep{std::span<const TokenId>(next).subspan(1, 1), pos - 5, blocks_b, true});
    engine.Step(plan);
    next[0] = static_cast<TokenId>(3 + static_cast<int>(engine.Logits(0)[0] > 0));
  }
  return g_allocations.load() - before;
}

TEST(EngineAllocTest, StepMakesNoHeapAllocationForPrefillOrDecode) {
  const long probe = g_allocations.load();
  int* volatile canary = new int(1);
  delete canary;
  ASSERT_EQ(g_allocations.load() - probe, 1) << "the replaced operator new is not in effect";

  const LlamaModel model = MakeBuiltinTinyModel();
  for (int threads : {1, 3}) {
    for (kernels::ExecMode mode :
         {kernels::ExecMode::kDeterministic, kernels::ExecMode::kParallel}) {
      EXPECT_EQ(AllocationsInSteps(model, threads, mode), 0)
          << threads << " threads, mode " << static_cast<int>(mode);
    }
  }
}

TEST(EngineAllocTest, QuantizedModelStepsMakeNoHeapAllocation) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.config.vocab_size = 259;
  spec.matrix_type = kernels::DType::kQ4_0;
  spec.embedding_type = kernels::DType::kQ8_0;
  const LlamaModel model = testing::MakeRandomModel(spec);
  EXPECT_EQ(AllocationsInSteps(model, 2, kernels::ExecMode::kParallel), 0);
}

// Mixtures of experts (docs/moe.md): routing, grouping by expert, the expert matmuls and
// qwen2moe's shared expert use only the scratch planned in the Activations.
TEST(EngineAllocTest, MixtureOfExpertsStepsMakeNoHeapAllocation) {
  for (const char* arch : {"qwen3moe", "qwen2moe"}) {
    for (kernels::DType type : {kernels::DType::kF32, kernels::DType::kQ8_0}) {
      const LlamaModel model = testing::MakeMoeModel(arch, type);
      for (kernels::ExecMode mode :
           {kernels::ExecMode::kDeterministic, kernels::ExecMode::kParallel}) {
        EXPECT_EQ(AllocationsInSteps(model, 2, mode), 0) << arch << " " << static_cast<int>(type);
      }
    }
  }
}

// Three sequences decoding through the whole loop (sampled, greedy, with logprobs and stop
// strings), the output taken every step as the pump does: once every buffer has grown, a loop
// iteration makes no heap allocation.
TEST(EngineAllocTest, LoopIterationsOfSteadyDecodeMakeNoHeapAllocation) {
  const LlamaModel model = MakeBuiltinTinyModel();
  const std::unique_ptr<SpmTokenizer> tokenizer = MakeByteLevelTokenizer();
  SchedulerOptions options;
  options.max_step_tokens = 64;
  options.max_seqs = 4;
  KvPool kv(model.config, 32, 16);
  BlockPool blocks(32);
  Engine engine(model.config, model.weights, &kv, EngineOptions{64, 4});
  Scheduler scheduler(options, &blocks, 16);
  CommandQueue commands;
  OutputQueue outputs;
  SchedulerStats stats;
  EngineLoop loop(&scheduler, &engine, &commands, &outputs, &stats);
  for (uint64_t id = 1; id <= 3; ++id) {
    SequenceRequest req;
    req.prompt = tokenizer->Encode("steady " + std::to_string(id), true);
    req.sampling.temperature = id == 2 ? 0.0f : 0.8f;
    req.sampling.seed = id;
    req.sampling.logprobs = id == 3 ? 4 : 0;
    req.stopping.max_new_tokens = 120;
    req.stopping.eos_id = -1;
    req.stopping.stop = {"zq", "\n\n"};
    commands.Push(SubmitCommand{std::make_unique<Sequence>(id, std::move(req), *tokenizer,
                                                           model.config.vocab_size, nullptr)});
  }
  StepOutput taken;  // the pump's buffer
  auto iterate = [&] {
    loop.RunOnce();
    outputs.TryTake(&taken);
    return static_cast<long>(taken.events().size());
  };
  for (int i = 0; i < 40; ++i) iterate();  // prefill and warm-up: buffers reach their size
  const long before = g_allocations.load();
  long events = 0;
  for (int i = 0; i < 40; ++i) events += iterate();
  const long allocations = g_allocations.load() - before;
  ASSERT_GT(events, 100) << "the sequences must still be decoding while counted";
  EXPECT_EQ(allocations, 0) << "over 40 loop iterations";
}

// The JSON output constraint's share of a step (the mask before the draw, the automaton fed the
// token after it): no heap allocation either. Constrained picks (the mask, the sampler, the
// automaton fed each token, the stop checks) allocate nothing, with any object and under a
// schema (key and enum matching, array counts, anyOf) alike; whenever an object closes the next
// picks start another with a fresh picker, built before counting.
void ExpectConstrainedDrawsAllocateNothing(std::shared_ptr<const shared::JsonSchema> schema) {
  const std::unique_ptr<SpmTokenizer> tokenizer = MakeByteLevelTokenizer();
  const TokenBytes token_bytes(*tokenizer);
  PickerOptions options;
  options.sampling.temperature = 1.0f;
  options.sampling.seed = 3;
  options.stopping.max_new_tokens = 400;
  options.json_vocab = &token_bytes;
  options.json_schema = schema;
  const std::vector<TokenId> prompt = tokenizer->Encode("json", true);
  const int vocab = tokenizer->vocab_size();
  constexpr int kPickers = 64;
  std::vector<std::unique_ptr<TokenPicker>> pickers;
  for (int i = 0; i < kPickers; i++) {
    pickers.push_back(std::make_unique<TokenPicker>(options, prompt, *tokenizer, vocab));
  }
  std::vector<float> logits(static_cast<size_t>(vocab));
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  int objects = 0;
  long before = 0;
  for (int step = 0; step < 400; step++) {
    if (step == 20) before = g_allocations.load();  // after the first draws sized every buffer
    for (float& l : logits) l = normal(rng);
    const Pick pick = pickers[objects]->Next(logits);
    ASSERT_GE(pick.token, 0) << "some token continues the object";
    if (pick.reason == FinishReason::kStop) {  // the object closed: the next tokens start another
      ++objects;
      ASSERT_LT(objects, kPickers);
    }
  }
  EXPECT_EQ(g_allocations.load() - before, 0) << "over 380 constrained draws";
  EXPECT_GE(objects, 2);
}

TEST(EngineAllocTest, JsonConstrainedDrawsMakeNoHeapAllocation) {
  ExpectConstrainedDrawsAllocateNothing(nullptr);
  const auto schema = shared::JsonSchema::Compile(
      R"({"type": "object", "properties": {"k": {"enum": ["a", "bc", 1, null]},
          "n": {"type": "integer"}, "v": {"type": "array", "items": {"anyOf": [{"type": "null"},
          {"type": "boolean"}]}, "maxItems": 3}}, "required": ["k", "n"]})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  ExpectConstrainedDrawsAllocateNothing(*schema);
}

}  // namespace
}  // namespace smallmind::worker

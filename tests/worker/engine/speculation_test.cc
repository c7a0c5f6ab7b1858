// Speculative decoding with the n-gram drafter on the real engine, deterministic path: a request
// gives exactly the tokens, and bitwise the logits, it gives without speculation — greedy and
// seeded sampling, with repetition penalties, alone and inside a busy batch with prefill chunks
// beside it, on several threads. Rejected drafts leave nothing behind: every block is returned,
// and the prefix cache serves a later request exactly as it would have without speculation.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "kernels/dispatch.h"
#include "tests/worker/engine/step_driver.h"
#include "tests/worker/engine/test_models.h"
#include "worker/modelgen/builtin_tiny.h"
#include "worker/tokenizer/spm_tokenizer.h"
#include "worker/tokenizer/token_bytes.h"

namespace smallmind::worker {
namespace {

using testing::StepDriver;
using testing::StepDriverOptions;

struct Scripted {
  uint64_t id;
  int motif;  // prompt: a motif of this many tokens repeated, so lookups find matches
  int max_new;
  float temperature;  // 0: greedy
  float repetition_penalty;
  int arrive_step;  // in the batched run
};

const std::vector<Scripted>& Script() {
  static const std::vector<Scripted> script = {
      {1, 5, 48, 0.0f, 1.0f, 0}, {2, 7, 40, 0.8f, 1.0f, 0}, {3, 3, 36, 0.0f, 1.1f, 2},
      {4, 6, 44, 0.5f, 1.0f, 4}, {5, 4, 30, 0.0f, 1.0f, 7}, {6, 5, 40, 1.2f, 1.3f, 3},
      {7, 4, 40, 0.0f, 1.5f, 5},
  };
  return script;
}

SequenceRequest Request(const Scripted& s, int vocab) {
  SequenceRequest req;
  for (int rep = 0; rep < 4; ++rep) {
    for (int i = 0; i < s.motif; ++i) {
      req.prompt.push_back(1 + static_cast<TokenId>((i * 37 + s.id * 101) % (vocab - 1)));
    }
  }
  req.prompt.push_back(1 + static_cast<TokenId>((s.id * 11) % (vocab - 1)));
  req.mode = kernels::ExecMode::kDeterministic;
  req.sampling.temperature = s.temperature;
  req.sampling.seed = 500 + s.id;
  req.sampling.repetition_penalty = s.repetition_penalty;
  req.stopping.max_new_tokens = s.max_new;
  req.stopping.eos_id = -1;
  return req;
}

SchedulerOptions::Speculation Ngram(int min_match) {
  SchedulerOptions::Speculation spec;
  spec.ngram = min_match;
  spec.draft.max_draft = 6;
  spec.max_batch = 8;
  return spec;
}

void ExpectSameLogits(const std::vector<std::vector<float>>& got,
                      const std::vector<std::vector<float>>& want, uint64_t id) {
  ASSERT_EQ(got.size(), want.size()) << "sequence " << id;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size());
    ASSERT_EQ(0, std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)))
        << "sequence " << id << ": logits of token " << i << " differ";
  }
}

struct Reference {
  std::map<uint64_t, std::vector<TokenId>> ids;
  std::map<uint64_t, std::vector<std::vector<float>>> logits;
};

// Each request alone, one thread, no speculation.
Reference Plain(const LlamaModel& model, kernels::Isa isa = kernels::Isa::kBest) {
  Reference ref;
  for (const Scripted& s : Script()) {
    StepDriver solo(model, StepDriverOptions{.threads = 1, .isa = isa});
    solo.Add(s.id, Request(s, model.config.vocab_size));
    solo.RunToIdle();
    EXPECT_EQ(solo.stream(s.id).finish.reason, FinishReason::kLength);
    EXPECT_EQ(solo.stream(s.id).finish.draft_tokens, 0);
    ref.ids[s.id] = solo.stream(s.id).ids;
    ref.logits[s.id] = solo.logits(s.id);
  }
  return ref;
}

void ExpectSpeculationChangesNothing(const LlamaModel& model, bool parallel_sampling) {
  const Reference ref = Plain(model);
  int drafted = 0;
  int accepted = 0;
  // Alone with speculation.
  for (const Scripted& s : Script()) {
    StepDriver solo(model, StepDriverOptions{.threads = 2, .speculation = Ngram(2)});
    solo.Add(s.id, Request(s, model.config.vocab_size));
    solo.RunToIdle();
    const testing::RecordedStream& got = solo.stream(s.id);
    EXPECT_EQ(got.finish.reason, FinishReason::kLength) << "sequence " << s.id;
    EXPECT_EQ(got.ids, ref.ids.at(s.id)) << "sequence " << s.id;
    ExpectSameLogits(solo.logits(s.id), ref.logits.at(s.id), s.id);
    EXPECT_EQ(got.finish.completion_tokens, s.max_new);
    EXPECT_LE(got.finish.accepted_draft_tokens, got.finish.draft_tokens);
    drafted += got.finish.draft_tokens;
    accepted += got.finish.accepted_draft_tokens;
    EXPECT_EQ(solo.blocks().num_used(), 0) << "sequence " << s.id << " left blocks referenced";
  }
  EXPECT_GT(accepted, 0) << "no draft was accepted: the test proves nothing";
  EXPECT_GT(drafted, accepted) << "no draft was rejected: rollback untested";

  // In a busy batch: three threads, a 16-token step budget, arrivals mid-decode.
  StepDriverOptions o{.threads = 3,
                      .max_step_tokens = 16,
                      .parallel_sampling = parallel_sampling,
                      .speculation = Ngram(2)};
  StepDriver batch(model, o);
  int batched_drafts = 0;
  for (int step = 0; step < 2000; ++step) {
    for (const Scripted& s : Script()) {
      if (s.arrive_step == step) batch.Add(s.id, Request(s, model.config.vocab_size));
    }
    if (!batch.Step() && step > Script().back().arrive_step) break;
  }
  EXPECT_GE(batch.max_batch(), 3);
  EXPECT_EQ(batch.blocks().num_used(), 0);
  for (const Scripted& s : Script()) {
    const testing::RecordedStream& got = batch.stream(s.id);
    EXPECT_EQ(got.finishes, 1);
    EXPECT_EQ(got.ids, ref.ids.at(s.id)) << "sequence " << s.id;
    ExpectSameLogits(batch.logits(s.id), ref.logits.at(s.id), s.id);
    batched_drafts += got.finish.draft_tokens;
  }
  EXPECT_GT(batched_drafts, 0) << "nothing was drafted inside the batch";
}

TEST(SpeculationTest, NgramDraftsGiveThePlainTokensAndLogitsAloneAndBatched) {
  ExpectSpeculationChangesNothing(MakeBuiltinTinyModel(), false);
}

TEST(SpeculationTest, TheSameWithParallelSampling) {
  ExpectSpeculationChangesNothing(MakeBuiltinTinyModel(), true);
}

TEST(SpeculationTest, TheSameOnAQuantizedModel) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.matrix_type = kernels::DType::kQ8_0;
  ExpectSpeculationChangesNothing(testing::MakeRandomModel(spec), false);
}

// Every kernel set this CPU runs: alone on two threads, speculation gives that set's plain bits.
TEST(SpeculationTest, EveryIsaGivesItsPlainTokensAndLogits) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.matrix_type = kernels::DType::kQ8_0;
  const LlamaModel model = testing::MakeRandomModel(spec);
  int isas = 0;
  for (kernels::Isa isa : kernels::kAllIsas) {
    if (isa == kernels::Isa::kBest || !kernels::CpuSupports(isa)) continue;
    ++isas;
    const Reference ref = Plain(model, isa);
    for (const Scripted& s : Script()) {
      StepDriver d(model, StepDriverOptions{.threads = 2, .speculation = Ngram(2), .isa = isa});
      d.Add(s.id, Request(s, model.config.vocab_size));
      d.RunToIdle();
      EXPECT_EQ(d.stream(s.id).ids, ref.ids.at(s.id))
          << kernels::IsaName(isa) << " sequence " << s.id;
      ExpectSameLogits(d.logits(s.id), ref.logits.at(s.id), s.id);
    }
  }
  EXPECT_GE(isas, 1);
}

TEST(SpeculationTest, ARequestWithSpeculationOffDraftsNothing) {
  const LlamaModel model = MakeBuiltinTinyModel();
  StepDriver d(model, StepDriverOptions{.speculation = Ngram(2)});
  SequenceRequest req = Request(Script()[0], model.config.vocab_size);
  req.speculate = false;
  d.Add(1, std::move(req));
  d.RunToIdle();
  EXPECT_EQ(d.stream(1).finish.draft_tokens, 0);
  EXPECT_EQ(d.stream(1).ids.size(), static_cast<size_t>(Script()[0].max_new));
}

// Rollback: after speculating requests, the pool holds exactly the blocks (and the cached
// prefixes) plain decoding leaves, and a request continuing one of them reuses the same cached
// positions and computes the same logits.
TEST(SpeculationTest, RejectedDraftsLeaveThePrefixCacheAsPlainDecodingDoes) {
  const LlamaModel model = MakeBuiltinTinyModel();
  const Scripted& first = Script()[5];  // sampled with a penalty: drafts fail
  struct Run {
    int cached_blocks;
    int cached_prompt_tokens;
    std::vector<TokenId> ids;
    std::vector<std::vector<float>> logits;
  };
  const auto run = [&](bool speculate) {
    StepDriver d(
        model, StepDriverOptions{.num_blocks = 64, .speculation = speculate ? Ngram(2) : Ngram(0)});
    const SequenceRequest a = Request(first, model.config.vocab_size);
    d.Add(1, a);
    d.RunToIdle();
    if (speculate) {
      EXPECT_GT(d.stream(1).finish.draft_tokens, d.stream(1).finish.accepted_draft_tokens);
    }
    Run r{d.blocks().num_cached(), 0, {}, {}};
    // The continuation: the first request's prompt and output, then more.
    SequenceRequest b = a;
    b.prompt.insert(b.prompt.end(), d.stream(1).ids.begin(), d.stream(1).ids.end());
    b.stopping.max_new_tokens = 12;
    d.Add(2, std::move(b));
    d.RunToIdle();
    r.cached_prompt_tokens = d.stream(2).finish.cached_prompt_tokens;
    r.ids = d.stream(2).ids;
    r.logits = d.logits(2);
    EXPECT_EQ(d.blocks().num_used(), 0);
    return r;
  };
  const Run plain = run(false);
  const Run spec = run(true);
  EXPECT_GT(plain.cached_prompt_tokens, 0);
  EXPECT_EQ(spec.cached_blocks, plain.cached_blocks);
  EXPECT_EQ(spec.cached_prompt_tokens, plain.cached_prompt_tokens);
  EXPECT_EQ(spec.ids, plain.ids);
  ExpectSameLogits(spec.logits, plain.logits, 2);
}

// JSON-constrained output (response_format JSON_OBJECT): every verified position is masked by the
// object's prefix as it stood after the tokens before it, so a draft that breaks the object is
// rejected where plain decoding would never have drawn it, and the rest is accepted: the same
// tokens and logits as without speculation, greedy and seeded, alone and side by side.
TEST(SpeculationTest, JsonConstrainedRequestsGiveThePlainTokensAndLogits) {
  const LlamaModel model = MakeBuiltinTinyModel();
  const std::unique_ptr<SpmTokenizer> tokenizer = MakeByteLevelTokenizer();
  const TokenBytes token_bytes(*tokenizer);
  const auto request = [&](uint64_t id, float temperature) {
    SequenceRequest req;
    // A repetitive JSON prompt: the n-gram drafter finds matches in it and in the output.
    const std::string motif =
        id == 3 ? R"({"key": "value", "key": "value"} )" : R"({"a": [1, 1, 1]} )";
    req.prompt = tokenizer->Encode(motif + motif + motif, true);
    req.mode = kernels::ExecMode::kDeterministic;
    req.sampling.temperature = temperature;
    req.sampling.seed = 40 + id;
    req.stopping.max_new_tokens = 48;
    req.stopping.eos_id = -1;
    req.json_vocab = &token_bytes;
    return req;
  };
  const std::vector<std::pair<uint64_t, float>> runs = {{1, 0.0f}, {2, 1.5f}, {3, 0.0f}, {4, 1.0f}};
  std::map<uint64_t, std::vector<TokenId>> ids;
  std::map<uint64_t, std::vector<std::vector<float>>> logits;
  for (const auto& [id, temperature] : runs) {
    StepDriver plain(model, StepDriverOptions{.threads = 1});
    plain.Add(id, request(id, temperature));
    plain.RunToIdle();
    ASSERT_FALSE(plain.stream(id).ids.empty());
    ids[id] = plain.stream(id).ids;
    logits[id] = plain.logits(id);
  }
  int drafted = 0;
  int accepted = 0;
  StepDriver batch(model, StepDriverOptions{.threads = 2, .speculation = Ngram(2)});
  for (const auto& [id, temperature] : runs) batch.Add(id, request(id, temperature));
  batch.RunToIdle();
  for (const auto& [id, temperature] : runs) {
    const testing::RecordedStream& got = batch.stream(id);
    EXPECT_EQ(got.ids, ids.at(id)) << "sequence " << id;
    ExpectSameLogits(batch.logits(id), logits.at(id), id);
    drafted += got.finish.draft_tokens;
    accepted += got.finish.accepted_draft_tokens;
  }
  EXPECT_GT(accepted, 0) << "no draft was accepted: the test proves nothing";
  EXPECT_GT(drafted, accepted) << "no draft was rejected: the mask on drafts is untested";
  EXPECT_EQ(batch.blocks().num_used(), 0);
}

}  // namespace
}  // namespace smallmind::worker

#include "worker/sample/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <new>
#include <numeric>
#include <random>
#include <set>
#include <vector>

// Counts heap allocations on this thread so a test can assert that Sample() makes none.
namespace {
thread_local int64_t allocations_on_this_thread = 0;
}  // namespace

// GCC flags free() on memory from a replaced operator new once both are inlined; they do match.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  ++allocations_on_this_thread;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace smallmind::worker {
namespace {

// p = [0.5, 0.3, 0.15, 0.05]
std::vector<float> FourWayLogits() {
  return {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
}

// Frequencies of `draws` consecutive draws of one sampler (fixed seed).
std::vector<double> Frequencies(const SamplingParams& params, const std::vector<float>& logits,
                                int draws) {
  Sampler sampler(params, static_cast<int>(logits.size()));
  std::vector<double> freq(logits.size(), 0.0);
  for (int i = 0; i < draws; ++i) {
    std::vector<float> l = logits;
    TokenId id = sampler.Sample(l);
    sampler.Accept(id);
    freq[id] += 1.0 / draws;
  }
  return freq;
}

// Tolerance 0.015 is > 4 standard deviations of a frequency over 20000 draws.
void ExpectFrequencies(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (want[i] == 0.0) {
      EXPECT_EQ(got[i], 0.0) << "token " << i << " must never be drawn";
    } else {
      EXPECT_NEAR(got[i], want[i], 0.015) << "token " << i;
    }
  }
}

SamplingParams Params(float temperature, uint64_t seed = 17) {
  SamplingParams p;
  p.temperature = temperature;
  p.seed = seed;
  return p;
}

TEST(SamplerTest, GreedyIsArgmaxAndTheLowestIdWinsATie) {
  Sampler sampler(Params(0.0f), 5);
  std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 2.9f};
  EXPECT_EQ(sampler.Sample(logits), 1);
  std::vector<float> negative = {-5.0f, -1.0f, -1.0f, -3.0f, -9.0f};
  EXPECT_EQ(sampler.Sample(negative), 1);
}

TEST(SamplerTest, DenormalTemperatureStillPicksTheBestTokenWithoutNaN) {
  Sampler sampler(Params(1e-40f), 4);
  for (int i = 0; i < 50; ++i) {
    std::vector<float> logits = {0.5f, 2.0f, 1.999f, -1.0f};
    ASSERT_EQ(sampler.Sample(logits), 1);
    sampler.Accept(1);
  }
}

TEST(SamplerTest, SameSeedGivesTheSameDrawsAndOtherSeedsDiffer) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(300);
  for (float& l : logits) l = normal(rng);
  auto run = [&](uint64_t seed) {
    Sampler sampler(Params(1.0f, seed), 300);
    std::vector<TokenId> ids;
    for (int i = 0; i < 100; ++i) {
      std::vector<float> l = logits;
      ids.push_back(sampler.Sample(l));
      sampler.Accept(ids.back());
    }
    return ids;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST(SamplerTest, DrawIndexAdvancesOnlyOnAccept) {
  Sampler sampler(Params(1.0f), 50);
  std::vector<float> logits(50, 0.0f);
  std::vector<float> l1 = logits, l2 = logits;
  const TokenId first = sampler.Sample(l1);
  EXPECT_EQ(sampler.Sample(l2), first);
  EXPECT_EQ(sampler.num_generated(), 0);
  std::set<TokenId> seen;
  for (int i = 0; i < 20; ++i) {
    std::vector<float> l = logits;
    TokenId id = sampler.Sample(l);
    seen.insert(id);
    sampler.Accept(id);
  }
  EXPECT_EQ(sampler.num_generated(), 20);
  EXPECT_GT(seen.size(), 5u);  // uniform over 50: 20 draws are not all the same token
}

TEST(SamplerTest, TemperatureOneFollowsTheSoftmax) {
  ExpectFrequencies(Frequencies(Params(1.0f), FourWayLogits(), 20000), {0.5, 0.3, 0.15, 0.05});
}

TEST(SamplerTest, LowTemperatureSharpensTheDistribution) {
  // p^(1/T) with T = 0.5, normalised: [0.25, 0.09, 0.0225, 0.0025] / 0.365.
  ExpectFrequencies(Frequencies(Params(0.5f), FourWayLogits(), 20000),
                    {0.25 / 0.365, 0.09 / 0.365, 0.0225 / 0.365, 0.0025 / 0.365});
}

TEST(SamplerTest, TopKKeepsTheKMostLikelyTokens) {
  SamplingParams p = Params(1.0f);
  p.top_k = 2;
  ExpectFrequencies(Frequencies(p, FourWayLogits(), 20000), {0.625, 0.375, 0.0, 0.0});
}

TEST(SamplerTest, TopKAndTopPBreakTiesTowardsLowerIds) {
  SamplingParams k = Params(1.0f);
  k.top_k = 3;
  SamplingParams p = Params(1.0f);
  p.top_p = 0.25f;  // ten equal tokens: three reach the mass
  for (const SamplingParams& params : {k, p}) {
    std::vector<double> freq = Frequencies(params, std::vector<float>(10, 1.0f), 3000);
    for (int i = 3; i < 10; ++i) EXPECT_EQ(freq[i], 0.0) << i;
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(freq[i], 1.0 / 3, 0.04) << i;
  }
}

TEST(SamplerTest, TopPKeepsTheSmallestPrefixReachingTheMass) {
  SamplingParams p = Params(1.0f);
  p.top_p = 0.7f;  // 0.5 < 0.7 <= 0.5 + 0.3
  ExpectFrequencies(Frequencies(p, FourWayLogits(), 20000), {0.625, 0.375, 0.0, 0.0});
  p.top_p = 0.45f;
  ExpectFrequencies(Frequencies(p, FourWayLogits(), 2000), {1.0, 0.0, 0.0, 0.0});
  p.top_p = 0.9f;  // 0.8 < 0.9 <= 0.95
  ExpectFrequencies(Frequencies(p, FourWayLogits(), 20000),
                    {0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0.0});
}

TEST(SamplerTest, MinPDropsTokensBelowAFractionOfTheBest) {
  SamplingParams p = Params(1.0f);
  p.min_p = 0.4f;  // threshold 0.2: keeps 0.5 and 0.3
  ExpectFrequencies(Frequencies(p, FourWayLogits(), 20000), {0.625, 0.375, 0.0, 0.0});
}

TEST(SamplerTest, TruncationsApplyInOrderTopKThenTopPThenMinP) {
  SamplingParams p = Params(1.0f);
  p.top_k = 3;     // [0.5, 0.3, 0.15] renormalised: [0.526, 0.316, 0.158]
  p.top_p = 0.8f;  // 0.526 < 0.8 <= 0.842: keeps two
  ExpectFrequencies(Frequencies(p, FourWayLogits(), 20000), {0.625, 0.375, 0.0, 0.0});
  p.top_p = 1.0f;
  p.min_p = 0.5f;  // after top-k, 0.3/0.5 >= 0.5 but 0.15/0.5 < 0.5
  ExpectFrequencies(Frequencies(p, FourWayLogits(), 20000), {0.625, 0.375, 0.0, 0.0});
}

// The set a brute-force full sort allows, for a large vocabulary where the fast paths
// (bounded heap, nth_element, growing top-p selection) are taken.
std::set<TokenId> BruteForceAllowed(const std::vector<float>& logits, int top_k, double top_p) {
  std::vector<TokenId> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](TokenId a, TokenId b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  if (top_k > 0) order.resize(top_k);
  double total = 0;
  for (TokenId id : order) total += std::exp(static_cast<double>(logits[id] - logits[order[0]]));
  std::set<TokenId> allowed;
  double acc = 0;
  for (TokenId id : order) {
    allowed.insert(id);
    acc += std::exp(static_cast<double>(logits[id] - logits[order[0]]));
    if (acc >= top_p * total) break;
  }
  return allowed;
}

TEST(SamplerTest, LargeVocabularyTruncationsMatchAFullSort) {
  constexpr int kVocab = 10000;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 2.5f);
  std::vector<float> logits(kVocab);
  for (float& l : logits) l = normal(rng);
  struct Case {
    int top_k;
    float top_p;
  };
  for (Case c :
       {Case{40, 1.0f}, Case{5000, 1.0f}, Case{0, 0.5f}, Case{0, 0.95f}, Case{2000, 0.6f}}) {
    SamplingParams p = Params(1.0f, 77);
    p.top_k = c.top_k;
    p.top_p = c.top_p;
    const std::set<TokenId> allowed = BruteForceAllowed(logits, c.top_k, c.top_p);
    Sampler sampler(p, kVocab);
    std::set<TokenId> drawn;
    std::vector<float> l(kVocab);
    for (int i = 0; i < 300; ++i) {
      l = logits;
      TokenId id = sampler.Sample(l);
      sampler.Accept(id);
      ASSERT_TRUE(allowed.count(id)) << "top_k " << c.top_k << " top_p " << c.top_p;
      drawn.insert(id);
    }
    EXPECT_GT(drawn.size(), std::min<size_t>(allowed.size(), 40) / 2);
  }
}

// A peaked distribution over a large vocabulary: one best token, three tied ones, and 49996
// tokens of weight e^-14 that top-p's histogram skips without visiting. The cut through the tie
// keeps the lowest ids.
TEST(SamplerTest, TopPOverALargeVocabularyCutsATieByLowestId) {
  constexpr int kVocab = 50000;
  std::vector<float> logits(kVocab, -8.0f);
  logits[10] = 6.0f;
  logits[100] = logits[200] = logits[300] = 5.0f;
  logits[7] = std::nanf("");  // counts as -inf
  struct Case {
    float top_p;
    std::set<TokenId> kept;  // mass: token 10 is 1, each tie e^-1, the rest 0.042 together
  };
  for (const Case& c :
       {Case{0.5f, {10, 100}}, Case{0.7f, {10, 100, 200}}, Case{0.9f, {10, 100, 200, 300}}}) {
    SamplingParams p = Params(1.0f, 3);
    p.top_p = c.top_p;
    Sampler sampler(p, kVocab);
    std::set<TokenId> drawn;
    std::vector<float> l(kVocab);
    for (int i = 0; i < 400; ++i) {
      l = logits;
      TokenId id = sampler.Sample(l);
      sampler.Accept(id);
      drawn.insert(id);
    }
    EXPECT_EQ(drawn, c.kept) << "top_p " << c.top_p;
  }
}

TEST(SamplerTest, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  SamplingParams p = Params(0.0f);
  p.repetition_penalty = 2.0f;
  Sampler sampler(p, 4);
  std::vector<TokenId> prompt = {0, 1, 0};
  sampler.AddPromptTokens(prompt);
  std::vector<float> logits = {2.0f, -2.0f, 1.0f, 0.5f};
  sampler.Sample(logits);
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -4.0f, 1.0f, 0.5f}));
}

TEST(SamplerTest, PresenceAndFrequencyPenaltiesCountOnlyGeneratedTokens) {
  SamplingParams p = Params(0.0f);
  p.presence_penalty = 0.5f;
  p.frequency_penalty = 0.25f;
  p.repetition_penalty = 2.0f;
  Sampler sampler(p, 4);
  std::vector<TokenId> prompt = {0};
  sampler.AddPromptTokens(prompt);
  sampler.Accept(2);
  sampler.Accept(2);
  sampler.Accept(3);
  std::vector<float> logits = {2.0f, 2.0f, 1.0f, -1.0f};
  EXPECT_EQ(sampler.Sample(logits), 1);
  // 0: prompt only, repetition 2/2; 1: untouched; 2: 1/2 - (0.5 + 2*0.25); 3: -1*2 - (0.5 + 0.25).
  EXPECT_EQ(logits, (std::vector<float>{1.0f, 2.0f, -0.5f, -2.75f}));
}

TEST(SamplerTest, LogprobsAreLogSoftmaxOfPenalisedLogitsBeforeTemperature) {
  SamplingParams p = Params(2.0f);
  p.logprobs = 3;
  p.top_k = 1;  // forces the choice so the chosen token is known
  Sampler sampler(p, 4);
  std::vector<float> logits = {1.0f, 2.0f, 3.0f, 3.0f};
  SampleLogprobs out;
  const TokenId id = sampler.Sample(logits, &out);
  EXPECT_EQ(id, 2);
  const double log_z = std::log(std::exp(1.0) + std::exp(2.0) + 2 * std::exp(3.0));
  EXPECT_EQ(out.chosen.id, 2);
  EXPECT_NEAR(out.chosen.logprob, 3.0 - log_z, 1e-5);
  ASSERT_EQ(out.n_top, 3);
  EXPECT_EQ(out.top[0].id, 2);  // tie with 3: the lower id first
  EXPECT_EQ(out.top[1].id, 3);
  EXPECT_EQ(out.top[2].id, 1);
  EXPECT_NEAR(out.top[2].logprob, 2.0 - log_z, 1e-5);

  SamplingParams all = Params(0.0f);
  all.logprobs = kMaxLogprobs;  // more than the vocabulary holds
  Sampler small(all, 4);
  std::vector<float> l2 = {1.0f, 2.0f, 3.0f, 3.0f};
  small.Sample(l2, &out);
  EXPECT_EQ(out.n_top, 4);
}

TEST(SamplerTest, LogitBiasIsAddedBeforePenaltiesAndSteersGreedyAndDraws) {
  SamplingParams p = Params(0.0f);
  p.repetition_penalty = 2.0f;
  p.logit_bias = {{0, -100.0f}, {2, 1.5f}};
  Sampler sampler(p, 4);
  std::vector<TokenId> prompt = {2};
  sampler.AddPromptTokens(prompt);
  std::vector<float> logits = {3.0f, 2.0f, 0.5f, 0.0f};
  // 0: 3 - 100 = -97 (not in the prompt: no penalty); 2: (0.5 + 1.5) / 2 = 1.
  EXPECT_EQ(sampler.Sample(logits), 1);
  EXPECT_EQ(logits, (std::vector<float>{-97.0f, 2.0f, 1.0f, 0.0f}));

  // A draw: -100 bans token 0 (the likeliest), +100 on token 3 makes it all but certain.
  SamplingParams ban = Params(1.0f);
  ban.logit_bias = {{0, -100.0f}};
  std::vector<double> freq = Frequencies(ban, FourWayLogits(), 20000);
  ExpectFrequencies(freq, {0.0, 0.6, 0.3, 0.1});
  SamplingParams force = Params(1.0f);
  force.logit_bias = {{3, 100.0f}};
  EXPECT_NEAR(Frequencies(force, FourWayLogits(), 2000)[3], 1.0, 1e-9);

  // Logprobs are those of the biased distribution.
  SamplingParams lp = Params(0.0f);
  lp.logprobs = 2;
  lp.logit_bias = {{1, 1.0f}};
  Sampler with_logprobs(lp, 3);
  std::vector<float> l3 = {1.0f, 1.0f, 0.0f};
  SampleLogprobs out;
  EXPECT_EQ(with_logprobs.Sample(l3, &out), 1);
  const double log_z = std::log(std::exp(1.0) + std::exp(2.0) + 1.0);
  EXPECT_NEAR(out.chosen.logprob, 2.0 - log_z, 1e-5);
  EXPECT_EQ(out.top[1].id, 0);
}

TEST(SamplerTest, ValidationNamesTheBadField) {
  auto message = [](auto mutate) {
    SamplingParams p;
    mutate(p);
    return ValidateSamplingParams(p).message();
  };
  EXPECT_TRUE(ValidateSamplingParams(SamplingParams{}).ok());
  EXPECT_NE(message([](SamplingParams& p) { p.top_p = 1.5f; }).find("sampling.top_p"),
            std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) { p.top_p = 0.0f; }).find("top_p"), std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) { p.temperature = -1; }).find("temperature"),
            std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) { p.temperature = NAN; }).find("temperature"),
            std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) { p.top_k = -1; }).find("top_k"), std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) { p.min_p = 2; }).find("min_p"), std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) { p.repetition_penalty = 0; }).find("repetition"),
            std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) { p.logprobs = 21; }).find("logprobs"),
            std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) { p.presence_penalty = INFINITY; }).find("presence"),
            std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) {
              p.logit_bias = {{3, NAN}};
            }).find("logit_bias[3]"),
            std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) {
              p.logit_bias = {{3, 1.0f}, {3, 2.0f}};
            }).find("distinct"),
            std::string::npos);
  EXPECT_NE(message([](SamplingParams& p) {
              p.logit_bias = {{-1, 1.0f}};
            }).find("logit_bias"),
            std::string::npos);
}

TEST(SamplerTest, SampleDoesNotAllocate) {
  constexpr int kVocab = 32000;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(kVocab);
  for (float& l : logits) l = normal(rng);
  std::vector<TokenId> prompt(100);
  for (TokenId& t : prompt) t = static_cast<TokenId>(rng() % kVocab);
  SamplingParams variants[4] = {Params(0.0f), Params(0.8f), Params(1.0f), Params(1.0f)};
  variants[1].top_k = 40;
  variants[1].top_p = 0.9f;
  variants[1].min_p = 0.05f;
  variants[1].repetition_penalty = 1.1f;
  variants[1].frequency_penalty = 0.2f;
  variants[1].presence_penalty = 0.1f;
  variants[1].logprobs = 5;
  variants[1].logit_bias = {{7, -100.0f}, {31999, 3.0f}};
  variants[2].top_p = 0.95f;
  variants[3].top_k = 3000;
  for (const SamplingParams& p : variants) {
    Sampler sampler(p, kVocab);
    sampler.AddPromptTokens(prompt);
    std::vector<float> l(kVocab);
    SampleLogprobs out;
    const int64_t before = allocations_on_this_thread;
    for (int step = 0; step < 20; ++step) {
      std::copy(logits.begin(), logits.end(), l.begin());
      sampler.Accept(sampler.Sample(l, &out));
    }
    EXPECT_EQ(allocations_on_this_thread - before, 0);
  }
}

}  // namespace
}  // namespace smallmind::worker

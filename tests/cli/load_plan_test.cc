#include "cli/load_plan.h"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace smallmind::cli {
namespace {

LoadPlanOptions TokenPrompts(CountRange lengths, uint32_t vocab = 512) {
  LoadPlanOptions o;
  o.prompt_tokens = lengths;
  o.vocab_size = vocab;
  o.max_tokens = {16, 16};
  o.seed = 7;
  return o;
}

TEST(LoadPlanTest, ParsesACountOrAnInclusiveRange) {
  auto one = ParseCountRange("--max-tokens", "64", 0, 1000);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->min, 64u);
  EXPECT_EQ(one->max, 64u);
  auto range = ParseCountRange("--prompt-tokens", "32:512", 1, 1000);
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(range->min, 32u);
  EXPECT_EQ(range->max, 512u);
}

TEST(LoadPlanTest, RefusesMalformedReversedOrOutOfBoundRangesNamingTheFlag) {
  for (const char* text : {"", "x", "5:", ":5", "1:2:3", "-1", "9:3", "0:5", "2000"}) {
    auto r = ParseCountRange("--prompt-tokens", text, 1, 1000);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), shared::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(r.status().message().find("--prompt-tokens"), std::string::npos)
        << r.status().message();
  }
}

TEST(LoadPlanTest, ParsesDurationsInSecondsMillisecondsMinutesAndHours) {
  const std::pair<const char*, double> cases[] = {
      {"90", 90}, {"90s", 90}, {"500ms", 0.5}, {"2m", 120}, {"1.5h", 5400}};
  for (const auto& [text, seconds] : cases) {
    auto d = ParseDuration("--duration", text);
    ASSERT_TRUE(d.ok()) << text << ": " << d.status().ToString();
    EXPECT_DOUBLE_EQ(d->count(), seconds) << text;
  }
  for (const char* text : {"", "m", "2x", "0", "-3s", "2 m", "inf", "nan"}) {
    auto d = ParseDuration("--duration", text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_NE(d.status().message().find("--duration"), std::string::npos);
  }
}

TEST(LoadPlanTest, NeedsExactlyOnePromptSourceAndAVocabularyForTokenPrompts) {
  LoadPlanOptions none;
  EXPECT_FALSE(LoadPlan::Make(none).ok());
  LoadPlanOptions both = TokenPrompts({4, 8});
  both.prompts = {"hello"};
  EXPECT_FALSE(LoadPlan::Make(both).ok());
  EXPECT_FALSE(LoadPlan::Make(TokenPrompts({4, 8}, /*vocab=*/3)).ok());
  LoadPlanOptions bad_fraction = TokenPrompts({4, 8});
  bad_fraction.cancel_fraction = 1.5;
  EXPECT_FALSE(LoadPlan::Make(bad_fraction).ok());
  EXPECT_TRUE(LoadPlan::Make(TokenPrompts({4, 8})).ok());
}

TEST(LoadPlanTest, TheSameIndexAlwaysGivesTheSameRequestAndSeedsDifferPerIndex) {
  LoadPlanOptions o = TokenPrompts({8, 64});
  o.base.mutable_sampling()->set_seed(100);
  auto plan = LoadPlan::Make(o);
  ASSERT_TRUE(plan.ok());
  for (uint64_t i : {0, 1, 17, 1000}) {
    const PlannedRequest a = plan->Request(i);
    const PlannedRequest b = plan->Request(i);
    EXPECT_EQ(a.request.SerializeAsString(), b.request.SerializeAsString()) << i;
    EXPECT_EQ(a.request.sampling().seed(), 100 + i);
  }
  EXPECT_NE(plan->Request(0).request.prompt_token_ids().SerializeAsString(),
            plan->Request(1).request.prompt_token_ids().SerializeAsString());
}

TEST(LoadPlanTest, TokenPromptLengthsAndMaxTokensCoverTheirRangesAndIdsAvoidSpecialTokens) {
  LoadPlanOptions o = TokenPrompts({32, 40}, /*vocab=*/16);
  o.max_tokens = {16, 20};
  auto plan = LoadPlan::Make(o);
  ASSERT_TRUE(plan.ok());
  std::set<int> lengths, max_tokens;
  std::set<uint32_t> ids;
  for (uint64_t i = 0; i < 2000; ++i) {
    const PlannedRequest p = plan->Request(i);
    EXPECT_FALSE(p.request.has_prompt_token_ids() && !p.request.prompt().empty());
    lengths.insert(p.request.prompt_token_ids().ids_size());
    max_tokens.insert(static_cast<int>(p.request.stopping().max_new_tokens()));
    for (uint32_t id : p.request.prompt_token_ids().ids()) ids.insert(id);
    EXPECT_EQ(p.cancel_after_tokens, 0u);
  }
  EXPECT_EQ(lengths, (std::set<int>{32, 33, 34, 35, 36, 37, 38, 39, 40}));
  EXPECT_EQ(max_tokens, (std::set<int>{16, 17, 18, 19, 20}));
  EXPECT_EQ(*ids.begin(), LoadPlan::kFirstPlainTokenId);
  EXPECT_EQ(*ids.rbegin(), 15u);
  EXPECT_EQ(ids.size(), 13u);
}

TEST(LoadPlanTest, CancelsAboutTheGivenFractionMidStream) {
  LoadPlanOptions o = TokenPrompts({4, 4});
  o.max_tokens = {10, 10};
  o.cancel_fraction = 0.1;
  auto plan = LoadPlan::Make(o);
  ASSERT_TRUE(plan.ok());
  int cancelled = 0;
  std::set<uint32_t> points;
  for (uint64_t i = 0; i < 5000; ++i) {
    const PlannedRequest p = plan->Request(i);
    if (p.cancel_after_tokens == 0) continue;
    ++cancelled;
    points.insert(p.cancel_after_tokens);
  }
  EXPECT_GT(cancelled, 400);  // 500 expected; the bounds are > 4 standard deviations away
  EXPECT_LT(cancelled, 600);
  EXPECT_EQ(points, (std::set<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(LoadPlanTest, SharedPrefixesTakeTurnsBeforeEachRequestsOwnIds) {
  LoadPlanOptions o = TokenPrompts({16, 16}, /*vocab=*/32000);
  o.shared_prefixes = 4;
  o.prefix_tokens = 512;
  auto plan = LoadPlan::Make(o);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  // Request() returns the request by value: keep it while its ids are read.
  const auto prefix_of = [&](uint64_t i) {
    const PlannedRequest r = plan->Request(i);
    const auto& ids = r.request.prompt_token_ids().ids();
    EXPECT_EQ(ids.size(), 512 + 16) << i;
    return std::vector<uint32_t>(ids.begin(), ids.begin() + 512);
  };
  std::set<std::vector<uint32_t>> prefixes;
  for (uint64_t i = 0; i < 4; ++i) prefixes.insert(prefix_of(i));
  EXPECT_EQ(prefixes.size(), 4u) << "four distinct prefixes";
  for (uint64_t i = 4; i < 40; ++i) {
    EXPECT_EQ(prefix_of(i), prefix_of(i % 4)) << "request " << i << " takes prefix " << i % 4;
  }
  // The own part differs between requests that share a prefix.
  const auto own = [&](uint64_t i) {
    const PlannedRequest r = plan->Request(i);
    const auto& ids = r.request.prompt_token_ids().ids();
    return std::vector<uint32_t>(ids.begin() + 512, ids.end());
  };
  EXPECT_NE(own(0), own(4));
  for (uint32_t id : prefix_of(1)) {
    EXPECT_GE(id, LoadPlan::kFirstPlainTokenId);
    EXPECT_LT(id, 32000u);
  }
}

TEST(LoadPlanTest, SharedPrefixesNeedTokenPromptsAndALength) {
  LoadPlanOptions text;
  text.prompts = {"hello"};
  text.shared_prefixes = 2;
  text.prefix_tokens = 8;
  EXPECT_FALSE(LoadPlan::Make(text).ok());
  LoadPlanOptions empty = TokenPrompts({4, 4});
  empty.shared_prefixes = 2;
  empty.prefix_tokens = 0;
  const auto refused = LoadPlan::Make(empty);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--shared-prefixes"), std::string::npos);
}

TEST(LoadPlanTest, APromptListIsSampledWholeAndAFixedPromptAlwaysSent) {
  LoadPlanOptions o;
  o.prompts = {"alpha", "beta", "gamma"};
  auto plan = LoadPlan::Make(o);
  ASSERT_TRUE(plan.ok());
  std::set<std::string> seen;
  for (uint64_t i = 0; i < 300; ++i) seen.insert(plan->Request(i).request.prompt());
  EXPECT_EQ(seen, (std::set<std::string>{"alpha", "beta", "gamma"}));
  o.prompts = {"only"};
  plan = LoadPlan::Make(o);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->Request(5).request.prompt(), "only");
  EXPECT_EQ(plan->Request(5).request.stopping().max_new_tokens(), 0u) << "the server's default";
}

}  // namespace
}  // namespace smallmind::cli

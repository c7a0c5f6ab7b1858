// Speculative decoding through the real gateway and worker processes (--spec-ngram on the
// worker): a deterministic request gives the same tokens and the same logprobs with
// runtime.speculation AUTO (drafts verified, reported in usage, the receipt and the worker's
// counters) as with OFF (nothing drafted), greedy and seeded alike.
#include <gtest/gtest.h>

#include <string>

#include "tests/testing/rpc/gateway_fixture.h"

namespace smallmind {
namespace {

v1::GenerateRequest Request(float temperature, v1::Speculation speculation) {
  v1::GenerateRequest req;
  // Repeating text: prompt lookup finds what to draft.
  std::string prompt;
  for (int i = 0; i < 6; ++i) prompt += "the cat sat on the mat and the dog ran. ";
  req.set_prompt(prompt);
  req.set_logprobs(3);
  req.mutable_sampling()->set_temperature(temperature);
  req.mutable_sampling()->set_seed(7);
  req.mutable_sampling()->set_repetition_penalty(1.2f);  // drafts fail too: rollback is exercised
  req.mutable_stopping()->set_max_new_tokens(64);
  req.mutable_stopping()->set_ignore_eos(true);
  req.mutable_runtime()->set_deterministic(true);
  req.mutable_runtime()->set_speculation(speculation);
  return req;
}

void ExpectSameLogprobs(const testing::GenerateOutcome& a, const testing::GenerateOutcome& b) {
  std::vector<std::string> la, lb;
  for (const auto& m : a.messages) {
    for (const auto& lp : m.logprobs()) la.push_back(lp.SerializeAsString());
  }
  for (const auto& m : b.messages) {
    for (const auto& lp : m.logprobs()) lb.push_back(lp.SerializeAsString());
  }
  EXPECT_EQ(la.size(), 64u);
  EXPECT_EQ(la, lb) << "logprobs (ids and float bits) differ";
}

TEST(GatewaySpeculationTest, DraftsChangeNothingButAreReported) {
  testing::GatewayOptions options;
  options.extra_args = {"--worker-flags=--spec-ngram 2 --spec-max-draft 6"};
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  uint32_t drafted = 0;
  uint32_t accepted = 0;
  for (float temperature : {0.0f, 0.9f}) {
    auto off = testing::RunGenerate(gateway.stub(), Request(temperature, v1::SPECULATION_OFF));
    auto on = testing::RunGenerate(gateway.stub(), Request(temperature, v1::SPECULATION_AUTO));
    ASSERT_TRUE(off.status.ok() && on.status.ok())
        << off.status.error_message() << on.status.error_message();
    EXPECT_EQ(on.token_ids(), off.token_ids()) << "temperature " << temperature;
    ExpectSameLogprobs(on, off);
    EXPECT_EQ(off.last()->usage().draft_tokens(), 0u);
    EXPECT_FALSE(off.last()->receipt().speculated());
    EXPECT_EQ(on.last()->receipt().speculated(), on.last()->usage().draft_tokens() > 0);
    EXPECT_LE(on.last()->usage().accepted_draft_tokens(), on.last()->usage().draft_tokens());
    drafted += on.last()->usage().draft_tokens();
    accepted += on.last()->usage().accepted_draft_tokens();
  }
  EXPECT_GT(accepted, 0u) << "nothing accepted: the test proves nothing";
  auto stats = gateway.WaitForIdleWorker(0);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->values().at("smallmind_worker_ngram_draft_tokens_total"), drafted);
  EXPECT_EQ(stats->values().at("smallmind_worker_ngram_accepted_tokens_total"), accepted);
  EXPECT_EQ(stats->values().at("smallmind_worker_draft_model_draft_tokens_total"), 0.0);
  EXPECT_TRUE(gateway.Stop().ok());
}

// A draft model's drafts are counted as its own, not as prompt lookup's: each drafter has its
// counters. The served model drafts for itself (same vocabulary; a draft step then costs a whole
// target step, where no draft pays, so --spec-draft-cost 0 has the controller draft anyway).
TEST(GatewaySpeculationTest, ADraftModelsDraftsAreCountedAsItsOwn) {
  testing::GatewayOptions options;
  options.extra_args = {
      "--worker-flags=--draft-model builtin:tiny --spec-max-draft 4 --spec-draft-cost 0"};
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  auto off = testing::RunGenerate(gateway.stub(), Request(0.0f, v1::SPECULATION_OFF));
  auto on = testing::RunGenerate(gateway.stub(), Request(0.0f, v1::SPECULATION_AUTO));
  ASSERT_TRUE(off.status.ok() && on.status.ok())
      << off.status.error_message() << on.status.error_message();
  EXPECT_EQ(on.token_ids(), off.token_ids());
  ExpectSameLogprobs(on, off);
  const uint32_t drafted = on.last()->usage().draft_tokens();
  const uint32_t accepted = on.last()->usage().accepted_draft_tokens();
  EXPECT_GT(accepted, 0u) << "nothing accepted: the test proves nothing";
  auto stats = gateway.WaitForIdleWorker(0);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->values().at("smallmind_worker_draft_model_draft_tokens_total"), drafted);
  EXPECT_EQ(stats->values().at("smallmind_worker_draft_model_accepted_tokens_total"), accepted);
  EXPECT_EQ(stats->values().at("smallmind_worker_ngram_draft_tokens_total"), 0.0);
  EXPECT_EQ(stats->values().at("smallmind_worker_ngram_accepted_tokens_total"), 0.0);
  EXPECT_TRUE(gateway.Stop().ok());
}

}  // namespace
}  // namespace smallmind

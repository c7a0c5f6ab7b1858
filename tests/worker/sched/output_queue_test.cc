// The OutputQueue between the scheduler thread and the output pump: publishing hands a step's
// events over without copying, untaken steps coalesce in order, Close ends the stream after what is
// pending, and a producer and a consumer thread see every event once, in order.
#include "worker/sched/output_queue.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace smallmind::worker {
namespace {

// A step with one token event of sequence `seq` carrying `id` and its text "<id>".
void AddStep(StepOutput* out, uint64_t seq, TokenId id) {
  const TokenId ids[] = {id};
  out->AddTokens(nullptr, seq, ids, "<" + std::to_string(id) + ">", {});
}

std::string AllText(const StepOutput& out) {
  std::string text;
  for (const OutputEvent& e : out.events()) text.append(out.text(e));
  return text;
}

TEST(OutputQueueTest, PublishHandsTheEventsOverAndLeavesTheProducerEmpty) {
  OutputQueue queue;
  StepOutput producer, consumer;
  AddStep(&producer, 1, 5);
  queue.Publish(&producer);
  EXPECT_TRUE(producer.empty());
  ASSERT_TRUE(queue.TryTake(&consumer));
  ASSERT_EQ(consumer.events().size(), 1u);
  EXPECT_EQ(consumer.events()[0].sequence_id, 1u);
  EXPECT_EQ(consumer.token_ids(consumer.events()[0])[0], 5);
  EXPECT_EQ(AllText(consumer), "<5>");
  EXPECT_FALSE(queue.TryTake(&consumer)) << "nothing new";
  EXPECT_TRUE(consumer.empty()) << "a take replaces the consumer's old contents";
}

TEST(OutputQueueTest, StepsNotYetTakenCoalesceInOrderWithTheirOwnRanges) {
  OutputQueue queue;
  StepOutput producer, consumer;
  AddStep(&producer, 1, 10);
  queue.Publish(&producer);
  AddStep(&producer, 2, 20);
  const SampleLogprobs lp{{21, -0.5f}, 0, {}};
  const TokenId ids[] = {21, 22};
  producer.AddTokens(nullptr, 1, ids, "xy", std::span<const SampleLogprobs>(&lp, 1));
  FinishEvent finish;
  finish.reason = FinishReason::kLength;
  finish.completion_tokens = 3;
  producer.AddFinish(nullptr, 1, finish);
  queue.Publish(&producer);
  ASSERT_TRUE(queue.TryTake(&consumer));
  auto events = consumer.events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(AllText(consumer), "<10><20>xy");
  EXPECT_EQ(consumer.text(events[2]), "xy");
  EXPECT_EQ(consumer.token_ids(events[2]).size(), 2u);
  EXPECT_EQ(consumer.token_ids(events[2])[1], 22);
  ASSERT_EQ(consumer.logprobs(events[2]).size(), 1u);
  EXPECT_EQ(consumer.logprobs(events[2])[0].chosen.id, 21);
  EXPECT_TRUE(events[3].finished);
  EXPECT_EQ(events[3].finish.completion_tokens, 3);
}

TEST(OutputQueueTest, TakeReturnsWhatIsPendingThenFalseOnceClosed) {
  OutputQueue queue;
  StepOutput producer, consumer;
  AddStep(&producer, 1, 1);
  queue.Publish(&producer);
  queue.Close();
  ASSERT_TRUE(queue.Take(&consumer));
  EXPECT_EQ(consumer.events().size(), 1u);
  EXPECT_FALSE(queue.Take(&consumer));
}

TEST(OutputQueueTest, EmptyPublishIsNotAStep) {
  OutputQueue queue;
  StepOutput producer, consumer;
  queue.Publish(&producer);
  EXPECT_FALSE(queue.TryTake(&consumer));
}

TEST(OutputQueueTest, ConsumerThreadSeesEveryEventOnceInOrder) {
  constexpr int kSteps = 2000;
  OutputQueue queue;
  std::vector<TokenId> seen;
  std::thread consumer([&] {
    StepOutput taken;
    while (queue.Take(&taken)) {
      for (const OutputEvent& e : taken.events()) {
        for (TokenId id : taken.token_ids(e)) seen.push_back(id);
      }
    }
  });
  StepOutput producer;
  for (int i = 0; i < kSteps; ++i) {
    AddStep(&producer, 1, i);
    queue.Publish(&producer);
  }
  queue.Close();
  consumer.join();
  ASSERT_EQ(seen.size(), static_cast<size_t>(kSteps));
  for (int i = 0; i < kSteps; ++i) ASSERT_EQ(seen[i], i);
}

}  // namespace
}  // namespace smallmind::worker

// The output pump: its thread delivers what the scheduler published to each sequence's sink, in
// order, with the finish last, and stops once the queue is closed and drained.
#include "worker/output_pump.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worker/sequence_sink.h"

namespace smallmind::worker {
namespace {

// Records the calls it gets, as "tokens:<ids>:<text>" and "finish:<reason>".
class RecordingSink : public SequenceSink {
 public:
  void OnTokens(const TokenEvent& e) override {
    std::string call = "tokens:";
    for (TokenId id : e.token_ids) call += std::to_string(id) + ",";
    call += ":" + std::string(e.text);
    if (!e.logprobs.empty()) call += ":lp" + std::to_string(e.logprobs.size());
    calls.push_back(call);
  }
  void OnFinish(const FinishEvent& e) override {
    calls.push_back(std::string("finish:") + FinishReasonName(e.reason));
  }
  std::vector<std::string> calls;
};

TEST(OutputPumpTest, DeliversEachSequencesEventsToItsSinkInOrder) {
  RecordingSink a, b;
  StepOutput out;
  const TokenId one[] = {1}, two[] = {2, 3};
  const SampleLogprobs lp[2] = {};
  out.AddTokens(&a, 1, one, "x", {});
  out.AddTokens(&b, 2, two, "yz", lp);
  out.AddTokens(&a, 1, {}, "held", {});
  FinishEvent finish;
  finish.reason = FinishReason::kStop;
  out.AddFinish(&a, 1, finish);
  out.AddFinish(nullptr, 3, finish);  // a sequence with no stream: skipped
  DeliverOutput(out);
  EXPECT_EQ(a.calls, (std::vector<std::string>{"tokens:1,:x", "tokens::held", "finish:STOP"}));
  EXPECT_EQ(b.calls, (std::vector<std::string>{"tokens:2,3,:yz:lp2"}));
}

TEST(OutputPumpTest, PumpThreadDeliversEverythingPublishedBeforeCloseThenStops) {
  OutputQueue queue;
  RecordingSink sink;
  OutputPump pump(&queue);
  pump.Start();
  StepOutput out;
  for (TokenId id = 0; id < 100; ++id) {
    const TokenId ids[] = {id};
    out.AddTokens(&sink, 1, ids, "", {});
    queue.Publish(&out);
  }
  FinishEvent finish;
  finish.reason = FinishReason::kLength;
  out.AddFinish(&sink, 1, finish);
  queue.Publish(&out);
  queue.Close();
  pump.Join();  // returns only after the queue drained
  ASSERT_EQ(sink.calls.size(), 101u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sink.calls[i], "tokens:" + std::to_string(i) + ",:");
  EXPECT_EQ(sink.calls.back(), "finish:LENGTH");
}

}  // namespace
}  // namespace smallmind::worker

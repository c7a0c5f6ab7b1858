// JudgePoll as a table: a late Stats answer is "slow" only while the worker's streams progress.
#include "gateway/workers/poll_verdict.h"

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

using shared::StatusCode;
using std::chrono::milliseconds;

constexpr milliseconds kWindow{3000};

PollVerdict Judge(StatusCode code, uint32_t in_flight, std::optional<milliseconds> since) {
  PollFacts facts;
  facts.code = code;
  facts.in_flight = in_flight;
  facts.since_progress = since;
  return JudgePoll(facts, kWindow);
}

TEST(PollVerdictTest, AnAnswerIsHealthyWhateverElse) {
  EXPECT_EQ(Judge(StatusCode::kOk, 0, std::nullopt), PollVerdict::kHealthy);
  EXPECT_EQ(Judge(StatusCode::kOk, 3, milliseconds(99999)), PollVerdict::kHealthy);
}

TEST(PollVerdictTest, ALateAnswerWhileStreamsDeliverIsSlowNotDown) {
  EXPECT_EQ(Judge(StatusCode::kDeadlineExceeded, 1, milliseconds(0)), PollVerdict::kSlow);
  EXPECT_EQ(Judge(StatusCode::kDeadlineExceeded, 4, kWindow), PollVerdict::kSlow);
}

TEST(PollVerdictTest, ALateAnswerWithNoRecentProgressIsDown) {
  EXPECT_EQ(Judge(StatusCode::kDeadlineExceeded, 1, kWindow + milliseconds(1)), PollVerdict::kDown);
  EXPECT_EQ(Judge(StatusCode::kDeadlineExceeded, 1, std::nullopt), PollVerdict::kDown);
  // Progress long ago on a worker with nothing open says nothing about it now.
  EXPECT_EQ(Judge(StatusCode::kDeadlineExceeded, 0, milliseconds(10)), PollVerdict::kDown);
}

TEST(PollVerdictTest, ARefusedOrResetConnectionIsDownHoweverRecentTheProgress) {
  EXPECT_EQ(Judge(StatusCode::kUnavailable, 2, milliseconds(0)), PollVerdict::kDown);
  EXPECT_EQ(Judge(StatusCode::kInternal, 2, milliseconds(0)), PollVerdict::kDown);
}

}  // namespace
}  // namespace smallmind::gateway

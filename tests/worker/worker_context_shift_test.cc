// stopping.context_overflow through the worker's Submit rpc: FINISH ends with LENGTH at the
// context, SHIFT goes on past it and says so on the stream (the message after which a shift
// happened, usage and the Stats counter); a bad n_keep is INVALID_ARGUMENT.
#include <gtest/gtest.h>

#include <string>

#include "shared/worker_stat_table.h"
#include "tests/worker/in_process_worker.h"

namespace smallmind::worker {
namespace {

// builtin:tiny: context 512, one token per byte of this prompt, plus BOS: 301 prompt tokens.
v1::GenerateRequest LongGreedy(int max_new, v1::ContextOverflow overflow) {
  v1::GenerateRequest r;
  r.set_prompt(std::string(300, 'k'));
  r.mutable_sampling()->set_temperature(0);
  r.mutable_stopping()->set_max_new_tokens(max_new);
  r.mutable_stopping()->set_ignore_eos(true);
  r.mutable_stopping()->set_context_overflow(overflow);
  return r;
}

TEST(WorkerContextShiftTest, FinishEndsAtTheContextAndShiftGoesOnAndReportsEachShift) {
  testing::InProcessWorker w;
  const testing::SubmitResult finish = w.Submit(LongGreedy(400, v1::CONTEXT_OVERFLOW_FINISH));
  ASSERT_TRUE(finish.status.ok()) << finish.status.error_message();
  EXPECT_EQ(finish.last().finish_reason(), v1::LENGTH);
  EXPECT_EQ(finish.token_ids.size(), 512u - 301u) << "capped by the room the prompt leaves";
  EXPECT_EQ(finish.last().usage().context_shifts(), 0u);

  const testing::SubmitResult shift = w.Submit(LongGreedy(400, v1::CONTEXT_OVERFLOW_SHIFT));
  ASSERT_TRUE(shift.status.ok()) << shift.status.error_message();
  EXPECT_EQ(shift.last().finish_reason(), v1::LENGTH);
  EXPECT_EQ(shift.token_ids.size(), 400u);
  // The same tokens up to the context; the first shift comes right after the 212th token, which
  // needs position 512 (n_keep defaults to the BOS).
  EXPECT_EQ(std::vector<uint32_t>(shift.token_ids.begin(), shift.token_ids.begin() + 211),
            finish.token_ids);
  uint32_t reported = 0;
  size_t tokens_before_first = 0;
  for (const v1::GenerateResponse& m : shift.messages) {
    if (reported == 0) tokens_before_first += m.token_ids_size();
    reported += m.context_shifts();
  }
  EXPECT_EQ(tokens_before_first, 212u);
  // 513 tokens keep 1 + 256; the window is back to 512 after 255 more: 212 + 255 > 400.
  EXPECT_EQ(reported, 1u);
  EXPECT_EQ(shift.last().usage().context_shifts(), 1u);
  EXPECT_EQ(shift.last().usage().completion_tokens(), 400u);
  EXPECT_EQ(shared::ReadWorkerStat(w.Stats().values(), shared::WorkerStat::kContextShifts), 1u);
}

TEST(WorkerContextShiftTest, AnNKeepOfHalfTheContextIsInvalidArgument) {
  testing::InProcessWorker w;
  v1::GenerateRequest r = LongGreedy(10, v1::CONTEXT_OVERFLOW_SHIFT);
  r.mutable_stopping()->set_n_keep(256);
  const testing::SubmitResult result = w.Submit(r);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.status.error_message().find("stopping.n_keep must be in [0, 256)"),
            std::string::npos)
      << result.status.error_message();
  r.mutable_stopping()->set_n_keep(255);
  EXPECT_TRUE(w.Submit(r).status.ok());
}

}  // namespace
}  // namespace smallmind::worker

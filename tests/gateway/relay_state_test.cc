// RelayState as tables: each scenario is a list of events with the effects and the state expected
// after each one. Then invariant breaches that must abort, and a seeded random walk over every
// interleaving the environment allows. Pure: no gRPC, no clock.
#include "gateway/relay/relay_state.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

using shared::Status;
using shared::StatusCode;
using E = RelayEvent;

Status Err(StatusCode code) { return {code, "scripted"}; }
const Status kOk = Status::Ok();

// "Streaming Reading Delivering 1": phase, worker read, consumer write, queued messages.
std::string Brief(const RelayState& s) {
  auto strip = [](const char* name) { return std::string(name + 1); };  // drop the leading k
  return strip(RelayPhaseName(s.phase())) + " " + strip(WorkerReadName(s.worker())) + " " +
         strip(ConsumerWriteName(s.consumer())) + " " + std::to_string(s.queued());
}

struct Step {
  RelayEvent event;
  std::string effects;  // RelayEffects::ToString()
  std::string state;    // Brief() afterwards
};

struct Scenario {
  std::string name;
  size_t capacity;
  int max_retries;
  std::vector<Step> steps;
};

std::ostream& operator<<(std::ostream& os, const Scenario& s) { return os << s.name; }

// The common opening: admitted, routed to worker 0, call started.
std::vector<Step> Opening() {
  return {
      {E::Begin(), "admit", "Admitting None Idle 0"},
      {E::Admitted(kOk), "route", "Routing None Idle 0"},
      {E::Routed(0), "start_call", "Attempting Reading Idle 0"},
  };
}

std::vector<Step> Then(std::vector<Step> head, const std::vector<Step>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

const std::vector<Scenario>& Scenarios() {
  static const std::vector<Scenario> kScenarios = {
      {"StreamsEveryMessageThenFinishesOkAndIsDeletedAfterDetach", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver read", "Streaming Reading Delivering 1"},
                {E::WorkerReadDone(true), "enqueue read", "Streaming Reading Delivering 2"},
                {E::Delivered(true), "deliver", "Streaming Reading Delivering 1"},
                {E::Delivered(true), "", "Streaming Reading Idle 0"},
                {E::WorkerReadDone(false), "release_call", "Streaming Closing Idle 0"},
                {E::WorkerDone(kOk), "release_admission finish(OK)", "Finished None Idle 0"},
                {E::Detach(), "destroy", "Done None Detached 0"},
            })},
      {"FullOutboxPausesReadingUntilTheConsumerTakesOne", 2, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver read", "Streaming Reading Delivering 1"},
                {E::WorkerReadDone(true), "enqueue", "Streaming Paused Delivering 2"},
                {E::Delivered(true), "deliver read", "Streaming Reading Delivering 1"},
            })},
      {"OutboxOfOneAlternatesReadAndDelivery", 1, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver", "Streaming Paused Delivering 1"},
                {E::Delivered(true), "read", "Streaming Reading Idle 0"},
                {E::WorkerReadDone(true), "enqueue deliver", "Streaming Paused Delivering 1"},
            })},
      {"CompleteWaitsForTheOutboxToDrainAfterTheWorkerEnds", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver read", "Streaming Reading Delivering 1"},
                {E::WorkerReadDone(true), "enqueue read", "Streaming Reading Delivering 2"},
                {E::WorkerReadDone(false), "release_call", "Streaming Closing Delivering 2"},
                {E::WorkerDone(kOk), "release_admission", "Draining None Delivering 2"},
                {E::Delivered(true), "deliver", "Draining None Delivering 1"},
                {E::Delivered(true), "finish(OK)", "Finished None Idle 0"},
                {E::Detach(), "destroy", "Done None Detached 0"},
            })},
      {"CancelDropsQueuedMessagesAndCompletesAfterTheWriteInFlight", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver read", "Streaming Reading Delivering 1"},
                {E::WorkerReadDone(true), "enqueue read", "Streaming Reading Delivering 2"},
                {E::Cancel(), "drop_queued cancel_call", "Draining Reading Delivering 1"},
                {E::WorkerReadDone(true), "release_call", "Draining Closing Delivering 1"},
                {E::Delivered(true), "finish(CANCELLED)", "Finished Closing Idle 0"},
                {E::WorkerDone(Err(StatusCode::kCancelled)), "release_admission",
                 "Finished None Idle 0"},
                {E::Detach(), "destroy", "Done None Detached 0"},
            })},
      {"CancelWhilePausedReleasesTheHoldAtOnce", 1, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver", "Streaming Paused Delivering 1"},
                {E::Cancel(), "cancel_call release_call", "Draining Closing Delivering 1"},
                {E::Delivered(false), "finish(CANCELLED)", "Finished Closing Idle 0"},
                {E::Detach(), "", "Finished Closing Detached 0"},
                {E::WorkerDone(Err(StatusCode::kCancelled)), "release_admission destroy",
                 "Done None Detached 0"},
            })},
      {"ConsumerDetachedBeforeTheWorkerEndsIsDeletedByTheWorkerSide", 4, 1,
       Then(Opening(),
            {
                {E::Cancel(), "cancel_call finish(CANCELLED)", "Finished Reading Idle 0"},
                {E::Detach(), "", "Finished Reading Detached 0"},
                {E::WorkerReadDone(false), "release_call", "Finished Closing Detached 0"},
                {E::WorkerDone(Err(StatusCode::kCancelled)), "release_admission destroy",
                 "Done None Detached 0"},
            })},
      {"FailedDeliveryCancelsLikeAClientCancel", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver read", "Streaming Reading Delivering 1"},
                {E::WorkerReadDone(true), "enqueue read", "Streaming Reading Delivering 2"},
                {E::Delivered(false), "drop_queued cancel_call finish(CANCELLED)",
                 "Finished Reading Idle 0"},
            })},
      {"DeliveryFailingAtTheDeadlineEndsWithTheCauseGiven", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver read", "Streaming Reading Delivering 1"},
                {E::Delivered(false, Err(StatusCode::kDeadlineExceeded)),
                 "cancel_call finish(DEADLINE_EXCEEDED)", "Finished Reading Idle 0"},
            })},
      {"CancelAfterCompleteChangesNothing", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(false), "release_call", "Attempting Closing Idle 0"},
                {E::WorkerDone(kOk), "release_admission finish(OK)", "Finished None Idle 0"},
                {E::Cancel(), "", "Finished None Idle 0"},
                {E::Detach(), "destroy", "Done None Detached 0"},
            })},
      {"RetriesOnAnotherWorkerWhenOneIsUnavailableBeforeAnyMessage", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(false), "release_call", "Attempting Closing Idle 0"},
                {E::WorkerDone(Err(StatusCode::kUnavailable)), "route(not 0)",
                 "Routing None Idle 0"},
                {E::Routed(1), "start_call", "Attempting Reading Idle 0"},
                {E::WorkerReadDone(true), "enqueue deliver read", "Streaming Reading Delivering 1"},
            })},
      {"GivesUpAfterMaxRetriesWithTheLastWorkersError", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(false), "release_call", "Attempting Closing Idle 0"},
                {E::WorkerDone(Err(StatusCode::kResourceExhausted)), "route(not 0)",
                 "Routing None Idle 0"},
                {E::Routed(1), "start_call", "Attempting Reading Idle 0"},
                {E::WorkerReadDone(false), "release_call", "Attempting Closing Idle 0"},
                {E::WorkerDone(Err(StatusCode::kResourceExhausted)),
                 "release_admission finish(RESOURCE_EXHAUSTED)", "Finished None Idle 0"},
            })},
      {"NoOtherWorkerForTheRetryReportsTheFailedWorkersError", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(false), "release_call", "Attempting Closing Idle 0"},
                {E::WorkerDone(Err(StatusCode::kResourceExhausted)), "route(not 0)",
                 "Routing None Idle 0"},
                {E::NoWorker(Err(StatusCode::kUnavailable)),
                 "release_admission finish(RESOURCE_EXHAUSTED)", "Finished None Idle 0"},
            })},
      {"NoRetryWhenRetriesAreOff", 4, 0,
       Then(Opening(),
            {
                {E::WorkerReadDone(false), "release_call", "Attempting Closing Idle 0"},
                {E::WorkerDone(Err(StatusCode::kUnavailable)),
                 "release_admission finish(UNAVAILABLE)", "Finished None Idle 0"},
            })},
      {"NonRetriableFailureBeforeAnyMessageIsRelayedAsIs", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(false), "release_call", "Attempting Closing Idle 0"},
                {E::WorkerDone(Err(StatusCode::kInvalidArgument)),
                 "release_admission finish(INVALID_ARGUMENT)", "Finished None Idle 0"},
            })},
      {"FailureAfterMessagesIsNotRetriedAndBecomesUnavailable", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver read", "Streaming Reading Delivering 1"},
                {E::Delivered(true), "", "Streaming Reading Idle 0"},
                {E::WorkerReadDone(false), "release_call", "Streaming Closing Idle 0"},
                {E::WorkerDone(Err(StatusCode::kResourceExhausted)),
                 "release_admission finish(UNAVAILABLE)", "Finished None Idle 0"},
            })},
      {"DeadlineAfterMessagesStaysDeadlineExceeded", 4, 1,
       Then(Opening(),
            {
                {E::WorkerReadDone(true), "enqueue deliver read", "Streaming Reading Delivering 1"},
                {E::Delivered(true), "", "Streaming Reading Idle 0"},
                {E::WorkerReadDone(false), "release_call", "Streaming Closing Idle 0"},
                {E::WorkerDone(Err(StatusCode::kDeadlineExceeded)),
                 "release_admission finish(DEADLINE_EXCEEDED)", "Finished None Idle 0"},
            })},
      {"NoHealthyWorkerFinishesUnavailable",
       4,
       1,
       {
           {E::Begin(), "admit", "Admitting None Idle 0"},
           {E::Admitted(kOk), "route", "Routing None Idle 0"},
           {E::NoWorker(Err(StatusCode::kUnavailable)), "release_admission finish(UNAVAILABLE)",
            "Finished None Idle 0"},
           {E::Detach(), "destroy", "Done None Detached 0"},
       }},
      {"InvalidRequestCompletesWithoutAdmission",
       4,
       1,
       {
           {E::Refuse(Err(StatusCode::kInvalidArgument)), "finish(INVALID_ARGUMENT)",
            "Finished None Idle 0"},
           {E::Detach(), "destroy", "Done None Detached 0"},
       }},
      {"AdmissionRefusalIsTheOutcome",
       4,
       1,
       {
           {E::Begin(), "admit", "Admitting None Idle 0"},
           {E::Admitted(Err(StatusCode::kResourceExhausted)), "finish(RESOURCE_EXHAUSTED)",
            "Finished None Idle 0"},
       }},
      {"CancelWhileQueuedWithdrawsAndCompletesOnTheAnswer",
       4,
       1,
       {
           {E::Begin(), "admit", "Admitting None Idle 0"},
           {E::Cancel(), "withdraw", "Admitting None Idle 0"},
           {E::Admitted(Err(StatusCode::kCancelled)), "finish(CANCELLED)", "Finished None Idle 0"},
           {E::Detach(), "destroy", "Done None Detached 0"},
       }},
      {"AdmissionGrantedAfterCancelGoesStraightBack",
       4,
       1,
       {
           {E::Begin(), "admit", "Admitting None Idle 0"},
           {E::Cancel(), "withdraw", "Admitting None Idle 0"},
           {E::Admitted(kOk), "release_admission finish(CANCELLED)", "Finished None Idle 0"},
       }},
  };
  return kScenarios;
}

class RelayStateTableTest : public ::testing::TestWithParam<Scenario> {};

TEST_P(RelayStateTableTest, EachEventGivesTheListedEffectsAndState) {
  const Scenario& scenario = GetParam();
  RelayState state(scenario.capacity, scenario.max_retries);
  for (size_t i = 0; i < scenario.steps.size(); ++i) {
    const Step& step = scenario.steps[i];
    const RelayEffects fx = state.Apply(step.event);
    EXPECT_EQ(fx.ToString(), step.effects)
        << "step " << i << " (" << RelayEventName(step.event.kind) << ")";
    EXPECT_EQ(Brief(state), step.state)
        << "step " << i << " (" << RelayEventName(step.event.kind) << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Transitions, RelayStateTableTest, ::testing::ValuesIn(Scenarios()),
                         [](const auto& info) { return info.param.name; });

TEST(RelayStateTest, MessagesAfterTokensNameTheFailedWorkerAndItsError) {
  RelayState state(4, 1);
  state.Apply(E::Begin());
  state.Apply(E::Admitted(kOk));
  state.Apply(E::Routed(3));
  state.Apply(E::WorkerReadDone(true));
  state.Apply(E::Delivered(true));
  state.Apply(E::WorkerReadDone(false));
  const RelayEffects fx = state.Apply(E::WorkerDone({StatusCode::kInternal, "engine fault"}));
  ASSERT_TRUE(fx.finish.has_value());
  EXPECT_EQ(fx.finish->message(), "worker 3 failed after tokens were sent: INTERNAL: engine fault");
}

// Invariants are enforced, not hoped for: an event the state cannot receive aborts.
class RelayStateDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  // Admitted, routed, one message being delivered.
  static RelayState Streaming() {
    RelayState state(4, 1);
    state.Apply(E::Begin());
    state.Apply(E::Admitted(kOk));
    state.Apply(E::Routed(0));
    state.Apply(E::WorkerReadDone(true));
    return state;
  }
};

TEST_F(RelayStateDeathTest, DetachBeforeCompleteAborts) {
  EXPECT_DEATH(Streaming().Apply(E::Detach()), "Detach before Complete");
}

TEST_F(RelayStateDeathTest, ASecondDeliveryCompletionAborts) {
  RelayState state = Streaming();
  state.Apply(E::Delivered(true));
  EXPECT_DEATH(state.Apply(E::Delivered(true)), "Delivered without a delivery");
}

TEST_F(RelayStateDeathTest, WorkerDoneWhileAReadIsOutstandingAborts) {
  EXPECT_DEATH(Streaming().Apply(E::WorkerDone(kOk)), "WorkerDone before reading stopped");
}

TEST_F(RelayStateDeathTest, AnyEventAfterDoneAborts) {
  RelayState state(4, 1);
  state.Apply(E::Refuse(Err(StatusCode::kInvalidArgument)));
  state.Apply(E::Detach());
  ASSERT_EQ(state.phase(), RelayPhase::kDone);
  EXPECT_DEATH(state.Apply(E::Cancel()), "after the relay was done");
}

// A seeded random walk: the environment (admission, worker, consumer) answers whatever is
// outstanding in a random order, cancels at random, and the relay must always end kDone with
// exactly one Complete, every message delivered in order when the outcome is OK, and the
// admission slot returned once. SM_CHECKs inside Apply guard the invariants at every step.
struct Walk {
  explicit Walk(uint64_t seed) : rng(seed) {
    capacity = 1 + rng() % 3;
    max_retries = static_cast<int>(rng() % 3);
  }

  bool Chance(int percent) { return static_cast<int>(rng() % 100) < percent; }

  // Carries out `fx` as RequestRelay would, answering routing within the same event.
  void Effects(RelayState& state, RelayEffects fx) {
    while (fx.route) {
      fx.route = false;
      if (Chance(20)) {
        fx.MergeFrom(state.Apply(E::NoWorker(Err(StatusCode::kUnavailable))));
      } else {
        fx.MergeFrom(state.Apply(E::Routed(static_cast<uint32_t>(rng() % 4))));
      }
    }
    if (fx.enqueue) ++enqueued;
    if (fx.drop_queued) dropped = true;
    if (fx.admit) admission_pending = true;
    if (fx.withdraw) withdrawn = true;
    if (fx.start_call) {
      read_outstanding = true;
      call_cancelled = false;
      // This attempt's script: how many messages, then how it ends.
      script_messages = Chance(30) ? 0 : 1 + static_cast<int>(rng() % 6);
      static constexpr StatusCode kEnds[] = {StatusCode::kOk, StatusCode::kUnavailable,
                                             StatusCode::kResourceExhausted, StatusCode::kInternal};
      script_end = kEnds[rng() % 4];
    }
    if (fx.deliver) delivering = true;
    if (fx.read) read_outstanding = true;
    if (fx.cancel_call) call_cancelled = true;
    if (fx.release_call) closing = true;
    if (fx.release_admission) ++admission_releases;
    if (fx.finish) {
      ++finishes;
      outcome = *fx.finish;
    }
    if (fx.destroy) ++destroys;
  }

  // One outstanding thing happens; false when nothing is outstanding.
  bool Step(RelayState& state) {
    std::vector<int> options;
    if (admission_pending) options.push_back(0);
    if (read_outstanding) options.push_back(1);
    if (closing) options.push_back(2);
    if (delivering) options.push_back(3);
    if (!cancel_sent && state.phase() != RelayPhase::kDone && !detached) options.push_back(4);
    if (finishes > 0 && !delivering && !detached) options.push_back(5);
    if (options.empty()) return false;
    const int pick = options[rng() % options.size()];
    if (pick == 4 && !Chance(5)) return true;  // cancels are rare
    switch (pick) {
      case 0: {
        admission_pending = false;
        const Status answer = withdrawn && Chance(50) ? Err(StatusCode::kCancelled)
                              : Chance(10)            ? Err(StatusCode::kResourceExhausted)
                                                      : kOk;
        granted += answer.ok() ? 1 : 0;
        return Effects(state, state.Apply(E::Admitted(answer))), true;
      }
      case 1: {
        read_outstanding = false;
        const bool ok = !call_cancelled && script_messages > 0;
        script_messages -= ok ? 1 : 0;
        return Effects(state, state.Apply(E::WorkerReadDone(ok))), true;
      }
      case 2: {
        closing = false;
        const Status end = call_cancelled ? Err(StatusCode::kCancelled) : Status(script_end, "");
        return Effects(state, state.Apply(E::WorkerDone(end))), true;
      }
      case 3: {
        delivering = false;
        const bool ok = !Chance(3);
        delivered += ok ? 1 : 0;
        return Effects(state, state.Apply(E::Delivered(ok))), true;
      }
      case 4: cancel_sent = true; return Effects(state, state.Apply(E::Cancel())), true;
      default: detached = true; return Effects(state, state.Apply(E::Detach())), true;
    }
  }

  std::mt19937_64 rng;
  size_t capacity = 1;
  int max_retries = 0;
  bool admission_pending = false, withdrawn = false, read_outstanding = false, closing = false;
  bool delivering = false, call_cancelled = false, cancel_sent = false, detached = false;
  bool dropped = false;
  int script_messages = 0;
  StatusCode script_end = StatusCode::kOk;
  int enqueued = 0, delivered = 0, finishes = 0, destroys = 0, granted = 0, admission_releases = 0;
  std::optional<Status> outcome;
};

TEST(RelayStateTest, RandomInterleavingsAlwaysEndDoneWithOneCompleteAndNothingLost) {
  constexpr int kWalks = 3000;
  constexpr int kMaxSteps = 500;
  for (int w = 0; w < kWalks; ++w) {
    Walk walk(/*seed=*/1000 + w);
    RelayState state(walk.capacity, walk.max_retries);
    walk.Effects(state, state.Apply(E::Begin()));
    int steps = 0;
    while (steps < kMaxSteps && walk.Step(state)) ++steps;
    SCOPED_TRACE("walk " + std::to_string(w) + ": " + state.Describe());
    ASSERT_LT(steps, kMaxSteps);
    ASSERT_EQ(state.phase(), RelayPhase::kDone);
    EXPECT_EQ(walk.finishes, 1);
    EXPECT_EQ(walk.destroys, 1);
    EXPECT_EQ(walk.admission_releases, walk.granted);
    ASSERT_TRUE(walk.outcome.has_value());
    if (walk.outcome->ok()) {
      EXPECT_EQ(walk.delivered, walk.enqueued);
      EXPECT_FALSE(walk.dropped);
    }
  }
}

}  // namespace
}  // namespace smallmind::gateway

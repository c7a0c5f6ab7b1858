// The draft length weighs the drafts expected to be accepted against their cost (DraftController's
// model): it grows to the longest draft that pays while drafts are accepted, shrinks when they are
// cut short, stops when drafting does not pay, and then probes only from a budget, so a drafter
// that never agrees costs a bounded share of the decode steps: counted here in the model's units
// (draft steps, catch-up tokens, verified drafts), never in wall-clock time.
#include "worker/spec/draft_controller.h"

#include <gtest/gtest.h>

namespace smallmind::worker {
namespace {

// bench-110M Q8_0 drafting bench-1B Q8_0 (143 and 1170 MB): r, the models' read ratio.
constexpr double kSmallForBig = 143.0 / 1170.0;
// ... drafting bench-110M grown to 108 layers (866 MB).
constexpr double kSmallForGrown = 143.0 / 866.0;

DraftControllerOptions CostingR(double r) {
  return DraftControllerOptions{.max_draft = 8, .draft_step_cost = r};
}

// What a drafter costs over `n` decode steps: every proposal the controller asks for is verified
// with `accept(k)` of its k drafts accepted; costs as the controller's model counts them.
struct Spent {
  int proposals = 0;
  int drafts = 0;
  int catch_up = 0;     // tokens since the previous proposal, summed over proposals past the first
  double cost = 0;      // C(k, g) summed, in target decode steps
  double accepted = 0;  // decode steps saved
};

template <typename Accept>
Spent Simulate(DraftController& c, int n, Accept accept) {
  Spent run;
  int since = 0;
  for (int step = 0; step < n; ++step) {
    ++since;
    const int k = c.length();
    if (k == 0) {
      c.OnStepWithoutDraft();
      continue;
    }
    run.cost += c.Cost(k);
    if (run.proposals > 0) run.catch_up += since;
    ++run.proposals;
    run.drafts += k;
    const int a = accept(k);
    run.accepted += a;
    c.OnVerified(k, a);
    since = 0;
  }
  return run;
}

TEST(DraftControllerTest, ANeverAgreeingDraftModelCostsUnderThreePercentOfTheDecodeSteps) {
  for (int n : {96, 192, 1000, 10000}) {
    DraftController c(CostingR(kSmallForBig));
    const Spent run = Simulate(c, n, [](int) { return 0; });
    EXPECT_LE(run.cost, 0.03 * n) << n << " steps: " << run.proposals << " proposals, "
                                  << run.drafts << " drafts, " << run.catch_up << " catch-up";
    EXPECT_LE(run.proposals, 3) << n << " steps";
    EXPECT_LE(run.drafts, 4) << n << " steps";
    EXPECT_LE(run.catch_up, 4) << n << " steps: late probes pay long catch-ups";
  }
}

// The n-gram drafter costs no draft step, only the verified tokens: it probes again now and then,
// spending at most its share of the steps.
TEST(DraftControllerTest, AFreeDrafterThatNeverAgreesProbesWithinItsBudget) {
  DraftController c(CostingR(0.0));
  const int n = 10000;
  const Spent run = Simulate(c, n, [](int) { return 0; });
  EXPECT_GT(run.proposals, 20) << "a free drafter is probed again";
  EXPECT_LE(run.cost, 0.03 * n);
  EXPECT_LE(run.drafts, run.proposals + 3) << "probes are single drafts";
}

TEST(DraftControllerTest, AgreeingDraftsGrowToTheLongestThatPays) {
  DraftController c(CostingR(kSmallForGrown));
  const Spent run = Simulate(c, 40, [](int k) { return k; });
  EXPECT_EQ(c.length(), 8) << "acceptance " << c.acceptance();
  EXPECT_GT(run.accepted, run.cost * 2);
}

// 28% of drafts accepted (what argmax drafts got against seeded draws) does not pay a draft
// model at the grown target's ratio: each draft costs r + v = 0.37 steps and saves 0.28.
TEST(DraftControllerTest, ALowAcceptanceStopsADraftModel) {
  DraftController c(CostingR(kSmallForGrown));
  int calls = 0;
  const Spent run = Simulate(c, 400, [&](int) { return (++calls * 7) % 25 < 7 ? 1 : 0; });
  EXPECT_FALSE(c.pays());
  EXPECT_LE(run.proposals, 6);
  EXPECT_LE(run.cost - run.accepted, 0.03 * 400);
}

TEST(DraftControllerTest, DraftsCutShortShrinkTheLength) {
  DraftController c(CostingR(0.0));
  Simulate(c, 40, [](int k) { return k; });
  ASSERT_EQ(c.length(), 8);
  // Two of every draft accepted: p ~ 2/3, and the third draft's p^3 = 0.3 barely pays v = 0.2.
  Simulate(c, 40, [](int k) { return k < 2 ? k : 2; });
  EXPECT_GE(c.length(), 2);
  EXPECT_LE(c.length(), 4);
}

TEST(DraftControllerTest, AnAcceptedProbeResumesDrafting) {
  DraftController c(CostingR(0.0));
  Simulate(c, 200, [](int) { return 0; });
  ASSERT_FALSE(c.pays());
  // The drafter starts agreeing: the next probes are accepted and drafting resumes.
  const Spent run = Simulate(c, 400, [](int k) { return k; });
  EXPECT_TRUE(c.pays());
  EXPECT_EQ(c.length(), 8);
  EXPECT_GT(run.accepted, 200);
}

TEST(DraftControllerTest, ZeroMaxDraftNeverDrafts) {
  DraftController c(DraftControllerOptions{.max_draft = 0});
  EXPECT_EQ(c.length(), 0);
}

}  // namespace
}  // namespace smallmind::worker

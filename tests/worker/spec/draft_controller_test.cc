// The draft length follows acceptance: it grows while drafts are accepted whole, falls to just
// past what was accepted, and switches off for a doubling cool-down when acceptance stays low.
#include "worker/spec/draft_controller.h"

#include <gtest/gtest.h>

namespace smallmind::worker {
namespace {

TEST(DraftControllerTest, GrowsWhileAcceptedAndShrinksToWhatWasAccepted) {
  DraftController c(DraftControllerOptions{.max_draft = 8});
  EXPECT_EQ(c.length(), 4);
  c.OnVerified(4, 4);
  EXPECT_EQ(c.length(), 6);
  c.OnVerified(6, 6);
  EXPECT_EQ(c.length(), 8);
  c.OnVerified(8, 8);
  EXPECT_EQ(c.length(), 8) << "never past max_draft";
  c.OnVerified(8, 2);
  EXPECT_EQ(c.length(), 3);
}

TEST(DraftControllerTest, LowAcceptanceSwitchesDraftingOffForADoublingCooldown) {
  DraftController c(DraftControllerOptions{.max_draft = 8, .first_cooldown = 3});
  int verifications = 0;
  while (!c.cooling_down() && verifications < 20) {
    c.OnVerified(c.length(), 0);
    ++verifications;
  }
  ASSERT_TRUE(c.cooling_down()) << "rejecting every draft must switch drafting off";
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.length(), 0);
    c.OnStepWithoutDraft();
  }
  EXPECT_EQ(c.length(), 1) << "after the cool-down one draft token probes again";
  c.OnVerified(1, 0);
  ASSERT_TRUE(c.cooling_down());
  int off = 0;
  while (c.length() == 0 && off < 100) {
    c.OnStepWithoutDraft();
    ++off;
  }
  EXPECT_EQ(off, 6) << "a failed probe doubles the cool-down";
}

TEST(DraftControllerTest, AnAcceptedProbeResumesDrafting) {
  DraftController c(DraftControllerOptions{.max_draft = 8, .first_cooldown = 2});
  while (!c.cooling_down()) c.OnVerified(c.length(), 0);
  c.OnStepWithoutDraft();
  c.OnStepWithoutDraft();
  c.OnVerified(1, 1);
  EXPECT_FALSE(c.cooling_down());
  EXPECT_EQ(c.length(), 3);
}

TEST(DraftControllerTest, ZeroMaxDraftNeverDrafts) {
  DraftController c(DraftControllerOptions{.max_draft = 0});
  EXPECT_EQ(c.length(), 0);
}

}  // namespace
}  // namespace smallmind::worker

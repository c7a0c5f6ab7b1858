#include "gateway/signal_policy.h"

#include <csignal>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

TEST(SignalPolicyTest, RepeatedSigtermsKeepDraining) {
  SignalPolicy policy;
  EXPECT_EQ(policy.Decide(SIGTERM), SignalAction::kDrain);
  EXPECT_EQ(policy.Decide(SIGTERM), SignalAction::kKeepDraining);
  EXPECT_EQ(policy.Decide(SIGTERM), SignalAction::kKeepDraining);
  EXPECT_FALSE(policy.forced());
}

TEST(SignalPolicyTest, SigintTwiceCancelsTheStreamsAndAThirdExits) {
  SignalPolicy policy;
  EXPECT_EQ(policy.Decide(SIGINT), SignalAction::kDrain);
  EXPECT_EQ(policy.Decide(SIGINT), SignalAction::kCancelStreams);
  EXPECT_TRUE(policy.forced());
  EXPECT_EQ(policy.Decide(SIGTERM), SignalAction::kKeepDraining);
  EXPECT_EQ(policy.Decide(SIGINT), SignalAction::kExitNow);
}

TEST(SignalPolicyTest, SigintDuringASigtermDrainForcesIt) {
  SignalPolicy policy;
  EXPECT_EQ(policy.Decide(SIGTERM), SignalAction::kDrain);
  EXPECT_EQ(policy.Decide(SIGINT), SignalAction::kCancelStreams);
}

TEST(SignalPolicyTest, SighupReloadsWhateverTheState) {
  SignalPolicy policy;
  EXPECT_EQ(policy.Decide(SIGHUP), SignalAction::kReload);
  EXPECT_FALSE(policy.draining());
  EXPECT_EQ(policy.Decide(SIGTERM), SignalAction::kDrain);
  EXPECT_EQ(policy.Decide(SIGHUP), SignalAction::kReload);
  EXPECT_TRUE(policy.draining());
}

}  // namespace
}  // namespace smallmind::gateway

#include "gateway/signal_policy.h"

#include <csignal>

namespace smallmind::gateway {

SignalAction SignalPolicy::Decide(int signal_number) {
  if (signal_number == SIGHUP) return SignalAction::kReload;
  if (!draining_) {
    draining_ = true;
    return SignalAction::kDrain;
  }
  if (signal_number != SIGINT) return SignalAction::kKeepDraining;
  if (!forced_) {
    forced_ = true;
    return SignalAction::kCancelStreams;
  }
  return SignalAction::kExitNow;
}

}  // namespace smallmind::gateway

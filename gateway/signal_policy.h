// SignalPolicy: what the gateway does with each signal it waits for, as a pure state machine so
// that the rules are testable. SIGTERM or SIGINT starts a drain; more SIGTERMs during it change
// nothing (GNU make forwards a SIGTERM the child already got, `kill -TERM -PGID` reaches both);
// a SIGINT during the drain cancels the open streams (Ctrl-C twice: "stop now"), a further one
// exits at once; SIGHUP reloads the API key file. Used by main()'s signal thread; not thread-safe.
#pragma once

namespace smallmind::gateway {

enum class SignalAction {
  kDrain,          // stop accepting, let open streams finish (bounded by --drain-seconds)
  kKeepDraining,   // a repeated SIGTERM: nothing changes
  kCancelStreams,  // cut the drain short: cancel every open stream, then stop as usual
  kExitNow,        // give up on the ordered stop
  kReload,         // re-read --api-keys-file
};

class SignalPolicy {
 public:
  SignalAction Decide(int signal_number);
  bool draining() const { return draining_; }
  // True once a SIGINT cancelled the streams: the stop was forced.
  bool forced() const { return forced_; }

 private:
  bool draining_ = false;
  bool forced_ = false;
};

}  // namespace smallmind::gateway

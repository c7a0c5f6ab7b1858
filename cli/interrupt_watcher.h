// InterruptWatcher: Ctrl-C (SIGINT) as a callback on a thread of its own instead of a signal
// handler, so that what it does (end a stream, print a hint) need not be async-signal-safe and no
// global state is needed. It blocks SIGINT in the calling thread, which threads started later
// inherit: build it before starting any other thread. Built by `smallmind chat` on the main
// thread; the callback runs on the watcher's thread.
#pragma once

#include <signal.h>

#include <functional>
#include <thread>

namespace smallmind::cli {

class InterruptWatcher {
 public:
  explicit InterruptWatcher(std::function<void()> on_interrupt);
  // Stops the thread (within its 100 ms wait) and restores the signal mask.
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

 private:
  sigset_t previous_;
  std::jthread thread_;
};

}  // namespace smallmind::cli

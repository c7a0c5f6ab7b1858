#include "cli/interrupt_watcher.h"

#include <pthread.h>

#include <ctime>

namespace smallmind::cli {
namespace {

sigset_t InterruptSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

InterruptWatcher::InterruptWatcher(std::function<void()> on_interrupt) {
  const sigset_t set = InterruptSet();
  pthread_sigmask(SIG_BLOCK, &set, &previous_);
  thread_ = std::jthread([set, on_interrupt = std::move(on_interrupt)](std::stop_token stop) {
    // A bounded wait, so that the thread sees the stop request without a signal of its own.
    const timespec period{0, 100'000'000};
    while (!stop.stop_requested()) {
      if (sigtimedwait(&set, nullptr, &period) == SIGINT) on_interrupt();
    }
  });
}

InterruptWatcher::~InterruptWatcher() {
  thread_.request_stop();
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace smallmind::cli

// RequestLanes: the threads that do a request's own work before the scheduler sees it (tokenizing
// a Submit's prompt, answering Tokenize), so that no gRPC thread does it and the worker's Stats and
// health answers never wait behind a big prompt (issue 40). Two lanes, each one thread: jobs of at
// least kLargeBytes of input go to the large lane, the rest to the small one, so a few huge
// prompts delay only each other and small requests keep their latency. Built by Worker, used by
// WorkerService and its reactors. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace smallmind::worker {

class RequestLanes {
 public:
  // 64 KiB of prompt text tokenizes in a millisecond or two here; above it a job may take long
  // enough (a 7 MB prompt: seconds) to matter to the requests behind it.
  static constexpr size_t kLargeBytes = 64 * 1024;

  RequestLanes();
  // Stop().
  ~RequestLanes();
  RequestLanes(const RequestLanes&) = delete;
  RequestLanes& operator=(const RequestLanes&) = delete;

  // Runs `job` on the lane for `input_bytes`, after the jobs queued there before it. After Stop
  // the job runs inline, so that every reactor still gets its answer.
  void Post(size_t input_bytes, std::function<void()> job);
  // Runs the jobs already queued, then joins both threads; idempotent.
  void Stop();

 private:
  struct Lane {
    std::deque<std::function<void()>> jobs;  // guarded by mu_
    std::thread thread;
  };
  void Run(Lane* lane);

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  Lane small_;
  Lane large_;
};

}  // namespace smallmind::worker

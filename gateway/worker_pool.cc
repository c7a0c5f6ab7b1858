#include "gateway/worker_pool.h"

#include <spdlog/spdlog.h>

#include "gateway/router.h"

namespace smallmind::gateway {

WorkerPool::WorkerPool(const std::vector<std::string>& targets, WorkerPoolOptions options)
    : options_(options) {
  links_.reserve(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    links_.push_back(std::make_shared<WorkerLink>(static_cast<uint32_t>(i), targets[i]));
  }
}

WorkerPool::~WorkerPool() { StopPolling(); }

void WorkerPool::StartPolling() {
  std::lock_guard<std::mutex> lock(mu_);
  if (poller_.joinable() || stopping_) return;
  poller_ = std::thread([this] { PollLoop(); });
}

void WorkerPool::StopPolling() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (poller_.joinable()) poller_.join();
}

void WorkerPool::PollOnce() {
  // All polls go out at once; the round ends when every answer (or deadline) is in.
  std::mutex done_mu;
  std::condition_variable done_cv;
  size_t pending = links_.size();
  for (auto& link : links_) {
    link->PollStats(options_.poll_timeout, [&](const shared::Status&) {
      std::lock_guard<std::mutex> lock(done_mu);
      if (--pending == 0) done_cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(done_mu);
  done_cv.wait(lock, [&] { return pending == 0; });
}

void WorkerPool::PollLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    PollOnce();
    lock.lock();
    wake_.wait_for(lock, options_.poll_interval, [this] { return stopping_; });
  }
}

std::shared_ptr<WorkerLink> WorkerPool::Pick(std::optional<uint32_t> exclude) {
  std::vector<WorkerLoad> loads(links_.size());  // [workers]
  for (size_t i = 0; i < links_.size(); ++i) {
    loads[i].healthy = links_[i]->healthy() && (!exclude || *exclude != i);
    loads[i].in_flight = links_[i]->in_flight();
  }
  const auto chosen = Route(loads, route_cursor_.fetch_add(1, std::memory_order_relaxed));
  if (!chosen) return nullptr;
  links_[*chosen]->BeginRequest();
  return links_[*chosen];
}

shared::Status WorkerPool::NoWorkerStatus() const {
  return shared::Unavailable(fmt::format("no healthy worker (0 of {} ready)", links_.size()));
}

size_t WorkerPool::HealthyCount() const {
  size_t n = 0;
  for (const auto& link : links_) n += link->healthy() ? 1 : 0;
  return n;
}

shared::Result<smallmind::v1::ModelInfo> WorkerPool::WaitForModelInfo(
    std::chrono::milliseconds timeout, std::stop_token stop) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "no worker configured";
  while (true) {
    for (auto& link : links_) {
      auto info = link->GetModelInfo(options_.poll_timeout);
      if (info.ok()) {
        link->SetHealthy(true);
        return info;
      }
      last_error = "worker " + std::to_string(link->index()) + " (" + link->target() +
                   "): " + info.status().message();
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(lock, stop, options_.poll_interval, [this] { return stopping_; }) ||
        stop.stop_requested()) {
      return shared::Status(shared::StatusCode::kCancelled,
                            "stopped while waiting for a worker to answer");
    }
  }
  return shared::Unavailable("no worker answered GetModelInfo within " +
                             std::to_string(timeout.count()) + " ms; last error: " + last_error);
}

}  // namespace smallmind::gateway

#include "gateway/workers/worker_pool.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "gateway/workers/router.h"
#include "shared/request_limits.h"
#include "shared/worker_stat_table.h"

namespace smallmind::gateway {

WorkerPool::WorkerPool(const std::vector<std::string>& endpoints, WorkerPoolOptions options)
    : options_(std::move(options)),
      members_(std::make_shared<const Members>()),
      endpoints_(endpoints, options_.resolver),
      prefixes_(options_.prefix_keys_per_worker, options_.prefix_ttl) {
  Refresh();
}

WorkerPool::~WorkerPool() { StopPolling(); }

std::shared_ptr<const WorkerPool::Members> WorkerPool::members() const {
  std::lock_guard<std::mutex> lock(members_mu_);
  return members_;
}

std::vector<std::shared_ptr<WorkerClient>> WorkerPool::Links() const { return *members(); }

size_t WorkerPool::size() const { return members()->size(); }

std::shared_ptr<WorkerClient> WorkerPool::link(size_t i) const {
  const std::shared_ptr<const Members> links = members();
  return i < links->size() ? (*links)[i] : nullptr;
}

void WorkerPool::Refresh() {
  std::lock_guard<std::mutex> refresh_lock(refresh_mu_);
  RefreshLocked();
}

void WorkerPool::SetTargets(const std::vector<std::string>& targets) {
  std::lock_guard<std::mutex> refresh_lock(refresh_mu_);
  endpoints_ = WorkerEndpoints(targets, options_.resolver);
  ids_.clear();
  {
    // Every old member leaves (RefreshLocked keeps an old link only for a target it still has).
    std::lock_guard<std::mutex> lock(members_mu_);
    for (const std::shared_ptr<WorkerClient>& l : *members_) {
      prefixes_.Forget(l->index());
      retired_.push_back(l);
    }
    members_ = std::make_shared<const Members>();
  }
  RefreshLocked();
}

void WorkerPool::RefreshLocked() {
  // Only the pool holds a retired link once its last request ended: drop it here, off gRPC's
  // threads.
  std::erase_if(retired_,
                [](const std::shared_ptr<WorkerClient>& l) { return l.use_count() == 1; });
  const std::shared_ptr<const Members> old = members();
  if (!old->empty() && !endpoints_.has_names()) return;
  const std::vector<std::string> targets = endpoints_.Resolve();
  auto next = std::make_shared<Members>();
  for (const std::string& target : targets) {
    auto same = std::find_if(old->begin(), old->end(),
                             [&](const auto& l) { return l->target() == target; });
    if (same != old->end()) {
      next->push_back(*same);
      continue;
    }
    const auto [id, first_sight] = ids_.try_emplace(target, static_cast<uint32_t>(ids_.size()));
    next->push_back(std::make_shared<WorkerClient>(id->second, target));
    if (endpoints_.has_names()) spdlog::info("worker {} ({}) joins", id->second, target);
  }
  std::sort(next->begin(), next->end(),
            [](const auto& a, const auto& b) { return a->index() < b->index(); });
  for (const std::shared_ptr<WorkerClient>& l : *old) {
    if (std::find(next->begin(), next->end(), l) != next->end()) continue;
    spdlog::info("worker {} ({}) leaves: its name no longer resolves to it", l->index(),
                 l->target());
    prefixes_.Forget(l->index());
    retired_.push_back(l);
  }
  std::lock_guard<std::mutex> lock(members_mu_);
  members_ = std::move(next);
}

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
  const std::shared_ptr<const Members> links = members();
  size_t pending = links->size();
  for (const auto& link : *links) {
    link->PollStats(options_.poll_timeout, options_.progress_window, [&](const shared::Status&) {
      std::lock_guard<std::mutex> lock(done_mu);
      if (--pending == 0) done_cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(done_mu);
  done_cv.wait(lock, [&] { return pending == 0; });
}

void WorkerPool::PollLoop() {
  auto next_resolve = std::chrono::steady_clock::now() + options_.resolve_interval;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    if (std::chrono::steady_clock::now() >= next_resolve) {
      Refresh();
      next_resolve = std::chrono::steady_clock::now() + options_.resolve_interval;
    }
    PollOnce();
    lock.lock();
    wake_.wait_for(lock, options_.poll_interval, [this] { return stopping_; });
  }
}

uint64_t WorkerPool::RequestTokens(const ValidatedRequest& request) {
  const smallmind::v1::GenerateRequest& proto = request.proto();
  const uint64_t prompt =
      request.prompt_token_count() > 0 ? request.prompt_token_count() : proto.prompt().size() / 4;
  const uint32_t max_new = proto.stopping().max_new_tokens();
  return prompt + (max_new > 0 ? max_new : shared::kDefaultMaxNewTokens);
}

std::vector<WorkerLoad> WorkerPool::Loads(const Members& links,
                                          const shared::PromptPrefixKeys* keys,
                                          std::optional<uint32_t> exclude) const {
  const auto now = PrefixMemory::Clock::now();
  std::vector<WorkerLoad> loads(links.size());  // [members]
  for (size_t i = 0; i < links.size(); ++i) {
    const WorkerClient& link = *links[i];
    WorkerLoad& w = loads[i];
    w.healthy = link.healthy() && (!exclude || *exclude != link.index());
    w.in_flight = link.in_flight();
    w.outstanding_tokens = link.outstanding_tokens();
    const std::optional<smallmind::v1::WorkerStats> stats = link.last_stats();
    const double capacity =
        stats ? shared::ReadWorkerStat(stats->values(), shared::WorkerStat::kKvPagesCapacity) : 0;
    if (capacity > 0) {
      w.kv_used =
          shared::ReadWorkerStat(stats->values(), shared::WorkerStat::kKvPagesUsed) / capacity;
    }
    if (keys && keys->count > 0) {
      std::span<const uint64_t> reported;
      if (stats) {
        reported = {stats->cached_prefix_keys().data(),
                    static_cast<size_t>(stats->cached_prefix_keys_size())};
      }
      w.prefix_match_bytes = prefixes_.MatchBytes(link.index(), *keys, reported, now);
    }
  }
  return loads;
}

std::shared_ptr<WorkerClient> WorkerPool::Pick(const ValidatedRequest& request,
                                               std::optional<uint32_t> exclude) {
  const smallmind::v1::GenerateRequest& proto = request.proto();
  const shared::PromptPrefixKeys keys =
      request.prompt_token_count() > 0
          ? shared::TokenPromptPrefixKeys(
                {proto.prompt_token_ids().ids().data(),
                 static_cast<size_t>(proto.prompt_token_ids().ids_size())})
          : shared::TextPromptPrefixKeys(proto.prompt());
  const std::shared_ptr<const Members> links = members();
  const std::vector<WorkerLoad> loads = Loads(*links, &keys, exclude);
  const auto chosen =
      Route(loads, route_cursor_.fetch_add(1, std::memory_order_relaxed), options_.route);
  if (!chosen) return nullptr;
  const std::shared_ptr<WorkerClient>& link = (*links)[chosen->worker];
  if (chosen->by_affinity) {
    spdlog::debug("request {}: worker {} by prefix affinity ({} bytes)", request.request_id(),
                  link->index(), loads[chosen->worker].prefix_match_bytes);
  }
  prefixes_.Remember(link->index(), keys, PrefixMemory::Clock::now());
  link->BeginRequest(RequestTokens(request));
  return link;
}

std::shared_ptr<WorkerClient> WorkerPool::Pick() {
  const std::shared_ptr<const Members> links = members();
  RouteOptions plain = options_.route;
  plain.prefix_affinity = false;
  const auto chosen = Route(Loads(*links, nullptr, std::nullopt),
                            route_cursor_.fetch_add(1, std::memory_order_relaxed), plain);
  if (!chosen) return nullptr;
  (*links)[chosen->worker]->BeginRequest();
  return (*links)[chosen->worker];
}

shared::Status WorkerPool::NoWorkerStatus() const {
  return shared::Unavailable(fmt::format("no healthy worker (0 of {} ready)", size()));
}

size_t WorkerPool::HealthyCount() const {
  size_t n = 0;
  for (const auto& link : *members()) n += link->healthy() ? 1 : 0;
  return n;
}

shared::Result<smallmind::v1::ModelInfo> WorkerPool::WaitForModelInfo(
    std::chrono::milliseconds timeout, std::stop_token stop) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "no worker configured";
  constexpr auto kNoteInterval = std::chrono::seconds(10);
  auto next_note = std::chrono::steady_clock::now() + kNoteInterval;
  while (true) {
    Refresh();  // at startup, workers behind a name may not be in DNS yet
    const std::shared_ptr<const Members> links = members();
    if (links->empty()) last_error = "the names in --worker-endpoints resolve to no address";
    for (const auto& link : *links) {
      auto info = link->GetModelInfo(options_.poll_timeout);
      if (info.ok()) {
        link->SetHealthy(true);
        return info;
      }
      last_error = "worker " + std::to_string(link->index()) + " (" + link->target() +
                   "): " + info.status().message();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    if (now >= next_note) {  // a wait for workers that cannot be reached is not silent
      spdlog::warn("waiting for a worker to answer (up to {} ms more): {}",
                   std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count(),
                   last_error);
      next_note = now + kNoteInterval;
    }
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

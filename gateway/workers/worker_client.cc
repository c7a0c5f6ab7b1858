#include "gateway/workers/worker_client.h"

#include <future>
#include <utility>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <spdlog/spdlog.h>

#include "gateway/workers/poll_verdict.h"
#include "shared/grpc_status.h"

namespace smallmind::gateway {
namespace {

using smallmind::v1::WorkerStats;

// A restarted worker comes back within a second or two; gRPC's default reconnect backoff (1 s
// growing to 120 s) would keep it out of rotation for minutes.
constexpr int kInitialReconnectBackoffMs = 100;
constexpr int kMaxReconnectBackoffMs = 1000;

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kInitialReconnectBackoffMs);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kInitialReconnectBackoffMs);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  // One connection per worker, not shared with other links to the same address.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

// Runs one callback unary call and waits for it. The promise is shared with the callback so that it
// outlives a set_value that races with this frame's return.
template <typename Response, typename Start>
shared::Result<Response> CallAndWait(std::chrono::milliseconds timeout, Start start) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  Response response;
  auto done = std::make_shared<std::promise<grpc::Status>>();
  std::future<grpc::Status> status = done->get_future();
  start(&context, &response, [done](grpc::Status s) { done->set_value(std::move(s)); });
  grpc::Status s = status.get();
  if (!s.ok()) return shared::FromGrpcStatus(s);
  return response;
}

}  // namespace

WorkerClient::WorkerClient(uint32_t index, std::string target)
    : index_(index),
      target_(std::move(target)),
      channel_(MakeChannel(target_)),
      stub_(smallmind::v1::Worker::NewStub(channel_)),
      poll_channel_(MakeChannel(target_)),
      poll_stub_(smallmind::v1::Worker::NewStub(poll_channel_)) {}

void WorkerClient::NoteProgress() {
  last_progress_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                          std::memory_order_relaxed);
}

std::optional<std::chrono::milliseconds> WorkerClient::SinceProgress() const {
  const int64_t at = last_progress_ns_.load(std::memory_order_relaxed);
  if (at < 0) return std::nullopt;
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      now - std::chrono::steady_clock::duration(at));
}

void WorkerClient::Judge(const grpc::Status& s, std::chrono::milliseconds progress_window) {
  PollFacts facts;
  facts.code = shared::FromGrpcStatus(s).code();
  facts.in_flight = in_flight();
  facts.since_progress = SinceProgress();
  const PollVerdict verdict = JudgePoll(facts, progress_window);
  const bool was_slow = slow_.exchange(verdict == PollVerdict::kSlow, std::memory_order_relaxed);
  if (verdict == PollVerdict::kHealthy) return SetHealthy(true);
  if (verdict == PollVerdict::kDown) return SetHealthy(false, s.error_message());
  if (!was_slow) {
    spdlog::warn(
        "worker {} ({}) answered Stats late ({}) but its streams progress ({} ms ago, {} in "
        "flight): slow, not down",
        index_, target_, s.error_message(), facts.since_progress->count(), facts.in_flight);
  }
}

void WorkerClient::SetHealthy(bool healthy, std::string_view why) {
  const bool was = healthy_.exchange(healthy, std::memory_order_acq_rel);
  if (was == healthy) return;
  if (healthy) {
    spdlog::info("worker {} ({}) is ready", index_, target_);
  } else {
    spdlog::warn("worker {} ({}) is unavailable: {}", index_, target_, why);
  }
}

void WorkerClient::PollStats(std::chrono::milliseconds timeout,
                             std::chrono::milliseconds progress_window,
                             std::function<void(const shared::Status&)> done) {
  struct Poll {
    grpc::ClientContext context;
    smallmind::v1::StatsRequest request;
    WorkerStats response;
  };
  auto poll = std::make_shared<Poll>();
  poll->context.set_deadline(std::chrono::system_clock::now() + timeout);
  poll_stub_->async()->Stats(
      &poll->context, &poll->request, &poll->response,
      [this, poll, progress_window, done = std::move(done)](grpc::Status s) mutable {
        if (s.ok()) {
          std::lock_guard<std::mutex> lock(stats_mu_);
          last_stats_ = poll->response;
        }
        Judge(s, progress_window);
        // The call's last reference goes before `done` lets the caller go on, perhaps to destroy
        // this link's channel: gRPC 1.51 aborts ("prior > 0") when the two race.
        poll.reset();
        done(shared::FromGrpcStatus(s));
      });
}

std::optional<WorkerStats> WorkerClient::last_stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return last_stats_;
}

shared::Result<WorkerStats> WorkerClient::Stats(std::chrono::milliseconds timeout) {
  return CallAndWait<WorkerStats>(timeout, [this](auto* context, auto* response, auto done) {
    static const smallmind::v1::StatsRequest kRequest;
    poll_stub_->async()->Stats(context, &kRequest, response, std::move(done));
  });
}

shared::Result<smallmind::v1::ModelInfo> WorkerClient::GetModelInfo(
    std::chrono::milliseconds timeout) {
  return CallAndWait<smallmind::v1::ModelInfo>(
      timeout, [this](auto* context, auto* response, auto done) {
        static const smallmind::v1::GetModelInfoRequest kRequest;
        stub_->async()->GetModelInfo(context, &kRequest, response, std::move(done));
      });
}

}  // namespace smallmind::gateway

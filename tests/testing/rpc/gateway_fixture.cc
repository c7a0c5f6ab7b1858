#include "tests/testing/rpc/gateway_fixture.h"

#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

#include <gtest/gtest.h>

#include "shared/worker_stat_table.h"

namespace smallmind::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// A gateway drains its streams, then gives its workers their SIGTERM grace; on a busy machine
// that can take a while. A bound against hangs, not a speed assertion.
constexpr milliseconds kStopBound{60000};

// The names left in `dir` (recursively), for a failure message; "" when it is empty.
std::string Leftovers(const std::string& dir) {
  std::string out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    out += ' ';
    out += it->path().string();
  }
  return out;
}

}  // namespace

shared::Result<std::unique_ptr<GatewayFixture>> GatewayFixture::Start(
    const GatewayOptions& options) {
  auto fixture = std::unique_ptr<GatewayFixture>(new GatewayFixture());
  std::vector<std::string> argv = {BinaryPath("smallmind-gateway"),
                                   "--port",
                                   "0",
                                   "--listen-host",
                                   "127.0.0.1",
                                   "--workers",
                                   std::to_string(options.workers),
                                   "--runtime-dir",
                                   fixture->runtime_dir()};
  if (!options.model.empty()) argv.insert(argv.end(), {"--model", options.model});
  if (options.http) argv.insert(argv.end(), {"--http-port", "0"});
  if (options.metrics) argv.insert(argv.end(), {"--metrics-port", "0"});
  if (!options.api_key.empty()) argv.insert(argv.end(), {"--api-keys", options.api_key});
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  SM_ASSIGN_OR_RETURN(fixture->process_, ChildProcess::Spawn(argv));
  // Generous bound: workers load the model and the machine may be busy running other tests.
  if (options.http) {  // printed just before the gRPC line
    SM_ASSIGN_OR_RETURN(std::string http_line,
                        fixture->process_->WaitForLine("HTTP at", milliseconds(60000)));
    fixture->http_address_ = http_line.substr(http_line.rfind(' ') + 1);
  }
  SM_ASSIGN_OR_RETURN(std::string line,
                      fixture->process_->WaitForLine("listening on", milliseconds(60000)));
  fixture->address_ = line.substr(line.rfind(' ') + 1);
  if (options.metrics) {  // printed just after the gRPC line
    SM_ASSIGN_OR_RETURN(std::string metrics_line,
                        fixture->process_->WaitForLine("metrics on port", milliseconds(60000)));
    fixture->metrics_port_ = std::stoi(metrics_line.substr(metrics_line.rfind(' ') + 1));
  }
  fixture->channel_ = grpc::CreateChannel(fixture->address_, grpc::InsecureChannelCredentials());
  fixture->stub_ = v1::Inference::NewStub(fixture->channel_);
  fixture->worker_stubs_.resize(static_cast<size_t>(options.workers));
  for (int attempt = 0; attempt < 600; ++attempt) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
    if (!options.api_key.empty()) ctx.AddMetadata("authorization", "Bearer " + options.api_key);
    v1::ModelInfo info;
    grpc::Status s = fixture->stub_->GetModelInfo(&ctx, v1::GetModelInfoRequest(), &info);
    if (s.ok() && static_cast<int>(info.workers()) == options.workers) return fixture;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return shared::Unavailable("gateway at " + fixture->address_ + " never reported " +
                             std::to_string(options.workers) + " ready workers");
}

GatewayFixture::GatewayFixture() : runtime_dir_("gateway") {}

GatewayFixture::~GatewayFixture() {
  if (stopped_.has_value()) return;  // whoever called Stop() has its answer
  const shared::Status status = Stop();
  if (!status.ok()) ADD_FAILURE() << status.ToString();
}

shared::Status GatewayFixture::Stop() {
  if (stopped_.has_value()) return *stopped_;
  if (process_ == nullptr) {
    stopped_ = shared::Status::Ok();
    return *stopped_;
  }
  // Close this side's connections first: an idle client connection is only noticed as closed
  // by the server (gateway or worker) once the client polls it again, which costs gRPC's 5 s
  // backup poll interval on each shutdown.
  worker_stubs_.clear();
  stub_.reset();
  channel_.reset();
  const int wait_status = process_->Terminate(kStopBound);
  if (wait_status == -1) {
    stopped_ = shared::Unavailable("the gateway did not exit within " +
                                   std::to_string(kStopBound.count()) + " ms of SIGTERM");
  } else if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    stopped_ = shared::Internal("the gateway did not exit cleanly after SIGTERM (wait status " +
                                std::to_string(wait_status) + ")");
  } else if (const std::string left = Leftovers(runtime_dir()); !left.empty()) {
    stopped_ = shared::Internal("the gateway left its runtime directory behind:" + left);
  } else {
    stopped_ = shared::Status::Ok();
  }
  return *stopped_;
}

std::string GatewayFixture::WorkerTarget(size_t index) const {
  const std::string socket = "worker-" + std::to_string(index) + ".sock";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(runtime_dir(), ec)) {
    if (std::filesystem::exists(entry.path() / socket, ec)) {
      return "unix:" + (entry.path() / socket).string();
    }
  }
  return "";
}

shared::Result<v1::WorkerStats> GatewayFixture::WorkerStats(size_t index) {
  if (index >= worker_stubs_.size()) {
    return shared::InvalidArgument("no worker " + std::to_string(index));
  }
  if (worker_stubs_[index] == nullptr) {
    const std::string target = WorkerTarget(index);
    if (target.empty()) {
      return shared::NotFound("no socket of worker " + std::to_string(index) + " under " +
                              runtime_dir());
    }
    worker_stubs_[index] =
        v1::Worker::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
  v1::WorkerStats stats;
  const grpc::Status s = worker_stubs_[index]->Stats(&ctx, v1::StatsRequest(), &stats);
  if (!s.ok()) {
    return shared::Unavailable("Stats of worker " + std::to_string(index) +
                               " failed: " + s.error_message());
  }
  return stats;
}

shared::Result<v1::WorkerStats> GatewayFixture::WaitForIdleWorker(size_t index) {
  shared::Result<v1::WorkerStats> stats = WorkerStats(index);
  for (int polls = 1; polls < 500 && stats.ok(); ++polls) {
    using shared::WorkerStat;
    const auto stat = [&](WorkerStat s) { return shared::ReadWorkerStat(stats->values(), s); };
    if (stat(WorkerStat::kKvPagesUsed) == 0 &&
        stat(WorkerStat::kRunning) + stat(WorkerStat::kWaiting) == 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stats = WorkerStats(index);
  }
  return stats;
}

std::vector<uint32_t> GenerateOutcome::token_ids() const {
  std::vector<uint32_t> ids;
  for (const auto& m : messages) ids.insert(ids.end(), m.token_ids().begin(), m.token_ids().end());
  return ids;
}

std::string GenerateOutcome::text() const {
  std::string text;
  for (const auto& m : messages) text += m.text();
  return text;
}

GenerateOutcome RunGenerate(v1::Inference::Stub& stub, const v1::GenerateRequest& request) {
  GenerateOutcome out;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + seconds(120));
  auto reader = stub.Generate(&ctx, request);
  v1::GenerateResponse msg;
  while (reader->Read(&msg)) out.messages.push_back(msg);
  out.status = reader->Finish();
  return out;
}

}  // namespace smallmind::testing

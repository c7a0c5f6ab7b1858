// GatewayFixture: starts a real smallmind-gateway process (which spawns real workers) on a free
// loopback port, with its worker sockets in a runtime directory the fixture owns, waits until it
// serves, and hands out stubs (also to each worker directly). Stops the gateway with SIGTERM and
// checks that it exited cleanly and removed its socket directory. Used by golden, integration and
// Python tests. Not thread-safe; stubs are.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "shared/status.h"
#include "smallmind/v1/inference.grpc.pb.h"
#include "smallmind/v1/worker.grpc.pb.h"
#include "tests/testing/child_process.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::testing {

struct GatewayOptions {
  std::string model = "builtin:tiny";  // "": no --model, the gateway's default
  int workers = 1;
  std::vector<std::string> extra_args;
  bool http = false;     // also serve the HTTP door (--http-port 0); see http_address()
  bool metrics = false;  // also serve /metrics (--metrics-port 0); see metrics_port()
  std::string api_key;   // non-empty: --api-keys with it; the fixture's readiness calls send it
};

class GatewayFixture {
 public:
  // Starts the gateway and waits (bounded) until GetModelInfo answers with every worker ready.
  static shared::Result<std::unique_ptr<GatewayFixture>> Start(const GatewayOptions& options);
  // Stop() unless it was called; a failure to stop cleanly is then a test failure (ADD_FAILURE).
  ~GatewayFixture();
  GatewayFixture(const GatewayFixture&) = delete;
  GatewayFixture& operator=(const GatewayFixture&) = delete;

  // Drops the fixture's stubs and channels, sends SIGTERM, then waits (bounded) for the gateway to
  // drain, stop its workers and exit. Fails when it did not exit, exited non-zero, or left anything
  // in its runtime directory (the worker socket directory it made there). Idempotent: later calls
  // return the first answer; stub() must not be used after it.
  shared::Status Stop();

  const std::string& address() const { return address_; }
  // "http://127.0.0.1:PORT" of the HTTP door when GatewayOptions::http; "" otherwise.
  const std::string& http_address() const { return http_address_; }
  // The /metrics port when GatewayOptions::metrics; -1 otherwise.
  int metrics_port() const { return metrics_port_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  v1::Inference::Stub& stub() { return *stub_; }
  ChildProcess& process() { return *process_; }
  // The directory passed as --runtime-dir (the gateway makes its socket directory inside).
  const std::string& runtime_dir() const { return runtime_dir_.path(); }

  // Asks worker `index` for its Stats directly over its Unix socket (bounded by a deadline).
  shared::Result<v1::WorkerStats> WorkerStats(size_t index);
  // Polls WorkerStats(index) (bounded: 500 polls, 10 ms apart) until nothing runs or waits there
  // and no KV page is in use; returns the last answer, idle or not, for the caller to check.
  shared::Result<v1::WorkerStats> WaitForIdleWorker(size_t index);
  // "unix:<runtime_dir>/smallmind-<pid>-XXXXXX/worker-<index>.sock", or "" when not there.
  std::string WorkerTarget(size_t index) const;

 private:
  GatewayFixture();

  ScopedTempDir runtime_dir_;
  std::unique_ptr<ChildProcess> process_;
  std::string address_;
  std::string http_address_;
  int metrics_port_ = -1;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Inference::Stub> stub_;
  std::vector<std::unique_ptr<v1::Worker::Stub>> worker_stubs_;  // by index, made on first use
  std::optional<shared::Status> stopped_;
};

// Runs one Generate stream to the end; collects every message.
struct GenerateOutcome {
  grpc::Status status;
  std::vector<v1::GenerateResponse> messages;
  std::vector<uint32_t> token_ids() const;
  std::string text() const;
  const v1::GenerateResponse* last() const { return messages.empty() ? nullptr : &messages.back(); }
};
GenerateOutcome RunGenerate(v1::Inference::Stub& stub, const v1::GenerateRequest& request);

}  // namespace smallmind::testing

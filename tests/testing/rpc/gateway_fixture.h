// GatewayFixture: starts a real smallmind-gateway process (which spawns real workers) on a free
// loopback port, waits until it serves, and hands out stubs. Used by golden, integration and
// Python tests. Not thread-safe; stubs are.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "shared/status.h"
#include "smallmind/v1/inference.grpc.pb.h"
#include "tests/testing/child_process.h"

namespace smallmind::testing {

struct GatewayOptions {
  std::string model = "builtin:tiny";
  int workers = 1;
  std::vector<std::string> extra_args;
};

class GatewayFixture {
 public:
  // Starts the gateway and waits (bounded) until GetModelInfo answers with every worker ready.
  static shared::Result<std::unique_ptr<GatewayFixture>> Start(const GatewayOptions& options);

  const std::string& address() const { return address_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  v1::Inference::Stub& stub() { return *stub_; }
  ChildProcess& process() { return *process_; }

 private:
  std::unique_ptr<ChildProcess> process_;
  std::string address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Inference::Stub> stub_;
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

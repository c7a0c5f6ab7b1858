// Client: the `smallmind` commands' connection to a gateway (or a worker's Inference-compatible
// address): one channel and stub, plus the API key every call carries. ClientFlags are the flags
// every command takes (--addr, --api-key). The stub is thread-safe; Prepare is const.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <CLI/CLI.hpp>

#include "smallmind/v1/inference.grpc.pb.h"

namespace smallmind::cli {

struct ClientFlags {
  std::string addr = "localhost:50051";
  std::string api_key;  // sent as `authorization: Bearer <key>` when set
};

// Adds --addr and --api-key (env SMALLMIND_API_KEY) to a command.
void AddClientFlags(CLI::App& command, ClientFlags& flags);

class Client {
 public:
  explicit Client(const ClientFlags& flags);

  // Adds the API key to a call's metadata.
  void Prepare(grpc::ClientContext* context) const;
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  v1::Inference::Stub& stub() { return *stub_; }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Inference::Stub> stub_;
  std::string api_key_;
};

// Prints "smallmind: CODE: message" to stderr; returns the exit code (1).
int PrintRpcError(const grpc::Status& status);

}  // namespace smallmind::cli

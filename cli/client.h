// Client: the `smallmind` commands' connection to a gateway (or a worker's Inference-compatible
// address): one channel and stub, plaintext or TLS, plus the API key every call carries.
// ClientFlags are the flags every command takes (--addr, --api-key, --tls*). The stub is
// thread-safe; Prepare is const.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <CLI/CLI.hpp>

#include "shared/status.h"
#include "smallmind/v1/inference.grpc.pb.h"

namespace smallmind::cli {

struct ClientFlags {
  std::string addr = "localhost:50051";
  std::string api_key;  // sent as `authorization: Bearer <key>` when set
  // TLS is on when `tls` is set or any file below is given.
  bool tls = false;
  std::string tls_ca;           // PEM roots that sign the server's certificate; "" = the system's
  std::string tls_cert;         // PEM client certificate chain, for a gateway with --tls-client-ca
  std::string tls_key;          // its private key
  std::string tls_server_name;  // name to check the certificate against; "" = the host of --addr
  bool tls_enabled() const { return tls || !tls_ca.empty() || !tls_cert.empty(); }
};

// Adds --addr, --api-key (env SMALLMIND_API_KEY), --tls, --tls-ca, --tls-cert, --tls-key and
// --tls-server-name to a command.
void AddClientFlags(CLI::App& command, ClientFlags& flags);

class Client {
 public:
  // Reads the TLS files (an error names the flag and file) and opens the channel lazily.
  static shared::Result<Client> Connect(const ClientFlags& flags);

  // Adds the API key to a call's metadata.
  void Prepare(grpc::ClientContext* context) const;
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  v1::Inference::Stub& stub() { return *stub_; }

 private:
  Client(std::shared_ptr<grpc::Channel> channel, std::string api_key);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Inference::Stub> stub_;
  std::string api_key_;
};

// The canonical name of a gRPC code ("RESOURCE_EXHAUSTED"); "UNKNOWN" outside the 17 codes.
const char* GrpcCodeName(grpc::StatusCode code);
// "CODE: message"; an UNIMPLEMENTED without a message (a server with no smallmind Inference
// service: a worker's address, say) says so and where to point instead.
std::string DescribeRpcError(const grpc::Status& status);
// Prints "smallmind: " + DescribeRpcError(status) to stderr; returns the exit code (1).
int PrintRpcError(const grpc::Status& status);

// The whole file at `path`; NOT_FOUND "WHAT PATH: reason" when it cannot be read (`what`: the
// flag that named it, or what it is).
shared::Result<std::string> ReadFile(const std::string& what, const std::string& path);

}  // namespace smallmind::cli

#include "cli/client.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace smallmind::cli {

void AddClientFlags(CLI::App& command, ClientFlags& flags) {
  command.add_option("--addr", flags.addr, "the gateway (or a worker) to call")
      ->type_name("HOST:PORT");
  // From the environment, the key stays out of `ps` output; the flag wins when both are set.
  command.add_option("--api-key", flags.api_key, "API key for a gateway started with --api-keys")
      ->type_name("KEY")
      ->envname("SMALLMIND_API_KEY")
      ->default_str("none");
  command.add_flag("--tls", flags.tls,
                   "connect with TLS, checking the server against the system's CA certificates");
  command
      .add_option("--tls-ca", flags.tls_ca, "PEM CA certificates that signed the server's (TLS)")
      ->type_name("PATH")
      ->default_str("the system's");
  command
      .add_option("--tls-cert", flags.tls_cert,
                  "PEM client certificate, for a gateway that requires one (mutual TLS)")
      ->type_name("PATH")
      ->default_str("none");
  command.add_option("--tls-key", flags.tls_key, "PEM private key of --tls-cert")
      ->type_name("PATH")
      ->default_str("none");
  command
      .add_option("--tls-server-name", flags.tls_server_name,
                  "name the server's certificate must carry")
      ->type_name("NAME")
      ->default_str("the host of --addr");
}

shared::Result<std::string> ReadFile(const std::string& what, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return shared::NotFound(what + " " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

namespace {

shared::Result<std::shared_ptr<grpc::ChannelCredentials>> Credentials(const ClientFlags& flags) {
  if (!flags.tls_enabled()) return grpc::InsecureChannelCredentials();
  if (flags.tls_cert.empty() != flags.tls_key.empty()) {
    return shared::InvalidArgument("--tls-cert and --tls-key go together: give both or neither");
  }
  grpc::SslCredentialsOptions options;
  if (!flags.tls_ca.empty()) {
    SM_ASSIGN_OR_RETURN(options.pem_root_certs, ReadFile("--tls-ca", flags.tls_ca));
  }
  if (!flags.tls_cert.empty()) {
    SM_ASSIGN_OR_RETURN(options.pem_cert_chain, ReadFile("--tls-cert", flags.tls_cert));
    SM_ASSIGN_OR_RETURN(options.pem_private_key, ReadFile("--tls-key", flags.tls_key));
  }
  return grpc::SslCredentials(options);
}

}  // namespace

shared::Result<Client> Client::Connect(const ClientFlags& flags) {
  SM_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials, Credentials(flags));
  grpc::ChannelArguments args;
  if (!flags.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(flags.tls_server_name);
  }
  return Client(grpc::CreateCustomChannel(flags.addr, credentials, args), flags.api_key);
}

Client::Client(std::shared_ptr<grpc::Channel> channel, std::string api_key)
    : channel_(std::move(channel)),
      stub_(v1::Inference::NewStub(channel_)),
      api_key_(std::move(api_key)) {}

void Client::Prepare(grpc::ClientContext* context) const {
  if (!api_key_.empty()) context->AddMetadata("authorization", "Bearer " + api_key_);
}

const char* GrpcCodeName(grpc::StatusCode code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  const int i = static_cast<int>(code);
  return i >= 0 && i <= 16 ? kNames[i] : "UNKNOWN";
}

std::string DescribeRpcError(const grpc::Status& status) {
  std::string out = std::string(GrpcCodeName(status.error_code())) + ": ";
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED && status.error_message().empty()) {
    return out +
           "the server has no smallmind.v1.Inference service (a worker's address? point --addr at "
           "the gateway, or give smallmind bench --worker)";
  }
  return out + status.error_message();
}

int PrintRpcError(const grpc::Status& status) {
  std::fprintf(stderr, "smallmind: %s\n", DescribeRpcError(status).c_str());
  return 1;
}

}  // namespace smallmind::cli

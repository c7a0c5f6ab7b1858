#include "cli/client.h"

#include <cstdio>

namespace smallmind::cli {

void AddClientFlags(CLI::App& command, ClientFlags& flags) {
  command.add_option("--addr", flags.addr, "the gateway (or a worker) to call")
      ->type_name("HOST:PORT");
  // From the environment, the key stays out of `ps` output; the flag wins when both are set.
  command.add_option("--api-key", flags.api_key, "API key for a gateway started with --api-keys")
      ->type_name("KEY")
      ->envname("SMALLMIND_API_KEY")
      ->default_str("none");
}

Client::Client(const ClientFlags& flags)
    : channel_(grpc::CreateChannel(flags.addr, grpc::InsecureChannelCredentials())),
      stub_(v1::Inference::NewStub(channel_)),
      api_key_(flags.api_key) {}

void Client::Prepare(grpc::ClientContext* context) const {
  if (!api_key_.empty()) context->AddMetadata("authorization", "Bearer " + api_key_);
}

int PrintRpcError(const grpc::Status& status) {
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
  const int code = static_cast<int>(status.error_code());
  const char* name = code >= 0 && code <= 16 ? kNames[code] : "UNKNOWN";
  std::fprintf(stderr, "smallmind: %s: %s\n", name, status.error_message().c_str());
  return 1;
}

}  // namespace smallmind::cli

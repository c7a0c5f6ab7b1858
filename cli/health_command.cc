#include "cli/health_command.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/generic/generic_stub.h>

namespace smallmind::cli {

HealthCommand::HealthCommand(CLI::App& parent)
    : Command(parent, "health", "exit 0 when the server (a gateway or a worker) reports SERVING") {
  AddClientFlags(app(), client_);
}

// grpc.health.v1.Health/Check with hand-encoded messages (the health proto is not installed):
// the request for the whole server is empty; a SERVING response is field 1 = varint 1 (08 01).
shared::Result<int> HealthCommand::Run() const {
  SM_ASSIGN_OR_RETURN(Client client, Client::Connect(client_));
  grpc::GenericStub stub(client.channel());
  grpc::ClientContext context;
  client.Prepare(&context);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Slice empty(std::string{});
  grpc::ByteBuffer request(&empty, 1);  // a default ByteBuffer is no message at all
  grpc::ByteBuffer response;
  std::mutex mu;
  std::condition_variable cv;
  std::optional<grpc::Status> status;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   std::lock_guard<std::mutex> lock(mu);
                   status = std::move(s);
                   cv.notify_all();
                 });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return status.has_value(); });
  if (!status->ok()) return PrintRpcError(*status);
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  const bool serving = bytes == std::string("\x08\x01", 2);
  std::printf("%s\n", serving ? "SERVING" : "NOT_SERVING");
  return serving ? 0 : 1;
}

}  // namespace smallmind::cli

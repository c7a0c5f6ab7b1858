#include "tests/testing/rpc/gateway_fixture.h"

#include <chrono>
#include <thread>

namespace smallmind::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

shared::Result<std::unique_ptr<GatewayFixture>> GatewayFixture::Start(
    const GatewayOptions& options) {
  std::vector<std::string> argv = {BinaryPath("smallmind-gateway"),
                                   "--port",
                                   "0",
                                   "--listen-host",
                                   "127.0.0.1",
                                   "--model",
                                   options.model,
                                   "--workers",
                                   std::to_string(options.workers)};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  auto fixture = std::unique_ptr<GatewayFixture>(new GatewayFixture());
  SM_ASSIGN_OR_RETURN(fixture->process_, ChildProcess::Spawn(argv));
  // Generous bound: workers load the model and the machine may be busy running other tests.
  SM_ASSIGN_OR_RETURN(std::string line,
                      fixture->process_->WaitForLine("listening on", milliseconds(60000)));
  fixture->address_ = line.substr(line.rfind(' ') + 1);
  fixture->channel_ = grpc::CreateChannel(fixture->address_, grpc::InsecureChannelCredentials());
  fixture->stub_ = v1::Inference::NewStub(fixture->channel_);
  for (int attempt = 0; attempt < 600; ++attempt) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ModelInfo info;
    grpc::Status s = fixture->stub_->GetModelInfo(&ctx, v1::GetModelInfoRequest(), &info);
    if (s.ok() && static_cast<int>(info.workers()) == options.workers) return fixture;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return shared::Unavailable("gateway at " + fixture->address_ + " never reported " +
                             std::to_string(options.workers) + " ready workers");
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

#include "gateway/gateway.h"

#include <chrono>
#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

namespace smallmind::gateway {
namespace {

// Reactors hold a worker call each; once the server has cancelled them, their worker calls end
// within a round trip.
constexpr std::chrono::milliseconds kReactorDrainTimeout{5000};
constexpr char kServiceName[] = "smallmind.v1.Inference";

bool IsWildcardHost(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]";
}

}  // namespace

Gateway::Gateway(GatewayConfig config)
    : config_(std::move(config)), env_(std::make_shared<RelayEnv>()) {
  env_->options = config_.relay;
}

Gateway::~Gateway() { Shutdown(); }

std::string Gateway::connect_address() const {
  const std::string host = IsWildcardHost(config_.listen_host) ? "127.0.0.1" : config_.listen_host;
  return fmt::format("{}:{}", host, port_);
}

shared::Status Gateway::Start(std::stop_token stop) {
  SM_RETURN_IF_ERROR(config_.Validate());
  SM_RETURN_IF_ERROR(StartWorkers(stop));
  SM_RETURN_IF_ERROR(StartServer());
  spdlog::info("serving {} ({}, vocab {}, context {}) with {} worker(s) on {}:{}",
               model_info_.model(), model_info_.architecture(), model_info_.vocab_size(),
               model_info_.context_length(), env_->pool->size(), config_.listen_host, port_);
  return shared::Status::Ok();
}

shared::Status Gateway::StartWorkers(std::stop_token stop) {
  std::vector<std::string> targets = config_.worker_endpoints;
  if (targets.empty()) {
    SM_ASSIGN_OR_RETURN(supervisor_, WorkerSupervisor::Create(config_.model, config_.tokenizer,
                                                              config_.workers, config_.supervisor));
    targets = supervisor_->targets();
  }
  env_->pool = std::make_shared<WorkerPool>(targets, config_.pool);
  std::shared_ptr<WorkerPool> pool = env_->pool;
  if (supervisor_) {
    const auto timeout = config_.pool.poll_timeout;
    SM_RETURN_IF_ERROR(supervisor_->Start(
        [pool, timeout](size_t i) { return pool->link(i)->Stats(timeout).status(); },
        [pool](size_t i) { pool->link(i)->SetHealthy(false, "its process exited"); }, stop));
  }
  SM_ASSIGN_OR_RETURN(model_info_, pool->WaitForModelInfo(config_.attach_timeout, stop));
  if (model_info_.vocab_size() == 0 || model_info_.context_length() == 0) {
    return shared::Internal(fmt::format("worker reported vocab_size {} and context_length {}",
                                        model_info_.vocab_size(), model_info_.context_length()));
  }
  pool->PollOnce();
  pool->StartPolling();
  return shared::Status::Ok();
}

shared::Status Gateway::StartServer() {
  service_ = std::make_unique<InferenceService>(env_, config_.api_keys);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  const bool bare_ipv6 =
      config_.listen_host.find(':') != std::string::npos && config_.listen_host.front() != '[';
  const std::string address = bare_ipv6 ? fmt::format("[{}]:{}", config_.listen_host, config_.port)
                                        : fmt::format("{}:{}", config_.listen_host, config_.port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) {
    server_.reset();
    return shared::Unavailable(fmt::format("cannot listen on {} (address in use?)", address));
  }
  if (auto* health = server_->GetHealthCheckService()) {
    health->SetServingStatus(true);
    health->SetServingStatus(kServiceName, true);
  }
  return shared::Status::Ok();
}

void Gateway::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (server_) {
    if (auto* health = server_->GetHealthCheckService()) health->SetServingStatus(false);
    spdlog::info("draining {} stream(s) for at most {} ms", env_->active.count(),
                 config_.drain_timeout.count());
    server_->Shutdown(std::chrono::system_clock::now() + config_.drain_timeout);
  }
  if (!env_->active.WaitUntilZero(kReactorDrainTimeout)) {
    spdlog::error("{} stream(s) still waiting on their worker after shutdown",
                  env_->active.count());
  }
  if (env_->pool) env_->pool->StopPolling();
  if (supervisor_) supervisor_->Stop();
  spdlog::info("gateway stopped");
}

}  // namespace smallmind::gateway

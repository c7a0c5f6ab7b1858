#include "gateway/gateway.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>
#include <utility>

#include <grpc/grpc.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "gateway/grpc/listen_address.h"
#include "gateway/models/model_catalog.h"
#include "gateway/workers/stale_runtime_files.h"
#include "shared/request_limits.h"

namespace smallmind::gateway {
namespace {

// Reactors hold a worker call each; once the server has cancelled them, their worker calls end
// within a round trip.
constexpr std::chrono::milliseconds kReactorDrainTimeout{5000};
constexpr char kServiceName[] = "smallmind.v1.Inference";

}  // namespace

Gateway::Gateway(GatewayConfig config)
    : config_(std::move(config)),
      api_keys_(std::make_shared<ApiKeyStore>(config_.api_keys, config_.api_keys_file)),
      env_(std::make_shared<RelayEnv>()) {
  env_->options = config_.relay;
}

Gateway::~Gateway() { Shutdown(); }

std::string Gateway::listen_address() const {
  return FormatListenAddress(config_.listen_host, port_);
}

std::string Gateway::connect_address() const {
  const std::string host = IsWildcardHost(config_.listen_host) ? "127.0.0.1" : config_.listen_host;
  return fmt::format("{}:{}", host, port_);
}

shared::Status Gateway::Start(std::stop_token stop) {
  SM_RETURN_IF_ERROR(config_.Validate());
  SM_RETURN_IF_ERROR(LoadSecurity());
  // Before any worker exists: a second gateway on a taken port must not start (and with port
  // reuse off below, gRPC would refuse it anyway, but only after the workers were up).
  SM_RETURN_IF_ERROR(CheckPortFree(config_.listen_host, config_.port));
  if (config_.http.enabled()) {
    // The HTTP door binds after the workers answer (it needs their model): refuse a taken
    // --http-port now, before anything is spawned.
    shared::Status http_free = CheckPortFree(config_.listen_host, config_.http.port);
    if (!http_free.ok()) {
      return shared::Status(http_free.code(), "--http-port: " + http_free.message());
    }
  }
  SM_RETURN_IF_ERROR(StartMetrics());
  SM_RETURN_IF_ERROR(StartWorkers(stop));
  SM_RETURN_IF_ERROR(StartServer());
  SM_RETURN_IF_ERROR(StartDoors());
  StartListenerWatch();
  spdlog::info("serving {} as `{}` ({}, vocab {}, context {}) with {} worker(s) on {}",
               model_info_.model(), fmt::join(env_->served_models.names(), "`, `"),
               model_info_.architecture(), model_info_.vocab_size(), model_info_.context_length(),
               env_->pool->size(), listen_address());
  if (residency_->size() > 1) {
    spdlog::info("{} models in the catalog ({}); the others load on first use", residency_->size(),
                 residency_->catalog().NameList());
  }
  return shared::Status::Ok();
}

shared::Status Gateway::LoadSecurity() {
  SM_RETURN_IF_ERROR(api_keys_->Load());
  if (api_keys_->enabled()) {
    spdlog::info("API keys required: {} key(s){}", api_keys_->size(),
                 api_keys_->file().empty() ? "" : " (file " + api_keys_->file() + ")");
  } else {
    spdlog::warn("no API keys configured: anyone who can reach the port can use the service");
  }
  if (config_.tls.enabled()) {
    SM_ASSIGN_OR_RETURN(tls_, TlsCredentials::Load(config_.tls));
    spdlog::info("TLS on the public port: {}{}", tls_->subject(),
                 tls_->requires_client_cert() ? "; client certificates required" : "");
  }
  return shared::Status::Ok();
}

shared::Status Gateway::ReloadApiKeys() {
  if (api_keys_->file().empty()) {
    spdlog::warn("nothing to reload: no --api-keys-file");
    return shared::FailedPrecondition("no --api-keys-file to reload");
  }
  shared::Status status = api_keys_->Load();
  if (status.ok()) {
    spdlog::info("reloaded {}: {} key(s) accepted", api_keys_->file(), api_keys_->size());
  } else {
    spdlog::error("kept the {} key(s) in use: {}", api_keys_->size(), status.message());
  }
  return status;
}

// Before the workers, so that a busy --metrics-port stops the start before anything is spawned.
shared::Status Gateway::StartMetrics() {
  if (config_.metrics_port < 0) return shared::Status::Ok();
  SM_ASSIGN_OR_RETURN(metrics_endpoint_,
                      MetricsEndpoint::Start(config_.listen_host, config_.metrics_port, metrics_));
  spdlog::info("metrics on http://{}:{}/metrics", config_.listen_host, metrics_endpoint_->port());
  return shared::Status::Ok();
}

// The catalog: the --model flags and --models-dir, or the one model attached workers serve.
shared::Result<ModelCatalog> Gateway::BuildCatalog(ResidencyOptions& options,
                                                   std::stop_token stop) {
  if (config_.worker_endpoints.empty()) {
    ReclaimStaleRuntimeFiles(config_.supervisor.runtime_dir);
    return ModelCatalog::FromFlags(config_.ModelFlags(), config_.models_dir,
                                   config_.served_model_names);
  }
  options.attached_pool = std::make_shared<WorkerPool>(config_.worker_endpoints, config_.pool);
  SM_ASSIGN_OR_RETURN(options.attached_info,
                      options.attached_pool->WaitForModelInfo(config_.attach_timeout, stop));
  options.attached_pool->PollOnce();
  options.attached_pool->StartPolling();
  CatalogEntry entry;
  entry.names = ServedModels(config_.served_model_names, options.attached_info.model()).names();
  return ModelCatalog::Build({std::move(entry)}, {});
}

// One RelayEnv per catalogued model (env_ is the first's), on the residency's pool and gate.
void Gateway::BuildModelEnvs() {
  for (size_t i = 0; i < residency_->size(); ++i) {
    std::shared_ptr<RelayEnv> env = i == 0 ? env_ : std::make_shared<RelayEnv>();
    env->options = config_.relay;
    // The relays count into the gateway's metrics, labelled by model (aliasing: kept alive by
    // metrics_).
    env->metrics = std::shared_ptr<RequestMetrics>(
        metrics_, &metrics_->requests(residency_->catalog().entries()[i].id()));
    env->pool = residency_->pool(i);
    env->admission = residency_->gate(i);
    env->served_models = ServedModels(residency_->catalog().entries()[i].names, "");
    residency_->SetInFlight(i, [live = env.get()] { return live->active.count(); });
    envs_.push_back(std::move(env));
  }
  routes_ = std::make_unique<ModelRoutes>(*residency_, envs_);
  for (const auto& env : envs_) env->models = routes_.get();
}

// Every model's workers on /metrics, labelled model="<id>".
void Gateway::AttachWorkerMetrics() {
  for (size_t i = 0; i < residency_->size(); ++i) {
    WorkerMetricsSources sources;
    sources.supervisor_restarts = [residency = residency_.get(), i](uint32_t k) {
      return residency->Restarts(i, k);
    };
    // The model's gateway queue counts in smallmind_request_queue_depth. The env shares the gate
    // that owns the queue and may go before the metrics endpoint stops: the queue is read only
    // while the env lives.
    sources.gateway_queued = [env = std::weak_ptr<RelayEnv>(envs_[i]),
                              queue = &residency_->queue(i)]() -> uint64_t {
      const std::shared_ptr<RelayEnv> live = env.lock();
      return live ? queue->counts().waiting : 0;
    };
    metrics_->AttachWorkers(residency_->pool(i), std::move(sources),
                            residency_->catalog().entries()[i].id());
  }
}

shared::Status Gateway::StartWorkers(std::stop_token stop) {
  ResidencyOptions options;
  options.memory_budget_bytes = static_cast<uint64_t>(config_.memory_budget_mb) << 20;
  options.keep_alive = config_.keep_alive;
  options.workers = config_.workers;
  options.tokenizer = config_.tokenizer;
  options.supervisor = config_.supervisor;
  options.pool = config_.pool;
  options.admission = config_.admission;
  options.info_timeout = config_.attach_timeout;
  SM_ASSIGN_OR_RETURN(ModelCatalog catalog, BuildCatalog(options, stop));
  residency_ = std::make_unique<ModelResidency>(std::move(catalog), std::move(options));
  BuildModelEnvs();
  admission_ = &residency_->queue(0);
  AttachWorkerMetrics();
  // The default model loads now, on this thread: the doors need its facts (chat template,
  // context length); the others load on first use.
  SM_RETURN_IF_ERROR(residency_->LoadNow(0, stop));
  model_info_ = *residency_->Status(0).info;
  if (model_info_.vocab_size() == 0 || model_info_.context_length() == 0) {
    return shared::Internal(fmt::format("worker reported vocab_size {} and context_length {}",
                                        model_info_.vocab_size(), model_info_.context_length()));
  }
  // vLLM's model_name label on every series names the one model; with several, `model` does.
  if (residency_->size() == 1) metrics_->SetModelName(env_->served_models.primary());
  residency_->Start();
  return shared::Status::Ok();
}

shared::Status Gateway::StartServer() {
  service_ = std::make_unique<InferenceService>(env_, api_keys_);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  const std::string address = FormatListenAddress(config_.listen_host, config_.port);
  builder.AddListeningPort(
      address, tls_ ? tls_->ServerCredentials() : grpc::InsecureServerCredentials(), &port_);
  // gRPC sets SO_REUSEPORT by default, so two gateways on one port would split its traffic.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(service_.get());
  // The HTTP door's limit, not gRPC's default 4 MiB: a 4-8 MiB prompt got a transport error here
  // and the context's length over HTTP.
  builder.SetMaxReceiveMessageSize(static_cast<int>(shared::kMaxRequestBytes));
  std::lock_guard<std::mutex> lock(server_mu_);
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

void Gateway::CancelStreams() {
  std::lock_guard<std::mutex> lock(server_mu_);
  cancel_streams_ = true;
  // Each reactor sees OnCancel and cancels its worker call; the drain then ends at once.
  if (server_) grpc_server_cancel_all_calls(server_->c_server());
  for (auto& door : doors_) door->CancelStreams();
}

shared::Status Gateway::StartDoors() {
  DoorContext context;
  context.env = env_;
  context.model_info = model_info_;
  context.listen_host = config_.listen_host;
  context.metrics = [metrics = metrics_] { return metrics->RenderText(); };
  context.metric_families = [metrics = metrics_] { return metrics->Collect(); };
  if (api_keys_->enabled()) {
    context.authenticate = [keys = api_keys_](std::optional<std::string_view> authorization) {
      return keys->Authenticate(authorization);
    };
  }
  if (tls_) {
    context.tls_cert_chain_pem = tls_->cert_chain_pem();
    context.tls_private_key_pem = tls_->private_key_pem();
    context.tls_client_ca_pem = tls_->client_ca_pem();
  }
  for (auto& door : doors_) SM_RETURN_IF_ERROR(door->Start(context));
  return shared::Status::Ok();
}

// A probe of the gRPC port every interval; NOT_SERVING on both doors while it fails, an exit with
// kWedgedListenerExitCode when it keeps failing (issue 40).
void Gateway::StartListenerWatch() {
  ListenerWatchOptions options = config_.listener_watch;
  if (options.interval.count() == 0) return;
  options.probe_timeout = std::min(options.probe_timeout, options.interval);
  options.not_serving_after = std::min(2 * options.interval, options.exit_after);
  const int port = port_;
  const bool tls = tls_.has_value();
  grpc::Server* server = server_.get();
  listener_watch_ = std::make_unique<ListenerWatch>(
      options,
      [port, tls, timeout = options.probe_timeout] { return ProbeListener(port, tls, timeout); },
      [this, server, port](bool serving) {
        env_->grpc_accepting.store(serving);
        if (auto* health = server->GetHealthCheckService()) {
          health->SetServingStatus(serving);
          health->SetServingStatus(kServiceName, serving);
        }
        if (serving) {
          spdlog::info("the gRPC port {} accepts connections again: SERVING", port);
        } else {
          spdlog::error(
              "the gRPC port {} accepts no connections (probes from this process get "
              "no answer): NOT_SERVING",
              port);
        }
      },
      [this, port, after = options.exit_after] {
        spdlog::critical(
            "the gRPC port {} accepted no connection for {} ms: its listener is "
            "wedged (gRPC stops accepting after accept4 fails with EMFILE); exiting "
            "with status {} for the supervisor to restart the gateway",
            port, after.count(), kWedgedListenerExitCode);
        if (on_fatal_) on_fatal_(kWedgedListenerExitCode);
      });
}

void Gateway::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (listener_watch_) listener_watch_->Stop();
  grpc::Server* server = nullptr;
  auto deadline = std::chrono::system_clock::now() + config_.drain_timeout;
  {
    std::lock_guard<std::mutex> lock(server_mu_);
    server = server_.get();
    if (cancel_streams_) deadline = std::chrono::system_clock::now();
  }
  // The doors drain beside the gRPC server, each on its own thread.
  std::vector<std::thread> door_drains;
  for (auto& door : doors_) {
    door_drains.emplace_back([&door, deadline] { door->Shutdown(deadline); });
  }
  if (server) {
    if (auto* health = server->GetHealthCheckService()) health->SetServingStatus(false);
    size_t streams = 0;
    for (const auto& env : envs_) streams += env->active.count();
    spdlog::info("draining {} stream(s) for at most {} ms", streams,
                 std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::max(deadline - std::chrono::system_clock::now(),
                              std::chrono::system_clock::duration::zero()))
                     .count());
    server->Shutdown(deadline);
  }
  for (std::thread& t : door_drains) t.join();
  for (const auto& env : envs_) {
    if (!env->active.WaitUntilZero(kReactorDrainTimeout)) {
      spdlog::error("{} stream(s) of `{}` still waiting on their worker after shutdown",
                    env->active.count(), env->served_models.primary());
    }
  }
  // Every model's workers stop; requests still waiting for a load get UNAVAILABLE.
  if (residency_) residency_->Stop();
  metrics_endpoint_.reset();
  spdlog::info("gateway stopped");
}

}  // namespace smallmind::gateway

#include "gateway/relay/model_routes.h"

#include <utility>

#include "gateway/relay/request_relay.h"

namespace smallmind::gateway {

ModelRoutes::ModelRoutes(ModelResidency& residency, std::vector<std::shared_ptr<RelayEnv>> envs)
    : residency_(residency), envs_(std::move(envs)) {}

shared::Result<ModelRoutes::Route> ModelRoutes::Resolve(std::string_view name,
                                                        std::optional<KeepAlive> keep_alive) {
  const int index = residency_.catalog().Find(name);
  if (index < 0) return residency_.catalog().NotServed(name);
  Route route;
  route.index = static_cast<size_t>(index);
  route.env = envs_[route.index];
  route.use = residency_.Touch(route.index, keep_alive);
  return route;
}

shared::Result<ModelRoutes::Route> RouteModel(const std::shared_ptr<RelayEnv>& env,
                                              std::string_view name,
                                              std::optional<KeepAlive> keep_alive) {
  if (env->models) return env->models->Resolve(name, keep_alive);
  SM_RETURN_IF_ERROR(env->served_models.Check(name));
  ModelRoutes::Route route;
  route.env = env;
  return route;
}

void WhenRouteLoaded(const ModelRoutes::Route& route,
                     std::chrono::system_clock::time_point deadline, LoadGate::Ready ready) {
  if (!route.env->models) return ready(shared::Status::Ok());
  route.env->models->residency().gate(route.index)->WhenOpen(std::move(ready), deadline);
}

std::optional<ModelStatus> RouteStatus(const ModelRoutes::Route& route) {
  if (!route.env->models) return std::nullopt;
  return route.env->models->residency().Status(route.index);
}

smallmind::v1::ListModelsResponse ListServedModels(const RelayEnv& env) {
  smallmind::v1::ListModelsResponse response;
  if (!env.models) {
    smallmind::v1::ListedModel* m = response.add_models();
    for (const std::string& name : env.served_models.names()) m->add_names(name);
    m->set_state(ModelStateName(ModelState::kLoaded));
    m->set_keep_alive_ms(-1);
    return response;
  }
  for (const ModelStatus& status : env.models->residency().Statuses()) {
    smallmind::v1::ListedModel* m = response.add_models();
    for (const std::string& name : status.names) m->add_names(name);
    m->set_state(ModelStateName(status.state));
    m->set_estimated_bytes(status.estimated_bytes);
    m->set_keep_alive_ms(status.keep_alive.forever() ? -1 : status.keep_alive.duration->count());
    if (status.info) *m->mutable_info() = *status.info;
    m->set_last_error(status.last_error);
  }
  return response;
}

}  // namespace smallmind::gateway

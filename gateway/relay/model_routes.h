// ModelRoutes: a request's `model` name -> the RelayEnv of that catalogued model (issue 45), on
// either door. Each model has its own env (pool, load gate + queue, served names); resolving a
// name marks the model used (it loads on first use; ModelResidency) and holds it busy until the
// caller's relay counts in the env. Built by Gateway once the models are known; its envs and the
// residency outlive every door. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "gateway/models/keep_alive.h"
#include "gateway/models/load_gate.h"
#include "gateway/models/model_residency.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

struct RelayEnv;

class ModelRoutes {
 public:
  // envs[i] serves residency's model i.
  ModelRoutes(ModelResidency& residency, std::vector<std::shared_ptr<RelayEnv>> envs);

  struct Route {
    size_t index = 0;
    std::shared_ptr<RelayEnv> env;
    ModelResidency::Use use;  // keep until the request's relay is built
  };
  // "" = the default (first) model; NOT_FOUND listing the served names for an unknown one.
  // `keep_alive` (a request's) becomes the model's from now on.
  shared::Result<Route> Resolve(std::string_view name,
                                std::optional<KeepAlive> keep_alive = std::nullopt);

  ModelResidency& residency() const { return residency_; }
  const std::vector<std::shared_ptr<RelayEnv>>& envs() const { return envs_; }

 private:
  ModelResidency& residency_;
  const std::vector<std::shared_ptr<RelayEnv>> envs_;
};

// The env a request naming `name` goes to: env->models' route, or `env` itself (checked against
// its served_models) when it carries no routes (tests that build one env).
shared::Result<ModelRoutes::Route> RouteModel(const std::shared_ptr<RelayEnv>& env,
                                              std::string_view name,
                                              std::optional<KeepAlive> keep_alive = std::nullopt);

// `ready` runs once the model `route` goes to is loaded: OK at once when it is (or when the route
// has no residency: a one-env test), else when its load ends (UNAVAILABLE with the reason) or
// `deadline` (system_clock max = none) passes first (DEADLINE_EXCEEDED), inline or on the
// residency's loader thread; waiting at the model's LoadGate as Generate does, without a place in
// its queue. Keep `route` (its Use) until `ready` ran. `ready` must not block.
void WhenRouteLoaded(const ModelRoutes::Route& route,
                     std::chrono::system_clock::time_point deadline, LoadGate::Ready ready);

// The facts of the model `route` goes to as its residency knows them now (nullopt while it was
// never loaded, or when the route has no residency).
std::optional<ModelStatus> RouteStatus(const ModelRoutes::Route& route);

// ListModels' answer: every model env->models serves, with its state and (once loaded) facts; an
// env without routes lists its served names as one loaded model.
smallmind::v1::ListModelsResponse ListServedModels(const RelayEnv& env);

}  // namespace smallmind::gateway

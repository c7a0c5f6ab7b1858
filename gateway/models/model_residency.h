// ModelResidency: which catalogued models have workers now (issue 45). Each model has a
// WorkerPool (empty while unloaded) and a LoadGate in front of its AdmissionQueue. A model is
// spawned on first use by the loader thread (never on a gRPC / HTTP thread), unloaded once idle
// for its keep-alive, and when loading one more would pass --memory-budget the least recently
// used idle models are unloaded first (gateway/models/residency_policy.h). Built and started by
// Gateway; Touch and the accessors are called from any thread. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "gateway/admission/admission_options.h"
#include "gateway/admission/admission_queue.h"
#include "gateway/models/keep_alive.h"
#include "gateway/models/load_gate.h"
#include "gateway/models/model_catalog.h"
#include "gateway/workers/worker_options.h"
#include "gateway/workers/worker_pool.h"
#include "gateway/workers/worker_supervisor.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

enum class ModelState { kUnloaded, kLoading, kLoaded };
// "unloaded", "loading", "loaded": /v1/models' and ListModels' words.
const char* ModelStateName(ModelState state);

struct ResidencyOptions {
  uint64_t memory_budget_bytes = 0;  // 0 = no budget
  KeepAlive keep_alive = KeepAlive::Forever();
  int workers = 2;        // per model, unless its entry says
  std::string tokenizer;  // --tokenizer, for every spawned model
  SupervisorOptions supervisor;
  WorkerPoolOptions pool;
  AdmissionOptions admission;
  // Set: model 0 is these running workers (--worker-endpoints), loaded with attached_info: never
  // spawned, never unloaded, outside the budget.
  std::shared_ptr<WorkerPool> attached_pool;
  smallmind::v1::ModelInfo attached_info;
  // How long the model's first worker may take to answer GetModelInfo once it is ready.
  std::chrono::milliseconds info_timeout{60000};
  // How often the loader thread looks at idle models, deadlines and waiting loads.
  std::chrono::milliseconds tick{50};
};

// One model as the listing shows it.
struct ModelStatus {
  std::vector<std::string> names;
  ModelState state = ModelState::kUnloaded;
  uint64_t estimated_bytes = 0;
  KeepAlive keep_alive;
  std::optional<smallmind::v1::ModelInfo> info;  // once it was loaded
  // Successful loads so far: what is known of `info` (a chat template parsed from it) is stale once
  // this changes (a --models-dir file replaced between loads).
  uint64_t loads = 0;
  std::string last_error;  // the last failed load's reason
};

class ModelResidency {
 public:
  ModelResidency(ModelCatalog catalog, ResidencyOptions options);
  ~ModelResidency();  // Stop()
  ModelResidency(const ModelResidency&) = delete;
  ModelResidency& operator=(const ModelResidency&) = delete;

  const ModelCatalog& catalog() const { return catalog_; }
  size_t size() const { return slots_.size(); }
  // What model i's RelayEnv holds: its pool and its admission (the gate).
  const std::shared_ptr<WorkerPool>& pool(size_t i) const { return slots_[i]->pool; }
  const std::shared_ptr<LoadGate>& gate(size_t i) const { return slots_[i]->gate; }
  AdmissionQueue& queue(size_t i) const { return *slots_[i]->queue; }
  // How many of model i's requests are in the gateway now (its relays); set before Start.
  void SetInFlight(size_t i, std::function<size_t()> in_flight);

  // Loads model i on the calling thread (the default model, at startup); CANCELLED once `stop` is
  // requested. Before Start.
  shared::Status LoadNow(size_t i, std::stop_token stop = {});
  // Starts the loader thread.
  void Start();
  // Stops the loader thread, fails requests still waiting for a load, unloads every model (its
  // workers stopped). Call after the doors drained. Idempotent.
  void Stop();

  // A request for model i is about to enter: while this lives model i counts as busy (so it is
  // not unloaded before the request's relay counts in SetInFlight's function).
  class Use {
   public:
    Use() = default;
    Use(ModelResidency* owner, size_t index) : owner_(owner), index_(index) {}
    Use(Use&& other) noexcept : owner_(other.owner_), index_(other.index_) {
      other.owner_ = nullptr;
    }
    Use& operator=(Use&& other) noexcept;
    ~Use();

   private:
    ModelResidency* owner_ = nullptr;
    size_t index_ = 0;
  };
  // Marks model i used now (LRU) and asks for its load when unloaded. `keep_alive` (a request's)
  // replaces the model's keep-alive from now on.
  Use Touch(size_t i, std::optional<KeepAlive> keep_alive = std::nullopt);

  ModelStatus Status(size_t i) const;
  // Restarts of model i's worker `worker` by its supervisor (0 while unloaded or attached).
  uint64_t Restarts(size_t i, uint32_t worker) const;
  std::vector<ModelStatus> Statuses() const;
  // True once model i is in `state`, waiting at most `timeout`; for tests.
  bool WaitForState(size_t i, ModelState state, std::chrono::milliseconds timeout) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Slot {
    CatalogEntry entry;
    uint64_t bytes = 0;
    bool attached = false;
    std::shared_ptr<WorkerPool> pool;
    std::shared_ptr<LoadGate> gate;
    AdmissionQueue* queue = nullptr;  // owned by gate
    std::function<size_t()> in_flight;
    std::unique_ptr<WorkerSupervisor> supervisor;  // guarded by mu_ (Stop runs outside it)
    // Guarded by mu_ from here on.
    ModelState state = ModelState::kUnloaded;
    bool wanted = false;
    int uses = 0;
    Clock::time_point last_used;
    std::optional<KeepAlive> keep_alive;  // a request's; else options_.keep_alive
    std::optional<smallmind::v1::ModelInfo> info;
    uint64_t loads = 0;
    std::string last_error;
  };

  void Want(size_t i);
  void Release(size_t i);
  bool BusyLocked(const Slot& slot) const;
  void Loop(std::stop_token stop);
  // One look: deadlines, idle models past their keep-alive, then one waiting load.
  void Tick(std::stop_token stop);
  void LoadNext(std::stop_token stop);
  // Spawns model i's workers and waits for its model info; the pool holds them once OK.
  shared::Result<smallmind::v1::ModelInfo> Spawn(Slot& slot, std::stop_token stop);
  // Loads slot i now (state kLoading already set); opens or fails its gate.
  void Load(size_t i, std::stop_token stop);
  // Unloads model i unless it became busy; true when it did.
  bool Unload(size_t i, const char* why);
  ModelStatus StatusLocked(const Slot& slot) const;
  // "the model `x` could not be loaded: it needs about N MiB ..., more than --memory-budget M MiB".
  std::string TooLarge(const Slot& slot) const;

  const ModelCatalog catalog_;
  const ResidencyOptions options_;
  std::vector<std::unique_ptr<Slot>> slots_;  // fixed at construction

  mutable std::mutex mu_;
  mutable std::condition_variable_any changed_;  // state changes, wanted loads; a stop_token too
  bool stopped_ = false;                         // guarded by mu_
  bool poked_ = false;  // guarded by mu_: a load is wanted; the loader thread looks at once
  std::jthread loader_;
};

}  // namespace smallmind::gateway

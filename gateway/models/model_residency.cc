#include "gateway/models/model_residency.h"

#include <algorithm>
#include <limits>
#include <utility>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "gateway/models/residency_policy.h"

namespace smallmind::gateway {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

const char* ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kUnloaded: return "unloaded";
    case ModelState::kLoading: return "loading";
    case ModelState::kLoaded: return "loaded";
  }
  return "unloaded";
}

ModelResidency::ModelResidency(ModelCatalog catalog, ResidencyOptions options)
    : catalog_(std::move(catalog)), options_(std::move(options)) {
  const int kv_mb = KvMemoryMbFromWorkerFlags(options_.supervisor.worker_flags);
  for (size_t i = 0; i < catalog_.size(); ++i) {
    auto slot = std::make_unique<Slot>();
    slot->entry = catalog_.entries()[i];
    slot->bytes = EstimateResidentBytes(slot->entry, options_.workers, kv_mb);
    slot->attached = i == 0 && options_.attached_pool != nullptr;
    slot->pool = slot->attached
                     ? options_.attached_pool
                     : std::make_shared<WorkerPool>(std::vector<std::string>{}, options_.pool);
    const uint32_t per_worker = options_.admission.max_in_flight_per_worker;
    auto queue = std::make_unique<AdmissionQueue>(
        options_.admission, [pool = slot->pool.get(), per_worker]() -> size_t {
          const size_t healthy = pool->HealthyCount();
          if (per_worker == 0 && healthy > 0) return std::numeric_limits<size_t>::max();
          return healthy * per_worker;
        });
    slot->queue = queue.get();
    slot->gate = std::make_shared<LoadGate>(std::move(queue), [this, i] { Want(i); });
    slot->last_used = Clock::now();
    if (slot->attached) {
      slot->state = ModelState::kLoaded;
      slot->info = options_.attached_info;
      slot->loads = 1;
      slot->queue->SetContextLength(options_.attached_info.context_length());
      slot->gate->Open();
    }
    slots_.push_back(std::move(slot));
  }
}

ModelResidency::~ModelResidency() { Stop(); }

void ModelResidency::SetInFlight(size_t i, std::function<size_t()> in_flight) {
  slots_[i]->in_flight = std::move(in_flight);
}

ModelResidency::Use& ModelResidency::Use::operator=(Use&& other) noexcept {
  if (this != &other) {
    if (owner_) owner_->Release(index_);
    owner_ = other.owner_;
    index_ = other.index_;
    other.owner_ = nullptr;
  }
  return *this;
}

ModelResidency::Use::~Use() {
  if (owner_) owner_->Release(index_);
}

ModelResidency::Use ModelResidency::Touch(size_t i, std::optional<KeepAlive> keep_alive) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = *slots_[i];
  ++slot.uses;
  slot.last_used = Clock::now();
  if (keep_alive && !slot.attached) slot.keep_alive = keep_alive;
  if (slot.state == ModelState::kUnloaded && !slot.wanted) {
    slot.wanted = true;
    poked_ = true;
    changed_.notify_all();
  }
  return Use(this, i);
}

void ModelResidency::Release(size_t i) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = *slots_[i];
  --slot.uses;
  slot.last_used = Clock::now();
  changed_.notify_all();
}

void ModelResidency::Want(size_t i) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = *slots_[i];
  if (slot.state == ModelState::kUnloaded) slot.wanted = true;
  poked_ = true;
  changed_.notify_all();
}

bool ModelResidency::BusyLocked(const Slot& slot) const {
  return slot.uses > 0 || slot.state == ModelState::kLoading || slot.gate->waiting() > 0 ||
         (slot.in_flight && slot.in_flight() > 0);
}

std::string ModelResidency::TooLarge(const Slot& slot) const {
  return fmt::format(
      "the model `{}` could not be loaded: it needs about {:.0f} MiB (file + KV pools), more "
      "than --memory-budget {:.0f} MiB",
      slot.entry.id(), slot.bytes / kMiB, options_.memory_budget_bytes / kMiB);
}

shared::Status ModelResidency::LoadNow(size_t i, std::stop_token stop) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = *slots_[i];
    if (slot.state != ModelState::kUnloaded) return shared::Status::Ok();
    if (PlanEvictions(options_.memory_budget_bytes, slot.bytes, {}).verdict ==
        EvictionPlan::Verdict::kTooLarge) {
      slot.last_error = TooLarge(slot);
      return shared::Unavailable(slot.last_error);
    }
    slot.state = ModelState::kLoading;
  }
  Load(i, stop);
  std::lock_guard<std::mutex> lock(mu_);
  if (slots_[i]->state == ModelState::kLoaded) return shared::Status::Ok();
  return shared::Unavailable(slots_[i]->last_error);
}

void ModelResidency::Start() {
  loader_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
}

void ModelResidency::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (loader_.joinable()) {
    loader_.request_stop();
    loader_.join();
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = *slots_[i];
    slot.gate->Close();
    slot.gate->Fail(shared::Unavailable("the gateway is shutting down"));
    slot.pool->StopPolling();
    std::unique_ptr<WorkerSupervisor> supervisor;
    {
      std::lock_guard<std::mutex> lock(mu_);
      supervisor = std::move(slot.supervisor);
      slot.state = slot.attached ? slot.state : ModelState::kUnloaded;
    }
    if (supervisor) supervisor->Stop();
  }
}

void ModelResidency::Loop(std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop.stop_requested()) {
    changed_.wait_for(lock, stop, options_.tick, [this] { return poked_; });
    poked_ = false;
    if (stop.stop_requested()) break;
    lock.unlock();
    Tick(stop);
    lock.lock();
  }
}

void ModelResidency::Tick(std::stop_token stop) {
  const auto now = Clock::now();
  for (const auto& slot : slots_) slot->gate->Expire(std::chrono::system_clock::now());
  std::vector<size_t> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < slots_.size(); ++i) {
      Slot& slot = *slots_[i];
      if (BusyLocked(slot)) {
        slot.last_used = now;  // idle time counts from the end of the last request
        continue;
      }
      const KeepAlive keep_alive = slot.keep_alive.value_or(options_.keep_alive);
      if (slot.state == ModelState::kLoaded && !slot.attached &&
          KeepAliveExpired(keep_alive, slot.last_used, now)) {
        expired.push_back(i);
      }
    }
  }
  for (size_t i : expired) Unload(i, "its keep-alive expired");
  LoadNext(stop);
}

void ModelResidency::LoadNext(std::stop_token stop) {
  std::optional<size_t> next;
  EvictionPlan plan;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<ResidentModel> resident;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& slot = *slots_[i];
      if (slot.wanted && slot.state == ModelState::kUnloaded && !next) next = i;
      if (slot.state != ModelState::kUnloaded && !slot.attached) {
        resident.push_back({i, slot.bytes, BusyLocked(slot), slot.last_used});
      }
    }
    if (!next) return;
    plan = PlanEvictions(options_.memory_budget_bytes, slots_[*next]->bytes, resident);
    if (plan.verdict == EvictionPlan::Verdict::kWait) return;  // again next tick
    slots_[*next]->wanted = false;
    if (plan.verdict == EvictionPlan::Verdict::kFits && plan.victims.empty()) {
      slots_[*next]->state = ModelState::kLoading;
    }
  }
  Slot& slot = *slots_[*next];
  if (plan.verdict == EvictionPlan::Verdict::kTooLarge) {
    const std::string why = TooLarge(slot);
    {
      std::lock_guard<std::mutex> lock(mu_);
      slot.last_error = why;
    }
    spdlog::error("{}", why);
    slot.gate->Fail(shared::Unavailable(why));
    return;
  }
  if (!plan.victims.empty()) {
    for (size_t victim : plan.victims) {
      if (!Unload(victim, fmt::format("`{}` needs its memory", slot.entry.id()).c_str())) {
        std::lock_guard<std::mutex> lock(mu_);
        slot.wanted = true;  // a victim became busy: plan again next tick
        return;
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    slot.state = ModelState::kLoading;
  }
  Load(*next, stop);
}

shared::Result<smallmind::v1::ModelInfo> ModelResidency::Spawn(Slot& slot, std::stop_token stop) {
  const int workers = slot.entry.workers > 0 ? slot.entry.workers : options_.workers;
  SM_ASSIGN_OR_RETURN(
      std::unique_ptr<WorkerSupervisor> supervisor,
      WorkerSupervisor::Create(slot.entry.spec, options_.tokenizer, workers,
                               SupervisorOptionsFor(slot.entry, options_.supervisor)));
  std::shared_ptr<WorkerPool> pool = slot.pool;
  pool->SetTargets(supervisor->targets());
  const auto timeout = options_.pool.poll_timeout;
  shared::Status started = supervisor->Start(
      [pool, timeout](size_t k) {
        std::shared_ptr<WorkerClient> link = pool->link(k);
        return link ? link->Stats(timeout).status() : shared::Unavailable("no such worker");
      },
      [pool](size_t k) {
        if (std::shared_ptr<WorkerClient> link = pool->link(k)) {
          link->SetHealthy(false, "its process exited");
        }
      },
      stop);
  shared::Result<smallmind::v1::ModelInfo> info =
      started.ok() ? pool->WaitForModelInfo(options_.info_timeout, stop)
                   : shared::Result<smallmind::v1::ModelInfo>(started);
  if (!info.ok()) {
    supervisor->Stop();
    pool->SetTargets({});
    return info.status();
  }
  pool->PollOnce();
  pool->StartPolling();
  std::lock_guard<std::mutex> lock(mu_);
  slot.supervisor = std::move(supervisor);
  return info;
}

void ModelResidency::Load(size_t i, std::stop_token stop) {
  Slot& slot = *slots_[i];
  const auto started = Clock::now();
  spdlog::info("loading model `{}` ({}, about {:.0f} MiB)", slot.entry.id(), slot.entry.spec,
               slot.bytes / kMiB);
  shared::Result<smallmind::v1::ModelInfo> info = Spawn(slot, stop);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (info.ok()) slot.queue->SetContextLength(info->context_length());
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot.last_used = Clock::now();
    if (info.ok()) {
      slot.state = ModelState::kLoaded;
      slot.wanted = false;  // asked for again while it loaded: it is here now
      slot.info = *info;
      ++slot.loads;
      slot.last_error.clear();
    } else {
      slot.state = ModelState::kUnloaded;
      slot.last_error = fmt::format("the model `{}` could not be loaded: {}", slot.entry.id(),
                                    info.status().message());
    }
    changed_.notify_all();
  }
  if (info.ok()) {
    spdlog::info("model `{}` loaded in {:.0f} ms", slot.entry.id(), ms);
    slot.gate->Open();
  } else {
    spdlog::error("{}", Status(i).last_error);
    slot.gate->Fail(shared::Unavailable(Status(i).last_error));
  }
}

bool ModelResidency::Unload(size_t i, const char* why) {
  Slot& slot = *slots_[i];
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (slot.state != ModelState::kLoaded || BusyLocked(slot)) return false;
    // Closed under mu_: a request that touches the model from now on waits for a new load.
    slot.gate->Close();
    slot.state = ModelState::kUnloaded;
  }
  slot.pool->SetTargets({});  // its poll thread goes on, over no worker
  std::unique_ptr<WorkerSupervisor> supervisor;
  {
    std::lock_guard<std::mutex> lock(mu_);
    supervisor = std::move(slot.supervisor);
  }
  if (supervisor) supervisor->Stop();
  spdlog::info("unloaded model `{}`: {}", slot.entry.id(), why);
  std::lock_guard<std::mutex> lock(mu_);
  changed_.notify_all();
  // A request that came in meanwhile asked for a load again (the gate was closed).
  if (slot.gate->waiting() > 0) slot.wanted = true;
  return true;
}

uint64_t ModelResidency::Restarts(size_t i, uint32_t worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Slot& slot = *slots_[i];
  return slot.supervisor ? slot.supervisor->restarts(worker) : 0;
}

ModelStatus ModelResidency::StatusLocked(const Slot& slot) const {
  ModelStatus status;
  status.names = slot.entry.names;
  status.state = slot.state;
  status.estimated_bytes = slot.bytes;
  status.keep_alive =
      slot.attached ? KeepAlive::Forever() : slot.keep_alive.value_or(options_.keep_alive);
  status.info = slot.info;
  status.loads = slot.loads;
  status.last_error = slot.last_error;
  return status;
}

ModelStatus ModelResidency::Status(size_t i) const {
  std::lock_guard<std::mutex> lock(mu_);
  return StatusLocked(*slots_[i]);
}

std::vector<ModelStatus> ModelResidency::Statuses() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ModelStatus> out;
  for (const auto& slot : slots_) out.push_back(StatusLocked(*slot));
  return out;
}

bool ModelResidency::WaitForState(size_t i, ModelState state,
                                  std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, timeout, [&] { return slots_[i]->state == state; });
}

}  // namespace smallmind::gateway

#include "worker/worker.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "kernels/dispatch.h"
#include "shared/cpu_topology.h"
#include "shared/huge_region.h"
#include "worker/engine/kv_producer.h"
#include "worker/engine/numa_binding.h"
#include "worker/kv/segment_name_file.h"
#include "worker/model/model_fingerprint.h"

namespace smallmind::worker {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Worker::Worker(WorkerConfig config) : config_(std::move(config)) {}

Worker::~Worker() {
  Shutdown();
  // A clean exit removes the segment this worker held (KvSegment's destructor): its name goes
  // with it. One that never opened it leaves the name to the worker that did.
  if (!kv_name_dir_.empty() && kv_segment_) RemoveSegmentName(kv_name_dir_, kv_name_base_);
}

namespace {

// Blocks of the KV pool: --kv-blocks, or as many as the --kv-memory-mb budget holds (at most a
// full context for every --max-seqs sequence); refused when one full context does not fit.
shared::Result<int64_t> KvBlockCount(const ModelConfig& c, const WorkerConfig& config) {
  const int bs = config.kv.block_size;
  // The whole segment stays within the budget: each block's data, metadata and token ids, plus
  // the header and alignment (so --kv-memory-mb 1024 fits a 1 GiB /dev/shm, as compose.yaml has).
  const int64_t bytes_per_block = KvPool::BytesFor(c, 1, bs, config.kv.dtype) +
                                  sizeof(shared::KvBlockMeta) + int64_t{bs} * sizeof(int32_t);
  const int64_t fixed_bytes = 3 * shared::kKvSegmentDataAlignment;
  // An encoder keeps no K/V (forward_bert.h): the engine's pool is a token block it never reads.
  if (c.encoder) return 1;
  const int context_blocks = (c.context_length + bs - 1) / bs;
  int64_t blocks = config.kv.num_blocks;
  if (blocks == 0) {
    int64_t budget = static_cast<int64_t>(config.kv.memory_mb) << 20;
    int64_t wanted = static_cast<int64_t>(context_blocks) * config.scheduler.max_seqs;
    blocks = std::min(wanted, std::max<int64_t>(0, budget - fixed_bytes) / bytes_per_block);
  }
  // One sequence must always fit alone, so preemption can always make progress.
  if (blocks < context_blocks) {
    return shared::InvalidArgument("the KV pool holds " + std::to_string(blocks) + " blocks of " +
                                   std::to_string(bs) + " tokens, fewer than one full context of " +
                                   std::to_string(c.context_length) +
                                   " tokens; raise --kv-memory-mb or --kv-blocks");
  }
  return blocks;
}

// The geometry the KV segment's header records (a successor re-attaches only the same).
shared::KvGeometry KvGeometryOf(const ModelConfig& c, int block_size, kernels::KvType dtype,
                                int64_t blocks) {
  shared::KvGeometry geometry;
  geometry.block_size = static_cast<uint32_t>(block_size);
  geometry.n_layers = static_cast<uint32_t>(c.n_layers);
  geometry.n_kv_heads = static_cast<uint32_t>(c.n_kv_heads);
  geometry.head_dim = static_cast<uint32_t>(c.head_dim());
  static_assert(static_cast<uint32_t>(kernels::KvType::kF32) ==
                        static_cast<uint32_t>(shared::KvDType::kF32) &&
                    static_cast<uint32_t>(kernels::KvType::kF16) ==
                        static_cast<uint32_t>(shared::KvDType::kF16) &&
                    static_cast<uint32_t>(kernels::KvType::kQ8) ==
                        static_cast<uint32_t>(shared::KvDType::kQ8),
                "the segment header stores the kernels' KvType values");
  static_assert(shared::KvDTypeRowBytes(static_cast<uint32_t>(kernels::KvType::kQ8), 64) ==
                        kernels::KvRowElems(kernels::KvType::kQ8, 64) *
                            kernels::KvTypeBytes(kernels::KvType::kQ8) &&
                    shared::KvDTypeRowBytes(static_cast<uint32_t>(kernels::KvType::kF16), 64) ==
                        kernels::KvRowElems(kernels::KvType::kF16, 64) *
                            kernels::KvTypeBytes(kernels::KvType::kF16),
                "the segment's block size is the pool's");
  geometry.dtype = static_cast<uint32_t>(dtype);
  geometry.block_count = static_cast<uint32_t>(blocks);
  return geometry;
}

}  // namespace

shared::Status Worker::PlanKv() {
  const ModelConfig& c = model_->llama.config;
  const int bs = config_.kv.block_size;
  SM_RETURN_IF_ERROR(KvPool::CheckType(c, config_.kv.dtype));
  SM_ASSIGN_OR_RETURN(const int64_t blocks, KvBlockCount(c, config_));
  SM_ASSIGN_OR_RETURN(std::string name, SegmentName());
  KvSegmentSpec spec{name, KvGeometryOf(c, bs, config_.kv.dtype, blocks), model_fingerprint_};
  shared::Result<std::unique_ptr<KvSegment>> opened = KvSegment::Open(spec);
  if (!opened.ok() && !kv_name_dir_.empty() &&
      opened.status().code() == shared::StatusCode::kFailedPrecondition) {
    // Another user holds a segment under the recorded name (seen in /dev/shm while it was
    // ours): never use it, take a new random name.
    spdlog::warn("{}; taking a new segment name", opened.status().message());
    SM_ASSIGN_OR_RETURN(spec.name, RenewSegmentName(kv_name_dir_, kv_name_base_));
    opened = KvSegment::Open(spec);
  }
  SM_ASSIGN_OR_RETURN(kv_segment_, std::move(opened));
  // Bind before reserving, so that fresh pages are allocated on the engine's node.
  BindToNumaNode(kv_segment_->data().data(), kv_segment_->data().size_bytes(),
                 NumaNodeToBind(cpus_));
  SM_RETURN_IF_ERROR(kv_segment_->Reserve());
  kv_pool_ = std::make_unique<KvPool>(c, static_cast<int>(blocks), bs, config_.kv.dtype,
                                      kv_segment_->data());
  // Decode reads the whole cache every step: on 4 KiB pages that is a TLB miss a page
  // (docs/kv-cache.md, The segment). /dev/shm gives huge pages only when mounted with huge=advise
  // or more.
  const size_t huge = shared::HugePageBytes(kv_segment_->data().data(), kv_segment_->data().size());
  spdlog::info(
      "KV pool: {} blocks x {} tokens, {} ({:.1f} MiB) in {}, {:.1f} MiB of it on huge "
      "pages{}",
      blocks, bs, kernels::KvTypeName(config_.kv.dtype), kv_pool_->bytes() / 1048576.0,
      kv_segment_->in_shared_memory()
          ? fmt::format("shared memory {}", shared::ShmSegment::PathOf(spec.name))
          : std::string("process memory (--kv-segment none)"),
      huge / 1048576.0,
      huge == 0 && kv_segment_->in_shared_memory()
          ? " (a /dev/shm mounted with huge=advise gives them; see docs/kv-cache.md)"
          : "");
  return shared::Status::Ok();
}

shared::Result<std::string> Worker::SegmentName() {
  if (!config_.kv.segment.empty()) return KvSegmentNameFor(config_.kv.segment, config_.listen);
  kv_name_base_ = KvSegmentNameFor("", config_.listen);
  SM_ASSIGN_OR_RETURN(kv_name_dir_, OwnerOnlyKvDir(config_.kv.runtime_dir));
  return StandaloneSegmentName(kv_name_dir_, kv_name_base_);
}

void Worker::AdoptKvBlocks() {
  PrefixCacheOptions& cache = config_.scheduler.prefix_cache;
  cache = WithChainRoots(cache, *engine_, model_fingerprint_);
  const int bs = config_.kv.block_size;
  if (!kv_segment_->reattached() || !cache.enabled) {
    block_pool_ = std::make_unique<BlockPool>(kv_segment_->meta(), kv_segment_->tokens(), bs);
    return;
  }
  const uint64_t roots[] = {cache.deterministic_root, cache.parallel_root};
  block_pool_ = std::make_unique<BlockPool>(kv_segment_->meta(), kv_segment_->tokens(), bs, roots);
  const BlockRestoreReport& r = block_pool_->restore_report();
  spdlog::info(
      "KV segment {} re-attached (warm restart): kept {} cached blocks ({} tokens); dropped {} "
      "incomplete, {} with a broken chain, {} duplicates",
      shared::ShmSegment::PathOf(kv_segment_->name()), r.kept, int64_t{r.kept} * bs,
      r.dropped_incomplete, r.dropped_broken_chain, r.dropped_duplicate);
}

shared::Status Worker::Start() {
  if (config_.cpus.empty()) {
    cpus_ = shared::AllowedCpus();
  } else {
    SM_ASSIGN_OR_RETURN(cpus_, shared::ParseCpuList(config_.cpus));
  }
  SM_RETURN_IF_ERROR(LoadModelTimed());
  if (model_->llama.config.encoder) {
    // Whole inputs a step, up to a full context; no cache to share or speculate over.
    SchedulerOptions& s = config_.scheduler;
    s.encoder = true;
    s.max_step_tokens = std::max(s.max_step_tokens, model_->llama.config.context_length);
    s.prefix_cache.enabled = false;
    if (!config_.draft_model.model.empty() || s.speculation.ngram > 0) {
      return shared::InvalidArgument("speculative decoding needs a decoder; " +
                                     model_->llama.config.architecture + " is an encoder");
    }
  }
  SM_RETURN_IF_ERROR(LoadDraftModel());
  SM_RETURN_IF_ERROR(PlanKv());
  const EngineOptions engine_options = BuildEngine();
  BuildDraft();
  AdoptKvBlocks();
  config_.scheduler.release_window = model_->llama.config.AllLayersWindow();
  scheduler_ =
      std::make_unique<Scheduler>(config_.scheduler, block_pool_.get(), config_.kv.block_size);
  loop_ = std::make_unique<EngineLoop>(scheduler_.get(), engine_.get(), &commands_, &outputs_,
                                       &stats_, draft_.get());
  scheduler_->PublishStats(&stats_);
  pump_ = std::make_unique<OutputPump>(&outputs_);
  pump_->Start();
  scheduler_thread_ = std::thread([this] { SchedulerThreadMain(); });
  return StartService(engine_options);
}

// Reading (and for GGUF, mapping and checking) the file is the long part of a start on a big
// model: say so before and after, so a slow start is not silence.
shared::Status Worker::LoadModelTimed() {
  const auto start = std::chrono::steady_clock::now();
  spdlog::info("loading model {}", config_.model.model);
  SM_ASSIGN_OR_RETURN(model_, LoadModel(config_.model));
  const ModelConfig& c = model_->llama.config;
  model_fingerprint_ = ModelFingerprint(model_->llama);
  spdlog::info("model {}: {} dim={} layers={} heads={}/{} vocab={} context={} ({}), fingerprint {}",
               model_->source, c.architecture, c.dim, c.n_layers, c.n_heads, c.n_kv_heads,
               c.vocab_size, c.context_length, model_->quantization,
               FormatFingerprint(model_fingerprint_));
  spdlog::info("model loaded in {:.1f} s ({:.1f} MiB of weights)", SecondsSince(start),
               model_->llama.weights.storage.size() / 1048576.0);
  return shared::Status::Ok();
}

shared::Status Worker::LoadDraftModel() {
  if (config_.draft_model.model.empty()) return shared::Status::Ok();
  spdlog::info("loading draft model {}", config_.draft_model.model);
  SM_ASSIGN_OR_RETURN(draft_model_, LoadModel(config_.draft_model));
  SM_RETURN_IF_ERROR(CheckSameVocabulary(*model_->tokenizer, config_.model.model,
                                         *draft_model_->tokenizer, config_.draft_model.model));
  const ModelConfig& d = draft_model_->llama.config;
  SM_RETURN_IF_ERROR(KvPool::CheckType(d, config_.kv.dtype));
  const int bs = config_.kv.block_size;
  const int64_t block_bytes = KvPool::BytesFor(d, 1, bs, config_.kv.dtype);
  const auto& spec = config_.scheduler.speculation;
  const int context = std::min(d.context_length, model_->llama.config.context_length);
  int64_t bytes = int64_t{config_.draft_kv_memory_mb} << 20;
  if (bytes == 0) {  // a full draft context for every stream that may draft at once
    const int64_t wanted =
        int64_t{spec.max_batch} * ((context + spec.draft.max_draft + bs - 1) / bs) * block_bytes;
    bytes = std::min(wanted, (int64_t{config_.kv.memory_mb} << 20) / 4);
  }
  draft_blocks_ = static_cast<int>(std::min<int64_t>(bytes / block_bytes, 1 << 24));
  if (draft_blocks_ < 1) {
    return shared::InvalidArgument("--draft-kv-memory-mb holds no KV block of the draft model");
  }
  const int64_t mib = (int64_t{draft_blocks_} * block_bytes + (1 << 20) - 1) >> 20;
  if (config_.kv.num_blocks == 0) {
    config_.kv.memory_mb = static_cast<int>(std::max<int64_t>(1, config_.kv.memory_mb - mib));
  }
  config_.scheduler.speculation.draft_model = true;
  // The controllers weigh a draft step at the models' read ratio (draft_controller.h).
  config_.scheduler.speculation.draft.draft_step_cost =
      config_.draft_step_cost >= 0 ? config_.draft_step_cost
                                   : DraftStepCost(model_->llama, draft_model_->llama);
  spdlog::info(
      "draft model {}: {} layers, dim {}, {:.1f} MiB of weights (a draft step costs {:.3f} of a "
      "target step); its KV cache {} blocks of {} tokens ({} MiB, out of --kv-memory-mb: {} MiB "
      "left for the target's)",
      draft_model_->source, d.n_layers, d.dim,
      draft_model_->llama.weights.storage.size() / 1048576.0,
      config_.scheduler.speculation.draft.draft_step_cost, draft_blocks_, bs, mib,
      config_.kv.memory_mb);
  return shared::Status::Ok();
}

void Worker::BuildDraft() {
  if (!draft_model_) return;
  DraftModelOptions o;
  o.max_seqs = std::min(config_.scheduler.speculation.max_batch, config_.scheduler.max_seqs);
  o.max_draft = config_.scheduler.speculation.draft.max_draft;
  o.max_step_tokens = config_.scheduler.max_step_tokens;
  o.num_blocks = draft_blocks_;
  o.block_size = config_.kv.block_size;
  o.kv_type = config_.kv.dtype;
  o.isa = config_.isa;
  draft_ = std::make_unique<DraftModel>(draft_model_->llama, o, engine_->thread_pool());
}

// The engine's constructor repacks the matrices its kernels read in another layout (the other
// long part of a start).
EngineOptions Worker::BuildEngine() {
  EngineOptions engine_options;
  engine_options.max_step_tokens = config_.scheduler.max_step_tokens;
  engine_options.max_seqs = config_.scheduler.max_seqs;
  engine_options.max_logit_rows = config_.scheduler.max_logit_rows();
  engine_options.num_threads =
      config_.threads > 0 ? config_.threads : std::max<int>(1, static_cast<int>(cpus_.size()));
  engine_options.cpus = cpus_;
  engine_options.isa = config_.isa;
  const auto start = std::chrono::steady_clock::now();
  spdlog::info("packing weights for the kernels and planning buffers");
  engine_ = std::make_unique<Engine>(model_->llama.config, model_->llama.weights, kv_pool_.get(),
                                     engine_options);
  spdlog::info("engine ready in {:.1f} s", SecondsSince(start));
  return engine_options;
}

shared::Status Worker::StartService(const EngineOptions& engine_options) {
  RunFacts facts;
  const kernels::Isa isa =
      engine_options.isa == kernels::Isa::kBest ? kernels::BestIsa() : engine_options.isa;
  facts.kernel_isa = kernels::IsaName(isa);
  facts.engine_threads = engine_options.num_threads;
  spdlog::info("kernels {} (best this CPU runs: {}), {} compute threads", facts.kernel_isa,
               kernels::IsaName(kernels::BestIsa()), facts.engine_threads);
  facts.model_fingerprint = FormatFingerprint(model_fingerprint_);
  facts.kv_dtype = kernels::KvTypeName(kv_pool_->type());
  const WeightStorage& stored = model_->llama.weights.storage;
  const PackedWeights& packed = engine_->packed_weights();
  std::vector<std::span<const std::byte>> weight_memory = {{stored.data(), stored.size()}};
  if (packed.bytes() > 0) {
    weight_memory.emplace_back(static_cast<const std::byte*>(packed.storage()), packed.bytes());
  }
  service_ = std::make_unique<WorkerService>(*model_, std::move(facts), &commands_, &lanes_,
                                             &stats_, config_.worker_id, std::move(weight_memory));
  grpc::EnableDefaultHealthCheckService(true);  // compose health checks probe workers directly
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config_.listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(64 << 20);
  server_ = builder.BuildAndStart();
  if (!server_) {
    Shutdown();
    return shared::Unavailable("cannot listen on " + config_.listen +
                               " (address in use, bad path or permissions)");
  }
  spdlog::info("worker {} (pid {}) serving on {}", config_.worker_id, getpid(), config_.listen);
  return shared::Status::Ok();
}

void Worker::SchedulerThreadMain() {
  shared::Status pinned = shared::PinCurrentThread(cpus_);
  if (pinned.ok()) {
    spdlog::info("scheduler thread pinned to CPUs {}", shared::FormatCpuList(cpus_));
  } else {
    spdlog::warn("scheduler thread not pinned: {}", pinned.ToString());
  }
  loop_->Run();
}

void Worker::Wait() {
  if (server_) server_->Wait();
}

void Worker::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // Drain first: the scheduler and the pump keep running while in-flight streams finish (or are
  // cancelled at the deadline), so every reactor gets its OnFinish; then the scheduler thread
  // stops, closing the output queue, and the pump delivers what is left and stops.
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  }
  lanes_.Stop();  // the requests still being built reach the scheduler or finish
  commands_.Close();
  if (scheduler_thread_.joinable()) scheduler_thread_.join();
  outputs_.Close();  // in case the scheduler thread never started
  if (pump_) pump_->Join();
}

}  // namespace smallmind::worker

#include "worker/engine/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "shared/check.h"
#include "shared/huge_region.h"
#include "worker/engine/forward_bert.h"
#include "worker/engine/forward_llama.h"
#include "worker/engine/numa_binding.h"
#include "worker/engine/op_runner.h"
#include "worker/engine/pooling.h"
#include "worker/kv/block_pool.h"

namespace smallmind::worker {
namespace {

// Aborts unless the engine can run `w` with `k`: every matrix has a matmul for its type, the token
// embedding a row dequantizer, and norms and biases are F32 (loaders reject other files first).
void CheckSupported(const ModelConfig& c, const Weights& w, const kernels::KernelTable& k) {
  const shared::Status valid = ValidateLlamaWeights(c, w);
  SM_CHECK(valid.ok()) << valid.ToString();
  SM_CHECK(k.DequantRowFor(w.token_embedding.type) != nullptr)
      << "no row dequantizer for the token embedding's type "
      << static_cast<int>(w.token_embedding.type);
  for (const TensorView* m : MatricesOf(w)) {  // every layer's, experts and routers included
    SM_CHECK(k.MatmulFor(m->type) != nullptr)
        << "no matmul kernel for weight type " << static_cast<int>(m->type);
  }
  if (c.encoder) {  // ValidateLlamaWeights checked its vectors are F32
    SM_CHECK(k.DequantRowFor(w.position_embedding.type) != nullptr)
        << "no row dequantizer for the position embedding's type";
    return;
  }
  SM_CHECK(c.head_dim() % 2 == 0) << "RoPE needs an even head_dim, got " << c.head_dim();
  SM_CHECK(k.MatmulFor(w.classifier.type) != nullptr) << "no matmul for the classifier's type";
  SM_CHECK(w.final_norm.type == kernels::DType::kF32) << "norm weights must be F32";
  for (const LayerWeights& l : w.layers) {
    SM_CHECK(l.attn_norm.type == kernels::DType::kF32 && l.ffn_norm.type == kernels::DType::kF32)
        << "norm weights must be F32";
    for (const TensorView* b : {&l.bq, &l.bk, &l.bv}) {
      SM_CHECK(!b->present() || b->type == kernels::DType::kF32) << "biases must be F32";
    }
  }
}

// Binds the weights, the KV pool and the activation buffers to the NUMA node of the engine's CPUs
// (no-op on a single node).
void PlaceMemory(const std::vector<int>& cpus, const Weights& w, const PackedWeights& packed,
                 const KvPool& kv, Activations* a) {
  const int node = NumaNodeToBind(cpus);
  if (node < 0) return;
  bool ok = BindToNumaNode(w.storage.data(), w.storage.size(), node);
  if (packed.bytes() > 0) ok = BindToNumaNode(packed.storage(), packed.bytes(), node) && ok;
  ok = BindToNumaNode(kv.data(), static_cast<size_t>(kv.bytes()), node) && ok;
  ok = BindToNumaNode(a->arena.data(), a->arena.size(), node) && ok;
  if (ok) {
    spdlog::info("engine memory bound to NUMA node {}", node);
  } else {
    spdlog::warn("binding engine memory to NUMA node {} failed for some buffers", node);
  }
}

// Every entry of the two tables is the same function (and matmul input and packing).
bool SameKernels(const kernels::KernelTable& a, const kernels::KernelTable& b) {
  for (int i = 0; i < kernels::kNumWeightTypes; i++) {
    const kernels::MatmulOp &x = a.matmul[i], &y = b.matmul[i];
    if (x.fn != y.fn || x.input != y.input || x.pack != y.pack ||
        x.packed_bytes != y.packed_bytes || a.dequant_row[i] != b.dequant_row[i]) {
      return false;
    }
  }
  return a.quantize_q8 == b.quantize_q8 && a.quantize_q8_1 == b.quantize_q8_1 &&
         a.quantize_q8_k == b.quantize_q8_k && a.quantize_q8_octets == b.quantize_q8_octets &&
         a.rmsnorm == b.rmsnorm && a.rope == b.rope && a.softmax == b.softmax &&
         a.swiglu == b.swiglu && a.add == b.add && a.add_bias == b.add_bias &&
         a.attention == b.attention;
}

}  // namespace

Engine::Engine(const ModelConfig& config, const Weights& weights, KvPool* kv,
               const EngineOptions& options)
    : config_(config),
      weights_(weights),
      kv_(kv),
      options_(options),
      deterministic_(kernels::SelectKernels(options.isa, kernels::ExecMode::kDeterministic)),
      parallel_(kernels::SelectKernels(options.isa, kernels::ExecMode::kParallel)),
      packed_(weights, {&deterministic_, &parallel_}, !options.pack_experts_at_load),
      act_(config, options.max_step_tokens, options.max_seqs, std::max(1, options.num_threads),
           options.max_logit_rows) {
  SM_CHECK(kv_ != nullptr) << "the engine needs a KV pool";
  SM_CHECK(kv_->n_layers() == config.n_layers && kv_->kv_dim() == config.kv_dim())
      << "KV pool shape (" << kv_->n_layers() << " layers x " << kv_->kv_dim()
      << ") does not match the model (" << config.n_layers << " x " << config.kv_dim() << ")";
  const shared::Status kv_type_fits = KvPool::CheckType(config, kv_->type());
  SM_CHECK(kv_type_fits.ok()) << kv_type_fits.ToString();
  SM_CHECK(options.num_threads >= 1) << "the engine needs at least one thread";
  CheckSupported(config_, weights_, deterministic_);
  CheckSupported(config_, weights_, parallel_);
  PlaceMemory(options_.cpus, weights_, packed_, *kv_, &act_);
  if (packed_.bytes() > 0) {
    const std::string thp = shared::TransparentHugePages();
    const size_t huge = shared::HugePageBytes(packed_.storage(), packed_.bytes());
    spdlog::info("packed weights: {:.1f} MiB, {:.1f} MiB of it on transparent huge pages{}",
                 packed_.bytes() / 1048576.0, huge / 1048576.0,
                 thp == "always" || thp == "madvise"
                     ? ""
                     : fmt::format(" (THP mode: {}; 'madvise' or 'always' in "
                                   "/sys/kernel/mm/transparent_hugepage/enabled speeds decode up)",
                                   thp));
  }
  paths_write_same_kv_ = SameKernels(deterministic_, parallel_);
  if (options_.shared_pool != nullptr) {
    SM_CHECK(options_.shared_pool->num_threads() == options_.num_threads)
        << "a shared pool of " << options_.shared_pool->num_threads() << " threads for "
        << options_.num_threads;
    pool_ = options_.shared_pool;
  } else {
    own_pool_ = std::make_unique<ThreadPool>(options_.num_threads, options_.cpus);
    pool_ = own_pool_.get();
  }
  last_logits_tokens_.assign(static_cast<size_t>(options_.max_seqs), 0);
  last_embed_.assign(static_cast<size_t>(options_.max_seqs), 0);
}

Engine::~Engine() = default;

void Engine::CheckPlan(const StepPlan& plan) const {
  SM_CHECK(static_cast<int>(plan.seqs.size()) <= options_.max_seqs)
      << plan.seqs.size() << " seqs in a step, limit " << options_.max_seqs;
  if (config_.encoder) return CheckEncoderPlan(plan);
  int64_t total = 0;
  int64_t logit_rows = 0;
  for (const SeqStep& seq : plan.seqs) {
    SM_CHECK(seq.embed == PoolingType::kNone || seq.embed == PoolingType::kLast)
        << "a decoder pools its last token only";
    if (seq.want_logits) {
      SM_CHECK(seq.logits_tokens >= 1 &&
               seq.logits_tokens <= static_cast<int64_t>(seq.tokens.size()))
          << "logits_tokens " << seq.logits_tokens << " for a slice of " << seq.tokens.size();
      logit_rows += seq.logits_tokens;
    }
    const int64_t end = seq.start_pos + static_cast<int64_t>(seq.tokens.size());
    SM_CHECK(!seq.tokens.empty() && seq.start_pos >= 0) << "empty slice or negative start_pos";
    SM_CHECK(end <= config_.context_length)
        << "positions up to " << end << " exceed the context of " << config_.context_length;
    SM_CHECK(static_cast<int64_t>(seq.block_table.size()) * kv_->block_size() >= end)
        << "block table of " << seq.block_table.size() << " blocks does not cover " << end
        << " positions";
    // Entries wholly behind every layer's window may be released (kNoBlock).
    const int window = config_.AllLayersWindow();
    const int unseen = window > 0 ? std::max<int64_t>(0, seq.start_pos - window + 1) : 0;
    for (size_t b = 0; b < seq.block_table.size(); b++) {
      const int32_t block = seq.block_table[b];
      if (block == kNoBlock && int64_t(b + 1) * kv_->block_size() <= unseen) continue;
      SM_CHECK(block >= 0 && block < kv_->num_blocks()) << "block id " << block << " out of range";
    }
    for (TokenId id : seq.tokens) {
      SM_CHECK(id >= 0 && id < config_.vocab_size) << "token id " << id << " out of range";
    }
    total += static_cast<int64_t>(seq.tokens.size());
  }
  SM_CHECK(total <= options_.max_step_tokens)
      << total << " tokens in a step, limit " << options_.max_step_tokens;
  SM_CHECK(logit_rows <= act_.max_logit_rows)
      << logit_rows << " logits rows in a step, limit " << act_.max_logit_rows;
}

void Engine::CheckEncoderPlan(const StepPlan& plan) const {
  int64_t total = 0;
  for (const SeqStep& seq : plan.seqs) {
    SM_CHECK(!seq.want_logits) << "an encoder has no logits";
    SM_CHECK(seq.start_pos == 0 && !seq.tokens.empty() &&
             static_cast<int64_t>(seq.tokens.size()) <= config_.context_length)
        << "an encoder runs whole inputs of 1.." << config_.context_length << " tokens, got "
        << seq.tokens.size() << " from " << seq.start_pos;
    SM_CHECK(seq.embed == PoolingType::kNone || PoolsInput(seq.embed) ||
             (seq.embed == PoolingType::kRank && config_.rank_outputs > 0))
        << "unknown pooling, or rank without a classification head";
    for (TokenId id : seq.tokens) {
      SM_CHECK(id >= 0 && id < config_.vocab_size) << "token id " << id << " out of range";
    }
    total += static_cast<int64_t>(seq.tokens.size());
  }
  SM_CHECK(total <= options_.max_step_tokens)
      << total << " tokens in a step, limit " << options_.max_step_tokens;
}

void Engine::Step(const StepPlan& plan) {
  const auto start = profile_ != nullptr ? std::chrono::steady_clock::now()
                                         : std::chrono::steady_clock::time_point();
  CheckPlan(plan);
  const bool deterministic = plan.mode == kernels::ExecMode::kDeterministic;
  OpLimits limits;
  limits.mode = plan.mode;
  limits.max_threads = plan.max_threads > 0 ? std::min(plan.max_threads, options_.num_threads)
                                            : options_.num_threads;
  limits.min_rows_per_thread =
      plan.parallel_threshold > 0 ? plan.parallel_threshold : options_.parallel_threshold;
  limits.profile = profile_;
  OpRunner ops(deterministic ? deterministic_ : parallel_, packed_, pool_, limits, &act_);
  if (config_.encoder) {
    ForwardBert(config_, weights_, plan, ops, &act_);
  } else {
    const LlamaForwardContext ctx{config_, weights_, *kv_};
    ForwardLlama(ctx, plan, ops, &act_);
  }
  last_step_seqs_ = static_cast<int>(plan.seqs.size());
  for (int s = 0; s < last_step_seqs_; s++) {
    last_logits_tokens_[s] = plan.seqs[s].want_logits ? plan.seqs[s].logits_tokens : 0;
    const PoolingType embed = plan.seqs[s].embed;
    last_embed_[s] = embed == PoolingType::kNone   ? 0
                     : embed == PoolingType::kRank ? config_.rank_outputs
                                                   : config_.dim;
  }
  if (profile_ != nullptr) {
    profile_->AddStep(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
}

void Engine::ForEach(int n, const std::function<void(int)>& body) {
  pool_->ParallelFor(n, options_.num_threads, Partition::kDynamic, [&](kernels::RowRange r, int) {
    for (int i = r.begin; i < r.end; i++) body(i);
  });
}

std::span<const float> Engine::Embedding(int seq_index) const {
  SM_CHECK(seq_index >= 0 && seq_index < last_step_seqs_ && last_embed_[seq_index] > 0)
      << "seq " << seq_index << " did not ask for an embedding in the last step";
  return std::span<const float>(act_.pooled)
      .subspan(static_cast<size_t>(seq_index) * config_.dim,
               static_cast<size_t>(last_embed_[seq_index]));
}

std::span<float> Engine::Logits(int seq_index, int j) {
  SM_CHECK(seq_index >= 0 && seq_index < last_step_seqs_)
      << "seq " << seq_index << " is not in the last step of " << last_step_seqs_;
  SM_CHECK(act_.logits_row[seq_index] >= 0) << "seq " << seq_index << " did not ask for logits";
  SM_CHECK(j >= 0 && j < last_logits_tokens_[seq_index])
      << "logits row " << j << " of seq " << seq_index << ", which asked for "
      << last_logits_tokens_[seq_index];
  const int row = act_.logits_row[seq_index] + j;
  return std::span<float>(act_.logits)
      .subspan(static_cast<size_t>(row) * config_.vocab_size,
               static_cast<size_t>(config_.vocab_size));
}

}  // namespace smallmind::worker

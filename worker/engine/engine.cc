#include "worker/engine/engine.h"

#include <cstdint>

#include "shared/check.h"
#include "worker/engine/forward_llama.h"

namespace smallmind::worker {
namespace {

// Aborts unless the engine can run `w`: every matrix has a kernel for its type, and the parts this
// forward pass reads element by element are F32.
void CheckSupported(const ModelConfig& c, const Weights& w, const kernels::KernelTable& k) {
  const shared::Status valid = ValidateLlamaWeights(c, w);
  SM_CHECK(valid.ok()) << valid.ToString();
  SM_CHECK(c.head_dim() % 2 == 0) << "RoPE needs an even head_dim, got " << c.head_dim();
  SM_CHECK(w.token_embedding.type == kernels::DType::kF32) << "the engine embeds from F32 only";
  SM_CHECK(k.MatmulFor(w.classifier.type) != nullptr) << "no matmul for the classifier's type";
  SM_CHECK(w.final_norm.type == kernels::DType::kF32) << "norm weights must be F32";
  for (const LayerWeights& l : w.layers) {
    SM_CHECK(!l.bq.present() && !l.bk.present() && !l.bv.present())
        << "q/k/v biases are not supported by this engine";
    SM_CHECK(l.attn_norm.type == kernels::DType::kF32 && l.ffn_norm.type == kernels::DType::kF32)
        << "norm weights must be F32";
    for (const TensorView* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) {
      SM_CHECK(k.MatmulFor(m->type) != nullptr)
          << "no matmul kernel for weight type " << static_cast<int>(m->type);
    }
  }
}

}  // namespace

Engine::Engine(const ModelConfig& config, const Weights& weights, KvPool* kv,
               const EngineOptions& options)
    : config_(config),
      weights_(weights),
      kv_(kv),
      options_(options),
      kernels_(kernels::RefKernelTable()),
      act_(config, options.max_step_tokens, options.max_seqs) {
  SM_CHECK(kv_ != nullptr) << "the engine needs a KV pool";
  SM_CHECK(kv_->n_layers() == config.n_layers && kv_->kv_dim() == config.kv_dim())
      << "KV pool shape (" << kv_->n_layers() << " layers x " << kv_->kv_dim()
      << ") does not match the model (" << config.n_layers << " x " << config.kv_dim() << ")";
  CheckSupported(config_, weights_, kernels_);
}

void Engine::CheckPlan(const StepPlan& plan) const {
  SM_CHECK(static_cast<int>(plan.seqs.size()) <= options_.max_seqs)
      << plan.seqs.size() << " seqs in a step, limit " << options_.max_seqs;
  int64_t total = 0;
  for (const SeqStep& seq : plan.seqs) {
    const int64_t end = seq.start_pos + static_cast<int64_t>(seq.tokens.size());
    SM_CHECK(!seq.tokens.empty() && seq.start_pos >= 0) << "empty slice or negative start_pos";
    SM_CHECK(end <= config_.context_length)
        << "positions up to " << end << " exceed the context of " << config_.context_length;
    SM_CHECK(static_cast<int64_t>(seq.block_table.size()) * kv_->block_size() >= end)
        << "block table of " << seq.block_table.size() << " blocks does not cover " << end
        << " positions";
    for (int32_t block : seq.block_table) {
      SM_CHECK(block >= 0 && block < kv_->num_blocks()) << "block id " << block << " out of range";
    }
    for (TokenId id : seq.tokens) {
      SM_CHECK(id >= 0 && id < config_.vocab_size) << "token id " << id << " out of range";
    }
    total += static_cast<int64_t>(seq.tokens.size());
  }
  SM_CHECK(total <= options_.max_step_tokens)
      << total << " tokens in a step, limit " << options_.max_step_tokens;
}

void Engine::Step(const StepPlan& plan) {
  CheckPlan(plan);
  // TODO(issue 4): pick the kernel table and thread split from plan.mode and plan.max_threads.
  const LlamaForwardContext ctx{config_, weights_, kernels_, *kv_};
  ForwardLlama(ctx, plan, &act_);
  last_step_seqs_ = static_cast<int>(plan.seqs.size());
}

std::span<float> Engine::Logits(int seq_index) {
  SM_CHECK(seq_index >= 0 && seq_index < last_step_seqs_)
      << "seq " << seq_index << " is not in the last step of " << last_step_seqs_;
  const int row = act_.logits_row[seq_index];
  SM_CHECK(row >= 0) << "seq " << seq_index << " did not ask for logits";
  return std::span<float>(act_.logits)
      .subspan(static_cast<size_t>(row) * config_.vocab_size,
               static_cast<size_t>(config_.vocab_size));
}

}  // namespace smallmind::worker

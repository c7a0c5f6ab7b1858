#include "worker/engine/draft_model.h"

#include <algorithm>
#include <string_view>

#include "shared/check.h"

namespace smallmind::worker {
namespace {

EngineOptions DraftEngineOptions(const DraftModelOptions& o, ThreadPool* pool) {
  EngineOptions e;
  e.max_step_tokens = o.max_step_tokens;
  e.max_seqs = o.max_seqs;
  e.num_threads = pool->num_threads();
  e.max_logit_rows = o.max_seqs;
  e.shared_pool = pool;
  e.isa = o.isa;
  return e;
}

shared::Status Mismatch(const std::string& target, const std::string& draft,
                        const std::string& what) {
  return shared::InvalidArgument("--draft-model " + draft + " cannot draft for " + target +
                                 ": the vocabularies differ (" + what +
                                 "); a draft model needs the target's tokenizer");
}

}  // namespace

double DraftStepCost(const LlamaModel& target, const LlamaModel& draft) {
  return static_cast<double>(draft.weights.storage.size()) /
         static_cast<double>(std::max<size_t>(1, target.weights.storage.size()));
}

shared::Status CheckSameVocabulary(const Tokenizer& target, const std::string& target_name,
                                   const Tokenizer& draft, const std::string& draft_name) {
  if (target.vocab_size() != draft.vocab_size()) {
    return Mismatch(
        target_name, draft_name,
        std::to_string(target.vocab_size()) + " tokens vs " + std::to_string(draft.vocab_size()));
  }
  if (target.kind() != draft.kind()) return Mismatch(target_name, draft_name, "tokenizer kinds");
  if (target.bos_id() != draft.bos_id() || target.eos_id() != draft.eos_id() ||
      target.eot_id() != draft.eot_id()) {
    return Mismatch(target_name, draft_name, "BOS/EOS/EOT ids");
  }
  for (TokenId id = 0; id < target.vocab_size(); ++id) {
    if (target.Piece(id) != draft.Piece(id)) {
      return Mismatch(target_name, draft_name,
                      "token " + std::to_string(id) + " is '" + std::string(target.Piece(id)) +
                          "' vs '" + std::string(draft.Piece(id)) + "'");
    }
  }
  return shared::Status::Ok();
}

DraftModel::DraftModel(const LlamaModel& model, const DraftModelOptions& options, ThreadPool* pool)
    : model_(model),
      options_(options),
      kv_(model.config, options.num_blocks, options.block_size, options.kv_type),
      blocks_(options.num_blocks, options.block_size),
      engine_(model.config, model.weights, &kv_, DraftEngineOptions(options, pool)) {
  SM_CHECK(options.max_seqs > 0 && options.max_draft > 0 && options.max_step_tokens > 0);
  plan_.seqs.reserve(options.max_seqs);
  plan_.mode = kernels::ExecMode::kDeterministic;
  plan_seqs_.reserve(options.max_seqs);
  drafting_.reserve(options.max_seqs);
  lengths_.reserve(options.max_seqs);
}

bool DraftModel::Prepare(Sequence* seq, int length) {
  DraftCache& c = seq->spec.draft_model;
  c.pool = &blocks_;
  if (c.drafts.capacity() < static_cast<size_t>(options_.max_draft)) {
    c.drafts.reserve(options_.max_draft);  // once per sequence (the scheduler reserves it)
  }
  if (!c.picker) {  // once per sequence (the scheduler builds it at admission)
    c.picker.emplace(seq->picker.sampler().params(), seq->picker.sampler().vocab_size());
  }
  // Draft 0 is for the position the target picks next, drawn as the target will draw it.
  c.picker->Restart(seq->picker.sampler());
  const int n = seq->num_tokens();
  if (c.shifts != seq->context_shifts) {  // a shift rewrote the tokens
    c.Clear();
    c.shifts = seq->context_shifts;
  } else if (c.computed > c.base) {
    // The K/V past `base` are the fed drafts': valid up to the first one the target rejected.
    int j = 0;
    while (j < c.fed && c.base + j < n && seq->tokens[c.base + j] == c.drafts[j]) ++j;
    c.computed = std::min(c.computed, c.base + j);
  }
  // The last token is fed again when its K/V are in already: its logits give the first draft.
  c.computed = std::min(c.computed, n - 1);
  c.drafts.clear();
  c.fed = 0;
  c.base = n;
  const int bs = options_.block_size;
  // Rollback: blocks holding nothing accepted go back to the pool.
  c.ReleasePast((c.computed + bs - 1) / bs);
  const int need = (n + length - 1 + bs - 1) / bs - static_cast<int>(c.blocks.size());
  return need <= 0 || blocks_.AllocateN(need, &c.blocks);
}

void DraftModel::Propose(std::span<const DraftRequest> requests) {
  drafting_.clear();
  lengths_.clear();
  for (const DraftRequest& r : requests) {
    if (static_cast<int>(drafting_.size()) == options_.max_seqs) break;
    DraftCache& c = r.seq->spec.draft_model;
    // Positions up to n + length - 2 are fed; they must be inside the draft's context.
    const int length = std::min(
        {r.length, options_.max_draft, model_.config.context_length - r.seq->num_tokens() + 1});
    if (length <= 0 || !Prepare(r.seq, length)) {
      c.drafts.clear();
      c.base = -1;  // no drafts for any state
      continue;
    }
    drafting_.push_back(r.seq);
    lengths_.push_back(length);
  }
  counts_.proposals += static_cast<int64_t>(drafting_.size());
  // Catch up with the tokens since the last proposal (a whole prompt the first time), in chunks
  // under the step's token budget; the chunk that ends at the last token gives the first draft.
  while (true) {
    plan_.seqs.clear();
    plan_seqs_.clear();
    int budget = options_.max_step_tokens;
    for (Sequence* seq : drafting_) {
      DraftCache& c = seq->spec.draft_model;
      const int n = seq->num_tokens();
      const int chunk = std::min(n - c.computed, budget);
      if (chunk <= 0) continue;
      plan_.seqs.push_back(SeqStep{std::span<const TokenId>(seq->tokens).subspan(c.computed, chunk),
                                   c.computed, std::span<const int32_t>(c.blocks),
                                   c.computed + chunk == n, 1});
      plan_seqs_.push_back(seq);
      c.computed += chunk;
      budget -= chunk;
      counts_.catch_up_tokens += chunk;
    }
    if (plan_.seqs.empty()) break;
    RunStep();
  }
  // Then one step per further draft, every sequence that wants more feeding its last draft.
  while (true) {
    plan_.seqs.clear();
    plan_seqs_.clear();
    for (size_t i = 0; i < drafting_.size(); ++i) {
      DraftCache& c = drafting_[i]->spec.draft_model;
      if (static_cast<int>(c.drafts.size()) >= lengths_[i]) continue;
      plan_.seqs.push_back(SeqStep{std::span<const TokenId>(&c.drafts.back(), 1), c.computed,
                                   std::span<const int32_t>(c.blocks), true, 1});
      plan_seqs_.push_back(drafting_[i]);
      ++c.computed;
      ++c.fed;
    }
    if (plan_.seqs.empty()) break;
    RunStep();
  }
}

void DraftModel::RunStep() {
  engine_.Step(plan_);
  ++counts_.steps;
  for (size_t s = 0; s < plan_.seqs.size(); ++s) {
    if (!plan_.seqs[s].want_logits) continue;
    DraftCache& c = plan_seqs_[s]->spec.draft_model;
    c.drafts.push_back(c.picker->Next(engine_.Logits(static_cast<int>(s))));
    ++counts_.draft_tokens;
  }
}

}  // namespace smallmind::worker

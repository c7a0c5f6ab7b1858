#include "worker/submit_reactor.h"

#include <algorithm>
#include <utility>

#include "shared/grpc_status.h"
#include "worker/request_builder.h"

namespace smallmind::worker {
namespace {

v1::FinishReason ToProto(FinishReason r) {
  switch (r) {
    case FinishReason::kLength: return v1::LENGTH;
    case FinishReason::kStop: return v1::STOP;
    case FinishReason::kEos: return v1::EOS;
    case FinishReason::kCancelled: return v1::CANCELLED;
    case FinishReason::kNone: break;
  }
  return v1::FINISH_REASON_UNSPECIFIED;
}

shared::Status ClientGone() {
  return shared::Status(shared::StatusCode::kCancelled, "the caller cancelled or went away");
}

void AppendTokens(const TokenEvent& event, v1::GenerateResponse* msg) {
  for (TokenId id : event.token_ids) msg->add_token_ids(static_cast<uint32_t>(id));
  msg->mutable_text()->append(event.text);
  // Tokens of several steps may share a message: the shifts after any of them add up.
  msg->set_context_shifts(msg->context_shifts() + static_cast<uint32_t>(event.context_shifts));
  for (const SampleLogprobs& lp : event.logprobs) {
    v1::TokenLogprobs* out = msg->add_logprobs();
    out->set_token_id(static_cast<uint32_t>(lp.chosen.id));
    out->set_logprob(lp.chosen.logprob);
    for (int k = 0; k < lp.n_top; ++k) {
      v1::TopLogprob* top = out->add_top();
      top->set_token_id(static_cast<uint32_t>(lp.top[k].id));
      top->set_logprob(lp.top[k].logprob);
    }
  }
}

v1::KernelPath PathOf(const ExecutionRecord& e) {
  if (e.deterministic_steps > 0 && e.parallel_steps > 0) return v1::KERNEL_PATH_MIXED;
  if (e.deterministic_steps > 0) return v1::KERNEL_PATH_DETERMINISTIC;
  if (e.parallel_steps > 0) return v1::KERNEL_PATH_PARALLEL;
  return v1::KERNEL_PATH_UNSPECIFIED;
}

// The request's own record plus what every request on this worker runs with.
void SetReceipt(const ExecutionRecord& e, const RunFacts& facts, v1::DeterminismReceipt* r) {
  r->set_path(PathOf(e));
  r->set_kernel_isa(facts.kernel_isa);
  int threads = 0;  // no step ran
  if (e.widest_threads == 0) threads = facts.engine_threads;
  if (e.widest_threads > 0) threads = std::min(e.widest_threads, facts.engine_threads);
  r->set_threads(static_cast<uint32_t>(threads));
  r->set_model_fingerprint(facts.model_fingerprint);
  r->set_kv_dtype(facts.kv_dtype);
  r->set_seed(e.seed);
  r->set_deterministic_steps(static_cast<uint32_t>(e.deterministic_steps));
  r->set_parallel_steps(static_cast<uint32_t>(e.parallel_steps));
}

void SetFinish(const FinishEvent& event, const RunFacts& facts, v1::GenerateResponse* msg) {
  msg->set_finish_reason(ToProto(event.reason));
  v1::Usage* usage = msg->mutable_usage();
  usage->set_prompt_tokens(event.prompt_tokens);
  usage->set_completion_tokens(event.completion_tokens);
  usage->set_cached_prompt_tokens(event.cached_prompt_tokens);
  usage->set_context_shifts(static_cast<uint32_t>(event.context_shifts));
  usage->set_draft_tokens(static_cast<uint32_t>(event.draft_tokens));
  usage->set_accepted_draft_tokens(static_cast<uint32_t>(event.accepted_draft_tokens));
  v1::Timings* t = msg->mutable_timings();
  t->set_queue_ms(event.queue_ms);
  t->set_ttft_ms(event.ttft_ms);
  t->set_prefill_tokens_per_s(event.prefill_tokens_per_s);
  t->set_decode_tokens_per_s(event.decode_tokens_per_s);
  SetReceipt(event.execution, facts, msg->mutable_receipt());
  msg->mutable_receipt()->set_speculated(event.draft_tokens > 0);
}

}  // namespace

SubmitReactor::SubmitReactor(const v1::SubmitRequest& request, const LoadedModel& model,
                             const RunFacts& facts, CommandQueue* commands, RequestLanes* lanes,
                             uint64_t sequence_id)
    : facts_(facts), commands_(commands), sequence_id_(sequence_id) {
  const size_t input_bytes = request.request().prompt().size() +
                             request.request().prompt_token_ids().ids_size() * sizeof(uint32_t) +
                             request.request().json_schema().size();
  lanes->Post(input_bytes, [this, &request, &model] { Build(request, model); });
}

void SubmitReactor::Build(const v1::SubmitRequest& request, const LoadedModel& model) {
  bool cancelled = false;  // while it waited for its lane
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled = broken_;
  }
  shared::Status why_not = ClientGone();
  if (!cancelled) {
    shared::Result<SequenceRequest> built = BuildSequenceRequest(request, model);
    if (built.ok()) {
      auto seq = std::make_unique<Sequence>(sequence_id_, std::move(built).value(),
                                            *model.tokenizer, model.llama.config.vocab_size, this);
      // Under mu_: a cancel either came before (broken_ is seen here) or comes after this push,
      // so that its CancelCommand follows the SubmitCommand.
      std::lock_guard<std::mutex> lock(mu_);
      if (!broken_) {
        commands_->Push(SubmitCommand{std::move(seq)});
        return;  // the scheduler's OnFinish ends the job's reference
      }
    } else {
      why_not = built.status();
    }
  }
  FinishEvent failed;
  failed.status = why_not;
  OnFinish(failed);
}

void SubmitReactor::OnTokens(const TokenEvent& event) {
  Action action;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_) return;
    AppendTokens(event, pending_.mutable_response());
    has_pending_ = true;
    action = NextActionLocked();
  }
  Act(action);
}

void SubmitReactor::OnFinish(const FinishEvent& event) {
  Action action;
  {
    std::lock_guard<std::mutex> lock(mu_);
    scheduler_done_ = true;
    if (!event.status.ok()) {
      final_status_ = event.status;
      pending_.Clear();
      has_pending_ = false;
    } else if (!broken_) {
      SetFinish(event, facts_, pending_.mutable_response());  // the last message carries the finish
      has_pending_ = true;
    }
    action = NextActionLocked();
  }
  Act(action);
  Unref();  // after the last touch of this: OnDone may have run during Act
}

SubmitReactor::Action SubmitReactor::NextActionLocked() {
  if (writing_ || finish_called_) return Action::kNone;
  if (has_pending_ && !broken_) {
    in_flight_.Swap(&pending_);
    pending_.Clear();  // keeps the allocated fields for the next tokens
    has_pending_ = false;
    writing_ = true;
    return Action::kWrite;
  }
  if (scheduler_done_) {
    finish_called_ = true;
    if (broken_ && final_status_.ok()) final_status_ = ClientGone();
    return Action::kFinish;
  }
  return Action::kNone;
}

void SubmitReactor::Act(Action action) {
  // Past StartWrite or Finish, OnWriteDone, Finish and OnDone may run on gRPC threads; OnFinish's
  // reference keeps this alive until it returns.
  if (action == Action::kWrite) {
    StartWrite(&in_flight_);
  } else if (action == Action::kFinish) {
    Finish(shared::ToGrpcStatus(final_status_));
  }
}

void SubmitReactor::OnWriteDone(bool ok) {
  Action action;
  {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok) {
      broken_ = true;
      pending_.Clear();
      has_pending_ = false;
    }
    action = NextActionLocked();
  }
  if (!ok) commands_->Push(CancelCommand{sequence_id_});
  Act(action);
}

void SubmitReactor::OnCancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    broken_ = true;
  }
  commands_->Push(CancelCommand{sequence_id_});
}

void SubmitReactor::OnDone() { Unref(); }

void SubmitReactor::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace smallmind::worker

#include "worker/sched/step_output.h"

#include <utility>

namespace smallmind::worker {

void StepOutput::AddTokens(SequenceSink* sink, uint64_t sequence_id,
                           std::span<const TokenId> token_ids, std::string_view text,
                           std::span<const SampleLogprobs> logprobs, int context_shifts) {
  OutputEvent& e = events_.emplace_back();
  e.sink = sink;
  e.sequence_id = sequence_id;
  e.token_begin = static_cast<uint32_t>(token_ids_.size());
  e.token_count = static_cast<uint32_t>(token_ids.size());
  token_ids_.insert(token_ids_.end(), token_ids.begin(), token_ids.end());
  e.text_begin = static_cast<uint32_t>(text_.size());
  e.text_size = static_cast<uint32_t>(text.size());
  text_.append(text);
  e.logprob_begin = static_cast<uint32_t>(logprobs_.size());
  e.logprob_count = static_cast<uint32_t>(logprobs.size());
  logprobs_.insert(logprobs_.end(), logprobs.begin(), logprobs.end());
  e.context_shifts = static_cast<uint32_t>(context_shifts);
}

void StepOutput::AddFinish(SequenceSink* sink, uint64_t sequence_id, FinishEvent finish) {
  OutputEvent& e = events_.emplace_back();
  e.sink = sink;
  e.sequence_id = sequence_id;
  e.token_begin = static_cast<uint32_t>(token_ids_.size());
  e.text_begin = static_cast<uint32_t>(text_.size());
  e.logprob_begin = static_cast<uint32_t>(logprobs_.size());
  e.finished = true;
  e.finish = std::move(finish);
}

void StepOutput::Append(const StepOutput& other) {
  const auto token_base = static_cast<uint32_t>(token_ids_.size());
  const auto text_base = static_cast<uint32_t>(text_.size());
  const auto logprob_base = static_cast<uint32_t>(logprobs_.size());
  for (const OutputEvent& src : other.events_) {
    OutputEvent& e = events_.emplace_back(src);
    e.token_begin += token_base;
    e.text_begin += text_base;
    e.logprob_begin += logprob_base;
  }
  token_ids_.insert(token_ids_.end(), other.token_ids_.begin(), other.token_ids_.end());
  text_.append(other.text_);
  logprobs_.insert(logprobs_.end(), other.logprobs_.begin(), other.logprobs_.end());
}

void StepOutput::Clear() {
  events_.clear();
  token_ids_.clear();
  text_.clear();
  logprobs_.clear();
}

void StepOutput::Swap(StepOutput& other) noexcept {
  events_.swap(other.events_);
  token_ids_.swap(other.token_ids_);
  text_.swap(other.text_);
  logprobs_.swap(other.logprobs_);
}

}  // namespace smallmind::worker

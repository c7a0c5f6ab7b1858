#include "gateway/relay/request_record.h"

#include <utility>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway {
namespace {

double MsBetween(RequestRecord::Clock::time_point from, RequestRecord::Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

void RequestRecord::SetRequest(std::string request_id, uint32_t prompt_tokens, size_t prompt_bytes,
                               uint32_t max_new_tokens) {
  request_id_ = std::move(request_id);
  prompt_tokens_ = prompt_tokens;
  prompt_bytes_ = prompt_bytes;
  max_new_tokens_ = max_new_tokens;
}

void RequestRecord::OnAttempt(uint32_t worker_id) {
  ++attempts_;
  worker_id_ = worker_id;
}

double RequestRecord::MsSinceStart(Clock::time_point now) const { return MsBetween(start_, now); }

void RequestRecord::OnMessage(smallmind::v1::GenerateResponse& message, Clock::time_point now) {
  if (message.request_id().empty()) message.set_request_id(request_id_);
  tracker_.OnTokens(static_cast<size_t>(message.token_ids_size()), now);
  if (message.token_ids_size() > 0) {
    if (!first_token_) first_token_ = now;
    last_token_ = now;
    tokens_ += message.token_ids_size();
  }
  if (message.finish_reason() == smallmind::v1::FINISH_REASON_UNSPECIFIED) return;
  finish_reason_ = message.finish_reason();
  if (message.has_timings()) queue_ms_ = message.timings().queue_ms();
  auto* timings = message.mutable_timings();
  timings->set_worker_id(worker_id_);
  if (first_token_) timings->set_ttft_ms(MsBetween(start_, *first_token_));
  prefill_tokens_per_s_ = timings->prefill_tokens_per_s();
  decode_tokens_per_s_ = timings->decode_tokens_per_s();
  if (message.has_usage()) {
    prompt_tokens_ = message.usage().prompt_tokens();
    completion_tokens_ = message.usage().completion_tokens();
    draft_tokens_ = message.usage().draft_tokens();
    accepted_draft_tokens_ = message.usage().accepted_draft_tokens();
  }
}

std::optional<ServiceSample> RequestRecord::Served() const {
  if (finish_reason_ == smallmind::v1::FINISH_REASON_UNSPECIFIED ||
      finish_reason_ == smallmind::v1::CANCELLED) {
    return std::nullopt;
  }
  ServiceSample sample;
  sample.prompt_tokens = prompt_tokens_;
  sample.prompt_bytes = prompt_bytes_;
  sample.completion_tokens = completion_tokens_;
  sample.max_new_tokens = max_new_tokens_;
  sample.prefill_tokens_per_s = prefill_tokens_per_s_;
  sample.decode_tokens_per_s = decode_tokens_per_s_;
  return sample;
}

void RequestRecord::OnFinished(const shared::Status& status) {
  std::optional<RequestMetrics::Seconds> queue;
  if (queue_ms_) queue = RequestMetrics::Seconds(*queue_ms_ / 1000);
  if (status.ok()) tracker_.OnSpeculation(draft_tokens_, accepted_draft_tokens_);
  tracker_.OnFinished(status.code(), prompt_tokens_, queue);
}

std::string RequestRecord::FinishedLine(const shared::Status& status) const {
  const double ttft_ms = first_token_ ? MsBetween(start_, *first_token_) : 0.0;
  double tokens_per_s = decode_tokens_per_s_;
  if (tokens_per_s == 0 && tokens_ > 1 && first_token_ && last_token_ > *first_token_) {
    tokens_per_s = (tokens_ - 1) * 1000.0 / MsBetween(*first_token_, last_token_);
  }
  return fmt::format(
      "request {} worker {} status {} finish {} prompt_tokens {} tokens {} ttft_ms {:.1f} "
      "tok_s {:.1f} attempts {}{}{}",
      request_id_.empty() ? "-" : request_id_, attempts_ > 0 ? std::to_string(worker_id_) : "-",
      shared::StatusCodeName(status.code()), smallmind::v1::FinishReason_Name(finish_reason_),
      prompt_tokens_, tokens_, ttft_ms, tokens_per_s, attempts_, status.ok() ? "" : ": ",
      status.message());
}

}  // namespace smallmind::gateway

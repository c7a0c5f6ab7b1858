#include "gateway/http/relayed_completion.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "gateway/http/http_error.h"

namespace smallmind::gateway::http {
namespace {

// Retry-After is in whole seconds: the gateway queue's hint rounded up, at least 1 (0 would invite
// an immediate retry into the same full queue); 1 when a worker refused without a hint.
std::string RetryAfterSeconds(std::optional<std::chrono::milliseconds> retry_after) {
  if (!retry_after) return "1";
  const int64_t ms = std::max<int64_t>(retry_after->count(), 1);
  return std::to_string((ms + 999) / 1000);
}

HttpError ShutdownError() {
  return MakeError(503,
                   "the server is shutting down: the request was stopped before it finished "
                   "(retry it)",
                   {}, "server_shutdown");
}

}  // namespace

void RelayedCompletion::Start(std::shared_ptr<RelayEnv> env, std::shared_ptr<Exchange> exchange,
                              std::vector<ChoiceSpec> choices, bool stream,
                              std::chrono::system_clock::time_point deadline) {
  auto self =
      std::make_shared<RelayedCompletion>(std::move(env), std::move(exchange), stream, deadline);
  for (size_t i = 0; i < choices.size(); ++i) {
    self->choices_.push_back(std::make_unique<Choice>(self.get(), i, std::move(choices[i])));
  }
  self->self_ = self;
  const std::weak_ptr<RelayedCompletion> weak = self;
  self->exchange_->OnClientGone([weak] {
    if (auto s = weak.lock()) {
      s->gone_ = true;
      s->CancelAll();
    }
  });
  self->exchange_->OnServerStop([weak] {
    if (auto s = weak.lock()) {
      s->stopping_ = true;
      s->CancelAll();
    }
  });
  // Complete may come inline (a refused request); it posts, so relay stays set until then.
  self->StartChoice(*self->choices_.front());
}

void RelayedCompletion::StartChoice(Choice& choice) {
  ++running_;
  choice.relay = new RequestRelay(env_, &choice);
  choice.relay->Start(std::move(*choice.pending), deadline_);
  choice.pending.reset();
}

void RelayedCompletion::StartRest() {
  if (rest_started_) return;
  rest_started_ = true;
  if (failed_ || gone_ || stopping_) return;
  for (size_t i = 1; i < choices_.size(); ++i) StartChoice(*choices_[i]);
}

// The message stays valid until OnDelivered, which the strand calls after using it.
void RelayedCompletion::Deliver(size_t index, const smallmind::v1::GenerateResponse& message) {
  exchange_->Post(
      [self = shared_from_this(), index, &message] { self->DeliverOnStrand(index, message); });
}

void RelayedCompletion::Complete(size_t index, const RelayOutcome& outcome) {
  exchange_->Post(
      [self = shared_from_this(), index, outcome] { self->CompleteOnStrand(index, outcome); });
}

void RelayedCompletion::DeliverOnStrand(size_t index,
                                        const smallmind::v1::GenerateResponse& message) {
  Choice& c = *choices_[index];
  if (index == 0) StartRest();
  if (!stream_) {
    c.formatter->Add(message);
    c.relay->OnDelivered(true);
    return;
  }
  std::string events;
  if (!c.started) {
    c.started = true;
    events = c.formatter->StreamStart();
  }
  events += c.formatter->StreamMessage(message);
  if (events.empty()) {
    c.relay->OnDelivered(true);
    return;
  }
  started_ = true;
  exchange_->Send(std::move(events), [self = shared_from_this(), index](bool ok) {
    if (RequestRelay* relay = self->choices_[index]->relay) relay->OnDelivered(ok);
  });
}

void RelayedCompletion::CompleteOnStrand(size_t index, const RelayOutcome& outcome) {
  Choice& c = *choices_[index];
  std::exchange(c.relay, nullptr)->Detach();
  --running_;
  if (!outcome.status.ok() && !failed_) {
    failed_ = outcome;
    CancelAll();
  }
  if (index == 0) StartRest();
  if (running_ == 0) Finish();
}

void RelayedCompletion::CancelAll() {
  for (auto& c : choices_) {
    if (c->relay) c->relay->Cancel();
  }
}

std::vector<const ChoiceFormatter*> RelayedCompletion::Formatters() const {
  std::vector<const ChoiceFormatter*> out;
  for (const auto& c : choices_) out.push_back(c->formatter.get());
  return out;
}

void RelayedCompletion::Finish() {
  if (stopping_) {
    Fail(ShutdownError(), std::nullopt);
  } else if (failed_) {
    Fail(ErrorFromStatus(failed_->status), failed_->retry_after);
  } else if (stream_) {
    std::string events;
    for (auto& c : choices_) {
      if (!c->started) events += c->formatter->StreamStart();
    }
    exchange_->Send(events + first().EndStream(Formatters()), nullptr);
    exchange_->EndStream(/*close=*/false);
  } else {
    exchange_->Reply(JsonResponse(200, first().WholeBody(Formatters())));
  }
  self_.reset();  // the posted closure still holds a reference until it returns
}

void RelayedCompletion::Fail(const HttpError& error,
                             std::optional<std::chrono::milliseconds> retry_after) {
  if (started_) {
    // The stream is under way: each unfinished choice ends (on a stop), then the error event.
    std::string events;
    if (stopping_) {
      for (auto& c : choices_) events += c->formatter->StreamAbort();
    }
    exchange_->Send(events + first().ErrorEvent(error), nullptr);
    exchange_->EndStream(/*close=*/true);
    return;
  }
  Response response = JsonResponse(error.status, first().ErrorResponseBody(error));
  if (error.status == 429)
    response.set(beast_http::field::retry_after, RetryAfterSeconds(retry_after));
  exchange_->Reply(std::move(response));
}

}  // namespace smallmind::gateway::http

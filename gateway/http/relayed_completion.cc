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

}  // namespace

void RelayedCompletion::Start(std::shared_ptr<RelayEnv> env, std::shared_ptr<Exchange> exchange,
                              OpenAiFormatter formatter, bool stream,
                              shared::Result<ValidatedRequest> request,
                              std::chrono::system_clock::time_point deadline) {
  auto self =
      std::make_shared<RelayedCompletion>(std::move(exchange), std::move(formatter), stream);
  self->self_ = self;
  self->relay_ = new RequestRelay(std::move(env), self.get());
  self->exchange_->OnClientGone([weak = std::weak_ptr<RelayedCompletion>(self)] {
    if (auto s = weak.lock()) s->ClientGone();
  });
  // Complete may come inline (a refused request); it posts, so relay_ stays set until then.
  self->relay_->Start(std::move(request), deadline);
}

// The message stays valid until OnDelivered, which the strand calls after using it.
void RelayedCompletion::Deliver(const smallmind::v1::GenerateResponse& message) {
  exchange_->Post([self = shared_from_this(), &message] { self->DeliverOnStrand(message); });
}

void RelayedCompletion::Complete(const RelayOutcome& outcome) {
  exchange_->Post([self = shared_from_this(), outcome] { self->CompleteOnStrand(outcome); });
}

void RelayedCompletion::DeliverOnStrand(const smallmind::v1::GenerateResponse& message) {
  if (!stream_) {
    formatter_.Add(message);
    relay_->OnDelivered(true);
    return;
  }
  std::string events;
  if (!started_) {
    started_ = true;
    events = formatter_.StreamStart();
  }
  events += formatter_.StreamMessage(message);
  if (events.empty()) {
    relay_->OnDelivered(true);
    return;
  }
  exchange_->Send(std::move(events), [self = shared_from_this()](bool ok) {
    if (self->relay_) self->relay_->OnDelivered(ok);
  });
}

void RelayedCompletion::CompleteOnStrand(const RelayOutcome& outcome) {
  const shared::Status& status = outcome.status;
  if (status.ok()) {
    if (stream_) {
      std::string events = started_ ? std::string() : formatter_.StreamStart();
      exchange_->Send(events + formatter_.StreamEnd(), nullptr);
      exchange_->EndStream(/*close=*/false);
    } else {
      exchange_->Reply(JsonResponse(200, formatter_.Body()));
    }
  } else {
    const HttpError error = ErrorFromStatus(status);
    if (started_) {
      exchange_->Send(OpenAiFormatter::StreamError(error), nullptr);
      exchange_->EndStream(/*close=*/true);
    } else {
      Response response = JsonResponse(error.status, ErrorBody(error));
      if (error.status == 429) {
        response.set(beast_http::field::retry_after, RetryAfterSeconds(outcome.retry_after));
      }
      exchange_->Reply(std::move(response));
    }
  }
  RequestRelay* relay = std::exchange(relay_, nullptr);
  relay->Detach();
  self_.reset();  // the posted closure still holds a reference until it returns
}

void RelayedCompletion::ClientGone() {
  if (relay_) relay_->Cancel();
}

}  // namespace smallmind::gateway::http

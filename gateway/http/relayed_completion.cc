#include "gateway/http/relayed_completion.h"

#include <utility>

#include "gateway/http/http_error.h"

namespace smallmind::gateway::http {

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

void RelayedCompletion::Complete(const shared::Status& status) {
  exchange_->Post([self = shared_from_this(), status] { self->CompleteOnStrand(status); });
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

void RelayedCompletion::CompleteOnStrand(const shared::Status& status) {
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
      if (error.status == 429) response.set(beast_http::field::retry_after, "1");
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

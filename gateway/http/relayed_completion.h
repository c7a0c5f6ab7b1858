// RelayedCompletion: the HTTP door's RelayConsumer. It carries one /v1/completions or
// /v1/chat/completions request through a RequestRelay (admission, routing, worker stream,
// cancellation) and answers on its Exchange: one JSON body, or an event stream whose header goes
// out with the first token, so a request refused before its first token gets its real HTTP status
// (429 with Retry-After when the gateway queue is full, 504 past the deadline, 503 with no worker).
// A client that leaves cancels the relay. The relay calls it from any thread; everything it does
// happens on the connection's strand. Thread-safe; owns itself until the relay is done with it.
#pragma once

#include <chrono>
#include <memory>

#include "gateway/admission/validate.h"
#include "gateway/http/exchange.h"
#include "gateway/http/openai_format.h"
#include "gateway/relay/request_relay.h"
#include "shared/status.h"

namespace smallmind::gateway::http {

class RelayedCompletion final : private RelayConsumer,
                                public std::enable_shared_from_this<RelayedCompletion> {
 public:
  // Starts the relay with `request` (its error, if any, is answered at once). `stream` picks the
  // event stream. `deadline` = system_clock max for none.
  static void Start(std::shared_ptr<RelayEnv> env, std::shared_ptr<Exchange> exchange,
                    OpenAiFormatter formatter, bool stream,
                    shared::Result<ValidatedRequest> request,
                    std::chrono::system_clock::time_point deadline);

  RelayedCompletion(std::shared_ptr<Exchange> exchange, OpenAiFormatter formatter, bool stream)
      : exchange_(std::move(exchange)), formatter_(std::move(formatter)), stream_(stream) {}

 private:
  void Deliver(const smallmind::v1::GenerateResponse& message) override;
  void Complete(const RelayOutcome& outcome) override;

  // On the strand.
  void DeliverOnStrand(const smallmind::v1::GenerateResponse& message);
  void CompleteOnStrand(const RelayOutcome& outcome);
  void ClientGone();

  const std::shared_ptr<Exchange> exchange_;
  OpenAiFormatter formatter_;
  const bool stream_;
  // Strand-only from here on.
  RequestRelay* relay_ = nullptr;  // null after Detach
  bool started_ = false;           // the stream's first event went out
  // Keeps this object alive while the relay may call it (until Complete).
  std::shared_ptr<RelayedCompletion> self_;
};

}  // namespace smallmind::gateway::http

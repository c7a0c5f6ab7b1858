// RelayedCompletion: the HTTP door's relay consumer. It carries one /v1/completions,
// /v1/chat/completions or /v1/messages request (its API's shapes are its ChoiceFormatters), its `n`
// choices each a RequestRelay of its own (admission, routing, worker stream, cancellation), and
// answers on its Exchange: one JSON body with every choice, or an event stream whose header goes
// out with the first token, so a request refused before its first token gets its real HTTP status
// (429 with Retry-After when the gateway queue is full, 504 past the deadline, 503 with no worker).
// The first choice goes first; the others start once it delivered its first token, so that its
// worker's prefix cache holds the prompt's blocks for them. A choice that fails cancels the others
// and fails the request. A client that leaves cancels the relays; a server that stops (drain
// deadline, forced stop) ends an open stream with a finish_reason "abort" chunk per unfinished
// choice and an error event (503), a whole answer with a 503. The relays call it from any thread;
// everything it does happens on the connection's strand. Thread-safe; owns itself until every relay
// is done with it.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "gateway/admission/validate.h"
#include "gateway/http/choice_formatter.h"
#include "gateway/http/exchange.h"
#include "gateway/relay/request_relay.h"
#include "shared/status.h"

namespace smallmind::gateway::http {

// One choice of a request: what its relay runs and how its output is written.
struct ChoiceSpec {
  std::unique_ptr<ChoiceFormatter> formatter;  // OpenAI's or Anthropic's shapes
  shared::Result<ValidatedRequest> request;
};

class RelayedCompletion final : public std::enable_shared_from_this<RelayedCompletion> {
 public:
  // Starts the request (a choice's error, if any, is answered at once). `choices` in index
  // order, at least one. `stream` picks the event stream. `deadline` = system_clock max for none.
  static void Start(std::shared_ptr<RelayEnv> env, std::shared_ptr<Exchange> exchange,
                    std::vector<ChoiceSpec> choices, bool stream,
                    std::chrono::system_clock::time_point deadline);

  RelayedCompletion(std::shared_ptr<RelayEnv> env, std::shared_ptr<Exchange> exchange, bool stream,
                    std::chrono::system_clock::time_point deadline)
      : env_(std::move(env)),
        exchange_(std::move(exchange)),
        stream_(stream),
        deadline_(deadline) {}

 private:
  // One choice's relay consumer and state; the state is strand-only.
  class Choice final : public RelayConsumer {
   public:
    Choice(RelayedCompletion* owner, size_t index, ChoiceSpec spec)
        : formatter(std::move(spec.formatter)),
          pending(std::move(spec.request)),
          owner_(owner),
          index_(index) {}
    void Deliver(const smallmind::v1::GenerateResponse& message) override {
      owner_->Deliver(index_, message);
    }
    void Complete(const RelayOutcome& outcome) override { owner_->Complete(index_, outcome); }

    std::unique_ptr<ChoiceFormatter> formatter;
    std::optional<shared::Result<ValidatedRequest>> pending;  // until its relay starts
    RequestRelay* relay = nullptr;                            // running: set from start to Detach
    bool started = false;                                     // its first stream event was written

   private:
    RelayedCompletion* const owner_;
    const size_t index_;
  };

  void Deliver(size_t index, const smallmind::v1::GenerateResponse& message);
  void Complete(size_t index, const RelayOutcome& outcome);

  // On the strand.
  void StartChoice(Choice& choice);
  // The choices after the first, once it delivered (or ended); none when the request is over.
  void StartRest();
  void DeliverOnStrand(size_t index, const smallmind::v1::GenerateResponse& message);
  void CompleteOnStrand(size_t index, const RelayOutcome& outcome);
  void CancelAll();
  void Finish();
  void Fail(const HttpError& error, std::optional<std::chrono::milliseconds> retry_after);
  std::vector<const ChoiceFormatter*> Formatters() const;
  const ChoiceFormatter& first() const { return *choices_.front()->formatter; }

  const std::shared_ptr<RelayEnv> env_;
  const std::shared_ptr<Exchange> exchange_;
  const bool stream_;
  const std::chrono::system_clock::time_point deadline_;
  std::vector<std::unique_ptr<Choice>> choices_;  // set by Start, then fixed
  // Strand-only from here on.
  size_t running_ = 0;                  // relays started and not completed
  bool rest_started_ = false;           // StartRest ran
  bool started_ = false;                // the stream's first event went out
  bool gone_ = false;                   // the client left
  bool stopping_ = false;               // the server stops
  std::optional<RelayOutcome> failed_;  // the first choice that failed
  // Keeps this object alive while a relay may call it (until the last Complete).
  std::shared_ptr<RelayedCompletion> self_;
};

}  // namespace smallmind::gateway::http

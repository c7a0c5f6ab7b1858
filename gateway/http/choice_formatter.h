// ChoiceFormatter: what RelayedCompletion needs of the API a request came through (OpenAI's or
// Anthropic's): one choice's stream events and whole-body part from the worker's messages, and
// the request's closing events, body and error shapes over all its choices. One formatter per
// choice, used on its connection's strand; not thread-safe.
#pragma once

#include <span>
#include <string>

#include "gateway/http/http_error.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway::http {

class ChoiceFormatter {
 public:
  // The formatters of one request's choices, in index order (at least one), all of one type.
  using Choices = std::span<const ChoiceFormatter* const>;

  virtual ~ChoiceFormatter() = default;

  // Streaming: the choice's first event(s), then one worker message's, then (the server stops)
  // the events ending it early ("" when it already finished).
  virtual std::string StreamStart() = 0;
  virtual std::string StreamMessage(const smallmind::v1::GenerateResponse& message) = 0;
  virtual std::string StreamAbort() = 0;
  // Whole response: every message goes here before the body is taken.
  virtual void Add(const smallmind::v1::GenerateResponse& message) = 0;

  // Called on the first choice's formatter for the whole request: the stream's last events, the
  // whole body, an error event of a stream under way and an error response's body.
  virtual std::string EndStream(Choices choices) const = 0;
  virtual std::string WholeBody(Choices choices) const = 0;
  virtual std::string ErrorEvent(const HttpError& error) const = 0;
  virtual std::string ErrorResponseBody(const HttpError& error) const = 0;
};

}  // namespace smallmind::gateway::http

// OpenAI response objects built from the worker's GenerateResponse messages: the whole
// text_completion / chat.completion body, or the Server-Sent Events of a stream ("data:
// {chunk}\n\n"
// ... "data: [DONE]\n\n"), byte for byte in OpenAI's shape. One formatter per request, used on its
// connection's strand; not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/chat/harmony_parser.h"
#include "gateway/chat/reasoning_parser.h"
#include "gateway/chat/tool_call_parser.h"
#include "gateway/chat/tool_call_scanner.h"
#include "gateway/chat/tool_call_syntax.h"
#include "gateway/http/choice_formatter.h"
#include "gateway/http/http_error.h"
#include "gateway/http/openai_request.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway::http {

// What each token id spells (raw bytes, possibly a partial UTF-8 sequence), for logprobs.
using TokenPieces = std::vector<std::string>;

struct ResponseShape {
  Endpoint endpoint = Endpoint::kCompletions;
  uint32_t index = 0;  // the choice's index among the request's `n`
  std::string id;      // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;
  std::string model;
  bool include_usage = false;
  bool logprobs = false;
  uint32_t top_logprobs = 0;
  std::string echo_text;  // completions with echo: the prompt, first in the text
  // Chat with a forced call: the reply is one `tool_calls` entry of this function (id
  // tool_call_id) whose arguments are the text; content is null. "" = a text reply.
  std::string tool_name;
  std::string tool_call_id;
  // Chat with a call among several tools: the text is {"name": ..., "arguments": {...}} and the
  // reply that function's `tool_calls` entry (id tool_call_id); streams send the entry's header
  // once the name has been written. Text that never names a function stays content.
  bool tool_from_output = false;
  // Chat with tools the model may call on its own (tool_choice "auto"): the syntax its template
  // taught it and the functions offered. Calls written in that syntax become `tool_calls` (ids
  // tool_call_id, then tool_call_id_1, _2, ...; finish_reason "tool_calls"), the rest stays
  // content (ToolCallParser). kNone: a text reply.
  ToolCallSyntax tool_syntax = ToolCallSyntax::kNone;
  std::vector<std::string> tool_functions;
  // Chat with a reasoning model (its template writes <think> sections): the thinking at the
  // reply's start becomes `reasoning_content` (null when none), streamed as deltas of that field
  // before the answer's (ReasoningParser); reasoning_open: the prompt itself opened the section.
  bool reasoning = false;
  bool reasoning_open = false;
  // Chat with a gpt-oss model (its template renders OpenAI's harmony format): the analysis
  // channel is `reasoning_content`, the final channel and preambles content, messages to the
  // offered `tool_functions` `tool_calls` (HarmonyParser). Set instead of reasoning and
  // tool_syntax.
  bool harmony = false;
};

// "stop" for STOP and EOS, "length" for LENGTH, "abort" for a server-side cancel (vLLM's word).
const char* FinishReasonName(smallmind::v1::FinishReason reason);

class OpenAiFormatter final : public ChoiceFormatter {
 public:
  // The formatters of one request's choices, in index order (at least one).
  using Choices = std::span<const OpenAiFormatter* const>;

  // `pieces` may be null (logprobs then carry empty token strings) and must outlive the formatter.
  OpenAiFormatter(ResponseShape shape, const TokenPieces* pieces);

  // Streaming. The first event(s): chat's role delta, completions' echoed prompt ("" if none).
  std::string StreamStart() override;
  // One worker message: a text chunk when it carries text or logprobs and, on the last message,
  // the chunk with finish_reason.
  std::string StreamMessage(const smallmind::v1::GenerateResponse& message) override;
  // After the last message: the usage chunk when asked, then "data: [DONE]".
  std::string StreamEnd() const;
  // The same for every choice of a request: one usage chunk for all of them (UsageOf).
  static std::string StreamEndOf(Choices choices);
  // A stream cut short by the server (a drain): the chunk ending this choice with finish_reason
  // "abort"; "" when it already finished.
  std::string StreamAbort() override;
  // A failure after the stream began: one event holding the OpenAI error object.
  static std::string StreamError(const HttpError& error);

  // Whole response: add every message, then take the body.
  void Add(const smallmind::v1::GenerateResponse& message) override;
  std::string Body() const;
  // One body with every choice of a request, its usage theirs together (UsageOf).
  static std::string BodyOf(Choices choices);

  // ChoiceFormatter's request-wide shapes: StreamEndOf, BodyOf, StreamError and ErrorBody.
  std::string EndStream(ChoiceFormatter::Choices choices) const override;
  std::string WholeBody(ChoiceFormatter::Choices choices) const override;
  std::string ErrorEvent(const HttpError& error) const override { return StreamError(error); }
  std::string ErrorResponseBody(const HttpError& error) const override { return ErrorBody(error); }

 private:
  nlohmann::ordered_json Chunk(nlohmann::ordered_json choice) const;
  nlohmann::ordered_json Choice() const;
  // A whole chat reply's thinking and text (`split`), and its own calls and the text around them
  // (`own`), as the shape says.
  void SplitWhole(ReasoningOutput* split, ToolCallOutput* own) const;
  // The prompt once (the most cached of any choice), the completion tokens of all choices.
  static nlohmann::ordered_json UsageOf(Choices choices);
  // The `tool_calls` array of a forced call: with its header (index, id, type, name) or, for a
  // stream's later chunks, the index and an arguments piece only.
  nlohmann::ordered_json ToolCall(const std::string& name, const std::string& arguments,
                                  bool header) const;
  // Call `index` of a reply's own calls (tool_choice "auto"), whole.
  nlohmann::ordered_json AutoCall(int index, const ParsedToolCall& call) const;
  bool forced_call() const { return !shape_.tool_name.empty(); }
  bool auto_calls() const { return shape_.tool_syntax != ToolCallSyntax::kNone; }
  // A stream's events for what the parser released: a content chunk, then one per call.
  std::string AutoCallEvents(ToolCallOutput released, const nlohmann::ordered_json& logprobs);
  // StreamMessage's steps: a reasoning model's thinking as its own chunk (appended to `out`;
  // returns the reply's text), and a choice's last chunks once its finish reason came.
  std::string StreamReasoning(const smallmind::v1::GenerateResponse& m, std::string& out);
  // StreamMessage for a harmony reply: its reasoning, content and calls chunks, then the last.
  std::string StreamHarmony(const smallmind::v1::GenerateResponse& m, bool has_logprobs);
  std::string StreamFinish(bool chat);
  // The logprobs object of `message`'s tokens (completions or chat shape); advances offset_.
  nlohmann::ordered_json Logprobs(const smallmind::v1::GenerateResponse& message);
  void AppendLogprobs(const nlohmann::ordered_json& part);
  std::string TokenText(uint32_t id) const;
  void Note(const smallmind::v1::GenerateResponse& message);
  // OpenAI's system_fingerprint: null (chat) or absent (completions) until the last message's
  // receipt names the model fingerprint and kernel ISA the request ran with.
  void SetFingerprint(nlohmann::ordered_json& j) const;

  const ResponseShape shape_;
  const TokenPieces* const pieces_;
  std::string text_;  // non-streaming, or a stream with tool_from_output: everything so far
  nlohmann::ordered_json logprobs_;  // non-streaming: merged logprobs (null = none)
  size_t offset_ = 0;                // completions' text_offset of the next token
  smallmind::v1::FinishReason finish_ = smallmind::v1::FINISH_REASON_UNSPECIFIED;
  smallmind::v1::Usage usage_;
  std::string fingerprint_;  // "fp_<model fingerprint>_<kernel isa>" from the receipt
  ToolCallScanner call_;     // streaming with tool_from_output: the call so far
  bool call_header_sent_ = false;
  ReasoningParser reasoning_;  // streaming with reasoning
  ToolCallParser parser_;      // streaming with auto calls
  HarmonyParser harmony_;      // streaming a harmony reply
  int auto_calls_sent_ = 0;
};

}  // namespace smallmind::gateway::http

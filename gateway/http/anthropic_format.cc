#include "gateway/http/anthropic_format.h"

#include <utility>

#include "gateway/http/anthropic_error.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;
using smallmind::v1::GenerateResponse;

std::string Event(const char* name, const Json& data) {
  return std::string("event: ") + name +
         "\ndata: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

bool Finished(const GenerateResponse& m) {
  return m.finish_reason() != smallmind::v1::FINISH_REASON_UNSPECIFIED;
}

// A call's arguments as the `input` object; null when they are no JSON object (cut short).
Json InputOf(const std::string& arguments) {
  Json input = Json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  return input.is_object() ? input : Json();
}

}  // namespace

AnthropicFormatter::AnthropicFormatter(ResponseShape shape, std::vector<std::string> stop_sequences)
    : shape_(std::move(shape)),
      stop_sequences_(std::move(stop_sequences)),
      reasoning_(shape_.reasoning_open),
      parser_(shape_.tool_syntax, shape_.tool_functions),
      harmony_(shape_.tool_functions) {}

std::string AnthropicFormatter::ToolUseId(int index) const {
  return index == 0 ? shape_.tool_call_id : shape_.tool_call_id + "_" + std::to_string(index);
}

std::string AnthropicFormatter::Open(Block block, Json content_block) {
  std::string out = Close();
  open_ = block;
  out += Event("content_block_start", Json{{"type", "content_block_start"},
                                           {"index", ++index_},
                                           {"content_block", std::move(content_block)}});
  return out;
}

std::string AnthropicFormatter::Close() {
  if (open_ == Block::kNone) return {};
  open_ = Block::kNone;
  return Event("content_block_stop", Json{{"type", "content_block_stop"}, {"index", index_}});
}

std::string AnthropicFormatter::Text(const std::string& text) {
  if (text.empty()) return {};
  std::string out =
      open_ == Block::kText ? "" : Open(Block::kText, {{"type", "text"}, {"text", ""}});
  return out +
         Event("content_block_delta", Json{{"type", "content_block_delta"},
                                           {"index", index_},
                                           {"delta", {{"type", "text_delta"}, {"text", text}}}});
}

std::string AnthropicFormatter::Thinking(const std::string& thinking) {
  if (thinking.empty()) return {};
  std::string out =
      open_ == Block::kThinking
          ? ""
          : Open(Block::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
  return out + Event("content_block_delta",
                     Json{{"type", "content_block_delta"},
                          {"index", index_},
                          {"delta", {{"type", "thinking_delta"}, {"thinking", thinking}}}});
}

// Opens a tool_use block when `name` is set, then adds `input_json` to the open one.
std::string AnthropicFormatter::ToolUse(const std::string& name, const std::string& input_json) {
  std::string out;
  if (!name.empty()) {
    out = Open(Block::kToolUse, {{"type", "tool_use"},
                                 {"id", ToolUseId(tool_uses_++)},
                                 {"name", name},
                                 {"input", Json::object()}});
  }
  if (input_json.empty() || open_ != Block::kToolUse) return out;
  return out + Event("content_block_delta",
                     Json{{"type", "content_block_delta"},
                          {"index", index_},
                          {"delta", {{"type", "input_json_delta"}, {"partial_json", input_json}}}});
}

std::string AnthropicFormatter::ToolCalls(ToolCallOutput released) {
  std::string out = Text(released.content);
  for (const ParsedToolCall& call : released.calls)
    out += ToolUse(call.name, call.arguments) + Close();
  return out;
}

void AnthropicFormatter::Note(const GenerateResponse& m) {
  if (!Finished(m)) return;
  finish_ = m.finish_reason();
  usage_ = m.usage();
}

std::string AnthropicFormatter::StreamStart() {
  Json usage{{"input_tokens", 0}, {"output_tokens", 0}};  // the real counts come at the end
  Json message{{"id", shape_.id},          {"type", "message"},        {"role", "assistant"},
               {"model", shape_.model},    {"content", Json::array()}, {"stop_reason", nullptr},
               {"stop_sequence", nullptr}, {"usage", std::move(usage)}};
  std::string out = Event("message_start", Json{{"type", "message_start"}, {"message", message}});
  out += Event("ping", Json{{"type", "ping"}});
  if (!shape_.tool_name.empty()) out += ToolUse(shape_.tool_name, "");
  return out;
}

std::string AnthropicFormatter::StreamMessage(const GenerateResponse& m) {
  std::string out;
  std::string text = m.text();
  if (shape_.harmony) {
    HarmonyOutput parts = harmony_.Feed(text);
    if (Finished(m)) parts.Append(harmony_.Finish());
    out += Thinking(parts.reasoning);
    out += ToolCalls(ToolCallOutput{std::move(parts.content), std::move(parts.calls)});
    Note(m);
    if (Finished(m)) out += Close();
    return out;
  }
  if (shape_.reasoning) {
    ReasoningOutput split = reasoning_.Feed(text);
    if (Finished(m)) split.Append(reasoning_.Finish());
    out += Thinking(split.reasoning);
    text = std::move(split.content);
  }
  if (!shape_.tool_name.empty()) {
    out += ToolUse("", text);
  } else if (shape_.tool_from_output) {
    text_ += text;
    const std::string arguments = scanner_.Feed(text);
    out += ToolUse(scanner_.has_name() && tool_uses_ == 0 ? scanner_.name() : "", arguments);
    if (Finished(m) && tool_uses_ == 0) out += Text(text_);  // no function was named
  } else if (shape_.tool_syntax != ToolCallSyntax::kNone) {
    ToolCallOutput released = parser_.Feed(text);
    if (Finished(m)) released.Append(parser_.Finish());
    out += ToolCalls(std::move(released));
  } else {
    out += Text(text);
  }
  Note(m);
  if (Finished(m)) out += Close();
  return out;
}

std::string AnthropicFormatter::StreamAbort() {
  if (finish_ != smallmind::v1::FINISH_REASON_UNSPECIFIED) return {};
  finish_ = smallmind::v1::CANCELLED;
  return Close();
}

std::string AnthropicFormatter::EndStream(Choices) const {
  Json delta{
      {"type", "message_delta"},
      {"delta", {{"stop_reason", StopReason(tool_uses_)}, {"stop_sequence", StopSequence()}}},
      {"usage", Usage()}};
  return Event("message_delta", delta) + Event("message_stop", Json{{"type", "message_stop"}});
}

std::string AnthropicFormatter::ErrorEvent(const HttpError& error) const {
  return AnthropicErrorEvent(error);
}

std::string AnthropicFormatter::ErrorResponseBody(const HttpError& error) const {
  return AnthropicErrorBody(error);
}

void AnthropicFormatter::Add(const GenerateResponse& m) {
  text_ += m.text();
  Note(m);
}

const char* AnthropicFormatter::StopReason(int tool_uses) const {
  if (finish_ == smallmind::v1::LENGTH) return "max_tokens";
  if (tool_uses > 0) return "tool_use";
  if (finish_ == smallmind::v1::STOP && !stop_sequences_.empty()) return "stop_sequence";
  return "end_turn";
}

Json AnthropicFormatter::StopSequence() const {
  // The worker does not say which stop string matched: with one there is no doubt.
  if (finish_ == smallmind::v1::STOP && stop_sequences_.size() == 1) return stop_sequences_[0];
  return nullptr;
}

Json AnthropicFormatter::Usage() const {
  // Anthropic counts cache reads apart from input_tokens (their sum is the prompt).
  const uint32_t cached = usage_.cached_prompt_tokens();
  return Json{{"input_tokens", usage_.prompt_tokens() - cached},
              {"cache_creation_input_tokens", 0},
              {"cache_read_input_tokens", cached},
              {"output_tokens", usage_.completion_tokens()}};
}

Json AnthropicFormatter::Content() const {
  Json content = Json::array();
  ReasoningOutput split{std::string(), text_};
  ToolCallOutput harmony_parts;
  if (shape_.harmony) {
    HarmonyParser harmony(shape_.tool_functions);
    HarmonyOutput parts = harmony.Feed(text_);
    parts.Append(harmony.Finish());
    split.reasoning = std::move(parts.reasoning);
    harmony_parts = ToolCallOutput{std::move(parts.content), std::move(parts.calls)};
  }
  if (shape_.reasoning) {
    ReasoningParser reasoning(shape_.reasoning_open);
    split = reasoning.Feed(text_);
    split.Append(reasoning.Finish());
  }
  if (!split.reasoning.empty()) {
    content.push_back({{"type", "thinking"}, {"thinking", split.reasoning}, {"signature", ""}});
  }
  ToolCallOutput own{split.content, {}};
  if (shape_.harmony) {
    own = std::move(harmony_parts);
  } else if (!shape_.tool_name.empty()) {
    own = ToolCallOutput{{}, {{shape_.tool_name, split.content}}};
  } else if (shape_.tool_from_output) {
    ToolCallScanner scanner;
    const std::string arguments = scanner.Feed(split.content);
    if (scanner.has_name()) own = ToolCallOutput{{}, {{scanner.name(), arguments}}};
  } else if (shape_.tool_syntax != ToolCallSyntax::kNone) {
    ToolCallParser parser(shape_.tool_syntax, shape_.tool_functions);
    own = parser.Feed(split.content);
    own.Append(parser.Finish());
  }
  std::string text = own.content;
  int tool_uses = 0;
  Json calls = Json::array();
  for (const ParsedToolCall& call : own.calls) {
    Json input = InputOf(call.arguments);
    if (input.is_null()) {  // cut short: what was written stays text
      text += call.arguments;
      continue;
    }
    calls.push_back({{"type", "tool_use"},
                     {"id", ToolUseId(tool_uses++)},
                     {"name", call.name},
                     {"input", input}});
  }
  if (!text.empty() || calls.empty()) content.push_back({{"type", "text"}, {"text", text}});
  for (Json& call : calls) content.push_back(std::move(call));
  return content;
}

std::string AnthropicFormatter::WholeBody(Choices) const {
  Json content = Content();
  int tool_uses = 0;
  for (const Json& block : content) tool_uses += block["type"] == "tool_use" ? 1 : 0;
  Json j{{"id", shape_.id},
         {"type", "message"},
         {"role", "assistant"},
         {"model", shape_.model},
         {"content", std::move(content)},
         {"stop_reason", StopReason(tool_uses)},
         {"stop_sequence", StopSequence()},
         {"usage", Usage()}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace smallmind::gateway::http

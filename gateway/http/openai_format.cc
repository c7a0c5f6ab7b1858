#include "gateway/http/openai_format.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;
using smallmind::v1::GenerateResponse;

std::string Dump(const Json& j) {
  // Worker text is valid UTF-8; token pieces may not be: replace instead of throwing.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Event(const Json& j) { return "data: " + Dump(j) + "\n\n"; }

Json Bytes(const std::string& s) {
  Json bytes = Json::array();
  for (unsigned char c : s) bytes.push_back(static_cast<int>(c));
  return bytes;
}

// -inf (a token masked out) is not JSON: OpenAI clients expect a number.
double Finite(float x) { return std::isfinite(x) ? x : -9999.0; }

}  // namespace

const char* FinishReasonName(smallmind::v1::FinishReason reason) {
  switch (reason) {
    case smallmind::v1::LENGTH: return "length";
    case smallmind::v1::STOP:
    case smallmind::v1::EOS: return "stop";
    case smallmind::v1::CANCELLED: return "abort";
    default: return "stop";
  }
}

OpenAiFormatter::OpenAiFormatter(ResponseShape shape, const TokenPieces* pieces)
    : shape_(std::move(shape)),
      pieces_(pieces),
      offset_(shape_.echo_text.size()),
      reasoning_(shape_.reasoning_open),
      parser_(shape_.tool_syntax, shape_.tool_functions),
      harmony_(shape_.tool_functions) {}

std::string OpenAiFormatter::TokenText(uint32_t id) const {
  return pieces_ && id < pieces_->size() ? (*pieces_)[id] : std::string();
}

Json OpenAiFormatter::Chunk(Json choice) const {
  const bool chat = shape_.endpoint == Endpoint::kChatCompletions;
  Json j;
  j["id"] = shape_.id;
  j["object"] = chat ? "chat.completion.chunk" : "text_completion";
  j["created"] = shape_.created;
  j["model"] = shape_.model;
  SetFingerprint(j);
  j["choices"] = Json::array();
  if (!choice.is_null()) j["choices"].push_back(std::move(choice));
  if (shape_.include_usage) j["usage"] = nullptr;
  return j;
}

Json OpenAiFormatter::UsageOf(Choices choices) {
  // The choices share one prompt: it counts once, as OpenAI and vLLM count it, with the most
  // any choice found cached; completion tokens add up.
  uint64_t prompt = 0, cached = 0, completion = 0, drafted = 0, accepted = 0;
  for (const OpenAiFormatter* c : choices) {
    prompt = std::max<uint64_t>(prompt, c->usage_.prompt_tokens());
    cached = std::max<uint64_t>(cached, c->usage_.cached_prompt_tokens());
    completion += c->usage_.completion_tokens();
    drafted += c->usage_.draft_tokens();
    accepted += c->usage_.accepted_draft_tokens();
  }
  Json u;
  u["prompt_tokens"] = prompt;
  u["completion_tokens"] = completion;
  u["total_tokens"] = prompt + completion;
  u["prompt_tokens_details"] = {{"cached_tokens", cached}};
  // OpenAI's names for predicted-output tokens, which is what speculative drafts are: accepted
  // ones are completion tokens that cost no step, rejected ones were computed and dropped.
  u["completion_tokens_details"] = {{"accepted_prediction_tokens", accepted},
                                    {"rejected_prediction_tokens", drafted - accepted}};
  return u;
}

Json OpenAiFormatter::Logprobs(const GenerateResponse& m) {
  const bool chat = shape_.endpoint == Endpoint::kChatCompletions;
  Json out;
  Json content = Json::array();
  Json tokens = Json::array(), token_logprobs = Json::array(), top = Json::array(),
       offsets = Json::array();
  for (const auto& lp : m.logprobs()) {
    const std::string text = TokenText(lp.token_id());
    if (chat) {
      Json entry{{"token", text}, {"logprob", Finite(lp.logprob())}, {"bytes", Bytes(text)}};
      Json alternatives = Json::array();
      for (int i = 0; i < lp.top_size() && i < static_cast<int>(shape_.top_logprobs); ++i) {
        const std::string alt = TokenText(lp.top(i).token_id());
        alternatives.push_back(
            {{"token", alt}, {"logprob", Finite(lp.top(i).logprob())}, {"bytes", Bytes(alt)}});
      }
      entry["top_logprobs"] = std::move(alternatives);
      content.push_back(std::move(entry));
    } else {
      tokens.push_back(text);
      token_logprobs.push_back(Finite(lp.logprob()));
      Json alternatives = Json::object();
      for (int i = 0; i < lp.top_size() && i < static_cast<int>(shape_.top_logprobs); ++i) {
        alternatives[TokenText(lp.top(i).token_id())] = Finite(lp.top(i).logprob());
      }
      top.push_back(std::move(alternatives));
      offsets.push_back(offset_);
      offset_ += text.size();
    }
  }
  if (chat) {
    out["content"] = std::move(content);
    out["refusal"] = nullptr;
  } else {
    out["tokens"] = std::move(tokens);
    out["token_logprobs"] = std::move(token_logprobs);
    out["top_logprobs"] = std::move(top);
    out["text_offset"] = std::move(offsets);
  }
  return out;
}

void OpenAiFormatter::Note(const GenerateResponse& m) {
  if (m.finish_reason() != smallmind::v1::FINISH_REASON_UNSPECIFIED) {
    finish_ = m.finish_reason();
    usage_ = m.usage();
    if (m.has_receipt() && !m.receipt().model_fingerprint().empty()) {
      fingerprint_ = "fp_" + m.receipt().model_fingerprint() + "_" + m.receipt().kernel_isa();
      if (!m.receipt().kv_dtype().empty()) fingerprint_ += "_" + m.receipt().kv_dtype();
    }
  }
}

void OpenAiFormatter::SetFingerprint(Json& j) const {
  if (!fingerprint_.empty()) {
    j["system_fingerprint"] = fingerprint_;
  } else if (shape_.endpoint == Endpoint::kChatCompletions) {
    j["system_fingerprint"] = nullptr;  // chat objects always carry the field
  }
}

Json OpenAiFormatter::ToolCall(const std::string& name, const std::string& arguments,
                               bool header) const {
  Json call;
  if (header) {  // streams send index, id, type and name once, then only argument pieces
    call["index"] = 0;
    call["id"] = shape_.tool_call_id;
    call["type"] = "function";
    call["function"] = {{"name", name}, {"arguments", arguments}};
  } else {
    call["index"] = 0;
    call["function"] = {{"arguments", arguments}};
  }
  return Json::array({std::move(call)});
}

Json OpenAiFormatter::AutoCall(int index, const ParsedToolCall& call) const {
  Json entry;
  entry["index"] = index;
  entry["id"] =
      index == 0 ? shape_.tool_call_id : shape_.tool_call_id + "_" + std::to_string(index);
  entry["type"] = "function";
  entry["function"] = {{"name", call.name}, {"arguments", call.arguments}};
  return entry;
}

std::string OpenAiFormatter::AutoCallEvents(ToolCallOutput released, const Json& logprobs) {
  std::string out;
  if (!released.content.empty() || !logprobs.is_null()) {
    Json choice{
        {"index", shape_.index},
        {"delta", released.content.empty() ? Json::object() : Json{{"content", released.content}}},
        {"logprobs", logprobs},
        {"finish_reason", nullptr}};
    out += Event(Chunk(std::move(choice)));
  }
  for (const ParsedToolCall& call : released.calls) {
    Json choice{{"index", shape_.index},
                {"delta", {{"tool_calls", Json::array({AutoCall(auto_calls_sent_++, call)})}}},
                {"logprobs", nullptr},
                {"finish_reason", nullptr}};
    out += Event(Chunk(std::move(choice)));
  }
  return out;
}

std::string OpenAiFormatter::StreamStart() {
  if (shape_.endpoint == Endpoint::kChatCompletions) {
    Json delta{{"role", "assistant"}, {"content", ""}};
    if (forced_call()) {
      delta["content"] = nullptr;
      delta["tool_calls"] = ToolCall(shape_.tool_name, "", /*header=*/true);
    } else if (shape_.tool_from_output) {
      delta["content"] = nullptr;  // the call's header follows once its name is written
    }
    Json choice{{"index", shape_.index},
                {"delta", std::move(delta)},
                {"logprobs", nullptr},
                {"finish_reason", nullptr}};
    return Event(Chunk(std::move(choice)));
  }
  if (shape_.echo_text.empty()) return {};
  Json choice{{"index", shape_.index},
              {"text", shape_.echo_text},
              {"logprobs", nullptr},
              {"finish_reason", nullptr}};
  return Event(Chunk(std::move(choice)));
}

std::string OpenAiFormatter::StreamMessage(const GenerateResponse& m) {
  const bool chat = shape_.endpoint == Endpoint::kChatCompletions;
  std::string out;
  const bool has_logprobs = shape_.logprobs && m.logprobs_size() > 0;
  // A reasoning model's thinking goes out in chunks of its own; the rest is the reply's text.
  std::string text = m.text();
  if (chat && shape_.harmony) return StreamHarmony(m, has_logprobs);
  if (chat && shape_.reasoning) text = StreamReasoning(m, out);
  if (chat && auto_calls()) {
    out += AutoCallEvents(parser_.Feed(text), has_logprobs ? Logprobs(m) : Json());
    Note(m);
    if (m.finish_reason() == smallmind::v1::FINISH_REASON_UNSPECIFIED) return out;
    out += AutoCallEvents(parser_.Finish(), Json());
    Json choice{{"index", shape_.index},
                {"delta", Json::object()},
                {"logprobs", nullptr},
                {"finish_reason", auto_calls_sent_ > 0 ? "tool_calls" : FinishReasonName(finish_)}};
    return out + Event(Chunk(std::move(choice)));
  }
  // A call among several tools: the arguments' bytes, under a header once the name is known.
  Json call;
  if (chat && shape_.tool_from_output) {
    text_ += m.text();
    const std::string arguments = call_.Feed(m.text());
    if (call_.has_name() && !call_header_sent_) {
      call = ToolCall(call_.name(), arguments, /*header=*/true);
      call_header_sent_ = true;
    } else if (!arguments.empty()) {
      call = ToolCall("", arguments, /*header=*/false);
    }
  }
  if (!call.is_null() || (!(chat && shape_.tool_from_output) && !text.empty()) || has_logprobs) {
    Json choice;
    choice["index"] = shape_.index;
    if (chat && shape_.tool_from_output) {
      choice["delta"] = call.is_null() ? Json::object() : Json{{"tool_calls", std::move(call)}};
    } else if (chat && forced_call()) {
      choice["delta"] = {{"tool_calls", ToolCall("", m.text(), /*header=*/false)}};
    } else if (chat) {
      choice["delta"] = {{"content", text}};
    } else {
      choice["text"] = text;
    }
    choice["logprobs"] = has_logprobs ? Logprobs(m) : Json();
    choice["finish_reason"] = nullptr;
    out += Event(Chunk(std::move(choice)));
  }
  Note(m);
  if (m.finish_reason() != smallmind::v1::FINISH_REASON_UNSPECIFIED) out += StreamFinish(chat);
  return out;
}

std::string OpenAiFormatter::StreamHarmony(const GenerateResponse& m, bool has_logprobs) {
  const bool finished = m.finish_reason() != smallmind::v1::FINISH_REASON_UNSPECIFIED;
  HarmonyOutput parts = harmony_.Feed(m.text());
  if (finished) parts.Append(harmony_.Finish());
  std::string out;
  if (!parts.reasoning.empty()) {
    Json choice{{"index", shape_.index},
                {"delta", {{"reasoning_content", std::move(parts.reasoning)}}},
                {"logprobs", nullptr},
                {"finish_reason", nullptr}};
    out += Event(Chunk(std::move(choice)));
  }
  out += AutoCallEvents(ToolCallOutput{std::move(parts.content), std::move(parts.calls)},
                        has_logprobs ? Logprobs(m) : Json());
  Note(m);
  if (!finished) return out;
  Json choice{{"index", shape_.index},
              {"delta", Json::object()},
              {"logprobs", nullptr},
              {"finish_reason", auto_calls_sent_ > 0 ? "tool_calls" : FinishReasonName(finish_)}};
  return out + Event(Chunk(std::move(choice)));
}

std::string OpenAiFormatter::StreamReasoning(const GenerateResponse& m, std::string& out) {
  ReasoningOutput split = reasoning_.Feed(m.text());
  if (m.finish_reason() != smallmind::v1::FINISH_REASON_UNSPECIFIED) {
    split.Append(reasoning_.Finish());
  }
  if (!split.reasoning.empty()) {
    Json choice{{"index", shape_.index},
                {"delta", {{"reasoning_content", std::move(split.reasoning)}}},
                {"logprobs", nullptr},
                {"finish_reason", nullptr}};
    out += Event(Chunk(std::move(choice)));
  }
  return std::move(split.content);
}

std::string OpenAiFormatter::StreamFinish(bool chat) {
  std::string out;
  if (chat && shape_.tool_from_output && !call_.has_name() && !text_.empty()) {
    // No function was named (the output was cut short): the text as content, as the whole
    // reply has it.
    Json choice{{"index", shape_.index},
                {"delta", {{"content", text_}}},
                {"logprobs", nullptr},
                {"finish_reason", nullptr}};
    out += Event(Chunk(std::move(choice)));
  }
  Json choice;
  choice["index"] = shape_.index;
  if (chat) {
    choice["delta"] = Json::object();
  } else {
    choice["text"] = "";
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = FinishReasonName(finish_);
  out += Event(Chunk(std::move(choice)));
  return out;
}

std::string OpenAiFormatter::StreamEndOf(Choices choices) {
  std::string out;
  const OpenAiFormatter& first = *choices.front();
  if (first.shape_.include_usage) {
    Json j = first.Chunk(Json());
    j["usage"] = UsageOf(choices);
    out += Event(j);
  }
  return out + "data: [DONE]\n\n";
}

std::string OpenAiFormatter::StreamEnd() const {
  const OpenAiFormatter* self[] = {this};
  return StreamEndOf(self);
}

std::string OpenAiFormatter::StreamAbort() {
  if (finish_ != smallmind::v1::FINISH_REASON_UNSPECIFIED) return {};
  finish_ = smallmind::v1::CANCELLED;
  Json choice;
  choice["index"] = shape_.index;
  if (shape_.endpoint == Endpoint::kChatCompletions) {
    choice["delta"] = Json::object();
  } else {
    choice["text"] = "";
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = FinishReasonName(finish_);
  return Event(Chunk(std::move(choice)));
}

std::string OpenAiFormatter::StreamError(const HttpError& error) {
  nlohmann::ordered_json body = nlohmann::ordered_json::parse(ErrorBody(error));
  return Event(body);
}

void OpenAiFormatter::AppendLogprobs(const Json& part) {
  if (logprobs_.is_null()) {
    logprobs_ = part;
    return;
  }
  for (auto& [key, value] : part.items()) {
    if (!value.is_array()) continue;
    for (const Json& v : value) logprobs_[key].push_back(v);
  }
}

void OpenAiFormatter::Add(const GenerateResponse& m) {
  text_ += m.text();
  if (shape_.logprobs && m.logprobs_size() > 0) AppendLogprobs(Logprobs(m));
  Note(m);
}

void OpenAiFormatter::SplitWhole(ReasoningOutput* split, ToolCallOutput* own) const {
  if (shape_.harmony) {
    HarmonyParser harmony(shape_.tool_functions);
    HarmonyOutput parts = harmony.Feed(text_);
    parts.Append(harmony.Finish());
    *split = ReasoningOutput{std::move(parts.reasoning), parts.content};
    own->calls = std::move(parts.calls);
    own->content = std::move(parts.content);
  }
  if (shape_.reasoning) {
    ReasoningParser reasoning(shape_.reasoning_open);
    *split = reasoning.Feed(text_);
    split->Append(reasoning.Finish());
  }
  if (auto_calls()) {
    ToolCallParser parser(shape_.tool_syntax, shape_.tool_functions);
    *own = parser.Feed(split->content);
    own->Append(parser.Finish());
  }
}

Json OpenAiFormatter::Choice() const {
  Json choice;
  choice["index"] = shape_.index;
  ToolCallScanner scanner;
  const std::string arguments = shape_.tool_from_output ? scanner.Feed(text_) : std::string();
  const bool chat = shape_.endpoint == Endpoint::kChatCompletions;
  // A reasoning model's thinking, and the reply's text after it.
  ReasoningOutput split{std::string(), text_};
  ToolCallOutput own;  // auto calls: the reply's calls and the text around them
  if (chat) SplitWhole(&split, &own);
  const std::string& text = split.content;
  if (chat && !own.calls.empty()) {
    Json calls = Json::array();
    for (size_t i = 0; i < own.calls.size(); ++i) {
      calls.push_back(AutoCall(static_cast<int>(i), own.calls[i]));
      calls.back().erase("index");  // a whole message's calls carry no index
    }
    choice["message"] = {{"role", "assistant"},
                         {"content", own.content.empty() ? Json() : Json(own.content)},
                         {"tool_calls", std::move(calls)}};
  } else if (chat && (forced_call() || scanner.has_name())) {
    Json call = forced_call() ? ToolCall(shape_.tool_name, text_, /*header=*/true)
                              : ToolCall(scanner.name(), arguments, /*header=*/true);
    call[0].erase("index");  // a whole message's calls carry no index
    choice["message"] = {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", call}};
  } else if (chat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  } else {
    choice["text"] = shape_.echo_text + text_;
  }
  if (chat && (shape_.reasoning || shape_.harmony)) {
    choice["message"]["reasoning_content"] =
        split.reasoning.empty() ? Json() : Json(std::move(split.reasoning));
  }
  Json logprobs = logprobs_;
  if (shape_.logprobs && logprobs.is_null()) {  // asked for, no token had any
    logprobs = shape_.endpoint == Endpoint::kChatCompletions
                   ? Json{{"content", Json::array()}, {"refusal", nullptr}}
                   : Json{{"tokens", Json::array()},
                          {"token_logprobs", Json::array()},
                          {"top_logprobs", Json::array()},
                          {"text_offset", Json::array()}};
  }
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = own.calls.empty() ? FinishReasonName(finish_) : "tool_calls";
  return choice;
}

std::string OpenAiFormatter::Body() const {
  const OpenAiFormatter* self[] = {this};
  return BodyOf(self);
}

std::string OpenAiFormatter::BodyOf(Choices choices) {
  const OpenAiFormatter& first = *choices.front();
  const bool chat = first.shape_.endpoint == Endpoint::kChatCompletions;
  Json j;
  j["id"] = first.shape_.id;
  j["object"] = chat ? "chat.completion" : "text_completion";
  j["created"] = first.shape_.created;
  j["model"] = first.shape_.model;
  first.SetFingerprint(j);
  j["choices"] = Json::array();
  for (const OpenAiFormatter* c : choices) j["choices"].push_back(c->Choice());
  j["usage"] = UsageOf(choices);
  return Dump(j);
}

namespace {

// A request's choices are all OpenAI formatters (RelayedCompletion gets them from HttpApi).
std::vector<const OpenAiFormatter*> Downcast(ChoiceFormatter::Choices choices) {
  std::vector<const OpenAiFormatter*> out;
  for (const ChoiceFormatter* c : choices) out.push_back(static_cast<const OpenAiFormatter*>(c));
  return out;
}

}  // namespace

std::string OpenAiFormatter::EndStream(ChoiceFormatter::Choices choices) const {
  return StreamEndOf(Downcast(choices));
}

std::string OpenAiFormatter::WholeBody(ChoiceFormatter::Choices choices) const {
  return BodyOf(Downcast(choices));
}

}  // namespace smallmind::gateway::http

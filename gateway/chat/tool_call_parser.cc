#include "gateway/chat/tool_call_parser.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "gateway/chat/held_text.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
constexpr std::string_view kMistralMarker = "[TOOL_CALLS]";

bool AllBlank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return IsBlank(c); });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// `text` cut at each ';' outside strings, objects and arrays (Llama 3's separator of calls).
std::vector<std::string_view> SplitTopLevel(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool in_string = false, escape = false;
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == ';' && depth == 0) {
      parts.push_back(text.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  parts.push_back(text.substr(begin));
  return parts;
}

// One call object: a string `name` among `functions` and an object of arguments under
// "arguments" (or Llama 3's "parameters"; a string holding an object's JSON also counts).
bool ReadCall(const Json& j, const std::vector<std::string>& functions,
              std::vector<ParsedToolCall>* calls) {
  if (!j.is_object()) return false;
  const auto name = j.find("name");
  if (name == j.end() || !name->is_string()) return false;
  if (std::find(functions.begin(), functions.end(), name->get<std::string>()) == functions.end()) {
    return false;
  }
  auto arguments = j.find("arguments");
  if (arguments == j.end()) arguments = j.find("parameters");
  if (arguments == j.end()) return false;
  Json object = *arguments;
  if (object.is_string()) {
    object = Json::parse(object.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  }
  if (!object.is_object()) return false;
  calls->push_back(ParsedToolCall{name->get<std::string>(),
                                  object.dump(-1, ' ', false, Json::error_handler_t::replace)});
  return true;
}

}  // namespace

ToolCallParser::ToolCallParser(ToolCallSyntax syntax, std::vector<std::string> functions)
    : syntax_(syntax),
      functions_(std::move(functions)),
      state_(syntax == ToolCallSyntax::kHermes || syntax == ToolCallSyntax::kNone ? State::kText
                                                                                  : State::kStart) {
}

bool ToolCallParser::ParseCalls(std::string_view text, std::vector<ParsedToolCall>* calls) const {
  std::vector<ParsedToolCall> found;
  text = Trim(text);
  if (syntax_ == ToolCallSyntax::kMistral) {
    if (text.starts_with(kMistralMarker)) text = Trim(text.substr(kMistralMarker.size()));
    const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_array() || j.empty()) return false;
    for (const Json& call : j) {
      if (!ReadCall(call, functions_, &found)) return false;
    }
  } else {
    const std::vector<std::string_view> parts = syntax_ == ToolCallSyntax::kLlama3Json
                                                    ? SplitTopLevel(text)
                                                    : std::vector<std::string_view>{text};
    for (std::string_view part : parts) {
      const Json j = Json::parse(Trim(part), nullptr, /*allow_exceptions=*/false);
      if (!ReadCall(j, functions_, &found)) return false;
    }
  }
  for (ParsedToolCall& call : found) calls->push_back(std::move(call));
  return true;
}

void ToolCallParser::FeedHermes(std::string_view piece, ToolCallOutput* out) {
  held_.append(piece);
  while (true) {
    if (state_ == State::kText) {
      const size_t open = held_.find(kOpen);
      // Trailing blanks are held too: before a call they are dropped, before text released.
      const size_t end =
          open == std::string::npos ? held_.size() - TagPrefixAtEnd(held_, kOpen) : open;
      const size_t release = BeforeTrailingBlanks(held_, end);
      out->content.append(held_, 0, release);
      held_.erase(0, release);
      if (open == std::string::npos) return;
      blanks_before_call_.assign(held_, 0, end - release);  // dropped if a call follows
      held_.erase(0, end - release + kOpen.size());
      state_ = State::kCall;
    }
    const size_t close = held_.find(kClose);
    if (close == std::string::npos) return;
    if (ParseCalls(std::string_view(held_).substr(0, close), &out->calls)) {
      any_call_ = true;
    } else {
      // Not a call: the tags and all between them, as written.
      out->content.append(blanks_before_call_);
      out->content.append(kOpen);
      out->content.append(held_, 0, close + kClose.size());
    }
    held_.erase(0, close + kClose.size());
    state_ = State::kText;
  }
}

ToolCallOutput ToolCallParser::Feed(std::string_view piece) {
  ToolCallOutput out;
  switch (syntax_) {
    case ToolCallSyntax::kNone: out.content.assign(piece); return out;
    case ToolCallSyntax::kHermes: FeedHermes(piece, &out); return out;
    case ToolCallSyntax::kLlama3Json:
    case ToolCallSyntax::kMistral: break;
  }
  if (state_ == State::kText) {
    out.content.assign(piece);
    return out;
  }
  held_.append(piece);
  if (state_ == State::kStart) {
    const size_t first = held_.find_first_not_of(" \n\r\t");
    if (first == std::string::npos) return out;
    const bool call_like = syntax_ == ToolCallSyntax::kLlama3Json
                               ? held_[first] == '{'
                               : held_[first] == '[';  // "[{" or "[TOOL_CALLS]"
    if (call_like) {
      state_ = State::kHold;
    } else {
      state_ = State::kText;
      out.content = std::move(held_);
      held_.clear();
    }
  }
  return out;
}

ToolCallOutput ToolCallParser::Finish() {
  ToolCallOutput out;
  if (state_ == State::kCall) {
    // Cut short inside a call: a whole call if its JSON ended, else the text as written.
    if (!ParseCalls(held_, &out.calls))
      out.content = blanks_before_call_ + std::string(kOpen) + held_;
  } else if (state_ == State::kHold) {
    if (!ParseCalls(held_, &out.calls)) out.content = held_;
  } else if (!(any_call_ && AllBlank(held_))) {
    out.content = held_;  // blanks, or the start of a tag that never came
  }
  held_.clear();
  state_ = State::kText;
  return out;
}

}  // namespace smallmind::gateway::http

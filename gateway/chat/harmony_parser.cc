#include "gateway/chat/harmony_parser.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "gateway/chat/held_text.h"

namespace smallmind::gateway::http {
namespace {

constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kEnds[] = {"<|end|>", "<|return|>", "<|call|>"};
constexpr std::string_view kFunctions = "functions.";

// The word of `header` after `key`: up to a blank, '<' or the end; "" when the key is absent.
std::string WordAfter(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return "";
  const std::string_view rest = header.substr(at + key.size());
  size_t n = 0;
  while (n < rest.size() && !IsBlank(rest[n]) && rest[n] != '<') ++n;
  return std::string(rest.substr(0, n));
}

// True while `held` can still be the start of a harmony header (the reply's first bytes).
bool MayBeHeader(std::string_view held) {
  for (std::string_view start : {std::string_view("<|"), std::string_view(" to=")}) {
    const size_t n = std::min(held.size(), start.size());
    if (held.substr(0, n) == start.substr(0, n)) return true;
  }
  return false;
}

}  // namespace

bool TemplateSpeaksHarmony(std::string_view source) {
  return source.find("<|channel|>") != std::string_view::npos &&
         source.find("<|message|>") != std::string_view::npos;
}

HarmonyParser::HarmonyParser(std::vector<std::string> functions)
    : functions_(std::move(functions)) {}

void HarmonyParser::OpenMessage(size_t end) {
  const std::string_view header = std::string_view(held_).substr(0, end);
  const std::string recipient = WordAfter(header, "to=");
  function_.clear();
  call_body_.clear();
  if (!recipient.empty()) {  // a tool call; one to no offered function ends as text
    sink_ = Sink::kCall;
    function_ = recipient.starts_with(kFunctions) ? recipient.substr(kFunctions.size()) : "";
  } else {
    sink_ = WordAfter(header, kChannel) == "analysis" ? Sink::kReasoning : Sink::kContent;
  }
}

void HarmonyParser::CloseCall(HarmonyOutput* out) {
  const bool offered =
      std::find(functions_.begin(), functions_.end(), function_) != functions_.end();
  const nlohmann::json args = nlohmann::json::parse(call_body_, nullptr, false);
  if (offered && args.is_object()) {
    out->calls.push_back({function_, args.dump()});
  } else {
    out->content += call_body_;
  }
  call_body_.clear();
}

void HarmonyParser::Release(std::string_view text, bool closed, HarmonyOutput* out) {
  switch (sink_) {
    case Sink::kReasoning: out->reasoning.append(text); break;
    case Sink::kContent: out->content.append(text); break;
    case Sink::kCall:
      call_body_.append(text);
      if (closed) CloseCall(out);
      break;
  }
}

HarmonyOutput HarmonyParser::Feed(std::string_view piece) {
  HarmonyOutput out;
  held_.append(piece);
  while (!held_.empty()) {
    if (state_ == State::kPlain) {
      out.content += held_;
      held_.clear();
    } else if (state_ == State::kHeader) {
      const size_t at = held_.find(kMessage);
      if (at == std::string::npos) {
        if (first_ && !MayBeHeader(held_)) state_ = State::kPlain;
        if (state_ == State::kHeader) break;  // the header is not complete yet
        continue;
      }
      OpenMessage(at);
      held_.erase(0, at + kMessage.size());
      state_ = State::kBody;
      first_ = false;
    } else {
      size_t end = std::string::npos, marker = 0;
      for (std::string_view e : kEnds) {
        const size_t at = held_.find(e);
        if (at < end) end = at, marker = e.size();
      }
      if (end == std::string::npos) {  // hold what may be a marker's first bytes
        size_t hold = 0;
        for (std::string_view e : kEnds) hold = std::max(hold, TagPrefixAtEnd(held_, e));
        Release(std::string_view(held_).substr(0, held_.size() - hold), false, &out);
        held_.erase(0, held_.size() - hold);
        break;
      }
      Release(std::string_view(held_).substr(0, end), true, &out);
      held_.erase(0, end + marker);
      state_ = State::kHeader;
    }
  }
  return out;
}

HarmonyOutput HarmonyParser::Finish() {
  HarmonyOutput out;
  if (state_ == State::kBody) {
    Release(held_, true, &out);
  } else if (state_ == State::kPlain || first_) {
    out.content = held_;  // no harmony at all: nothing to drop
  }                       // else a header cut short: framing, not text
  held_.clear();
  state_ = State::kHeader;
  return out;
}

}  // namespace smallmind::gateway::http

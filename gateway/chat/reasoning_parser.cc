#include "gateway/chat/reasoning_parser.h"

#include "gateway/chat/held_text.h"

namespace smallmind::gateway::http {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

size_t FirstNonBlank(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && IsBlank(s[i])) ++i;
  return i;
}

}  // namespace

bool TemplateTeachesThinking(std::string_view source) {
  return source.find(kOpen) != std::string_view::npos &&
         source.find(kClose) != std::string_view::npos;
}

bool PromptOpensThinking(std::string_view prompt) {
  while (!prompt.empty() && IsBlank(prompt.back())) prompt.remove_suffix(1);
  return prompt.ends_with(kOpen);
}

ReasoningParser::ReasoningParser(bool open) : state_(open ? State::kReasoning : State::kStart) {}

ReasoningOutput ReasoningParser::Feed(std::string_view piece) {
  ReasoningOutput out;
  held_.append(piece);
  while (true) {
    switch (state_) {
      case State::kStart: {
        const size_t first = FirstNonBlank(held_);
        const std::string_view rest = std::string_view(held_).substr(first);
        if (rest.size() < kOpen.size() && kOpen.starts_with(rest)) return out;  // undecided
        if (rest.starts_with(kOpen)) {
          held_.erase(0, first + kOpen.size());
          state_ = State::kReasoning;
          continue;
        }
        state_ = State::kContent;
        continue;
      }
      case State::kReasoning: {
        if (!reasoning_started_) {  // blanks just inside the tag are dropped
          held_.erase(0, FirstNonBlank(held_));
          if (held_.empty()) return out;
        }
        const size_t close = held_.find(kClose);
        const size_t end =
            close == std::string::npos ? held_.size() - TagPrefixAtEnd(held_, kClose) : close;
        // Trailing blanks wait: before the tag they are dropped.
        const size_t release = BeforeTrailingBlanks(held_, end);
        out.reasoning.append(held_, 0, release);
        if (release > 0) reasoning_started_ = true;
        if (close == std::string::npos) {
          held_.erase(0, release);
          return out;
        }
        held_.erase(0, close + kClose.size());
        state_ = State::kAfter;
        continue;
      }
      case State::kAfter:
        held_.erase(0, FirstNonBlank(held_));
        if (held_.empty()) return out;
        state_ = State::kContent;
        continue;
      case State::kContent:
        out.content.append(held_);
        held_.clear();
        return out;
    }
  }
}

ReasoningOutput ReasoningParser::Finish() {
  ReasoningOutput out;
  if (state_ == State::kStart) {
    out.content = std::move(held_);  // blanks, or the start of a tag that never came
  } else if (state_ == State::kReasoning) {
    out.reasoning = held_;  // cut short inside the section
    while (!out.reasoning.empty() && IsBlank(out.reasoning.back())) out.reasoning.pop_back();
  }
  held_.clear();
  state_ = State::kContent;
  return out;
}

}  // namespace smallmind::gateway::http

// ReasoningParser: splits a reasoning model's chat reply, as it streams, into its thinking (the
// <think> ... </think> section that Qwen 3, QwQ, DeepSeek R1, SmolLM3 and others write before
// they answer) and its answer, for the OpenAI-style `reasoning_content` field (DeepSeek's API,
// vLLM's reasoning parsers). The section is the reply's start: "<think>" after blanks, or, when
// the prompt already opened it (a generation prompt ending in "<think>"), the reply up to
// "</think>". The tags and the blanks just inside and after them are dropped; a reply without the
// section is all answer, one cut short inside it all thinking. Text streams as it comes; only a
// possible tag and trailing blanks wait. One per response; not thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace smallmind::gateway::http {

// True when a chat template writes or expects <think> sections (then its model reasons first).
bool TemplateTeachesThinking(std::string_view template_source);
// True when a rendered prompt ends inside an open <think> section.
bool PromptOpensThinking(std::string_view prompt);

struct ReasoningOutput {
  std::string reasoning;
  std::string content;
  // This output followed by `next`'s.
  void Append(const ReasoningOutput& next) {
    reasoning += next.reasoning;
    content += next.content;
  }
};

class ReasoningParser {
 public:
  // `open`: the prompt opened the section (PromptOpensThinking).
  explicit ReasoningParser(bool open);

  ReasoningOutput Feed(std::string_view piece);
  ReasoningOutput Finish();

 private:
  enum class State {
    kStart,      // only blanks so far: the section may still open
    kReasoning,  // inside the section
    kAfter,      // just after it: blanks are dropped
    kContent,    // the answer
  };
  State state_;
  bool reasoning_started_ = false;  // some thinking was released (blanks inside count from then)
  std::string held_;
};

}  // namespace smallmind::gateway::http

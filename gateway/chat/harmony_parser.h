// HarmonyParser: splits a gpt-oss reply, as it streams, by the channels of OpenAI's harmony
// format. The reply is a run of messages, each `[<|start|>ROLE]HEADER<|message|>BODY` ended by
// <|end|> (more follow), <|return|> (the last) or <|call|> (a tool call; the last). The header
// names the channel (`<|channel|>analysis`) and, for a tool call, the recipient
// (`to=functions.NAME`, before or after the channel) and the arguments' format
// (`<|constrain|>json` or ` json`). Bodies of the `analysis` channel are reasoning; bodies of
// `final`, and of `commentary` messages to no recipient (preambles), are content; a message to
// `functions.NAME` of a function the request offered, with a JSON object as body, is a call
// (arguments as compact JSON), any other body text. A reply that does not begin with a harmony
// header is all content. Text streams as it comes; only a possible marker waits (held_text.h).
// One per response; not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gateway/chat/tool_call_parser.h"

namespace smallmind::gateway::http {

// True when a chat template renders the harmony format (gpt-oss).
bool TemplateSpeaksHarmony(std::string_view template_source);

// What a step of the parser releases: thinking, text, then the calls completed in it.
struct HarmonyOutput {
  std::string reasoning;
  std::string content;
  std::vector<ParsedToolCall> calls;
  // This output followed by `next`'s.
  void Append(HarmonyOutput next) {
    reasoning += next.reasoning;
    content += next.content;
    for (ParsedToolCall& call : next.calls) calls.push_back(std::move(call));
  }
};

class HarmonyParser {
 public:
  // `functions`: the names of the request's tools; a call of any other stays text.
  explicit HarmonyParser(std::vector<std::string> functions);

  HarmonyOutput Feed(std::string_view piece);
  // The end of the output (its last message may be cut short, or its <|return|> / <|call|>
  // consumed as the stop token): what was held back, a pending call parsed.
  HarmonyOutput Finish();

 private:
  enum class State {
    kHeader,  // before <|message|>: the header so far is held
    kBody,    // inside a message's body
    kPlain,   // the reply is no harmony: all content
  };
  enum class Sink { kReasoning, kContent, kCall };
  // The header in held_ up to `end` read: the sink and (for a call) the function.
  void OpenMessage(size_t end);
  // Body text up to a marker; `closed`: the message ended there.
  void Release(std::string_view text, bool closed, HarmonyOutput* out);
  void CloseCall(HarmonyOutput* out);

  const std::vector<std::string> functions_;
  State state_ = State::kHeader;
  bool first_ = true;  // no message read yet (a non-harmony start means plain text)
  Sink sink_ = Sink::kContent;
  std::string function_;   // kCall: the recipient's function name
  std::string call_body_;  // kCall: the arguments so far
  std::string held_;
};

}  // namespace smallmind::gateway::http

// ToolCallParser: splits a chat reply, as it streams, into its text and the tool calls the model
// made on its own (tool_choice "auto") in its family's syntax (ToolCallSyntax). Text that may
// still turn out to be a call is held back until it is decided; a call is released whole once
// its JSON has ended (Hermes: at </tool_call>; Llama 3 and Mistral replies, which are nothing but
// calls, at the end of the output). Anything that does not parse as a call of a function the
// request offered (broken JSON, an unknown name, arguments that are not an object, output cut
// short) is released as text, byte for byte: nothing the model wrote is lost, except blanks
// between Hermes calls and around them. One per response; not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gateway/chat/tool_call_syntax.h"

namespace smallmind::gateway::http {

struct ParsedToolCall {
  std::string name;
  std::string arguments;  // the arguments object as compact JSON text
};

// What a step of the parser releases: text, then the calls completed in it.
struct ToolCallOutput {
  std::string content;
  std::vector<ParsedToolCall> calls;
  // This output followed by `next`'s.
  void Append(ToolCallOutput next) {
    content += next.content;
    for (ParsedToolCall& call : next.calls) calls.push_back(std::move(call));
  }
};

class ToolCallParser {
 public:
  // `functions`: the names of the request's tools; a call of any other stays text.
  ToolCallParser(ToolCallSyntax syntax, std::vector<std::string> functions);

  // The next piece of output.
  ToolCallOutput Feed(std::string_view piece);
  // The end of the output: whatever was held back, as calls or text.
  ToolCallOutput Finish();

 private:
  enum class State {
    kStart,  // Llama 3 / Mistral: only blanks so far
    kText,   // outside any call (Hermes), or a reply that is no call (Llama 3 / Mistral)
    kCall,   // Hermes: inside <tool_call>
    kHold,   // Llama 3 / Mistral: the reply may be calls, held to the end
  };
  void FeedHermes(std::string_view piece, ToolCallOutput* out);
  // `text` as one call's JSON (Hermes) or a whole reply's calls (Llama 3, Mistral); false, and
  // nothing added, unless every call in it parses.
  bool ParseCalls(std::string_view text, std::vector<ParsedToolCall>* calls) const;

  const ToolCallSyntax syntax_;
  const std::vector<std::string> functions_;
  State state_;
  std::string held_;       // text not yet released: a possible tag prefix, a call, a whole reply
  bool any_call_ = false;  // Hermes: a call was released (blanks after it are dropped)
  std::string blanks_before_call_;  // Hermes: the blanks before the open tag
};

}  // namespace smallmind::gateway::http

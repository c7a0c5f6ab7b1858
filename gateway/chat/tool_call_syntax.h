// ToolCallSyntax: how a model family writes the tool calls it makes on its own (tool_choice
// "auto"), so the HTTP door can turn them into OpenAI `tool_calls`. Read off the chat template
// that tells the model the syntax (the one the gateway renders prompts with), or named with the
// gateway's --tool-call-syntax. Plain functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace smallmind::gateway::http {

enum class ToolCallSyntax {
  kNone,        // calls stay text
  kHermes,      // <tool_call>{"name": ..., "arguments": {...}}</tool_call>, any number, amid text
                // (Hermes 2 Pro, Qwen 2.5 and 3, and other ChatML templates with tools)
  kLlama3Json,  // the whole reply one {"name": ..., "parameters": {...}} object, or several
                // separated by ';' (Llama 3.1-3.3's JSON tool calling)
  kMistral,     // the whole reply [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]; the
                // [TOOL_CALLS] control token itself is not text, so the array alone also counts
};

// The syntax the template teaches: the markers its tool section writes; kNone when it renders no
// tool calls.
ToolCallSyntax ToolCallSyntaxOfTemplate(std::string_view template_source);

// "none", "hermes", "llama3_json", "mistral"; nullopt for any other name.
std::optional<ToolCallSyntax> ToolCallSyntaxFromName(std::string_view name);
const char* ToolCallSyntaxName(ToolCallSyntax syntax);

}  // namespace smallmind::gateway::http

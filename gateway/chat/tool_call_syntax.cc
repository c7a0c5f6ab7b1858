#include "gateway/chat/tool_call_syntax.h"

namespace smallmind::gateway::http {

ToolCallSyntax ToolCallSyntaxOfTemplate(std::string_view source) {
  // The text a template writes for an assistant message's tool_calls, or tells the model to
  // write: Qwen's and Hermes' "<tool_call>", Mistral's "[TOOL_CALLS]", Llama 3's
  // '{"name": ..., "parameters": ...}' instruction (built with Jinja string concatenation).
  if (source.find("<tool_call>") != std::string_view::npos) return ToolCallSyntax::kHermes;
  if (source.find("[TOOL_CALLS]") != std::string_view::npos) return ToolCallSyntax::kMistral;
  if (source.find("\"parameters\": ") != std::string_view::npos &&
      source.find("tool_call") != std::string_view::npos) {
    return ToolCallSyntax::kLlama3Json;
  }
  return ToolCallSyntax::kNone;
}

std::optional<ToolCallSyntax> ToolCallSyntaxFromName(std::string_view name) {
  for (ToolCallSyntax s : {ToolCallSyntax::kNone, ToolCallSyntax::kHermes,
                           ToolCallSyntax::kLlama3Json, ToolCallSyntax::kMistral}) {
    if (name == ToolCallSyntaxName(s)) return s;
  }
  return std::nullopt;
}

const char* ToolCallSyntaxName(ToolCallSyntax syntax) {
  switch (syntax) {
    case ToolCallSyntax::kHermes: return "hermes";
    case ToolCallSyntax::kLlama3Json: return "llama3_json";
    case ToolCallSyntax::kMistral: return "mistral";
    case ToolCallSyntax::kNone: break;
  }
  return "none";
}

}  // namespace smallmind::gateway::http

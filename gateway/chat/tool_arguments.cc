#include "gateway/chat/tool_arguments.h"

#include <string>
#include <string_view>

#include "gateway/chat/chat_template.h"
#include "shared/json_nesting.h"

namespace smallmind::gateway {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxArgumentsNesting = 200;

Json ProbeMessages(Json arguments) {
  Json call{{"id", "call_probe"},
            {"type", "function"},
            {"function", {{"name", "probe_function"}, {"arguments", std::move(arguments)}}}};
  return Json::array({{{"role", "user"}, {"content", "Probe."}},
                      {{"role", "assistant"}, {"content", ""}, {"tool_calls", {call}}}});
}

// Whether the probe's arguments came out as JSON (or as XML-ish parameters, Qwen3-Coder style):
// a string printed through `tojson` shows `\"probe_needle\":` instead.
bool ShowsNeedle(const ChatTemplate& tmpl, Json arguments) {
  ChatRenderInput in;
  in.messages = ProbeMessages(std::move(arguments));
  in.tools =
      Json::array({{{"type", "function"},
                    {"function",
                     {{"name", "probe_function"},
                      {"description", "Probe."},
                      {"parameters", {{"type", "object"}, {"properties", Json::object()}}}}}}});
  in.add_generation_prompt = false;
  in.tool_arguments = ToolArguments::kAsGiven;
  const shared::Result<std::string> out = tmpl.Render(in);
  if (!out.ok()) return false;
  for (std::string_view needle :
       {"\"probe_needle\":", "'probe_needle':", "<parameter=probe_needle>"}) {
    if (out->find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

ToolArguments DetectToolArguments(const ChatTemplate& tmpl) {
  if (ShowsNeedle(tmpl, "{\"probe_needle\": 1}")) return ToolArguments::kAsGiven;
  return ShowsNeedle(tmpl, Json{{"probe_needle", 1}}) ? ToolArguments::kObject
                                                      : ToolArguments::kAsGiven;
}

Json PrepareToolArguments(const Json& messages, ToolArguments format) {
  if (format != ToolArguments::kObject || !messages.is_array()) return messages;
  Json out = messages;
  for (Json& m : out) {
    if (!m.is_object() || !m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
    for (Json& call : m["tool_calls"]) {
      if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) {
        continue;
      }
      Json& fn = call["function"];
      auto it = fn.find("arguments");
      if (it == fn.end() || !it->is_string()) continue;
      // As deep as a request body may nest (openai_request.h): the render recurses per level.
      if (shared::JsonNesting(it->get_ref<const std::string&>(), kMaxArgumentsNesting) >
          kMaxArgumentsNesting) {
        continue;
      }
      Json parsed = Json::parse(it->get_ref<const std::string&>(), nullptr,
                                /*allow_exceptions=*/false);
      if (parsed.is_object()) *it = std::move(parsed);
    }
  }
  return out;
}

}  // namespace smallmind::gateway

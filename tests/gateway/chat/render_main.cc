// chat_template_render: the C++ side of the differential test (differential_test.py). Reads JSON
// Lines of render requests on stdin and writes one JSON line per request on stdout:
//   in:  {"id", "template", "messages", "bos_token", "eos_token", "add_generation_prompt",
//         "tools", "documents", "kwargs", "date": "YYYY-MM-DD", "content_format"}
//   out: {"id", "ok": true, "output", "content_format", "tool_arguments"} or
//        {"id", "ok": false, "error"}
// (content_format "string" | "openai", tool_arguments "as_given" | "object": what the renderer
// did to the messages first, for the reference to do the same). `--print-chatml` prints the
// built-in ChatML fallback template instead.
// Parsed templates are cached by source text. Test tool; single-threaded.
#include <chrono>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "gateway/chat/chat_template.h"

namespace {

using nlohmann::ordered_json;
using smallmind::gateway::ChatRenderInput;
using smallmind::gateway::ChatTemplate;
using smallmind::gateway::ContentFormat;

std::chrono::system_clock::time_point ParseDate(const std::string& ymd) {
  int y = 2026, m = 1, d = 15;
  if (std::sscanf(ymd.c_str(), "%d-%d-%d", &y, &m, &d) != 3) return {};
  const std::chrono::sys_days days = std::chrono::year{y} /
                                     std::chrono::month{static_cast<unsigned>(m)} /
                                     std::chrono::day{static_cast<unsigned>(d)};
  return std::chrono::system_clock::time_point(days);
}

ContentFormat ParseFormat(const std::string& s) {
  if (s == "string") return ContentFormat::kString;
  if (s == "openai") return ContentFormat::kOpenAI;
  return ContentFormat::kAuto;
}

ordered_json Handle(const ordered_json& req, std::map<std::string, ChatTemplate>& cache) {
  ordered_json out;
  out["id"] = req.value("id", ordered_json());
  const std::string source = req.value("template", std::string());
  auto it = cache.find(source);
  if (it == cache.end()) {
    auto parsed = ChatTemplate::Parse(source);
    if (!parsed.ok()) {
      out["ok"] = false;
      out["error"] = parsed.status().message();
      return out;
    }
    it = cache.emplace(source, std::move(parsed).value()).first;
  }
  ChatRenderInput in;
  in.messages = req.value("messages", ordered_json::array());
  in.bos_token = req.value("bos_token", std::string());
  in.eos_token = req.value("eos_token", std::string());
  in.add_generation_prompt = req.value("add_generation_prompt", false);
  in.tools = req.value("tools", ordered_json());
  in.documents = req.value("documents", ordered_json());
  in.extra = req.value("kwargs", ordered_json::object());
  in.now = ParseDate(req.value("date", std::string("2026-01-15")));
  in.content_format = ParseFormat(req.value("content_format", std::string("auto")));
  const ContentFormat used =
      in.content_format == ContentFormat::kAuto ? it->second.content_format() : in.content_format;
  out["content_format"] = used == ContentFormat::kOpenAI ? "openai" : "string";
  out["tool_arguments"] = it->second.tool_arguments() == smallmind::gateway::ToolArguments::kObject
                              ? "object"
                              : "as_given";
  auto rendered = it->second.Render(in);
  if (!rendered.ok()) {
    out["ok"] = false;
    out["error"] = rendered.status().message();
    return out;
  }
  out["ok"] = true;
  out["output"] = std::move(rendered).value();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--print-chatml") {
    std::cout << smallmind::gateway::ChatMlTemplate();
    return 0;
  }
  std::map<std::string, ChatTemplate> cache;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    ordered_json out;
    try {
      out = Handle(ordered_json::parse(line), cache);
    } catch (const std::exception& e) {  // a malformed request line
      out["ok"] = false;
      out["error"] = std::string("bad request line: ") + e.what();
    }
    std::cout << out.dump(-1, ' ', false, ordered_json::error_handler_t::replace) << "\n";
  }
  return 0;
}

// ToolCallParser over any reply a model could write: the first byte picks the syntax and the next
// two where the reply is cut into three pieces. Fed whole or in pieces, the parser must give the
// same text and calls; a reply without calls must come back as text byte for byte; every call
// must name an offered function and carry arguments that parse as a JSON object.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/chat/tool_call_parser.h"

namespace {

using smallmind::gateway::http::ParsedToolCall;
using smallmind::gateway::http::ToolCallOutput;
using smallmind::gateway::http::ToolCallParser;
using smallmind::gateway::http::ToolCallSyntax;

const std::vector<std::string> kFunctions = {"f", "get_weather"};

using Result = ToolCallOutput;

Result Run(ToolCallSyntax syntax, const std::vector<std::string>& pieces) {
  ToolCallParser p(syntax, kFunctions);
  Result r;
  for (const std::string& piece : pieces) r.Append(p.Feed(piece));
  r.Append(p.Finish());
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const auto syntax = static_cast<ToolCallSyntax>(data[0] % 4);
  const std::string reply(reinterpret_cast<const char*>(data + 3), size - 3);
  size_t a = data[1] % (reply.size() + 1), b = data[2] % (reply.size() + 1);
  if (a > b) std::swap(a, b);
  const Result whole = Run(syntax, {reply});
  const Result pieces = Run(syntax, {reply.substr(0, a), reply.substr(a, b - a), reply.substr(b)});
  if (whole.content != pieces.content || whole.calls.size() != pieces.calls.size()) std::abort();
  for (size_t i = 0; i < whole.calls.size(); ++i) {
    const ParsedToolCall& c = whole.calls[i];
    if (c.name != pieces.calls[i].name || c.arguments != pieces.calls[i].arguments) std::abort();
    if (c.name != kFunctions[0] && c.name != kFunctions[1]) std::abort();
    if (!nlohmann::json::parse(c.arguments, nullptr, false).is_object()) std::abort();
  }
  if (whole.calls.empty() && whole.content != reply) std::abort();
  return 0;
}

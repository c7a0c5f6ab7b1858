// libFuzzer target for the Jinja chat-template interpreter: any bytes, as a model's
// `tokenizer.chat_template` (a GGUF from anywhere) or a --chat-template file, either fail to parse
// with INVALID_ARGUMENT naming the line, or parse into a template whose render of a conversation
// (every role, array content, tools, kwargs) gives text within the output limit or an error with a
// message, and valid UTF-8 when the template is (the HTTP door sends it as JSON and protobuf
// strings); never crash, hang or exhaust the stack. Built by tests/fuzz/CMakeLists.txt with clang
// only (-fsanitize=fuzzer,address,undefined); seeds: the real templates in
// ../shared/chat-templates (see the CMakeLists for the command).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "gateway/chat/chat_template.h"

namespace {

using smallmind::gateway::ChatRenderInput;
using smallmind::gateway::ChatTemplate;
using smallmind::shared::StatusCode;

void Require(bool condition) {
  if (!condition) std::abort();
}

// Whether `s` is valid UTF-8, judged by the JSON library the HTTP door answers with (its dump
// throws where the door's would).
bool DumpsAsJson(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

// Small limits keep each input fast; the checks are the same at any size.
smallmind::jinja::RenderLimits Limits() {
  smallmind::jinja::RenderLimits limits;
  limits.max_output_bytes = 1u << 16;
  limits.max_items = 1u << 12;
  limits.max_work = 200'000;
  return limits;
}

const ChatRenderInput& Conversation() {
  static const ChatRenderInput* input = [] {
    auto* in = new ChatRenderInput;
    in->messages = nlohmann::ordered_json::parse(R"([
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "18C, sunny"},
      {"role": "assistant", "content": "18C and sunny."},
      {"role": "user", "content": "Thanks \u00e9\u4e2d\ud83d\ude00"}])");
    in->tools = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {
      "name": "get_weather", "description": "Current weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                     "required": ["city"]}}}])");
    in->bos_token = "<s>";
    in->eos_token = "</s>";
    in->add_generation_prompt = true;
    in->extra = nlohmann::ordered_json::parse(R"({"enable_thinking": false})");
    in->now = std::chrono::system_clock::time_point(std::chrono::seconds(1767225600));
    return in;
  }();
  return *input;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  auto tmpl = ChatTemplate::Parse(source, Limits());
  if (!tmpl.ok()) {
    Require(tmpl.status().code() == StatusCode::kInvalidArgument);
    Require(!tmpl.status().message().empty());
    return 0;
  }
  auto text = tmpl->Render(Conversation());
  if (text.ok()) {
    Require(text->size() <= Limits().max_output_bytes);
    if (DumpsAsJson(source)) Require(DumpsAsJson(*text));
  } else {
    Require(!text.status().message().empty());
  }
  return 0;
}

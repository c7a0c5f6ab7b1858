// How an assistant message's tool_calls[].function.arguments reach a chat template. OpenAI clients
// send them as a JSON text (a string); Hugging Face templates written for transformers expect an
// object (they print `arguments | tojson`, which escapes a string a second time), while others
// print the string as it is. Like llama.cpp's template capability probe, DetectToolArguments
// renders a tool call both ways once and picks the form whose arguments come out as JSON; vLLM
// parses them unconditionally. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace smallmind::gateway {

class ChatTemplate;

enum class ToolArguments : uint8_t {
  kAuto,     // decide from the template (the render input's default)
  kAsGiven,  // the template prints strings as they are (or shows no tool calls at all)
  kObject,   // the template shows arguments as JSON only when they are an object
};

// Renders one call with `{"probe_needle": 1}` as a string, then as an object: kObject when only
// the object shows the needle as a JSON key, else kAsGiven (also when the probe render fails).
ToolArguments DetectToolArguments(const ChatTemplate& tmpl);

// `messages` with, for kObject, every tool call's arguments that are a string holding a JSON
// object replaced by that object (key order kept). Other values stay as they are: a string that is
// not a JSON object (arguments a model cut short) reaches the template as the string.
nlohmann::ordered_json PrepareToolArguments(const nlohmann::ordered_json& messages,
                                            ToolArguments format);

}  // namespace smallmind::gateway

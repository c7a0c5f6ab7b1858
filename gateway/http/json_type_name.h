// How a request body's JSON value is named in a 400's message ("an integer", "a number", "a
// string", ...), shared by the OpenAI and Anthropic request readers. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

namespace smallmind::gateway::http {

inline const char* JsonTypeName(const nlohmann::ordered_json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  return v.type_name();  // "string", "array", "object", "boolean"
}

}  // namespace smallmind::gateway::http

// JSON in and out of templates: request JSON becomes template values the way Python's json.loads
// builds them (key order kept, so callers parse with nlohmann::ordered_json), and the `tojson`
// filter writes Python's json.dumps text as transformers calls it (ensure_ascii=False, indent,
// separators, sort_keys; ", " and ": " by default). Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

// Fails when arrays/objects nest deeper than kMaxValueDepth.
Result<Value> FromJson(const nlohmann::ordered_json& j);

struct JsonDumpOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;  // the per-level indent text; nullopt = one line
  std::optional<std::string> item_separator;
  std::optional<std::string> key_separator;
  bool sort_keys = false;
};

// json.dumps(v, ...); values JSON cannot hold (Undefined, namespaces, functions) are errors
// with Python's "Object of type X is not JSON serializable".
Result<std::string> ToJson(const Value& v, const JsonDumpOptions& options, size_t max_bytes);

}  // namespace smallmind::jinja

// ReadJson: parses a client's JSON text (an HTTP body, a json_schema, a model's tool call) into an
// insertion-ordered nlohmann::ordered_json in time linear in the text, under caps on nesting, keys
// per object and string sizes that it reports with the path of the offending value. Pure
// function; thread-safe.
//
// Why not ordered_json::parse: its object is a vector searched from the front on every insert, so
// one object of n keys costs n^2/2 string compares (a 1 MB body of 100k keys: ~30 s of CPU). Key
// order matters downstream (a schema's property order is the order constrained output writes
// them; tools' parameters reach the chat template as sent), so the reader keeps the ordered type
// and finds duplicates with a hash table instead.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shared/status.h"

namespace smallmind::shared {

struct JsonLimits {
  int max_depth = 200;                // arrays and objects nested in one another
  size_t max_object_keys = 4096;      // keys of one object (logit_bias takes 4096 token ids)
  size_t max_key_bytes = 1024;        // bytes of one key
  size_t max_string_bytes = 8 << 20;  // bytes of one string value, after unescaping
};

// The parsed document, or INVALID_ARGUMENT naming `what` ("the body", "json_schema"), the limit or
// the syntax error and where: "json_schema: the object at /properties has more than 4096 keys".
// A key given twice keeps its first place and its last value, as ordered_json::parse does.
Result<nlohmann::ordered_json> ReadJson(std::string_view text, const JsonLimits& limits,
                                        std::string_view what);

}  // namespace smallmind::shared

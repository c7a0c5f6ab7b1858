#include "tests/testing/json_schema_check.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

namespace smallmind::testing {
namespace {

using Json = nlohmann::ordered_json;

// `v` against `s`, whose $refs point into `root`.
bool Valid(const Json& v, const Json& s, const Json& root) {
  if (s.is_boolean()) return s.get<bool>();
  if (s.contains("$ref")) {
    const std::string ref = s["$ref"];
    return Valid(v, root.at(Json::json_pointer(ref.substr(1))), root);
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!s.contains(key)) continue;
    int matches = 0;
    for (const Json& alt : s[key]) matches += Valid(v, alt, root) ? 1 : 0;
    return std::string_view(key) == "anyOf" ? matches > 0 : matches == 1;
  }
  if (s.contains("allOf")) {
    for (const Json& part : s["allOf"]) {
      if (!Valid(v, part, root)) return false;
    }
    return true;
  }
  if (s.contains("const") && v != s["const"]) return false;
  if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) {
    return false;
  }
  if (s.contains("type")) {
    const Json types = s["type"].is_array() ? s["type"] : Json::array({s["type"]});
    bool any = false;
    for (const Json& t : types) {
      const std::string name = t;
      any = any || (name == "object" && v.is_object()) || (name == "array" && v.is_array()) ||
            (name == "string" && v.is_string()) || (name == "number" && v.is_number()) ||
            (name == "integer" && v.is_number_integer()) || (name == "boolean" && v.is_boolean()) ||
            (name == "null" && v.is_null());
    }
    if (!any) return false;
  }
  if (v.is_object()) {
    const Json props = s.value("properties", Json::object());
    size_t last = 0;  // the schema index of the previous key
    const Json required = s.value("required", Json::array());
    bool first = true;
    for (const auto& [key, value] : v.items()) {
      // A union's discriminator (a required const/enum property) is written first wherever the
      // schema lists it.
      const bool discriminator = first && props.contains(key) &&
                                 (props[key].contains("const") || props[key].contains("enum")) &&
                                 std::find(required.begin(), required.end(), key) != required.end();
      first = false;
      if (props.contains(key)) {
        const size_t index = static_cast<size_t>(std::distance(props.begin(), props.find(key)));
        if (index < last) return false;  // out of the schema's order
        if (!discriminator) last = index;
        if (!Valid(value, props[key], root)) return false;
      } else if (s.contains("additionalProperties")) {
        if (!Valid(value, s["additionalProperties"], root)) return false;
      }
    }
    for (const Json& r : s.value("required", Json::array())) {
      if (!v.contains(r.get<std::string>())) return false;
    }
  }
  if (v.is_string()) {
    size_t chars = 0;  // code points: bytes that do not continue one
    for (char c : v.get_ref<const std::string&>()) {
      chars += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
    }
    if (s.contains("minLength") && chars < s["minLength"].get<size_t>()) return false;
    if (s.contains("maxLength") && chars > s["maxLength"].get<size_t>()) return false;
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) return false;
    if (s.contains("maximum") && x > s["maximum"].get<double>()) return false;
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) return false;
    if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>()) return false;
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return false;
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return false;
    // A tuple's own schemas first (prefixItems, or an array `items` with additionalItems for the
    // rest), then `items`.
    const bool tuple_items = s.contains("items") && s["items"].is_array();
    const Json tuple = s.contains("prefixItems") ? s["prefixItems"]
                       : tuple_items             ? s["items"]
                                                 : Json::array();
    const char* rest = tuple_items ? "additionalItems" : "items";
    for (size_t i = 0; i < v.size(); i++) {
      if (i < tuple.size()) {
        if (!Valid(v[i], tuple[i], root)) return false;
      } else if (s.contains(rest) && !Valid(v[i], s[rest], root)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

bool SchemaAllows(const Json& value, const Json& schema) { return Valid(value, schema, schema); }

}  // namespace smallmind::testing

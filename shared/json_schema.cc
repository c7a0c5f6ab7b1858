#include "shared/json_schema.h"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <map>
#include <set>

#include <spdlog/fmt/fmt.h>
#include <nlohmann/json.hpp>

#include "shared/json_nesting.h"
#include "shared/json_reader.h"

namespace smallmind::shared {

using Json = nlohmann::ordered_json;  // properties keep the schema's order

namespace {

// Keywords that say nothing about which values are valid.
const std::set<std::string, std::less<>> kAnnotations = {
    "title",     "description", "default",     "examples",   "format",
    "$schema",   "$id",         "$comment",    "deprecated", "readOnly",
    "writeOnly", "$defs",       "definitions", "$anchor",    "discriminator"};

// The keywords the compiler reads.
const std::set<std::string, std::less<>> kSupported = {"type",
                                                       "properties",
                                                       "required",
                                                       "additionalProperties",
                                                       "items",
                                                       "prefixItems",
                                                       "additionalItems",
                                                       "minItems",
                                                       "maxItems",
                                                       "enum",
                                                       "const",
                                                       "anyOf",
                                                       "oneOf",
                                                       "allOf",
                                                       "$ref",
                                                       "minLength",
                                                       "maxLength",
                                                       "minimum",
                                                       "maximum",
                                                       "exclusiveMinimum",
                                                       "exclusiveMaximum"};

// The numeric bounds, in the order errors name them.
constexpr const char* kNumericBounds[] = {"minimum", "maximum", "exclusiveMinimum",
                                          "exclusiveMaximum"};

// The first numeric bound `s` has, or null.
const char* NumericBound(const Json& s) {
  for (const char* key : kNumericBounds) {
    if (s.contains(key)) return key;
  }
  return nullptr;
}

// A number inside the numeric bounds beside it (bounds that are not numbers allow nothing).
bool WithinNumericBounds(const Json& v, const Json& s) {
  const long double x = v.get<long double>();
  for (const char* key : kNumericBounds) {
    const auto b = s.find(key);
    if (b == s.end()) continue;
    if (!b->is_number()) return false;
    const long double bound = b->get<long double>();
    const std::string_view k = key;
    if ((k == "minimum" && x < bound) || (k == "maximum" && x > bound) ||
        (k == "exclusiveMinimum" && x <= bound) || (k == "exclusiveMaximum" && x >= bound)) {
      return false;
    }
  }
  return true;
}

using ByteSet = std::bitset<256>;

ByteSet Bytes(std::string_view chars) {
  ByteSet s;
  for (char c : chars) s.set(static_cast<unsigned char>(c));
  return s;
}

const ByteSet kNumberStart = Bytes("-0123456789");

// The JSON pointer `path` + "/" + `token`, escaped (~0, ~1).
std::string Child(const std::string& path, std::string_view token) {
  std::string out = path + "/";
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Characters (code points) of a UTF-8 string.
uint64_t CodePoints(const std::string& s) {
  uint64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
  return n;
}

// An enum/const value the length and item bounds beside it allow.
bool WithinBounds(const Json& v, const Json& s) {
  const auto bound = [&](const char* key, uint64_t count, bool is_min) {
    const auto b = s.find(key);
    if (b == s.end() || !b->is_number_unsigned()) return true;
    return is_min ? count >= b->get<uint64_t>() : count <= b->get<uint64_t>();
  };
  if (v.is_string()) {
    const uint64_t n = CodePoints(v.get_ref<const std::string&>());
    return bound("minLength", n, true) && bound("maxLength", n, false);
  }
  if (v.is_array()) return bound("minItems", v.size(), true) && bound("maxItems", v.size(), false);
  if (v.is_number()) return WithinNumericBounds(v, s);
  return true;
}

bool MatchesType(const Json& v, std::string_view type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer") {
    if (v.is_number_integer()) return true;
    if (!v.is_number_float()) return false;
    const double d = v.get<double>();
    return d == static_cast<double>(static_cast<int64_t>(d));
  }
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

}  // namespace

class JsonSchemaCompiler {
 public:
  JsonSchemaCompiler(const Json& doc, int64_t max_work)
      : doc_(doc), max_work_(max_work), schema_(new JsonSchema()) {}

  Result<std::shared_ptr<const JsonSchema>> Run() {
    const Result<int32_t> root = Compile(doc_, "");
    if (!root.ok()) return root.status();
    int32_t id = *root;
    if (id == JsonSchema::kAnyValue) id = JsonSchema::kAnyObject;  // {} or true at the top
    // Alternatives that are all objects (a union of models): the node that stands for them.
    if (schema_->node(id).kind == JsonSchema::Kind::kAnyOf && FirstBytes(id) == Bytes("{")) {
      id = schema_->Dispatch(id, '{');
    }
    if (schema_->node(id).kind != JsonSchema::Kind::kObject) {
      return Fail("", "the top level must be an object (\"type\": \"object\")");
    }
    if (const int depth = Depth(id); depth > JsonSchema::kMaxDepth) {
      return Fail("", fmt::format("values nest {} objects and arrays deep; at most {}", depth,
                                  JsonSchema::kMaxDepth));
    }
    schema_->root_ = id;
    return std::shared_ptr<const JsonSchema>(std::move(schema_));
  }

 private:
  using Kind = JsonSchema::Kind;

  static Status Fail(const std::string& path, const std::string& what) {
    return InvalidArgument(
        fmt::format("json_schema at \"{}\": {}", path.empty() ? "#" : path, what));
  }

  // Spends `units` of the compile budget; INVALID_ARGUMENT naming the limit once it is gone.
  Status Charge(int64_t units, const std::string& path) {
    work_ += units;
    if (work_ <= max_work_) return Status::Ok();
    return Fail(path, fmt::format("compiling the schema needs more than {} units of work (its "
                                  "objects, keywords, enum values and the properties its unions "
                                  "compare): simplify it",
                                  max_work_));
  }

  Result<int32_t> Add(JsonSchema::Node node, const std::string& path) {
    if (static_cast<int>(schema_->nodes_.size()) >= JsonSchema::kMaxNodes) {
      return Fail(path,
                  fmt::format("the schema compiles to more than {} nodes", JsonSchema::kMaxNodes));
    }
    schema_->nodes_.push_back(node);
    return static_cast<int32_t>(schema_->nodes_.size() - 1);
  }

  Result<int32_t> Compile(const Json& s, const std::string& path) {
    if (s.is_boolean()) {
      if (s.get<bool>()) return JsonSchema::kAnyValue;
      return Fail(path, "the schema `false` allows no value");
    }
    if (!s.is_object()) {
      return Fail(path,
                  fmt::format("a schema must be an object or a boolean, got {}", s.type_name()));
    }
    SM_RETURN_IF_ERROR(Charge(1 + static_cast<int64_t>(s.size()), path));
    for (const auto& [key, value] : s.items()) {
      if (kSupported.count(key) == 0 && kAnnotations.count(key) == 0) {
        return Fail(path,
                    fmt::format("keyword `{}` is not supported (it would not be enforced)", key));
      }
    }
    // The keywords that stand for the whole schema.
    for (const char* whole : {"$ref", "allOf", "anyOf", "oneOf"}) {
      if (s.contains(whole)) return Whole(s, whole, path);
    }
    if (s.contains("const") || s.contains("enum")) return Literals(s, path);
    if (const auto type = s.find("type"); type != s.end()) {
      if (type->is_string()) return Typed(s, type->get<std::string>(), path);
      if (!type->is_array() || type->empty()) {
        return Fail(Child(path, "type"), "must be a type name or a non-empty array of them");
      }
      std::vector<int32_t> alternatives;
      for (const Json& t : *type) {
        if (!t.is_string()) return Fail(Child(path, "type"), "type names must be strings");
        SM_ASSIGN_OR_RETURN(int32_t alt, Typed(s, t.get<std::string>(), path));
        alternatives.push_back(alt);
      }
      return AnyOf(alternatives, Child(path, "type"));
    }
    if (s.contains("properties") || s.contains("required") || s.contains("additionalProperties")) {
      return Typed(s, "object", path);
    }
    // Bounds without a type: values of the type they bound (a narrower set, all valid).
    if (s.contains("items") || s.contains("prefixItems") || s.contains("minItems") ||
        s.contains("maxItems")) {
      return Typed(s, "array", path);
    }
    if (s.contains("minLength") || s.contains("maxLength")) return Typed(s, "string", path);
    if (NumericBound(s) != nullptr) return Typed(s, "number", path);
    return JsonSchema::kAnyValue;
  }

  // A schema that `whole` ($ref, allOf, anyOf or oneOf) stands for: its siblings may only be
  // annotations.
  Result<int32_t> Whole(const Json& s, const char* whole, const std::string& path) {
    for (const auto& [key, value] : s.items()) {
      if (key != whole && kAnnotations.count(key) == 0) {
        return Fail(path, fmt::format("`{}` beside `{}` is not supported", key, whole));
      }
    }
    const Json& v = s.at(whole);
    const std::string at = Child(path, whole);
    if (std::string_view(whole) == "$ref") return Ref(v, at);
    if (!v.is_array() || v.empty()) return Fail(at, "must be a non-empty array of schemas");
    if (std::string_view(whole) == "allOf") {
      if (v.size() != 1) return Fail(at, "allOf with more than one schema is not supported");
      return Compile(v[0], Child(at, "0"));
    }
    std::vector<int32_t> alternatives;
    for (size_t i = 0; i < v.size(); i++) {
      SM_ASSIGN_OR_RETURN(int32_t alt, Compile(v[i], Child(at, std::to_string(i))));
      alternatives.push_back(alt);
    }
    return AnyOf(alternatives, at);
  }

  Result<int32_t> Typed(const Json& s, const std::string& type, const std::string& path) {
    if (type == "object") return Object(s, path);
    if (type == "array") return Array(s, path);
    JsonSchema::Node n;
    if (type == "string") {
      n.kind = Kind::kString;
      SM_RETURN_IF_ERROR(Bounds(s, "minLength", "maxLength", path, &n.min_length, &n.max_length));
    } else if (type == "number") {
      n.kind = Kind::kNumber;
      SM_RETURN_IF_ERROR(NumberBounds(s, path, &n));
    } else if (type == "integer") {
      n.kind = Kind::kInteger;
      SM_RETURN_IF_ERROR(IntegerBounds(s, path, &n.min_int, &n.max_int));
    } else if (type == "boolean") {
      n.kind = Kind::kBoolean;
    } else if (type == "null") {
      n.kind = Kind::kNull;
    } else {
      return Fail(Child(path, "type"), fmt::format("unknown type \"{}\"", type));
    }
    return Add(n, path);
  }

  Result<int32_t> Object(const Json& s, const std::string& path) {
    JsonSchema::Node n;
    n.kind = Kind::kObject;
    std::vector<JsonSchema::Property> props;
    std::vector<std::string> names;
    if (const auto p = s.find("properties"); p != s.end()) {
      if (!p->is_object()) return Fail(Child(path, "properties"), "must be an object");
      for (const auto& [name, sub] : p->items()) {
        SM_ASSIGN_OR_RETURN(int32_t node, Compile(sub, Child(Child(path, "properties"), name)));
        props.push_back({Key(name), node, false, 0});
        names.push_back(name);
      }
    }
    bool closed = false;  // additionalProperties: false
    int32_t extra = JsonSchema::kAnyValue;
    if (const auto a = s.find("additionalProperties"); a != s.end()) {
      if (a->is_boolean() && !a->get<bool>()) {
        closed = true;
      } else {
        SM_ASSIGN_OR_RETURN(extra, Compile(*a, Child(path, "additionalProperties")));
      }
    }
    if (const auto r = s.find("required"); r != s.end()) {
      if (!r->is_array()) return Fail(Child(path, "required"), "must be an array of names");
      for (const Json& name : *r) {
        if (!name.is_string()) return Fail(Child(path, "required"), "names must be strings");
        const std::string& key = name.get_ref<const std::string&>();
        const auto it = std::find(names.begin(), names.end(), key);
        if (it != names.end()) {
          props[static_cast<size_t>(it - names.begin())].required = true;
        } else if (closed) {
          return Fail(Child(path, "required"),
                      fmt::format("\"{}\" is required but additionalProperties is false and it "
                                  "is not in properties",
                                  key));
        } else {  // a required key the properties do not describe: its value is `extra`'s
          props.push_back({Key(key), extra, true, 0});
          names.push_back(key);
        }
      }
    }
    if (props.size() > static_cast<size_t>(JsonSchema::kMaxProperties)) {
      return Fail(Child(path, "properties"), fmt::format("{} properties; at most {} per object",
                                                         props.size(), JsonSchema::kMaxProperties));
    }
    // Free keys only where no property is listed: a schema's listed keys are what it asks for.
    n.extra = props.empty() && !closed ? extra : -1;
    return AddObject(n, std::move(props), path);
  }

  // Object node `n` with properties `props` in their order (each one's next_required set here),
  // appended after the values' schemas, whose objects add their own properties first.
  Result<int32_t> AddObject(JsonSchema::Node n, std::vector<JsonSchema::Property> props,
                            const std::string& path) {
    int32_t next = static_cast<int32_t>(props.size());
    for (size_t i = props.size(); i-- > 0;) {
      if (props[i].required) next = static_cast<int32_t>(i);
      props[i].next_required = next;
    }
    n.first = static_cast<int32_t>(schema_->properties_.size());
    n.count = static_cast<int32_t>(props.size());
    for (auto& p : props) schema_->properties_.push_back(std::move(p));
    return Add(n, path);
  }

  Result<int32_t> Array(const Json& s, const std::string& path) {
    JsonSchema::Node n;
    n.kind = Kind::kArray;
    n.items = JsonSchema::kAnyValue;
    // The first items' own schemas (a tuple): prefixItems (2020-12), or an array `items` (drafts 4
    // to 2019-09, additionalItems then being the rest's schema).
    const auto prefix = s.find("prefixItems");
    const auto items = s.find("items");
    const bool tuple_items = items != s.end() && items->is_array();
    if (prefix != s.end() && tuple_items) {
      return Fail(path, "prefixItems beside an array `items` (two tuples): use prefixItems");
    }
    const char* tuple_key = prefix != s.end() ? "prefixItems" : "items";
    std::vector<int32_t> tuple;
    if (prefix != s.end() || tuple_items) {
      const Json& list = prefix != s.end() ? *prefix : *items;
      if (!list.is_array()) return Fail(Child(path, tuple_key), "must be an array of schemas");
      for (size_t i = 0; i < list.size(); i++) {
        SM_ASSIGN_OR_RETURN(int32_t item,
                            Compile(list[i], Child(Child(path, tuple_key), std::to_string(i))));
        tuple.push_back(item);
      }
    }
    // The items after the tuple: `items`, or additionalItems beside an array `items`.
    const char* rest_key = tuple_items ? "additionalItems" : "items";
    if (const auto rest = s.find(rest_key); rest != s.end()) {
      if (rest->is_boolean() && !rest->get<bool>()) {
        n.max_items = static_cast<uint32_t>(tuple.size());
      } else {
        SM_ASSIGN_OR_RETURN(n.items, Compile(*rest, Child(path, rest_key)));
      }
    }
    SM_RETURN_IF_ERROR(Bounds(s, "minItems", "maxItems", path, &n.min_items, &n.max_items));
    // After the items' schemas, whose arrays add their own tuples first.
    n.first = static_cast<int32_t>(schema_->prefix_items_.size());
    n.count = static_cast<int32_t>(tuple.size());
    schema_->prefix_items_.insert(schema_->prefix_items_.end(), tuple.begin(), tuple.end());
    return Add(n, path);
  }

  // A count's bounds (minItems/maxItems, minLength/maxLength) into *lo and *hi (which may hold a
  // tighter bound already: items false).
  static Status Bounds(const Json& s, const char* min_key, const char* max_key,
                       const std::string& path, uint32_t* lo, uint32_t* hi) {
    for (const char* key : {min_key, max_key}) {
      const auto v = s.find(key);
      if (v == s.end()) continue;
      if (!v->is_number_unsigned()) return Fail(Child(path, key), "must be a non-negative integer");
      const uint64_t x = v->get<uint64_t>();
      if (key == min_key) {
        if (x > JsonSchema::kMaxMinItems) {
          return Fail(Child(path, key), fmt::format("at most {}", JsonSchema::kMaxMinItems));
        }
        *lo = static_cast<uint32_t>(x);
      } else if (x < *hi) {  // past kMaxMinItems: no bound the output could reach
        *hi = x > JsonSchema::kMaxMinItems ? UINT32_MAX : static_cast<uint32_t>(x);
      }
    }
    if (*lo > *hi) {
      const bool items_false = *hi == 0 && std::string_view(min_key) == "minItems";
      return Fail(path, fmt::format("{} {} is above {} {}{}", min_key, *lo, max_key, *hi,
                                    items_false ? " (or items is false)" : ""));
    }
    return Status::Ok();
  }

  // A bound's value: a number (draft 4's boolean exclusiveMinimum named as such).
  static Status BoundIsNumber(const Json& v, const std::string& path, const char* key) {
    if (v.is_number()) return Status::Ok();
    return Fail(Child(path, key), v.is_boolean()
                                      ? "must be a number (draft 4's boolean form is not "
                                        "supported)"
                                      : "must be a number");
  }

  // minimum / maximum / exclusiveMinimum / exclusiveMaximum of a number into n->range (exactly,
  // from the bounds' decimal text: 0.1 is 0.1, not the double nearest it).
  static Status NumberBounds(const Json& s, const std::string& path, JsonSchema::Node* n) {
    for (const char* key : kNumericBounds) {
      const auto v = s.find(key);
      if (v == s.end()) continue;
      SM_RETURN_IF_ERROR(BoundIsNumber(*v, path, key));
      // A float's text is the shortest that reads back as it (what the schema most likely wrote).
      if (!n->range.Apply(key, v->dump())) return Fail(Child(path, key), "must be a number");
      n->bounded = true;
    }
    if (n->bounded && !AnyNumberIn(n->range)) {
      return Fail(path,
                  "the bounds allow no number (of at most 15 digits and no exponent, as the "
                  "output writes them)");
    }
    return Status::Ok();
  }

  // minimum / maximum / exclusiveMinimum / exclusiveMaximum of an integer into [*lo, *hi],
  // within +-JsonSchema::kMaxInteger.
  static Status IntegerBounds(const Json& s, const std::string& path, int64_t* lo, int64_t* hi) {
    constexpr long double kMax = static_cast<long double>(JsonSchema::kMaxInteger);
    long double low = -kMax, high = kMax;
    for (const char* key : kNumericBounds) {
      const auto v = s.find(key);
      if (v == s.end()) continue;
      SM_RETURN_IF_ERROR(BoundIsNumber(*v, path, key));
      const long double x = v->get<long double>();  // exact for any int64 or uint64
      const std::string_view k = key;
      if (k == "minimum") low = std::max(low, std::ceil(x));
      if (k == "exclusiveMinimum") low = std::max(low, std::floor(x) + 1);
      if (k == "maximum") high = std::min(high, std::floor(x));
      if (k == "exclusiveMaximum") high = std::min(high, std::ceil(x) - 1);
    }
    if (low > high) {
      return Fail(path,
                  "the bounds allow no integer (of at most 18 digits, as the output "
                  "writes them)");
    }
    *lo = static_cast<int64_t>(low);
    *hi = static_cast<int64_t>(high);
    return Status::Ok();
  }

  // enum / const (with `type` beside them: the values of those types).
  Result<int32_t> Literals(const Json& s, const std::string& path) {
    std::vector<Json> values;
    if (const auto c = s.find("const"); c != s.end()) values.push_back(*c);
    if (const auto e = s.find("enum"); e != s.end()) {
      if (!e->is_array() || e->empty())
        return Fail(Child(path, "enum"), "must be a non-empty array");
      if (s.contains("const")) {  // both: the const, if the enum has it
        if (std::find(e->begin(), e->end(), values[0]) == e->end()) values.clear();
      } else {
        values.assign(e->begin(), e->end());
      }
    }
    std::vector<std::string> types;
    if (const auto t = s.find("type"); t != s.end()) {
      for (const Json& name : t->is_array() ? *t : Json::array({*t})) {
        if (!name.is_string()) return Fail(Child(path, "type"), "type names must be strings");
        types.push_back(name.get<std::string>());
      }
    }
    std::vector<std::string> texts;
    for (const Json& v : values) {
      const bool typed = types.empty() || std::any_of(types.begin(), types.end(),
                                                      [&](auto& t) { return MatchesType(v, t); });
      if (!typed || !WithinBounds(v, s)) continue;
      std::string text = v.dump();
      SM_RETURN_IF_ERROR(Charge(1 + static_cast<int64_t>(text.size() / 64), path));
      if (JsonNesting(text, JsonSchema::kMaxDepth) > JsonSchema::kMaxDepth) {
        return Fail(path, "an enum/const value nests too deep");
      }
      texts.push_back(std::move(text));
    }
    if (texts.empty()) return Fail(path, "no value of enum/const is allowed by its type");
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
    JsonSchema::Node n;
    n.kind = Kind::kLiterals;
    n.first = static_cast<int32_t>(schema_->literals_.size());
    n.count = static_cast<int32_t>(texts.size());
    for (auto& t : texts) schema_->literals_.push_back(std::move(t));
    return Add(n, path);
  }

  Result<int32_t> AnyOf(const std::vector<int32_t>& alternatives, const std::string& path) {
    if (alternatives.size() == 1) return alternatives[0];
    SM_RETURN_IF_ERROR(Charge(256 + static_cast<int64_t>(alternatives.size()), path));
    JsonSchema::Node n;
    n.kind = Kind::kAnyOf;
    n.first = static_cast<int32_t>(schema_->dispatch_.size() / 256);
    n.count = static_cast<int32_t>(alternatives.size());
    std::vector<int32_t> table(256, -1);
    // Objects among the alternatives: one union of them (a discriminator tells them apart) in the
    // alternatives' place.
    std::vector<int32_t> objects;
    for (const int32_t alt : alternatives) {
      if (schema_->node(alt).kind == Kind::kObject) objects.push_back(alt);
    }
    if (objects.size() > 1) {
      SM_ASSIGN_OR_RETURN(table['{'], Union(objects, path));
    }
    for (size_t i = 0; i < alternatives.size(); i++) {
      if (objects.size() > 1 && schema_->node(alternatives[i]).kind == Kind::kObject) continue;
      const ByteSet first = FirstBytes(alternatives[i]);
      for (int c = 0; c < 256; c++) {
        if (!first.test(static_cast<size_t>(c))) continue;
        if (table[static_cast<size_t>(c)] >= 0) {
          return Fail(
              path, fmt::format("alternatives that can start with the same character ('{}') are "
                                "not supported: each must be a different kind of value (an object "
                                "and null, a string and a number, ...)",
                                static_cast<char>(c)));
        }
        table[static_cast<size_t>(c)] = alternatives[i];
      }
    }
    schema_->dispatch_.insert(schema_->dispatch_.end(), table.begin(), table.end());
    return Add(n, path);
  }

  // The objects `objects` (two or more) as one node with variants: the first property, in the
  // first object's order, that every object requires with literal values (const/enum) no other
  // object shares is their discriminator; each object is copied with it first.
  Result<int32_t> Union(const std::vector<int32_t>& objects, const std::string& path) {
    // Copies, not references: nodes and properties are appended below.
    const JsonSchema::Node first = schema_->node(objects[0]);
    for (int32_t k = 0; k < first.count; k++) {
      const std::string key = schema_->property(first.first + k).key;
      std::map<std::string, int32_t> owner;  // literal text -> the object it picks
      std::vector<int32_t> at;               // each object's index of the key
      bool ok = true;
      for (const int32_t id : objects) {
        const JsonSchema::Node& o = schema_->node(id);
        SM_RETURN_IF_ERROR(Charge(o.count, path));
        int32_t found = -1;
        for (int32_t i = 0; i < o.count && found < 0; i++) {
          if (schema_->property(o.first + i).key == key) found = i;
        }
        const JsonSchema::Property* p = found >= 0 ? &schema_->property(o.first + found) : nullptr;
        if (p == nullptr || !p->required || schema_->node(p->node).kind != Kind::kLiterals) {
          ok = false;
          break;
        }
        const JsonSchema::Node& lits = schema_->node(p->node);
        for (int32_t i = 0; i < lits.count && ok; i++) {
          ok = owner.emplace(schema_->literal(lits.first + i), id).second;
        }
        at.push_back(found);
      }
      if (!ok) continue;
      // The discriminator's values, sorted as a literal node keeps them, each with its object.
      JsonSchema::Node values;
      values.kind = Kind::kLiterals;
      values.first = static_cast<int32_t>(schema_->literals_.size());
      values.count = static_cast<int32_t>(owner.size());
      std::map<int32_t, int32_t> copy;  // object -> its copy with the discriminator first
      for (size_t i = 0; i < objects.size(); i++) {
        SM_ASSIGN_OR_RETURN(copy[objects[i]], DiscriminatorFirst(objects[i], at[i], path));
      }
      JsonSchema::Node n;
      n.kind = Kind::kObject;
      n.variants = static_cast<int32_t>(schema_->variants_.size());
      for (const auto& [text, id] : owner) {  // std::map: bytewise order, as literals are sorted
        schema_->literals_.push_back(text);
        schema_->variants_.push_back(copy[id]);
      }
      SM_ASSIGN_OR_RETURN(const int32_t values_id, Add(values, path));
      n.first = static_cast<int32_t>(schema_->properties_.size());
      n.count = 1;
      schema_->properties_.push_back({key, values_id, true, 0});
      return Add(n, path);
    }
    return Fail(path,
                "alternatives that are objects need a discriminator: a property every one of them "
                "requires, with const/enum values that tell them apart (as pydantic writes for a "
                "union of models)");
  }

  // Object `id` with its property `index` first (the others in their order): itself when it is
  // first already, else a copy.
  Result<int32_t> DiscriminatorFirst(int32_t id, int32_t index, const std::string& path) {
    if (index == 0) return id;
    const JsonSchema::Node n = schema_->node(id);
    SM_RETURN_IF_ERROR(Charge(n.count, path));
    std::vector<JsonSchema::Property> props;
    props.push_back(schema_->property(n.first + index));
    for (int32_t i = 0; i < n.count; i++) {
      if (i != index) props.push_back(schema_->property(n.first + i));
    }
    return AddObject(n, std::move(props), path);
  }

  ByteSet FirstBytes(int32_t id) const {
    const JsonSchema::Node& n = schema_->node(id);
    switch (n.kind) {
      case Kind::kAny: return Bytes("{[\"tfn") | kNumberStart;
      case Kind::kObject: return Bytes("{");
      case Kind::kArray: return Bytes("[");
      case Kind::kString: return Bytes("\"");
      case Kind::kNumber:
      case Kind::kInteger: return kNumberStart;
      case Kind::kBoolean: return Bytes("tf");
      case Kind::kNull: return Bytes("n");
      case Kind::kLiterals: {
        ByteSet s;
        for (int32_t i = 0; i < n.count; i++) {
          s.set(static_cast<unsigned char>(schema_->literal(n.first + i)[0]));
        }
        return s;
      }
      case Kind::kAnyOf: {
        ByteSet s;
        for (int c = 0; c < 256; c++) {
          if (schema_->Dispatch(id, static_cast<unsigned char>(c)) >= 0) s.set(c);
        }
        return s;
      }
    }
    return {};
  }

  // A local $ref: a JSON pointer into the document ("#" + "/a/b" with ~0 ~1 escapes).
  Result<int32_t> Ref(const Json& ref, const std::string& at) {
    if (!ref.is_string()) return Fail(at, "must be a string");
    const std::string& target = ref.get_ref<const std::string&>();
    if (target.empty() || target[0] != '#') {
      return Fail(at, fmt::format("\"{}\": only local references (\"#/$defs/Name\") are "
                                  "supported",
                                  target));
    }
    if (const auto done = compiled_.find(target); done != compiled_.end()) return done->second;
    if (!in_progress_.insert(target).second) {
      return Fail(
          at, fmt::format("\"{}\" refers to itself: recursive schemas are not supported", target));
    }
    const Json* node = &doc_;
    const std::string pointer = target.substr(1);
    size_t pos = pointer.empty() ? std::string::npos : 0;
    while (pos != std::string::npos) {
      if (pointer[pos] != '/') return Fail(at, fmt::format("\"{}\" is not a JSON pointer", target));
      const size_t end = pointer.find('/', pos + 1);
      std::string token = pointer.substr(pos + 1, end == std::string::npos ? end : end - pos - 1);
      for (size_t i = 0; i + 1 < token.size(); i++) {  // ~1 -> '/', ~0 -> '~'
        if (token[i] == '~' && (token[i + 1] == '0' || token[i + 1] == '1')) {
          token.replace(i, 2, token[i + 1] == '1' ? "/" : "~");
        }
      }
      if (node->is_object() && node->contains(token)) {
        node = &node->at(token);
      } else if (node->is_array() && !token.empty() && token.size() <= 9 &&
                 token.find_first_not_of("0123456789") == std::string::npos &&
                 std::stoul(token) < node->size()) {
        node = &node->at(std::stoul(token));
      } else {
        return Fail(at, fmt::format("\"{}\" does not point into the schema", target));
      }
      pos = end;
    }
    const Result<int32_t> id = Compile(*node, target.substr(1));
    in_progress_.erase(target);
    if (id.ok()) compiled_[target] = *id;
    return id;
  }

  // The deepest nesting of objects and arrays the node's values need (any value: 0, the
  // constraint's generic grammar keeps to the limit itself).
  int Depth(int32_t id) {
    if (const auto it = depth_.find(id); it != depth_.end()) return it->second;
    const JsonSchema::Node& n = schema_->node(id);
    int d = 0;
    switch (n.kind) {
      case Kind::kObject:
        if (n.variants >= 0) {  // the objects its discriminator picks
          const JsonSchema::Node& values = schema_->node(schema_->property(n.first).node);
          for (int32_t i = 0; i < values.count; i++) {
            d = std::max(d, Depth(schema_->Variant(id, values.first + i)));
          }
          break;
        }
        for (int32_t i = 0; i < n.count; i++)
          d = std::max(d, Depth(schema_->property(n.first + i).node));
        if (n.extra >= 0) d = std::max(d, Depth(n.extra));
        d += 1;
        break;
      case Kind::kArray:
        d = n.max_items > static_cast<uint32_t>(n.count) ? Depth(n.items) : 0;
        for (int32_t i = 0; i < n.count; i++)
          d = std::max(d, Depth(schema_->prefix_item(n.first + i)));
        d += 1;
        break;
      case Kind::kLiterals:
        for (int32_t i = 0; i < n.count; i++) {
          d = std::max(d, JsonNesting(schema_->literal(n.first + i), JsonSchema::kMaxDepth));
        }
        break;
      case Kind::kAnyOf:
        for (int c = 0; c < 256; c++) {
          const int32_t alt = schema_->Dispatch(id, static_cast<unsigned char>(c));
          if (alt >= 0) d = std::max(d, Depth(alt));
        }
        break;
      default: break;
    }
    depth_[id] = d;
    return d;
  }

  static std::string Key(const std::string& name) {
    std::string quoted = Json(name).dump();  // "\"name\"", escaped
    return quoted.substr(1);                 // the contents and the closing quote
  }

  const Json& doc_;
  const int64_t max_work_;
  int64_t work_ = 0;  // units of max_work_ spent
  std::unique_ptr<JsonSchema> schema_;
  std::map<std::string, int32_t> compiled_;  // $ref target -> node
  std::set<std::string> in_progress_;
  std::map<int32_t, int> depth_;
};

JsonSchema::JsonSchema() {
  Node any;
  any.kind = Kind::kAny;
  Node object;
  object.kind = Kind::kObject;
  object.extra = kAnyValue;
  Node array;
  array.kind = Kind::kArray;
  array.items = kAnyValue;
  nodes_ = {any, object, array};
}

Result<std::shared_ptr<const JsonSchema>> JsonSchema::Compile(std::string_view text,
                                                              int64_t max_work) {
  if (text.size() > kMaxSchemaBytes) {
    return InvalidArgument(
        fmt::format("json_schema is {} bytes; at most {}", text.size(), kMaxSchemaBytes));
  }
  // The compiler recurses once per level: a text of '[' alone must not reach it.
  if (JsonNesting(text, kMaxSchemaNesting) > kMaxSchemaNesting) {
    return InvalidArgument(
        fmt::format("json_schema nests arrays and objects more than {} deep", kMaxSchemaNesting));
  }
  // Linear in the text (ordered_json::parse is quadratic in the keys of one object), with the
  // HTTP body's caps on keys; the schema's own size bounds its strings.
  const Result<Json> doc = ReadJson(text,
                                    JsonLimits{.max_depth = kMaxSchemaNesting,
                                               .max_object_keys = 4096,
                                               .max_key_bytes = 1024,
                                               .max_string_bytes = kMaxSchemaBytes},
                                    "json_schema");
  if (!doc.ok()) return doc.status();
  return JsonSchemaCompiler(doc.value(), max_work).Run();
}

std::shared_ptr<const JsonSchema> JsonSchema::AnyObject() {
  static const std::shared_ptr<const JsonSchema> any(new JsonSchema());
  return any;
}

Result<std::shared_ptr<const JsonSchema>> OutputConstraint(int response_format,
                                                           std::string_view json_schema) {
  if (response_format != kFormatJsonSchema && !json_schema.empty()) {
    return InvalidArgument(
        "json_schema is set but response_format is not RESPONSE_FORMAT_JSON_SCHEMA (2)");
  }
  switch (response_format) {
    case kFormatText: return std::shared_ptr<const JsonSchema>();
    case kFormatJsonObject: return JsonSchema::AnyObject();
    case kFormatJsonSchema:
      if (json_schema.empty()) {
        return InvalidArgument("response_format RESPONSE_FORMAT_JSON_SCHEMA needs json_schema");
      }
      return JsonSchema::Compile(json_schema);
    default:
      return InvalidArgument(fmt::format(
          "response_format must be RESPONSE_FORMAT_TEXT (0), RESPONSE_FORMAT_JSON_OBJECT (1) or "
          "RESPONSE_FORMAT_JSON_SCHEMA (2), got {}",
          response_format));
  }
}

}  // namespace smallmind::shared

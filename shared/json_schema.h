// JsonSchema: a JSON Schema (the subset below) compiled into the graph the worker's output
// constraint walks byte by byte (worker/sample/json_constraint.h). The gateway compiles a request's
// schema to refuse a bad one at once; the worker compiles it again for the request's constraint.
// Compiling parses the schema text, resolves local $refs and checks that every value the schema
// allows can be written and finished, so the constraint never reaches a dead end. Immutable after
// Compile; thread-safe.
//
// Supported (anything else that constrains a value is refused, naming the keyword and where it
// is, rather than ignored):
//   type            "object", "array", "string", "number", "integer", "boolean", "null", or a list
//                   of them (one alternative each)
//   properties      written in the schema's order; `required` ones always, the others optional;
//                   no other keys are written (additionalProperties may be anything)
//   additionalProperties  a schema for the values of an object with no `properties` (a map with
//                   free keys); `false` with no properties: only {}
//   items, minItems, maxItems, prefixItems (a tuple's items; or an array `items` with
//                   additionalItems, as drafts 4 to 2019-09 write it)
//   minLength, maxLength  in characters (code points; an escape is the character it stands for)
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum  on integers (an integer has at most 18
//                   digits) and numbers (a bounded number is written without an exponent, with at
//                   most 15 digits: shared/json_number_range.h), compared exactly with the
//                   bound's decimal text; beside enum/const they drop the values outside
//   enum, const     any JSON values, written compactly (as JSON.stringify would)
//   anyOf, oneOf    alternatives that each start with a different character (an object and a
//                   string, a string and null, ...), except objects told apart by a
//                   discriminator: a property every one of them requires, whose const/enum
//                   values differ between them (pydantic's discriminated unions, OpenAPI's
//                   `discriminator`); it is written first and its value picks the object;
//                   allOf with one member
//   $ref            local JSON pointers ("#/$defs/Name", "#/definitions/Name"); no cycles
//   annotations     title, description, default, examples, format, $schema, $id, $comment,
//                   deprecated, readOnly, writeOnly, $defs, definitions: read as documentation
// The top level must be an object (or objects told apart by a discriminator). An empty schema ({}
// or true) is any JSON value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shared/json_number_range.h"
#include "shared/status.h"

namespace smallmind::shared {

class JsonSchema {
 public:
  // The largest integer the constraint writes: 18 digits, so every one fits an int64 (the widest
  // integer most parsers read exactly).
  static constexpr int64_t kMaxInteger = 999'999'999'999'999'999;

  enum class Kind : uint8_t {
    kAny,       // any JSON value
    kObject,    // properties [first, first + count) of properties(); extra: free-key values
    kArray,     // prefix items [first, first + count) (a tuple), then items; min/max_items
    kString,    // a string of min_length .. max_length characters (code points)
    kNumber,    // any number
    kInteger,   // a number without fraction or exponent
    kBoolean,   // true or false
    kNull,      // null
    kLiterals,  // one of literals() [first, first + count): compact JSON texts, sorted bytewise
    kAnyOf,     // the alternative whose first byte is this value's: Dispatch(node, byte)
  };

  struct Node {
    Kind kind = Kind::kAny;
    // kObject: first property; kLiterals: first literal; kAnyOf: table; kArray: first tuple item
    int32_t first = 0;
    int32_t count = 0;   // kObject: properties; kLiterals: literals; kArray: tuple items
    int32_t extra = -1;  // kObject: the node of values under free keys (-1: no free keys)
    // kObject standing for an anyOf of objects told apart by a discriminator: its one property is
    // the discriminator (its node the literals of every alternative), and the literal written
    // picks the object that goes on (Variant). -1: a plain object.
    int32_t variants = -1;
    int32_t items = -1;  // kArray: the node of each item
    uint32_t min_items = 0;
    uint32_t max_items = UINT32_MAX;
    uint32_t min_length = 0;  // kString
    uint32_t max_length = UINT32_MAX;
    int64_t min_int = -kMaxInteger;  // kInteger: the values allowed, inclusive
    int64_t max_int = kMaxInteger;
    // kNumber with minimum/maximum/exclusive bounds: written as NumberRange says (no exponent, at
    // most 15 digits), its value in `range`. Without bounds: any number.
    bool bounded = false;
    NumberRange range;
  };

  struct Property {
    std::string key;  // the key as written between its quotes (JSON-escaped), then the '"'
    int32_t node = 0;
    bool required = false;
    // The first required property at or after this one in its object (the object's end: count).
    int32_t next_required = 0;
  };

  // Nodes every schema has: any value, any object (free keys, any values), any array.
  static constexpr int32_t kAnyValue = 0;
  static constexpr int32_t kAnyObject = 1;
  static constexpr int32_t kAnyArray = 2;

  // Objects and arrays a schema may nest (the constraint's stack depth).
  static constexpr int kMaxDepth = 64;
  static constexpr int kMaxProperties = 64;  // per object
  static constexpr size_t kMaxSchemaBytes = 256 * 1024;
  // Arrays and objects the schema's text may nest (a value level takes about two).
  static constexpr int kMaxSchemaNesting = 160;
  static constexpr int kMaxNodes = 8192;
  // Compile's budget, in work units: one per schema object and keyword visited, per enum/const
  // value and 64 bytes of it, per dispatch-table entry and per property a discriminated union
  // compares or copies. Every schema within the size limit that a person writes needs a small
  // fraction of it (the largest test schema below 20,000); what exceeds it is refused naming
  // this limit instead of holding a gateway or worker thread (issue 40).
  static constexpr int64_t kMaxCompileWork = 2'000'000;
  // Items counted per array and characters per string: minItems and minLength at most this; a
  // larger maxItems or maxLength is no bound.
  static constexpr uint32_t kMaxMinItems = 65535;

  // The schema `text` (JSON) compiled; INVALID_ARGUMENT saying what and where otherwise.
  // `max_work` is the budget (kMaxCompileWork; tests pass less).
  static Result<std::shared_ptr<const JsonSchema>> Compile(std::string_view text,
                                                           int64_t max_work = kMaxCompileWork);
  // {"type": "object"}: any object (response_format JSON_OBJECT).
  static std::shared_ptr<const JsonSchema> AnyObject();

  int32_t root() const { return root_; }
  const Node& node(int32_t id) const { return nodes_[static_cast<size_t>(id)]; }
  const Property& property(int32_t index) const { return properties_[static_cast<size_t>(index)]; }
  const std::string& literal(int32_t index) const { return literals_[static_cast<size_t>(index)]; }
  // kArray: the schema node of tuple item `index` (node.first + position).
  int32_t prefix_item(int32_t index) const { return prefix_items_[static_cast<size_t>(index)]; }
  // A node with variants: the object whose discriminator value is literal number `literal` (of
  // its property's literals); that object lists the discriminator first.
  int32_t Variant(int32_t id, int32_t literal) const {
    const Node& n = node(id);
    return variants_[static_cast<size_t>(n.variants + literal -
                                         node(property(n.first).node).first)];
  }
  // kAnyOf: the alternative a value starting with `byte` takes (-1: none).
  int32_t Dispatch(int32_t anyof, unsigned char byte) const {
    return dispatch_[static_cast<size_t>(node(anyof).first) * 256 + byte];
  }

 private:
  friend class JsonSchemaCompiler;
  JsonSchema();

  std::vector<Node> nodes_;
  std::vector<Property> properties_;
  std::vector<std::string> literals_;
  std::vector<int32_t> dispatch_;      // 256 entries per kAnyOf node
  std::vector<int32_t> prefix_items_;  // per array: the nodes of its tuple's items, in order
  std::vector<int32_t> variants_;  // per node with variants: an object per discriminator literal
  int32_t root_ = kAnyObject;
};

// What a request's `response_format` (the value of its proto enum: 0 TEXT, 1 JSON_OBJECT, 2
// JSON_SCHEMA) and `json_schema` ask the output to be: null (any text), AnyObject(), or the
// compiled schema; INVALID_ARGUMENT for an unknown format, a schema without JSON_SCHEMA (or none
// with it) and a schema Compile refuses. The gateway and the worker both check with it.
enum ResponseFormatValue { kFormatText = 0, kFormatJsonObject = 1, kFormatJsonSchema = 2 };
Result<std::shared_ptr<const JsonSchema>> OutputConstraint(int response_format,
                                                           std::string_view json_schema);

}  // namespace smallmind::shared

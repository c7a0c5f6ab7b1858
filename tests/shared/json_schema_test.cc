#include "shared/json_schema.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smallmind::shared {
namespace {

// The compile error's message, or "" when the schema compiles.
std::string Error(const std::string& schema) {
  const auto compiled = JsonSchema::Compile(schema);
  if (compiled.ok()) return "";
  EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
  return compiled.status().message();
}

TEST(JsonSchemaTest, CompilesPropertiesInTheSchemasOrderWithTheirRequiredFlags) {
  const auto schema = JsonSchema::Compile(R"({"type": "object",
      "properties": {"z": {"type": "string"}, "a": {"type": "integer"}, "q\"": {"const": 1},
                     "m": {"type": "boolean"}},
      "required": ["a", "q\""]})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const JsonSchema::Node& root = (*schema)->node((*schema)->root());
  ASSERT_EQ(root.kind, JsonSchema::Kind::kObject);
  ASSERT_EQ(root.count, 4);
  EXPECT_EQ(root.extra, -1);  // listed properties: no free keys
  const std::vector<std::string> keys = {"z\"", "a\"", "q\\\"\"", "m\""};  // escaped, then '"'
  const std::vector<bool> required = {false, true, true, false};
  const std::vector<int> next_required = {1, 1, 2, 4};
  for (int i = 0; i < 4; i++) {
    const JsonSchema::Property& p = (*schema)->property(root.first + i);
    EXPECT_EQ(p.key, keys[i]);
    EXPECT_EQ(p.required, required[i]) << i;
    EXPECT_EQ(p.next_required, next_required[i]) << i;
  }
  EXPECT_EQ((*schema)->node((*schema)->property(root.first + 1).node).kind,
            JsonSchema::Kind::kInteger);
}

TEST(JsonSchemaTest, EnumValuesAreCompactSortedAndFilteredByType) {
  const auto schema = JsonSchema::Compile(R"({"type": "object", "properties": {
      "e": {"type": ["string", "integer"], "enum": ["b", 2.0, "a", {"k": [1, 2]}, 2, "b", 1.5]}}})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const JsonSchema::Node& root = (*schema)->node((*schema)->root());
  const JsonSchema::Node& e = (*schema)->node((*schema)->property(root.first).node);
  ASSERT_EQ(e.kind, JsonSchema::Kind::kLiterals);
  std::vector<std::string> literals;
  for (int i = 0; i < e.count; i++) literals.push_back((*schema)->literal(e.first + i));
  // 2.0 is an integer (zero fraction) and stays as written; the object and 1.5 are not allowed.
  EXPECT_EQ(literals, (std::vector<std::string>{"\"a\"", "\"b\"", "2", "2.0"}));
}

TEST(JsonSchemaTest, ResolvesLocalRefsOnceAndDispatchesAnyOfByFirstByte) {
  const auto schema = JsonSchema::Compile(R"({"$defs": {"P": {"type": "object"}},
      "type": "object", "properties": {
        "a": {"$ref": "#/$defs/P"}, "b": {"$ref": "#/$defs/P", "description": "again"},
        "c": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}, {"type": "number"}]}}})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const JsonSchema& s = **schema;
  const JsonSchema::Node& root = s.node(s.root());
  EXPECT_EQ(s.property(root.first).node, s.property(root.first + 1).node);
  const int32_t c = s.property(root.first + 2).node;
  ASSERT_EQ(s.node(c).kind, JsonSchema::Kind::kAnyOf);
  EXPECT_EQ(s.Dispatch(c, '{'), s.property(root.first).node);
  EXPECT_EQ(s.node(s.Dispatch(c, 'n')).kind, JsonSchema::Kind::kNull);
  EXPECT_EQ(s.node(s.Dispatch(c, '-')).kind, JsonSchema::Kind::kNumber);
  EXPECT_EQ(s.Dispatch(c, '"'), -1);
}

TEST(JsonSchemaTest, RefusesWhatItCannotEnforceSayingWhatAndWhere) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nope",
       "json_schema is not valid JSON: [json.exception.parse_error.101] parse error at "
       "line 1, column 2"},
      {R"({"type": "object")", "json_schema is not valid JSON: "},
      {R"({"type": "string"})", "at \"#\": the top level must be an object"},
      {R"({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 0.1}}})",
       "at \"/properties/n\": keyword `multipleOf` is not supported"},
      {R"({"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 2}}})",
       "keyword `multipleOf` is not supported"},
      {R"({"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}})",
       "keyword `pattern` is not supported"},
      {R"({"type": "object", "properties": {"a/b": {"type": "strin"}}})",
       "at \"/properties/a~1b/type\": unknown type \"strin\""},
      {R"({"type": "object", "properties": {"x": {"anyOf": [{"type": "object"},
                                                            {"type": "object"}]}}})",
       "at \"/properties/x/anyOf\": alternatives that are objects need a discriminator"},
      {R"({"type": "object", "properties": {"x": {"type": ["integer", "number"]}}})",
       "alternatives that can start with the same character"},
      {R"({"type": "object", "properties": {"next": {"$ref": "#"}}})",
       "refers to itself: recursive schemas are not supported"},
      {R"({"$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                     "B": {"type": "array", "items": {"$ref": "#/$defs/A"}}},
           "type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}})",
       "recursive schemas are not supported"},
      {R"({"type": "object", "properties": {"x": {"$ref": "#/$defs/Nope"}}})",
       "\"#/$defs/Nope\" does not point into the schema"},
      {R"({"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}})",
       "only local references"},
      {R"({"type": "object", "properties": {"x": {"$ref": "#/$defs/A", "type": "string"}}})",
       "`type` beside `$ref` is not supported"},
      {R"({"type": "object", "properties": {"x": {"allOf": [{"type": "object"},
                                                            {"required": ["a"]}]}}})",
       "allOf with more than one schema"},
      {R"({"type": "object", "properties": {"x": {"type": "array", "minItems": 3,
                                                  "maxItems": 2}}})",
       "minItems 3 is above maxItems 2"},
      {R"({"type": "object", "required": ["x"], "additionalProperties": false})",
       "\"x\" is required but additionalProperties is false"},
      {R"({"type": "object", "properties": {"x": {"enum": []}}})", "must be a non-empty array"},
      {R"({"type": "object", "properties": {"x": {"type": "string", "enum": [1, 2]}}})",
       "no value of enum/const is allowed by its type"},
      {R"({"type": "object", "properties": {"x": false}})", "the schema `false` allows no value"},
      {R"({"type": "object", "properties": {"x": 3}})", "a schema must be an object or a boolean"},
  };
  for (const auto& [schema, want] : cases) {
    const std::string got = Error(schema);
    EXPECT_NE(got.find(want), std::string::npos) << schema << "\n  got: " << got;
  }
}

TEST(JsonSchemaTest, BoundsDepthPropertiesAndSize) {
  std::string deep = R"({"type": "object", "properties": {"a": )";
  std::string tail = "}}";
  for (int i = 0; i < JsonSchema::kMaxDepth; i++) {
    deep += R"({"type": "array", "items": )";
    tail += "}";
  }
  EXPECT_NE(Error(deep + "true" + tail).find("nest 65 objects and arrays deep; at most 64"),
            std::string::npos);
  std::string many = R"({"type": "object", "properties": {)";
  for (int i = 0; i <= JsonSchema::kMaxProperties; i++) {
    many += (i ? ", " : "") + ("\"p" + std::to_string(i)) + "\": {}";
  }
  EXPECT_NE(Error(many + "}}").find("65 properties; at most 64 per object"), std::string::npos);
  EXPECT_NE(Error(std::string(JsonSchema::kMaxSchemaBytes + 1, ' ')).find("at most"),
            std::string::npos);
  // A text that only nests never reaches the (recursive) compiler, nor does a deep enum value.
  EXPECT_EQ(Error(std::string(100000, '[') + std::string(100000, ']')),
            "json_schema nests arrays and objects more than 160 deep");
  const std::string deep_enum = R"({"type": "object", "properties": {"e": {"enum": [)" +
                                std::string(100, '[') + std::string(100, ']') + "]}}}";
  EXPECT_NE(Error(deep_enum).find("an enum/const value nests too deep"), std::string::npos);
  EXPECT_NE(Error(R"({"type": "object", "properties": {"x": {"$ref":
      "#/required/123456789012345678901234567890"}}, "required": []})")
                .find("does not point into the schema"),
            std::string::npos);
}

TEST(JsonSchemaTest, StringLengthBoundsCompileAndFilterEnumValues) {
  const auto schema = JsonSchema::Compile(R"({"type": "object", "properties": {
      "s": {"type": "string", "minLength": 2, "maxLength": 5}, "t": {"maxLength": 70000},
      "e": {"enum": ["a", "ab", "\u00e9\u00e9", "abc"], "maxLength": 2}}})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const JsonSchema& sc = **schema;
  const JsonSchema::Node& root = sc.node(sc.root());
  const JsonSchema::Node& s = sc.node(sc.property(root.first).node);
  EXPECT_EQ(s.kind, JsonSchema::Kind::kString);
  EXPECT_EQ(s.min_length, 2u);
  EXPECT_EQ(s.max_length, 5u);
  const JsonSchema::Node& t = sc.node(sc.property(root.first + 1).node);
  EXPECT_EQ(t.kind, JsonSchema::Kind::kString);  // a length bound without a type: a string
  EXPECT_EQ(t.max_length, UINT32_MAX);           // past what a count could reach: no bound
  const JsonSchema::Node& e = sc.node(sc.property(root.first + 2).node);
  ASSERT_EQ(e.count, 3);  // "abc" is 3 characters; "éé" is 2 (4 bytes)
  EXPECT_EQ(sc.literal(e.first + 2), "\"\xc3\xa9\xc3\xa9\"");
  EXPECT_NE(Error(R"({"type": "object", "properties": {"s": {"type": "string", "minLength": 6,
      "maxLength": 5}}})")
                .find("minLength 6 is above maxLength 5"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type": "object", "properties": {"s": {"minLength": -1}}})")
                .find("\"/properties/s/minLength\": must be a non-negative integer"),
            std::string::npos);
}

TEST(JsonSchemaTest, IntegerBoundsCompileInclusiveAndFilterEnumValues) {
  const auto schema = JsonSchema::Compile(R"({"type": "object", "properties": {
      "a": {"type": "integer", "minimum": -5, "maximum": 42},
      "b": {"type": "integer", "exclusiveMinimum": 100, "exclusiveMaximum": 1e30},
      "c": {"type": ["integer", "null"], "minimum": 0.5, "maximum": 7.9},
      "d": {"type": "integer"},
      "e": {"enum": [1, 5, 10, "x"], "minimum": 4, "exclusiveMaximum": 10}}})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const JsonSchema& sc = **schema;
  const JsonSchema::Node& root = sc.node(sc.root());
  auto node = [&](int i) { return sc.node(sc.property(root.first + i).node); };
  EXPECT_EQ(node(0).min_int, -5);
  EXPECT_EQ(node(0).max_int, 42);
  EXPECT_EQ(node(1).min_int, 101);
  EXPECT_EQ(node(1).max_int, JsonSchema::kMaxInteger);  // past 18 digits: no bound
  const int32_t c = sc.property(root.first + 2).node;
  const JsonSchema::Node& c_int = sc.node(sc.Dispatch(c, '1'));
  EXPECT_EQ(c_int.min_int, 1);  // ceil(0.5), floor(7.9)
  EXPECT_EQ(c_int.max_int, 7);
  EXPECT_EQ(node(3).min_int, -JsonSchema::kMaxInteger);
  EXPECT_EQ(node(3).max_int, JsonSchema::kMaxInteger);
  ASSERT_EQ(node(4).count, 2);  // 5 and "x" (a string is not a number: bounds pass it)
  EXPECT_EQ(sc.literal(node(4).first), "\"x\"");
  EXPECT_EQ(sc.literal(node(4).first + 1), "5");
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"type": "integer", "minimum": 3, "maximum": 2})", "the bounds allow no integer"},
           {R"({"type": "integer", "exclusiveMinimum": 2, "exclusiveMaximum": 3})",
            "the bounds allow no integer"},
           {R"({"type": "integer", "minimum": 1e19})", "the bounds allow no integer"},
           {R"({"type": "integer", "minimum": "0"})",
            "\"/properties/n/minimum\": must be a number"},
           {R"({"type": "integer", "exclusiveMinimum": true})",
            "must be a number (draft 4's boolean form is not supported)"}}) {
    EXPECT_NE(Error(R"({"type": "object", "properties": {"n": )" + bad + "}}").find(says),
              std::string::npos)
        << bad;
  }
}

// A number's bounds are read from the schema's decimal text (0.1 is one tenth, not the double
// nearest it), in units of 10^-14; bounds past what 15 digits write leave that side open, and
// bounds no such number meets are refused.
TEST(JsonSchemaTest, NumberBoundsCompileExactlyFromTheDecimalText) {
  const auto schema = JsonSchema::Compile(R"({"type": "object", "properties": {
      "a": {"type": "number", "minimum": 0.1, "maximum": 2.5e1},
      "b": {"type": "number", "exclusiveMinimum": -1e-5, "exclusiveMaximum": 1e30},
      "c": {"type": ["number", "null"], "maximum": -3},
      "d": {"type": "number"},
      "e": {"exclusiveMinimum": 0},
      "f": {"enum": [0.5, 1.5, "x"], "exclusiveMinimum": 0.5}}})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const JsonSchema& sc = **schema;
  const JsonSchema::Node& root = sc.node(sc.root());
  auto node = [&](int i) { return sc.node(sc.property(root.first + i).node); };
  using Scaled = NumberRange::Scaled;
  constexpr Scaled kUnit = 100'000'000'000'000;  // 1 in units of 10^-14
  EXPECT_TRUE(node(0).bounded);
  EXPECT_TRUE(node(0).range.lo == kUnit / 10);
  EXPECT_TRUE(node(0).range.hi == 25 * kUnit);
  EXPECT_TRUE(node(1).range.lo == -kUnit / 100'000 + 1);  // -0.00001, exclusive
  EXPECT_TRUE(node(1).range.hi == NumberRange::kMaxScaled);
  const JsonSchema::Node& c = sc.node(sc.Dispatch(sc.property(root.first + 2).node, '-'));
  EXPECT_EQ(c.kind, JsonSchema::Kind::kNumber);
  EXPECT_TRUE(c.range.lo == -NumberRange::kMaxScaled);
  EXPECT_TRUE(c.range.hi == -3 * kUnit);
  EXPECT_FALSE(node(3).bounded);
  EXPECT_EQ(node(4).kind, JsonSchema::Kind::kNumber);  // bounds without a type: a number
  EXPECT_TRUE(node(4).range.lo == 1);
  ASSERT_EQ(node(5).count, 2);  // 1.5 and "x"
  EXPECT_EQ(sc.literal(node(5).first + 1), "1.5");
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"type": "number", "minimum": 1, "maximum": 0.5})", "the bounds allow no number"},
           {R"({"type": "number", "exclusiveMinimum": 0.5, "exclusiveMaximum": 0.5})",
            "the bounds allow no number"},
           // 16 digits between them: 10.00000000000001 is one digit too many.
           {R"({"type": "number", "minimum": 10.000000000000001, "maximum": 10.000000000000009})",
            "(of at most 15 digits and no exponent, as the output writes them)"},
           {R"({"type": "number", "minimum": 1e15})", "the bounds allow no number"},
           {R"({"type": "number", "maximum": -1e15})", "the bounds allow no number"},
           {R"({"type": "number", "exclusiveMinimum": 0, "maximum": 1e-15})",
            "the bounds allow no number"},
           {R"({"type": "number", "maximum": "1"})", "\"/properties/n/maximum\": must be a number"},
           {R"({"type": "number", "exclusiveMaximum": false})",
            "must be a number (draft 4's boolean form is not supported)"}}) {
    EXPECT_NE(Error(R"({"type": "object", "properties": {"n": )" + bad + "}}").find(says),
              std::string::npos)
        << bad << "\n  got: " << Error(R"({"type": "object", "properties": {"n": )" + bad + "}}");
  }
  // The widest values 15 digits write are in range; one past is not a bound at all.
  EXPECT_TRUE(JsonSchema::Compile(R"({"type": "object", "properties": {"n": {"type": "number",
      "minimum": -999999999999999, "maximum": 999999999999999}}})")
                  .ok());
  EXPECT_TRUE(JsonSchema::Compile(R"({"type": "object", "properties": {"n": {"type": "number",
      "minimum": 0, "maximum": 1e-14}}})")
                  .ok());
}

// An anyOf of objects with a discriminator (what pydantic writes for a union of models, here
// with the discriminator second in one model): one node whose single property is the
// discriminator, each of its values picking a copy of its object that lists it first.
TEST(JsonSchemaTest, ObjectsToldApartByADiscriminatorCompileToOneNodeWithVariants) {
  const auto schema = JsonSchema::Compile(R"({
    "$defs": {"Cat": {"properties": {"pet_type": {"const": "cat"}, "meows": {"type": "integer"}},
                      "required": ["pet_type", "meows"], "type": "object"},
              "Dog": {"properties": {"barks": {"type": "boolean"},
                                     "pet_type": {"enum": ["dog", "puppy"]}},
                      "required": ["pet_type"], "type": "object"}},
    "type": "object",
    "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"},
                                     {"type": "null"}],
                           "discriminator": {"propertyName": "pet_type"}}},
    "required": ["pet"]})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const JsonSchema& sc = **schema;
  const int32_t pet = sc.property(sc.node(sc.root()).first).node;
  ASSERT_EQ(sc.node(pet).kind, JsonSchema::Kind::kAnyOf);
  EXPECT_EQ(sc.node(sc.Dispatch(pet, 'n')).kind, JsonSchema::Kind::kNull);
  const int32_t u = sc.Dispatch(pet, '{');
  const JsonSchema::Node& un = sc.node(u);
  ASSERT_GE(un.variants, 0);
  ASSERT_EQ(un.count, 1);
  EXPECT_EQ(sc.property(un.first).key, "pet_type\"");
  const JsonSchema::Node& values = sc.node(sc.property(un.first).node);
  ASSERT_EQ(values.count, 3);
  std::vector<std::string> picked;
  for (int32_t i = 0; i < values.count; i++) {
    const JsonSchema::Node& o = sc.node(sc.Variant(u, values.first + i));
    EXPECT_EQ(sc.property(o.first).key, "pet_type\"") << "the discriminator first";
    picked.push_back(sc.literal(values.first + i) + " " + sc.property(o.first + 1).key);
  }
  EXPECT_EQ(picked,
            (std::vector<std::string>{"\"cat\" meows\"", "\"dog\" barks\"", "\"puppy\" barks\""}));
  // At the top level too (objects and nothing else).
  const auto top = JsonSchema::Compile(R"({"anyOf": [
      {"type": "object", "properties": {"name": {"const": "a"}, "arguments": {"type": "object"}},
       "required": ["name", "arguments"]},
      {"type": "object", "properties": {"name": {"const": "b"}}, "required": ["name"]}]})");
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  EXPECT_GE((*top)->node((*top)->root()).variants, 0);
  EXPECT_NE(Error(R"({"anyOf": [{"type": "object"}, {"type": "null"}]})")
                .find("the top level must be an object"),
            std::string::npos);
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"anyOf": [{"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]},
                          {"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]}]})",
            "need a discriminator"},  // the same value
           {R"({"anyOf": [{"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]},
                          {"type": "object", "properties": {"k": {"const": 2}}}]})",
            "need a discriminator"},  // not required in one
           {R"({"anyOf": [{"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]},
                          {"type": "object", "properties": {"k": {"type": "integer"}},
                           "required": ["k"]}]})",
            "need a discriminator"},  // not a literal in one
           {R"({"anyOf": [{"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]},
                          {}]})",
            "alternatives that can start with the same character ('{')"}}) {
    EXPECT_NE(Error(R"({"type": "object", "properties": {"n": )" + bad + "}}").find(says),
              std::string::npos)
        << bad << "\n  got: " << Error(R"({"type": "object", "properties": {"n": )" + bad + "}}");
  }
}

// Tuples: prefixItems (what pydantic writes for Tuple[int, str]) or an array `items` with
// additionalItems (drafts 4 to 2019-09); `items` / additionalItems false closes the tuple.
TEST(JsonSchemaTest, TuplesCompileTheirItemsInOrder) {
  const auto schema = JsonSchema::Compile(R"({"type": "object", "properties": {
      "p": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "minItems": 2, "maxItems": 2},
      "q": {"type": "array", "items": [{"type": "boolean"}], "additionalItems": {"type": "null"}},
      "r": {"prefixItems": [{"type": "number"}], "items": false}}})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const JsonSchema& sc = **schema;
  const JsonSchema::Node& root = sc.node(sc.root());
  auto node = [&](int i) { return sc.node(sc.property(root.first + i).node); };
  ASSERT_EQ(node(0).kind, JsonSchema::Kind::kArray);
  ASSERT_EQ(node(0).count, 2);
  EXPECT_EQ(sc.node(sc.prefix_item(node(0).first)).kind, JsonSchema::Kind::kInteger);
  EXPECT_EQ(sc.node(sc.prefix_item(node(0).first + 1)).kind, JsonSchema::Kind::kString);
  EXPECT_EQ(node(0).max_items, 2u);
  ASSERT_EQ(node(1).count, 1);
  EXPECT_EQ(sc.node(sc.prefix_item(node(1).first)).kind, JsonSchema::Kind::kBoolean);
  EXPECT_EQ(sc.node(node(1).items).kind, JsonSchema::Kind::kNull);
  EXPECT_EQ(node(2).kind, JsonSchema::Kind::kArray);  // prefixItems without a type: an array
  EXPECT_EQ(node(2).max_items, 1u);
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"prefixItems": {"type": "integer"}})",
            "\"/properties/n/prefixItems\": must be an array"},
           {R"({"prefixItems": [{}], "items": [{}]})", "prefixItems beside an array `items`"},
           {R"({"prefixItems": [{}, {}], "items": false, "minItems": 3})",
            "minItems 3 is above maxItems 2"},
           {R"({"prefixItems": [{"type": "strin"}]})",
            "at \"/properties/n/prefixItems/0/type\": unknown type"}}) {
    EXPECT_NE(Error(R"({"type": "object", "properties": {"n": )" + bad + "}}").find(says),
              std::string::npos)
        << bad << "\n  got: " << Error(R"({"type": "object", "properties": {"n": )" + bad + "}}");
  }
}

TEST(JsonSchemaTest, AnEmptySchemaIsAnyObjectAndAnnotationsAreReadAsDocumentation) {
  for (const char* text : {"{}", "true", R"({"title": "T", "description": "d", "$schema":
       "https://json-schema.org/draft/2020-12/schema", "type": "object", "examples": [{}],
       "properties": {"d": {"type": "string", "format": "date-time", "default": "x"}}})"}) {
    const auto schema = JsonSchema::Compile(text);
    ASSERT_TRUE(schema.ok()) << text << ": " << schema.status().ToString();
    EXPECT_EQ((*schema)->node((*schema)->root()).kind, JsonSchema::Kind::kObject) << text;
  }
}

TEST(JsonSchemaTest, OutputConstraintChecksTheFormatAndTheSchemaTogether) {
  EXPECT_EQ(OutputConstraint(kFormatText, "").value(), nullptr);
  EXPECT_EQ(OutputConstraint(kFormatJsonObject, "").value(), JsonSchema::AnyObject());
  EXPECT_TRUE(OutputConstraint(kFormatJsonSchema, R"({"type": "object"})").ok());
  EXPECT_NE(OutputConstraint(kFormatJsonSchema, "").status().message().find("needs json_schema"),
            std::string::npos);
  EXPECT_NE(OutputConstraint(kFormatText, "{}")
                .status()
                .message()
                .find("json_schema is set but response_format is not"),
            std::string::npos);
  EXPECT_NE(OutputConstraint(7, "").status().message().find("got 7"), std::string::npos);
}

// Issue 40: compiling has a budget of work units; a schema that needs more is refused naming the
// limit, and the default budget leaves room for big real schemas.
TEST(JsonSchemaTest, CompileWorkBeyondTheBudgetIsRefusedNamingTheLimit) {
  std::string big = R"({"type": "object", "properties": {)";
  for (int i = 0; i < 60; ++i) {
    big += fmt::format(R"({}"p{}": {{"anyOf": [{{"type": "string"}}, {{"type": "null"}}, )"
                       R"({{"enum": [1, 2, 3, true]}}]}})",
                       i ? ", " : "", i);
  }
  big += "}}";
  const auto ok = JsonSchema::Compile(big);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const auto refused = JsonSchema::Compile(big, /*max_work=*/5000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("more than 5000 units of work"), std::string::npos)
      << refused.status().message();
  // 60 anyOfs of 256 table entries each: well below the default budget, above 5000.
  EXPECT_TRUE(JsonSchema::Compile(big, 60 * 300).ok());
}

}  // namespace
}  // namespace smallmind::shared

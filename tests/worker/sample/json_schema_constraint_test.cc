// JsonPrefix under a compiled JSON Schema: conforming objects are taken byte by byte, the first
// byte that leaves the schema is refused, and random walks over the bytes it takes never dead-end
// and always finish in an object that a separate validator (tests/testing/json_schema_check.h,
// over the schema's own JSON) accepts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "shared/json_schema.h"
#include "tests/testing/json_schema_check.h"
#include "tests/worker/sample/mask_check.h"
#include "worker/sample/json_constraint.h"

namespace smallmind::worker {
namespace {

using Json = nlohmann::ordered_json;

std::shared_ptr<const shared::JsonSchema> Compiled(const std::string& schema) {
  auto compiled = shared::JsonSchema::Compile(schema);
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  return compiled.ok() ? *compiled : shared::JsonSchema::AnyObject();
}

// The index of the first byte refused under `schema`, or -1 when all are taken.
int FirstRefused(const shared::JsonSchema& schema, std::string_view text,
                 bool* complete = nullptr) {
  JsonPrefix state(&schema);
  for (size_t i = 0; i < text.size(); i++) {
    if (!state.Feed(static_cast<unsigned char>(text[i]))) return static_cast<int>(i);
  }
  if (complete != nullptr) *complete = state.complete();
  return -1;
}

const char* const kPerson = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
    "kind": {"enum": ["cat", "dog", 1, 12, null, {"a": [1]}]},
    "ok": {"type": "boolean"},
    "opt": {"type": ["number", "null"]}
  },
  "required": ["name", "age", "tags", "kind"],
  "additionalProperties": false
})";

const char* const kShapes = R"({
  "$defs": {"pt": {"type": "object", "properties": {"x": {"type": "number"},
                                                    "y": {"type": "number"}},
                   "required": ["x", "y"]}},
  "type": "object",
  "properties": {
    "a": {"$ref": "#/$defs/pt"},
    "b": {"anyOf": [{"$ref": "#/$defs/pt"}, {"type": "null"},
                    {"type": "array", "items": {"$ref": "#/$defs/pt"}, "maxItems": 2}]},
    "m": {"type": "object", "additionalProperties": {"type": "integer"}},
    "any": {}
  },
  "required": ["a"]
})";

// Keys that begin one another, one with an escaped quote, one not ASCII.
const char* const kKeys = R"({
  "type": "object",
  "properties": {"a": {"const": "x"}, "ab": {"type": "string"}, "a\"b": {"type": "integer"},
                 "é": {"type": "boolean"}},
  "required": ["a\"b"]
})";

// What pydantic writes for a model with an optional field.
const char* const kPydantic = R"({
  "properties": {"name": {"title": "Name", "type": "string"},
                 "age": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null,
                         "title": "Age"}},
  "required": ["name"], "title": "Person", "type": "object"
})";

// Strings of bounded length, in characters: an escape is one, a surrogate pair's two escapes one.
const char* const kBounded = R"({
  "type": "object",
  "properties": {"code": {"type": "string", "minLength": 2, "maxLength": 3},
                 "tag": {"maxLength": 1}, "free": {"type": "object",
                                                    "additionalProperties": {"type": "string"}}},
  "required": ["code", "tag"]
})";

// Integer bounds: inclusive, exclusive, all negative, one value, and an enum filtered by them.
const char* const kIntegers = R"({
  "type": "object",
  "properties": {"a": {"type": "integer", "minimum": -5, "maximum": 42},
                 "b": {"type": "integer", "exclusiveMinimum": 100},
                 "c": {"type": "integer", "maximum": -10},
                 "d": {"type": "integer", "minimum": 7, "maximum": 7},
                 "e": {"type": ["integer", "null"], "minimum": 0, "exclusiveMaximum": 1000},
                 "f": {"enum": [1, 5, 10], "minimum": 4}},
  "required": ["a", "b", "c", "d"]
})";

// Number bounds: a closed range, an open one with fractional ends, all negative, a tiny one around
// zero (or null), one whose numbers near the bound have no room for a fraction, an enum.
const char* const kNumbers = R"({
  "type": "object",
  "properties": {"t": {"type": "number", "minimum": 0, "maximum": 1},
                 "p": {"type": "number", "exclusiveMinimum": 0.25, "exclusiveMaximum": 0.5},
                 "n": {"type": "number", "maximum": -2.5},
                 "x": {"type": ["number", "null"], "minimum": -0.001, "maximum": 1e-3},
                 "big": {"type": "number", "minimum": 99999999999999.5},
                 "e": {"enum": [0.5, 1.5, 2.5], "exclusiveMinimum": 1}},
  "required": ["t", "p", "n"]
})";

// A union of objects told apart by a discriminator (second in Dog's order: written first), one
// of them with an enum of two values, beside null; and in an array.
const char* const kUnion = R"({
  "$defs": {"Cat": {"type": "object", "properties": {"pet_type": {"const": "cat"},
                                                     "meows": {"type": "integer"},
                                                     "name": {"type": "string", "maxLength": 3}},
                    "required": ["pet_type", "meows"], "additionalProperties": false},
            "Dog": {"type": "object", "properties": {"barks": {"type": "boolean"},
                                                     "pet_type": {"enum": ["dog", "puppy"]}},
                    "required": ["pet_type", "barks"], "additionalProperties": false}},
  "type": "object",
  "properties": {"pet": {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"},
                                   {"type": "null"}]},
                 "more": {"type": "array", "maxItems": 2,
                          "items": {"oneOf": [{"$ref": "#/$defs/Dog"}, {"$ref": "#/$defs/Cat"}]}}},
  "required": ["pet"]
})";

// A union at the top: a call of one of two functions, as tool_choice "required" asks for it.
const char* const kCall = R"({"anyOf": [
  {"type": "object", "properties": {"name": {"const": "add"},
                                    "arguments": {"type": "object",
                                                  "properties": {"a": {"type": "integer"},
                                                                 "b": {"type": "integer"}},
                                                  "required": ["a", "b"]}},
   "required": ["name", "arguments"], "additionalProperties": false},
  {"type": "object", "properties": {"name": {"const": "neg"},
                                    "arguments": {"type": "object",
                                                  "properties": {"x": {"type": "number"}},
                                                  "required": ["x"]}},
   "required": ["name", "arguments"], "additionalProperties": false}]})";

// Tuples: a closed pair (pydantic's Tuple[int, str]), an open one whose later items are null, and
// the older array `items` form.
const char* const kTuples = R"({
  "type": "object",
  "properties": {"pair": {"type": "array", "prefixItems": [{"type": "integer"},
                                                           {"enum": ["a", "b"]}],
                          "minItems": 2, "maxItems": 2},
                 "open": {"type": "array", "prefixItems": [{"type": "boolean"}],
                          "items": {"type": "null"}, "maxItems": 3},
                 "old": {"type": "array", "items": [{"type": "string", "maxLength": 2}],
                         "additionalItems": false}},
  "required": ["pair"]
})";

TEST(JsonSchemaPrefixTest, TakesObjectsTheSchemaAllowsAndCompletesAtTheirEnd) {
  const std::vector<std::pair<const char*, std::vector<std::string>>> cases = {
      {kPerson,
       {R"({"name":"Ann","age":7,"tags":["a"],"kind":"cat"})",
        R"({ "name": "B\"o", "age": -0, "tags": ["x", "y", "z"], "kind": 12, "ok": true,
    "opt": 2.5e3 })",
        R"({"name":"","age":10,"tags":[""],"kind":1,"opt":null})",
        R"({"name":"é","age":3,"tags":["t"],"kind":{"a":[1]},"ok":false})",
        R"({"name":"n","age":3,"tags":["t"],"kind":null})"}},
      {kShapes,
       {R"({"a":{"x":1,"y":2}})", R"({"a":{"x":1,"y":2},"b":null,"m":{"k":1,"j":-2},"any":[1]})",
        R"({"a":{"x":1,"y":2},"b":[{"x":0,"y":0}],"m":{}})",
        R"({"a":{"x":1,"y":2},"b":{"x":3,"y":4},"any":{"deep":{"er":[null]}}})"}},
      {kKeys,
       {R"({"a\"b":1})", R"({"a":"x","ab":"s","a\"b":2,"é":true})", R"({"ab":"","a\"b":0})"}},
      {kPydantic, {R"({"name":"x"})", R"({"name":"x","age":null})", R"({"name":"x","age":41})"}},
      {kIntegers,
       {R"({"a":-5,"b":101,"c":-10,"d":7})", R"({"a":42,"b":999999999999999999,"c":-99,"d":7})",
        R"({"a":0,"b":1000,"c":-123456789012345678,"d":7,"e":0,"f":5})",
        R"({"a":-0,"b":200,"c":-11,"d":7,"e":999,"f":10})",
        R"({"a":9,"b":101,"c":-10,"d":7,"e":null})"}},
      {kNumbers,
       {R"({"t":0,"p":0.26,"n":-2.5})", R"({"t":1.0,"p":0.49999999999999,"n":-999999999999999})",
        R"({"t":0.12345678901234,"p":0.3,"n":-3,"x":-0.0009,"big":100000000000000,"e":1.5})",
        R"({"t":0.5,"p":0.251,"n":-2.51,"x":null,"big":99999999999999.5,"e":2.5})",
        R"({"t":1,"p":0.4,"n":-10.75,"x":0.001})"}},
      {kUnion,
       {R"({"pet":{"pet_type":"cat","meows":3}})",
        R"({"pet":{"pet_type":"dog","barks":true},"more":[{"pet_type":"cat","meows":1,"name":"Tom"}]})",
        R"({"pet": {"pet_type": "puppy", "barks": false}, "more": []})", R"({"pet":null})"}},
      {kCall,
       {R"({"name":"add","arguments":{"a":1,"b":2}})",
        R"({"name": "neg", "arguments": {"x": -2.5}})"}},
      {kTuples,
       {R"({"pair":[1,"a"]})", R"({"pair":[-7,"b"],"open":[],"old":[]})",
        R"({"pair":[0,"a"],"open":[true,null,null],"old":["xy"]})"}},
      {kBounded,
       {R"({"code":"ab","tag":""})", "{\"code\":\"\xc3\xa9\xf0\x9f\x99\x82x\",\"tag\":\"z\"}",
        R"({"code":"\n\ud83d\ude42","tag":"\u00e9"})",
        R"({"code":"abc","tag":"a","free":{"a long free key":"a long free value"}})"}},
  };
  for (const auto& [schema_text, docs] : cases) {
    const auto schema = Compiled(schema_text);
    const Json schema_json = Json::parse(schema_text);
    for (const std::string& doc : docs) {
      bool complete = false;
      EXPECT_EQ(FirstRefused(*schema, doc, &complete), -1) << doc;
      EXPECT_TRUE(complete) << doc;
      EXPECT_TRUE(smallmind::testing::SchemaAllows(Json::parse(doc), schema_json)) << doc;
    }
  }
}

TEST(JsonSchemaPrefixTest, RefusesTheFirstByteThatLeavesTheSchema) {
  // {schema, text that is fine, the byte that is not}
  struct Case {
    const char* schema;
    std::string ok;
    char bad;
  };
  const std::string p = R"({"name":"x","age":1,"tags":["a"],)";
  const std::vector<Case> cases = {
      {kPerson, R"({")", 'a'},                   // "age" before the required "name"
      {kPerson, R"({"name":)", '1'},             // a number for a string
      {kPerson, R"({"name":"x","age":1)", '.'},  // an integer has no fraction
      {kPerson, R"({"name":"x","age":1)", 'e'},  // ... nor exponent
      {kPerson, R"({"name":"x","age":-123456789012345678)", '9'},  // and fits an int64
      {kPerson, R"({"name":"x","age":123456789012345678)", '9'},
      {kPerson, R"({"name":"x","age":1)", '}'},           // "tags" and "kind" are required
      {kPerson, R"({"name":"x","age":1,"tags":[)", ']'},  // minItems 1
      {kPerson, R"({"name":"x","age":1,"tags":["a","b","c")", ','},  // maxItems 3
      {kPerson, p + R"("kind":"c)", 'o'},                            // not in the enum
      {kPerson, p + R"("kind":12)", '3'},                            // 123 is not either
      {kPerson, p + R"("kind":)", 't'},                              // nor true
      {kPerson, p + R"("kind":{"a":[1])", ','},      // the enum's object is exactly {"a":[1]}
      {kPerson, p + R"("kind":1,")", 'z'},           // no other keys
      {kPerson, p + R"("kind":1,"opt":null)", ','},  // nothing after the last property
      {kPerson, p + R"("kind":1,"opt":)", '"'},      // number or null
      {kPerson, p + R"("kind":1,")", 'n'},           // "name" again: the order goes on
      {kShapes, R"({"a":{"x":1)", '}'},              // pt needs y
      {kShapes, R"({"a":{"x":1,"y":2},"b":)", '"'},  // no string among b's alternatives
      {kShapes, R"({"a":{"x":1,"y":2},"b":[{"x":1,"y":1},{"x":1,"y":1})", ','},
      {kShapes, R"({"a":{"x":1,"y":2},"m":{"k":1)", '.'},
      {kShapes, R"({"a":{"x":1,"y":2},"any":1)", ','},  // nothing after the last property
      {kKeys, R"({"a":")", 'y'},                        // the const is "x"
      {kKeys, R"({"a":"x")", '}'},                      // "a\"b" is required
      {kKeys, R"({"ab":"x",")", 'b'},                   // the required a"b must come next
      {kPydantic, R"({"name":"x","age":)", 't'},
      {kIntegers, R"({"a":5)", '0'},                                // 50 > 42
      {kIntegers, R"({"a":4)", '3'},                                // 43 > 42
      {kIntegers, R"({"a":-)", '6'},                                // -6 < -5
      {kIntegers, R"({"a":-5)", '0'},                               // -50 too
      {kIntegers, R"({"a":1,"b":10)", ','},                         // 10 is not > 100
      {kIntegers, R"({"a":1,"b":)", '-'},                           // nor a negative
      {kIntegers, R"({"a":1,"b":)", '0'},                           // nor 0
      {kIntegers, R"({"a":1,"b":101,"c":)", '0'},                   // c <= -10
      {kIntegers, R"({"a":1,"b":101,"c":-9)", ','},                 // -9 > -10
      {kIntegers, R"({"a":1,"b":101,"c":-10,"d":)", '8'},           // d is 7
      {kIntegers, R"({"a":1,"b":101,"c":-10,"d":7)", '0'},          // 70
      {kIntegers, R"({"a":1,"b":101,"c":-10,"d":7,"e":)", '-'},     // no negative in range
      {kIntegers, R"({"a":1,"b":101,"c":-10,"d":7,"e":100)", '0'},  // 1000 is excluded
      {kIntegers, R"({"a":1,"b":101,"c":-10,"d":7,"f":1)", ','},    // 1 < 4 (10 is fine)
      {kNumbers, R"({"t":1)", '0'},                                 // 10 > 1
      {kNumbers, R"({"t":1.0)", '5'},                               // 1.05 > 1
      {kNumbers, R"({"t":)", '-'},                                  // no negative in range
      {kNumbers, R"({"t":0.5)", 'e'},                               // no exponent under bounds
      {kNumbers, R"({"t":0.12345678901234)", '5'},                  // 15 digits at most
      {kNumbers, R"({"t":0,"p":0.)", '5'},                          // 0.5... >= 0.5
      {kNumbers, R"({"t":0,"p":0.2)", '4'},                         // 0.24... < 0.25
      {kNumbers, R"({"t":0,"p":0.25)", ','},                        // exclusive
      {kNumbers, R"({"t":0,"p":0.3,"n":-2.)", '4'},                 // -2.4 > -2.5
      {kNumbers, R"({"t":0,"p":0.3,"n":)", '2'},                    // no positive
      {kNumbers, R"({"t":0,"p":0.3,"n":-2.5,"x":0.00)", '2'},       // 0.002 > 0.001
      {kNumbers, R"({"t":0,"p":0.3,"n":-2.5,"x":-0)", ','},         // no negative zero
      {kNumbers, R"({"t":0,"p":0.3,"n":-2.5,"big":99999999999999.)", '4'},
      {kNumbers, R"({"t":0,"p":0.3,"n":-2.5,"big":100000000000000)", '0'},  // a 16th digit
      {kNumbers, R"({"t":0,"p":0.3,"n":-2.5,"e":)", '0'},                   // 0.5 is not > 1
      {kUnion, R"({"pet":{")", 'm'},                              // the discriminator first
      {kUnion, R"({"pet":{)", '}'},                               // ... and it is required
      {kUnion, R"({"pet":{"pet_type":"c)", 'o'},                  // not a pet_type
      {kUnion, R"({"pet":{"pet_type":"cat",")", 'b'},             // a cat does not bark
      {kUnion, R"({"pet":{"pet_type":"cat")", '}'},               // ... and must meow
      {kUnion, R"({"pet":{"pet_type":"puppy",")", 'm'},           // a dog does not meow
      {kUnion, R"({"pet":{"pet_type":"dog","barks":true)", ','},  // nothing more in a Dog
      {kUnion, R"({"pet":null,"more":[{"pet_type":"cat","meows":1,"name":"Tom)", 'x'},
      {kCall, R"({"name":"neg","arguments":{")", 'a'},              // neg takes x
      {kCall, R"({"name":"add")", '}'},                             // and its arguments
      {kTuples, R"({"pair":[)", '"'},                               // an integer first
      {kTuples, R"({"pair":[1)", ']'},                              // two items
      {kTuples, R"({"pair":[1,"a")", ','},                          // and no more
      {kTuples, R"({"pair":[1,)", '2'},                             // the second is "a" or "b"
      {kTuples, R"({"pair":[1,"a"],"open":[)", 'n'},                // a boolean first
      {kTuples, R"({"pair":[1,"a"],"open":[true,)", 't'},           // then nulls
      {kTuples, R"({"pair":[1,"a"],"open":[true,null,null)", ','},  // maxItems 3
      {kTuples, R"({"pair":[1,"a"],"old":["x")", ','},              // additionalItems false
      {kBounded, R"({"code":"a)", '"'},                             // minLength 2
      {kBounded, R"({"code":"abc)", 'd'},                           // maxLength 3
      {kBounded, R"({"code":"abc)", '\\'},  // ... an escape is a character too
      {kBounded, "{\"code\":\"\xc3\xa9\xc3\xa9\xc3\xa9", '\xc3'},  // characters, not bytes
      {kBounded, R"({"code":"\ud83d\ude42\n\t)", 'x'},             // a surrogate pair is one
      {kBounded, R"({"code":"ab","tag":"x)", 'y'},  // maxLength with no type: a string
  };
  for (const Case& c : cases) {
    const auto schema = Compiled(c.schema);
    EXPECT_EQ(FirstRefused(*schema, c.ok), -1) << c.ok;
    EXPECT_EQ(FirstRefused(*schema, c.ok + c.bad), static_cast<int>(c.ok.size())) << c.ok + c.bad;
  }
}

// Random walks over the bytes the constraint takes (leaning toward ones that close things) never
// reach a state that takes no byte, and every finished walk is an object the schema allows.
TEST(JsonSchemaPrefixTest, EveryWalkCanFinishAndEveryFinishedObjectIsValid) {
  for (const char* schema_text : {kPerson, kShapes, kKeys, kPydantic, kBounded, kIntegers, kNumbers,
                                  kUnion, kCall, kTuples}) {
    const auto schema = Compiled(schema_text);
    const Json schema_json = Json::parse(schema_text);
    std::mt19937 rng(5);
    int completed = 0;
    for (int walk = 0; walk < 600; walk++) {
      JsonPrefix state(schema.get());
      bool dead_end = false;
      const std::string text = testing::RandomByteWalk(state, "\"}]0,:ntf", rng, 500, &dead_end);
      ASSERT_FALSE(dead_end) << "dead end after " << Json(text).dump();
      if (!state.complete()) continue;
      ++completed;
      const Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
      ASSERT_FALSE(parsed.is_discarded()) << text;
      ASSERT_TRUE(smallmind::testing::SchemaAllows(parsed, schema_json)) << text;
    }
    EXPECT_GT(completed, 150) << schema_text;
  }
}

// The mask under a schema leaves exactly the tokens JsonPrefix takes byte by byte.
TEST(JsonSchemaPrefixTest, MaskAgreesWithFeedingEveryTokenInEveryStateAWalkReaches) {
  const std::vector<std::string> pieces =
      testing::EveryByteAnd({"{\"", "name", "\":",  "\",",  "age",        "tags",  "kind",
                             "cat", "dog",  "\"c",  "12",   "null",       "true",  "[\"",
                             "\"]", "\"}",  "x\":", "y\":", " ",          "\n  ",  "code",
                             "ab",  "abcd", "\\n",  "0.",   ".5",         "25",    "-2",
                             "99",  "1.0",  "e5",   "pet",  "_type\":\"", "cat\"", "dog"});
  for (const char* schema_text :
       {kPerson, kShapes, kBounded, kIntegers, kNumbers, kUnion, kTuples}) {
    const auto schema = Compiled(schema_text);
    testing::ExpectMaskAgreesWithFeeding(pieces, JsonPrefix(schema.get()), 60, 120, 3);
  }
}

}  // namespace
}  // namespace smallmind::worker

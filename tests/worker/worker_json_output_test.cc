// response_format JSON_OBJECT through the worker's Submit rpc, on the real stories260K and on the
// random-weight builtin:tiny (whose draws wander over every byte the constraint allows): the text
// is one JSON object when the stream ends with STOP and the beginning of one when it ends with
// LENGTH, whatever the seed; a deterministic request gives the same object every time; an unknown
// format is INVALID_ARGUMENT. JSON_SCHEMA likewise, each finished object one the schema allows
// (tests/testing/json_schema_check.h), and a schema the worker cannot enforce INVALID_ARGUMENT.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "shared/json_schema.h"
#include "tests/testing/json_schema_check.h"
#include "tests/worker/in_process_worker.h"
#include "worker/sample/json_constraint.h"

namespace smallmind::worker {
namespace {

v1::GenerateRequest JsonRequest(const std::string& prompt, float temperature, uint64_t seed,
                                int max_new) {
  v1::GenerateRequest r;
  r.set_prompt(prompt);
  r.set_response_format(v1::RESPONSE_FORMAT_JSON_OBJECT);
  r.mutable_sampling()->set_temperature(temperature);
  r.mutable_sampling()->set_seed(seed);
  r.mutable_stopping()->set_max_new_tokens(max_new);
  return r;
}

std::string Text(const testing::SubmitResult& result) {
  std::string text;
  for (const v1::GenerateResponse& m : result.messages) text += m.text();
  return text;
}

// Runs `seeds` sampled requests and a greedy one; returns how many finished the object.
int CheckOutputs(testing::InProcessWorker& w, const std::string& prompt, int seeds, int max_new) {
  int complete = 0;
  for (int seed = 0; seed <= seeds; seed++) {
    const float temperature = seed == 0 ? 0.0f : 1.0f;
    const testing::SubmitResult r = w.Submit(JsonRequest(prompt, temperature, seed, max_new));
    EXPECT_TRUE(r.status.ok()) << r.status.error_message();
    if (!r.status.ok()) continue;
    const std::string text = Text(r);
    const v1::FinishReason reason = r.last().finish_reason();
    JsonPrefix prefix;
    EXPECT_TRUE(prefix.Feed(text)) << "seed " << seed << ": " << nlohmann::json(text).dump();
    if (reason == v1::STOP) {
      ++complete;
      EXPECT_TRUE(prefix.complete()) << nlohmann::json(text).dump();
      const auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      EXPECT_TRUE(parsed.is_object()) << "seed " << seed << ": " << nlohmann::json(text).dump();
    } else {
      EXPECT_EQ(reason, v1::LENGTH) << "EOS is never drawn inside the object";
      EXPECT_EQ(r.token_ids.size(), static_cast<size_t>(max_new));
      EXPECT_FALSE(prefix.complete());
    }
    EXPECT_EQ(r.last().usage().completion_tokens(), r.token_ids.size());
  }
  return complete;
}

TEST(WorkerJsonOutputTest, Stories260KWritesAnObjectOrTheBeginningOfOne) {
  WorkerConfig config;
  config.model.model = "builtin:stories260K";
  testing::InProcessWorker w(config);
  CheckOutputs(w, "Once upon a time", 8, 200);
}

TEST(WorkerJsonOutputTest, RandomWeightsFinishObjectsThatAParserReads) {
  WorkerConfig config;
  config.model.model = "builtin:tiny";  // one token per byte, random logits
  testing::InProcessWorker w(config);
  EXPECT_GT(CheckOutputs(w, "{", 24, 300), 3) << "some draws close their object";
}

TEST(WorkerJsonOutputTest, DeterministicRequestsRepeatTheirObject) {
  WorkerConfig config;
  config.model.model = "builtin:tiny";
  testing::InProcessWorker w(config);
  v1::GenerateRequest r = JsonRequest("x", 1.0f, 42, 120);
  r.mutable_runtime()->set_deterministic(true);
  const testing::SubmitResult first = w.Submit(r);
  const testing::SubmitResult second = w.Submit(r);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  ASSERT_TRUE(second.status.ok()) << second.status.error_message();
  EXPECT_EQ(first.token_ids, second.token_ids);
  EXPECT_EQ(Text(first), Text(second));
  // Without the constraint the same seed writes something else: the mask changed the draws.
  r.set_response_format(v1::RESPONSE_FORMAT_TEXT);
  EXPECT_NE(w.Submit(r).token_ids, first.token_ids);
}

TEST(WorkerJsonOutputTest, AnUnknownResponseFormatIsInvalidArgument) {
  testing::InProcessWorker w;
  v1::GenerateRequest r = JsonRequest("x", 0.0f, 1, 4);
  r.set_response_format(static_cast<v1::ResponseFormat>(9));
  const testing::SubmitResult result = w.Submit(r);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.status.error_message().find("response_format must be"), std::string::npos)
      << result.status.error_message();
}

// Keys of every kind the compiler takes: an enum of mixed values, a bounded array of objects, a
// nullable number, bounded integers, a bounded number, a map, an optional property, a $ref.
const char* const kOrder = R"({
  "$defs": {"item": {"type": "object", "properties": {"sku": {"type": "string"},
                                                      "qty": {"type": "integer",
                                                              "minimum": 1, "maximum": 99}},
                     "required": ["sku", "qty"], "additionalProperties": false}},
  "type": "object",
  "properties": {
    "id": {"type": "integer", "exclusiveMinimum": 0},
    "status": {"enum": ["open", "paid", 3, null]},
    "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1, "maxItems": 2},
    "total": {"type": ["number", "null"]},
    "discount": {"type": "number", "minimum": 0, "exclusiveMaximum": 0.5},
    "notes": {"type": "object", "additionalProperties": {"type": "boolean"}},
    "gift": {"type": "boolean"}
  },
  "required": ["id", "status", "items", "total", "discount", "notes"],
  "additionalProperties": false
})";

// kOrder less its free text (strings, map keys), which random draws end only by chance (a '"'
// one byte in 200): what they write is then short enough to finish. The sku is an enum and the
// notes map is gone; the rest is kOrder's.
std::string CompactOrder() {
  nlohmann::ordered_json schema = nlohmann::ordered_json::parse(kOrder);
  schema["$defs"]["item"]["properties"]["sku"] = {{"enum", {"a-1", "b-2"}}};
  schema["properties"].erase("notes");
  schema["required"] = {"id", "status", "items", "total", "discount"};
  return schema.dump();
}

// Runs `seeds` sampled requests under `schema`; returns how many finished their object.
int CheckSchemaOutputs(testing::InProcessWorker& w, const std::string& schema,
                       const std::string& prompt, int seeds, int max_new) {
  const nlohmann::ordered_json schema_json = nlohmann::ordered_json::parse(schema);
  const auto compiled = shared::JsonSchema::Compile(schema);
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  int complete = 0;
  for (int seed = 1; seed <= seeds; seed++) {
    v1::GenerateRequest r = JsonRequest(prompt, 1.0f, seed, max_new);
    r.set_response_format(v1::RESPONSE_FORMAT_JSON_SCHEMA);
    r.set_json_schema(schema);
    const testing::SubmitResult result = w.Submit(r);
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    if (!result.status.ok()) continue;
    const std::string text = Text(result);
    JsonPrefix prefix(compiled->get());
    EXPECT_TRUE(prefix.Feed(text)) << "seed " << seed << ": " << nlohmann::json(text).dump();
    if (result.last().finish_reason() == v1::STOP) {
      ++complete;
      EXPECT_TRUE(prefix.complete());
      const auto parsed = nlohmann::ordered_json::parse(text, nullptr, false);
      EXPECT_TRUE(smallmind::testing::SchemaAllows(parsed, schema_json))
          << "seed " << seed << ": " << nlohmann::json(text).dump();
    } else {
      EXPECT_EQ(result.last().finish_reason(), v1::LENGTH);
      EXPECT_FALSE(prefix.complete());
    }
  }
  return complete;
}

TEST(WorkerJsonOutputTest, RandomWeightsFinishObjectsTheSchemaAllows) {
  WorkerConfig config;
  config.model.model = "builtin:tiny";  // one token per byte: every byte the schema allows
  testing::InProcessWorker w(config);
  EXPECT_GT(CheckSchemaOutputs(w, CompactOrder(), "{", 16, 400), 3) << "some draws close it";
  CheckSchemaOutputs(w, kOrder, "{", 4, 300);  // free text too: a valid beginning at least
}

TEST(WorkerJsonOutputTest, Stories260KWritesTheBeginningOfWhatTheSchemaAllows) {
  WorkerConfig config;
  config.model.model = "builtin:stories260K";
  testing::InProcessWorker w(config);
  CheckSchemaOutputs(w, kOrder, "Once upon a time", 4, 150);
}

TEST(WorkerJsonOutputTest, ASchemaTheWorkerCannotEnforceIsInvalidArgument) {
  testing::InProcessWorker w;
  v1::GenerateRequest r = JsonRequest("x", 0.0f, 1, 4);
  r.set_response_format(v1::RESPONSE_FORMAT_JSON_SCHEMA);
  r.set_json_schema(
      R"({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 0.5}}})");
  testing::SubmitResult result = w.Submit(r);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.status.error_message().find("keyword `multipleOf` is not supported"),
            std::string::npos)
      << result.status.error_message();
  r.set_response_format(v1::RESPONSE_FORMAT_TEXT);  // a schema without the format asking for it
  result = w.Submit(r);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  r.set_response_format(v1::RESPONSE_FORMAT_JSON_SCHEMA);
  r.clear_json_schema();
  result = w.Submit(r);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.status.error_message().find("needs json_schema"), std::string::npos);
}

}  // namespace
}  // namespace smallmind::worker

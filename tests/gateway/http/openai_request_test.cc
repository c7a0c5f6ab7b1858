#include "gateway/http/openai_request.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "shared/json_schema.h"

namespace smallmind::gateway::http {
namespace {

std::optional<OpenAiRequest> Parse(Endpoint e, const std::string& body, HttpError* error) {
  return ParseOpenAiRequest(e, body, error);
}

// Each endpoint with the start of a body it takes (a field and "}" finish it).
const std::pair<Endpoint, std::string> kBothEndpoints[] = {
    {Endpoint::kChatCompletions, R"({"messages":[{"role":"user","content":"x"}],)"},
    {Endpoint::kCompletions, R"({"prompt":"x",)"}};

TEST(OpenAiRequestTest, CompletionFieldsMapOntoTheGenerateRequest) {
  HttpError error;
  auto r = Parse(Endpoint::kCompletions,
                 R"({"model":"m","prompt":"Once","max_tokens":7,"temperature":0,"top_p":0.5,
                     "seed":42,"stop":["a","b"],"stream":true,"logprobs":3,"echo":true,"n":1,
                     "user":"u","top_k":-1,"min_p":0.1,"repetition_penalty":1.1,
                     "ignore_eos":true,"deterministic":true,
                     "stream_options":{"include_usage":true}})",
                 &error);
  ASSERT_TRUE(r) << error.message;
  const auto& g = r->generate;
  EXPECT_EQ(r->model, "m");
  EXPECT_EQ(g.prompt(), "Once");
  EXPECT_EQ(g.stopping().max_new_tokens(), 7u);
  EXPECT_EQ(g.sampling().temperature(), 0.0f);
  EXPECT_FLOAT_EQ(g.sampling().top_p(), 0.5f);
  EXPECT_EQ(g.sampling().seed(), 42u);
  EXPECT_EQ(g.sampling().top_k(), 0u);
  EXPECT_FLOAT_EQ(g.sampling().min_p(), 0.1f);
  EXPECT_FLOAT_EQ(g.sampling().repetition_penalty(), 1.1f);
  ASSERT_EQ(g.stopping().stop_size(), 2);
  EXPECT_EQ(g.stopping().stop(1), "b");
  EXPECT_TRUE(g.stopping().ignore_eos());
  EXPECT_TRUE(g.runtime().deterministic());
  EXPECT_EQ(g.logprobs(), 3u);
  EXPECT_TRUE(r->stream && r->include_usage && r->echo && r->logprobs);
  EXPECT_EQ(r->top_logprobs, 3u);
}

TEST(OpenAiRequestTest, CompletionDefaultsFollowOpenAi) {
  HttpError error;
  auto r = Parse(Endpoint::kCompletions, R"({"prompt":[1,2,3],"stop":"x"})", &error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(r->generate.stopping().max_new_tokens(), kCompletionsDefaultMaxTokens);
  ASSERT_EQ(r->generate.prompt_token_ids().ids_size(), 3);
  EXPECT_EQ(r->generate.stopping().stop(0), "x");
  EXPECT_FALSE(r->generate.sampling().has_temperature());
  EXPECT_FALSE(r->generate.sampling().has_seed());
  EXPECT_FALSE(r->stream);
  EXPECT_EQ(r->generate.logprobs(), 0u);
}

TEST(OpenAiRequestTest, WrongTypesNameTheFieldAndWhatItMustBe) {
  struct Case {
    const char* body;
    const char* param;
    const char* message_part;
  };
  for (const Case& c : {
           Case{R"({"prompt":"a","temperature":"hot"})", "temperature", "must be a number"},
           Case{R"({"prompt":"a","max_tokens":1.5})", "max_tokens", "must be an integer"},
           Case{R"({"prompt":"a","max_tokens":0})", "max_tokens", "must be in [1,"},
           Case{R"({"prompt":"a","stream":"yes"})", "stream", "must be a boolean"},
           Case{R"({"prompt":"a","stop":[1]})", "stop", "a string or an array of strings"},
           Case{R"({"prompt":"a","seed":-1})", "seed", "[0, 2^64)"},
           Case{R"({"prompt":"a","n":9})", "n", "`n` must be at most 8"},
           Case{R"({"prompt":"a","n":0})", "n", "must be in [1,"},
           Case{R"({"prompt":{"x":1}})", "prompt", "a string or an array of token ids"},
           Case{R"({"prompt":["a","b"]})", "prompt", "batches of 2 prompts"},
           Case{R"({"prompt":[1,-2]})", "prompt", "token ids must be integers"},
           Case{R"({"max_tokens":3})", "prompt", "`prompt` is required"},
           Case{R"({"prompt":"a","stream_options":{"include_usage":1}})", "stream_options",
                "include_usage` must be a boolean"},
           Case{R"({"prompt":"a","logprobs":21})", "logprobs", "must be in [0, 20]"},
           Case{R"({"prompt":[1],"echo":true})", "echo", "needs a text prompt"},
           Case{R"({"prompt":"a","timeout":-1})", "timeout", "0 (none) to 86400 seconds"},
           // Once overflowed the deadline into an immediate 504.
           Case{R"({"prompt":"a","timeout":1e300})", "timeout", "0 (none) to 86400 seconds"},
       }) {
    HttpError error;
    EXPECT_FALSE(Parse(Endpoint::kCompletions, c.body, &error)) << c.body;
    EXPECT_EQ(error.status, 400) << c.body;
    EXPECT_EQ(error.param, c.param) << c.body;
    EXPECT_NE(error.message.find(c.message_part), std::string::npos) << error.message;
  }
}

TEST(OpenAiRequestTest, MalformedJsonAndNonObjectsAreRefusedWithWhere) {
  HttpError error;
  EXPECT_FALSE(Parse(Endpoint::kCompletions, R"({"prompt": "a",)", &error));
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.code, "invalid_json");
  EXPECT_NE(error.message.find("not valid JSON"), std::string::npos);
  EXPECT_FALSE(Parse(Endpoint::kChatCompletions, "[1,2]", &error));
  EXPECT_NE(error.message.find("must be a JSON object, got array"), std::string::npos);
  EXPECT_FALSE(Parse(Endpoint::kChatCompletions, "", &error));
  EXPECT_EQ(error.code, "invalid_json");
}

// A 1 MB body of 100k distinct keys once cost 29 s of gateway CPU (the ordered JSON type's insert
// searched the object from the front). Now parsing is linear and an object of more than 4096 keys
// is a 400 saying where, in the body or in a schema inside it.
TEST(OpenAiRequestTest, AnObjectOfMoreThan4096KeysIsA400NamingIt) {
  auto keys = [](int n) {
    std::string s = "{";
    for (int i = 0; i < n; ++i) s += (i ? ",\"" : "\"") + std::to_string(1000000 + i) + "\":1";
    return s + "}";
  };
  const std::string schema = R"({"type":"object","x-extra":)" + keys(4097) + "}";
  for (const std::string& body :
       {R"({"prompt":"a","metadata":)" + keys(100000) + "}",
        R"({"messages":[{"role":"user","content":"x"}],"chat_template_kwargs":{"a":)" + keys(5000) +
            "}}"}) {
    HttpError error;
    EXPECT_FALSE(
        Parse(body[2] == 'p' ? Endpoint::kCompletions : Endpoint::kChatCompletions, body, &error));
    EXPECT_EQ(error.status, 400);
    EXPECT_EQ(error.code, "invalid_json");
    EXPECT_NE(error.message.find("has more than 4096 keys"), std::string::npos) << error.message;
  }
  HttpError error;
  EXPECT_TRUE(
      Parse(Endpoint::kCompletions, R"({"prompt":"a","metadata":)" + keys(4096) + "}", &error))
      << error.message;
  EXPECT_FALSE(shared::JsonSchema::Compile(schema).ok());
  EXPECT_NE(shared::JsonSchema::Compile(schema).status().message().find(
                "json_schema is refused: the object at /x-extra has more than 4096 keys"),
            std::string::npos)
      << shared::JsonSchema::Compile(schema).status().message();
}

// A number beyond a double's range is a 400 like any other malformed body. The JSON library
// throws a different exception for it (out_of_range, not parse_error), which once went uncaught
// and ended the gateway (found by tests/fuzz/chat_request_fuzz).
TEST(OpenAiRequestTest, ANumberTooLargeForADoubleIsA400NotACrash) {
  for (const char* body : {R"({"prompt":"hi","max_tokens":1e999})", R"({"prompt":"hi","x":-1e400})",
                           R"({"messages":[{"role":"user","content":"x"}],"seed":1E+99999})"}) {
    for (Endpoint e : {Endpoint::kCompletions, Endpoint::kChatCompletions}) {
      HttpError error;
      EXPECT_FALSE(Parse(e, body, &error)) << body;
      EXPECT_EQ(error.status, 400) << body;
      EXPECT_EQ(error.code, "invalid_json") << body;
      EXPECT_NE(error.message.find("number overflow"), std::string::npos) << error.message;
    }
  }
}

TEST(OpenAiRequestTest, ChatTakesMessagesKwargsAndMaxCompletionTokens) {
  HttpError error;
  auto r = Parse(Endpoint::kChatCompletions,
                 R"({"messages":[{"role":"system","content":"s"},
                                 {"role":"user","content":[{"type":"text","text":"hi"}]}],
                     "max_tokens":5,"max_completion_tokens":9,"logprobs":true,
                     "top_logprobs":2,"chat_template_kwargs":{"enable_thinking":false}})",
                 &error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(r->messages.size(), 2u);
  EXPECT_EQ(r->generate.stopping().max_new_tokens(), 9u);
  EXPECT_EQ(r->generate.logprobs(), 2u);
  EXPECT_EQ(r->chat_template_kwargs["enable_thinking"], false);
  EXPECT_TRUE(r->add_generation_prompt);
  // The gateway's default length, not OpenAI's completions default.
  auto d =
      Parse(Endpoint::kChatCompletions, R"({"messages":[{"role":"user","content":"x"}]})", &error);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->generate.stopping().max_new_tokens(), 0u);
}

// Fields that would constrain the output are refused with the field named, not ignored; their
// no-op values pass.
TEST(OpenAiRequestTest, OutputConstraintsThisServerDoesNotImplementAreRefused) {
  const std::string chat = R"({"messages":[{"role":"user","content":"x"}],)";
  const std::string completion = R"({"prompt":"x",)";
  struct Case {
    std::string field;  // "name": value
    std::string param;
    std::string says;
  };
  const Case refused[] = {
      {R"("response_format":{"type":"json_schema","json_schema":{"name":"a","schema":)"
       R"({"type":"object","properties":{"a":{"type":"string","pattern":"^x"}}}}})",
       "response_format",
       "`response_format.json_schema.schema`: json_schema at \"/properties/a\": keyword "
       "`pattern` is not supported (it would not be enforced)"},
      {R"("response_format":{"type":"yaml"})", "response_format",
       "`response_format` type `yaml` is not supported"},
      {R"("response_format":"json")", "response_format",
       "`response_format` must be an object with a string `type`, got string"},
      {R"("logit_bias":[1])", "logit_bias", "`logit_bias` must be an object"},
      {R"("logit_bias":{"abc":1})", "logit_bias",
       "`logit_bias` keys must be token ids (decimal integers in [0, 2^32)), got \"abc\""},
      {R"("logit_bias":{"-1":1})", "logit_bias", "keys must be token ids"},
      {R"("logit_bias":{"4294967296":1})", "logit_bias", "keys must be token ids"},
      {R"("logit_bias":{"12 ":1})", "logit_bias", "keys must be token ids"},
      {R"("logit_bias":{"":1})", "logit_bias", "keys must be token ids"},
      {R"("logit_bias":{"7":"high"})", "logit_bias",
       "`logit_bias` values must be numbers, got string for token 7"},
  };
  for (const Case& c : refused) {
    for (const auto& [endpoint, head] : {std::pair{Endpoint::kChatCompletions, chat},
                                         std::pair{Endpoint::kCompletions, completion}}) {
      HttpError error;
      EXPECT_FALSE(Parse(endpoint, head + c.field + "}", &error)) << c.field;
      EXPECT_EQ(error.status, 400) << c.field;
      EXPECT_EQ(error.param, c.param) << c.field;
      EXPECT_NE(error.message.find(c.says), std::string::npos) << error.message;
    }
  }
  for (const char* ok :
       {R"("response_format":{"type":"text"})", R"("logit_bias":{})", R"("logit_bias":null)",
        R"("tool_choice":"auto")", R"("tool_choice":"none")"}) {
    HttpError error;
    EXPECT_TRUE(Parse(Endpoint::kChatCompletions, chat + ok + "}", &error))
        << ok << ": " << error.message;
  }
}

// logit_bias: decimal token ids to biases, in the sampling options (ranges are validate's).
TEST(OpenAiRequestTest, LogitBiasMapsTokenIdsToBiases) {
  for (const auto& [endpoint, head] : kBothEndpoints) {
    HttpError error;
    auto r = Parse(endpoint, head + R"("logit_bias":{"50256":-100,"13":2.5,"0":0}})", &error);
    ASSERT_TRUE(r) << error.message;
    const auto& bias = r->generate.sampling().logit_bias();
    ASSERT_EQ(bias.size(), 3u);
    EXPECT_EQ(bias.at(50256), -100.0f);
    EXPECT_EQ(bias.at(13), 2.5f);
    EXPECT_EQ(bias.at(0), 0.0f);
  }
}

// tool_choice naming a function (or "required" with one tool) forces a call of it: the output is
// constrained to its parameters; a choice this server cannot force is a 400 saying why.
TEST(OpenAiRequestTest, ToolChoiceForcesACallConstrainedToTheToolsParameters) {
  const std::string head = R"({"messages":[{"role":"user","content":"x"}],"tools":[)"
                           R"({"type":"function","function":{"name":"get_weather","parameters":)"
                           R"({"type":"object","properties":{"city":{"type":"string"}},)"
                           R"("required":["city"]}}},)"
                           R"({"type":"function","function":{"name":"now"}}],)";
  HttpError error;
  auto named = Parse(
      Endpoint::kChatCompletions,
      head + R"("tool_choice":{"type":"function","function":{"name":"get_weather"}}})", &error);
  ASSERT_TRUE(named) << error.message;
  EXPECT_EQ(named->tool_name, "get_weather");
  EXPECT_EQ(named->generate.response_format(), smallmind::v1::RESPONSE_FORMAT_JSON_SCHEMA);
  EXPECT_EQ(named->generate.json_schema(),
            R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})");
  // A function without parameters takes the empty object.
  auto bare =
      Parse(Endpoint::kChatCompletions,
            head + R"("tool_choice":{"type":"function","function":{"name":"now"}}})", &error);
  ASSERT_TRUE(bare) << error.message;
  EXPECT_EQ(bare->generate.json_schema(),
            R"({"type":"object","properties":{},"additionalProperties":false})");
  auto one = Parse(Endpoint::kChatCompletions,
                   R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"required",)"
                   R"("tools":[{"type":"function","function":{"name":"now"}}]})",
                   &error);
  ASSERT_TRUE(one) << error.message;
  EXPECT_EQ(one->tool_name, "now");
  // "required" among several: a call of one of them, told apart by its name, each function's
  // local $refs moved to where its parameters now are.
  auto any = Parse(Endpoint::kChatCompletions, head + R"("tool_choice":"required"})", &error);
  ASSERT_TRUE(any) << error.message;
  EXPECT_EQ(any->tool_name, "");
  EXPECT_TRUE(any->tool_from_output);
  EXPECT_EQ(any->generate.response_format(), smallmind::v1::RESPONSE_FORMAT_JSON_SCHEMA);
  EXPECT_EQ(
      any->generate.json_schema(),
      R"({"anyOf":[{"type":"object","properties":{"name":{"const":"get_weather"},"arguments":)"
      R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},)"
      R"("required":["name","arguments"],"additionalProperties":false},)"
      R"({"type":"object","properties":{"name":{"const":"now"},"arguments":{"type":"object",)"
      R"("properties":{},"additionalProperties":false}},"required":["name","arguments"],)"
      R"("additionalProperties":false}]})");
  auto refs =
      Parse(Endpoint::kChatCompletions,
            R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"required",)"
            R"("tools":[{"type":"function","function":{"name":"now"}},)"
            R"({"type":"function","function":{"name":"pet","parameters":{"type":"object",)"
            R"("$defs":{"K":{"enum":["cat","dog"]}},"properties":{"kind":{"$ref":"#/$defs/K"}},)"
            R"("required":["kind"]}}}]})",
            &error);
  ASSERT_TRUE(refs) << error.message;
  EXPECT_NE(
      refs->generate.json_schema().find(R"({"$ref":"#/anyOf/1/properties/arguments/$defs/K"})"),
      std::string::npos)
      << refs->generate.json_schema();
  EXPECT_TRUE(shared::JsonSchema::Compile(refs->generate.json_schema()).ok());
  for (const char* free : {R"("auto")", R"("none")"}) {
    auto r = Parse(Endpoint::kChatCompletions, head + R"("tool_choice":)" + free + "}", &error);
    ASSERT_TRUE(r) << error.message;
    EXPECT_EQ(r->tool_name, "");
    EXPECT_EQ(r->generate.response_format(), smallmind::v1::RESPONSE_FORMAT_TEXT);
  }

  const std::string chat = R"({"messages":[{"role":"user","content":"x"}],)";
  struct Case {
    std::string body;
    std::string param;
    std::string says;
  };
  const Case refused[] = {
      {head + R"("tool_choice":{"type":"function","function":{"name":"fly"}}})", "tool_choice",
       "`tool_choice` names `fly`, which is not a function in `tools`"},
      {chat + R"("tool_choice":"required"})", "tool_choice", "`tools` names no function"},
      {chat + R"("tools":[{"type":"function","function":{"name":"f"}},)"
              R"({"type":"function","function":{"name":"f"}}],"tool_choice":"required"})",
       "tools", "`tools` has two functions named `f`"},
      {head + R"("tool_choice":"always"})", "tool_choice", "`tool_choice` must be"},
      {head + R"("tool_choice":{"type":"function","function":{"name":"get_weather"}},)"
              R"("response_format":{"type":"json_object"}})",
       "tool_choice", "cannot be combined with a `response_format`"},
      {chat + R"("tools":[{"type":"function","function":{"name":"f","parameters":)"
              R"({"type":"object","properties":{"n":{"type":"number","multipleOf":2}}}}}],)"
              R"("tool_choice":"required"})",
       "tools",
       "`tools[0].function.parameters`: json_schema at \"/properties/n\": keyword "
       "`multipleOf` is not supported"},
      {chat + R"("tools":[{"type":"function"}],"tool_choice":"required"})", "tools",
       "`tools[0]` must be"},
  };
  for (const Case& c : refused) {
    HttpError e;
    EXPECT_FALSE(Parse(Endpoint::kChatCompletions, c.body, &e)) << c.body;
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_NE(e.message.find(c.says), std::string::npos) << e.message;
  }
}

// json_object asks the worker for one JSON object; text (or no response_format) for any text.
TEST(OpenAiRequestTest, ResponseFormatJsonObjectConstrainsTheOutputToAnObject) {
  for (const auto& [endpoint, head] : kBothEndpoints) {
    HttpError error;
    auto json = Parse(endpoint, head + R"("response_format":{"type":"json_object"}})", &error);
    ASSERT_TRUE(json) << error.message;
    EXPECT_EQ(json->generate.response_format(), smallmind::v1::RESPONSE_FORMAT_JSON_OBJECT);
    auto text = Parse(endpoint, head + R"("response_format":{"type":"text"}})", &error);
    ASSERT_TRUE(text) << error.message;
    EXPECT_EQ(text->generate.response_format(), smallmind::v1::RESPONSE_FORMAT_TEXT);
  }
}

// json_schema carries its schema to the worker as JSON text with the properties in the order the
// client wrote them (the order the output follows); a schema the worker could not enforce, or a
// json_schema that is not an object, is a 400 on response_format.
TEST(OpenAiRequestTest, ResponseFormatJsonSchemaCarriesTheSchemaInItsOrder) {
  const std::string head = R"({"messages":[{"role":"user","content":"x"}],)";
  HttpError error;
  auto ok = Parse(Endpoint::kChatCompletions,
                  head + R"("response_format":{"type":"json_schema","json_schema":{"name":"p",)"
                         R"("strict":true,"schema":{"type":"object","properties":{"z":)"
                         R"({"type":"string"},"a":{"type":"integer"}},"required":["z","a"]}}}})",
                  &error);
  ASSERT_TRUE(ok) << error.message;
  EXPECT_EQ(ok->generate.response_format(), smallmind::v1::RESPONSE_FORMAT_JSON_SCHEMA);
  EXPECT_EQ(ok->generate.json_schema(),
            R"({"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"}},)"
            R"("required":["z","a"]})");
  auto any =
      Parse(Endpoint::kCompletions,
            R"({"prompt":"x","response_format":{"type":"json_schema","json_schema":{}}})", &error);
  ASSERT_TRUE(any) << error.message;
  EXPECT_EQ(any->generate.json_schema(), "{}");  // no schema: any object
  for (const char* bad :
       {R"("response_format":{"type":"json_schema"}})",
        R"("response_format":{"type":"json_schema","json_schema":"s"}})",
        R"("response_format":{"type":"json_schema","json_schema":{"name":3}}})",
        R"("response_format":{"type":"json_schema","json_schema":{"schema":{"type":"array"}}}})",
        R"("response_format":{"type":"json_schema","json_schema":{"schema":{"properties":)"
        R"({"a":{"pattern":"x"}}}}}})",
        R"("response_format":{"type":"grammar"}})"}) {
    HttpError e;
    EXPECT_FALSE(Parse(Endpoint::kChatCompletions, head + bad, &e)) << bad;
    EXPECT_EQ(e.status, 400) << bad;
    EXPECT_EQ(e.param.rfind("response_format", 0), 0u) << bad << ": " << e.param;
  }
}

TEST(OpenAiRequestTest, ChatMessagesMustBeRoleObjects) {
  for (const char* body :
       {R"({"messages":[]})", R"({"messages":"hi"})", R"({"messages":[1]})",
        R"({"messages":[{"content":"x"}]})", R"({"messages":[{"role":"user","content":5}]})",
        R"({})", R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":2})"}) {
    HttpError error;
    EXPECT_FALSE(Parse(Endpoint::kChatCompletions, body, &error)) << body;
    EXPECT_EQ(error.status, 400);
    EXPECT_FALSE(error.param.empty()) << body;
  }
}

}  // namespace
}  // namespace smallmind::gateway::http

namespace smallmind::gateway::http {
namespace {

TEST(OpenAiRequestTest, AssistantToolCallsWithNullContentAndToolResultsAreAccepted) {
  HttpError error;
  auto r = Parse(Endpoint::kChatCompletions, R"({"messages":[
      {"role":"user","content":"Weather?"},
      {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
        "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
      {"role":"tool","tool_call_id":"call_1","content":"21"}]})",
                 &error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_TRUE(r->messages[1]["content"].is_null());
}

TEST(OpenAiRequestTest, MalformedToolCallsAre400NamingTheMessage) {
  for (const char* calls : {R"("x")", R"([1])", R"([{"function":{"arguments":"{}"}}])",
                            R"([{"function":{"name":"f","arguments":5}}])", R"([{"id":"c"}])"}) {
    HttpError error;
    const std::string body = std::string(R"({"messages":[{"role":"user","content":"q"},)") +
                             R"({"role":"assistant","tool_calls":)" + calls + "}]}";
    EXPECT_FALSE(Parse(Endpoint::kChatCompletions, body, &error)) << body;
    EXPECT_EQ(error.status, 400);
    EXPECT_EQ(error.param, "messages");
    EXPECT_NE(error.message.find("`messages[1].tool_calls"), std::string::npos) << error.message;
  }
}

}  // namespace
}  // namespace smallmind::gateway::http

namespace smallmind::gateway::http {
namespace {

TEST(OpenAiRequestTest, NUpToTheLimitAsksForThatManyChoices) {
  for (const auto& [endpoint, head] : kBothEndpoints) {
    HttpError error;
    auto r = Parse(endpoint, head + R"("n":8})", &error);
    ASSERT_TRUE(r) << error.message;
    EXPECT_EQ(r->n, 8u);
    r = Parse(endpoint, head + R"("seed":1})", &error);
    ASSERT_TRUE(r) << error.message;
    EXPECT_EQ(r->n, 1u);
  }
}

}  // namespace
}  // namespace smallmind::gateway::http

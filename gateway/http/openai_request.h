// The JSON bodies of POST /v1/completions and /v1/chat/completions parsed into a GenerateRequest
// plus what only the HTTP door uses (stream, usage, echo, logprobs shape, chat messages). Field
// types are checked here, ranges by gateway/validate afterwards. Called by HttpApi on the
// connection's thread; pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/http/http_error.h"
#include "gateway/models/keep_alive.h"
#include "shared/json_reader.h"
#include "shared/request_limits.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway::http {

enum class Endpoint { kCompletions, kChatCompletions };

// OpenAI's default max_tokens of /v1/completions; chat requests default to the gateway's own
// (stopping.max_new_tokens = 0).
inline constexpr uint32_t kCompletionsDefaultMaxTokens = 16;
// OpenAI's completions `logprobs` goes to 5; vLLM and this server accept up to validate's 20.
inline constexpr int64_t kMaxTopLogprobs = 20;
// The caps on one JSON body (docs/security.md), past any real request: nesting 200 deep (a tool's
// parameters, a JSON Schema), far short of the stack the recursive steps after parsing need;
// 4096 keys per object (logit_bias takes 4096 token ids); 1 KiB keys. Strings are bounded by the
// body's own limit (HttpOptions::max_body_bytes).
inline constexpr shared::JsonLimits kBodyJsonLimits{.max_depth = 200,
                                                    .max_object_keys = 4096,
                                                    .max_key_bytes = 1024,
                                                    .max_string_bytes = shared::kMaxRequestBytes};

// Our `timeout` extension's largest value, in seconds (one day).
inline constexpr double kMaxTimeoutSeconds = 86400;
// `n`, the choices one request may ask for: each is a sequence of its own on the worker.
inline constexpr int64_t kMaxChoices = 8;

struct OpenAiRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;  // as sent; "" when omitted or null
  // Ollama's `keep_alive` (a duration string or seconds): how long the model stays loaded after
  // this request (docs/models.md); nullopt = as it was.
  std::optional<KeepAlive> keep_alive;
  // Everything the worker needs. For chat, the prompt is set after the messages are rendered.
  smallmind::v1::GenerateRequest generate;
  uint32_t n = 1;  // choices, each its own sequence (seed + index when a seed is given)
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool echo = false;           // completions: the prompt text goes first
  bool logprobs = false;       // report the chosen tokens' logprobs
  uint32_t top_logprobs = 0;   // and this many alternatives each
  // Our `timeout` extension, in seconds: the request fails with 504 beyond it. 0 = none.
  double timeout_s = 0;
  // Chat only.
  nlohmann::ordered_json messages;
  nlohmann::ordered_json tools;  // passed to the template; null = none
  // A forced call (tool_choice naming a function, or "required" with one tool): the function's
  // name and its parameters' JSON Schema, which constrains the output (its arguments). "" = none.
  std::string tool_name;
  std::string tool_schema;
  // tool_choice "required" among several tools: the output is {"name": "<one of them>",
  // "arguments": {...}}, constrained by tool_schema (an anyOf of one such object per function,
  // told apart by the name), and the reply a `tool_calls` message of the function it names.
  bool tool_from_output = false;
  // The names of the functions in `tools`, which the model may call on its own unless
  // tool_choice is "none" (tool_choice_none) or forces a call.
  std::vector<std::string> tool_functions;
  bool tool_choice_none = false;
  nlohmann::ordered_json chat_template_kwargs;  // object
  bool add_generation_prompt = true;            // vLLM's extension
};

// Parses `body` for `endpoint`. On a bad body returns nullopt and fills `error` (400, naming the
// field: malformed JSON, a wrong type, n > kMaxChoices, a missing prompt/messages).
std::optional<OpenAiRequest> ParseOpenAiRequest(Endpoint endpoint, std::string_view body,
                                                HttpError* error);
// The same for a body already parsed (an object): the Anthropic door's request, translated.
std::optional<OpenAiRequest> ParseOpenAiObject(Endpoint endpoint,
                                               const nlohmann::ordered_json& body,
                                               HttpError* error);

// Parses a JSON object body (the llama.cpp endpoints); nullopt + 400 when it is not an object.
std::optional<nlohmann::ordered_json> ParseJsonObject(std::string_view body, HttpError* error);

// The `model` (into *model when set) and `user` (accepted, ignored) fields of the embeddings and
// rerank bodies: absent or null is fine, anything but a string a 400 naming the field.
bool ReadModelAndUser(const nlohmann::ordered_json& body, std::string* model, HttpError* error);

// Checks the messages of a chat request (a non-empty array of objects with a string `role`);
// shared by /v1/chat/completions and /apply-template.
bool CheckMessages(const nlohmann::ordered_json& messages, HttpError* error);

}  // namespace smallmind::gateway::http

// The JSON bodies of Anthropic's POST /v1/messages and /v1/messages/count_tokens, translated into
// the OpenAI chat request the HTTP door already serves: system and messages (text, tool_use,
// tool_result and thinking blocks) become OpenAI messages (tool_calls, tool messages), tools
// ({name, description, input_schema}) functions, tool_choice auto/any/tool/none the OpenAI
// choices, stop_sequences `stop`, thinking `chat_template_kwargs.enable_thinking`; then
// ParseOpenAiObject reads it as a chat request, so templates, tool calls and constraints work as
// on /v1/chat/completions. Errors are 400s naming the Anthropic field. Called by HttpApi on the
// connection's thread; pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/http/http_error.h"
#include "gateway/http/openai_request.h"

namespace smallmind::gateway::http {

enum class AnthropicRoute {
  kMessages,     // max_tokens required, generates
  kCountTokens,  // no max_tokens, renders the prompt only
};

struct AnthropicRequest {
  OpenAiRequest chat;  // the same request in OpenAI's terms (Endpoint::kChatCompletions)
  std::vector<std::string> stop_sequences;
};

// The OpenAI chat body `body` (an Anthropic request object) stands for; nullopt + a 400 naming
// the field when it is not a valid Anthropic request (or uses a block this server cannot take:
// image, document, server tools).
std::optional<nlohmann::ordered_json> TranslateAnthropicRequest(const nlohmann::ordered_json& body,
                                                                AnthropicRoute route,
                                                                HttpError* error);

// Parses `body` for `route`: TranslateAnthropicRequest, then ParseOpenAiObject.
std::optional<AnthropicRequest> ParseAnthropicRequest(std::string_view body, AnthropicRoute route,
                                                      HttpError* error);

}  // namespace smallmind::gateway::http

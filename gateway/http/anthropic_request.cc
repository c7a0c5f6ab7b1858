#include "gateway/http/anthropic_request.h"

#include <limits>
#include <map>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "gateway/http/json_type_name.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;

bool Fail(HttpError* error, std::string param, std::string message) {
  *error = MakeError(400, std::move(message), std::move(param));
  return false;
}

const Json* Find(const Json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

// A block's `type`, or "" when the block is no object with a string type.
std::string BlockType(const Json& block) {
  const Json* type = block.is_object() ? Find(block, "type") : nullptr;
  return type && type->is_string() ? type->get<std::string>() : std::string();
}

// `v` as text: a string, or an array of text blocks joined with "\n" (`where` names it).
bool TextOf(const Json& v, const std::string& where, std::string* out, HttpError* error) {
  if (v.is_string()) {
    *out = v.get<std::string>();
    return true;
  }
  if (!v.is_array()) {
    return Fail(error, where,
                fmt::format("`{}` must be a string or an array of text blocks, got {}", where,
                            JsonTypeName(v)));
  }
  for (size_t j = 0; j < v.size(); ++j) {
    const Json* text = BlockType(v[j]) == "text" ? Find(v[j], "text") : nullptr;
    if (!text || !text->is_string()) {
      return Fail(error, where,
                  fmt::format("`{}[{}]` must be a text block {{\"type\": \"text\", \"text\": "
                              "\"...\"}} (this server takes text only)",
                              where, j));
    }
    if (j > 0) out->append("\n");
    out->append(text->get<std::string>());
  }
  return true;
}

// The OpenAI messages of a user turn's blocks: each tool_result a `tool` message (named after
// the call it answers), runs of text blocks one user message of text parts, in their order.
bool UserBlocks(const Json& blocks, size_t i, const std::map<std::string, std::string>& calls,
                Json& out, HttpError* error) {
  Json parts = Json::array();
  auto flush = [&] {
    if (!parts.empty()) out.push_back(Json{{"role", "user"}, {"content", std::move(parts)}});
    parts = Json::array();
  };
  for (size_t j = 0; j < blocks.size(); ++j) {
    const std::string where = fmt::format("messages[{}].content[{}]", i, j);
    const std::string type = BlockType(blocks[j]);
    const Json* text = type == "text" ? Find(blocks[j], "text") : nullptr;
    if (type == "text" && text && text->is_string()) {
      parts.push_back(Json{{"type", "text"}, {"text", *text}});
      continue;
    }
    const Json* id = type == "tool_result" ? Find(blocks[j], "tool_use_id") : nullptr;
    if (type != "tool_result" || !id || !id->is_string()) {
      return Fail(error, "messages",
                  fmt::format("`{}` must be a text block or a tool_result block {{\"type\": "
                              "\"tool_result\", \"tool_use_id\": \"...\", \"content\": ...}} "
                              "(got type `{}`; images and documents are not supported)",
                              where, type));
    }
    std::string content;
    const Json* result = Find(blocks[j], "content");
    if (result && !TextOf(*result, where + ".content", &content, error)) return false;
    const Json* is_error = Find(blocks[j], "is_error");
    if (is_error && *is_error == true) content = "Error: " + content;
    flush();
    Json tool{{"role", "tool"}, {"tool_call_id", *id}, {"content", std::move(content)}};
    if (auto call = calls.find(id->get<std::string>()); call != calls.end()) {
      tool["name"] = call->second;
    }
    out.push_back(std::move(tool));
  }
  flush();
  return true;
}

// The OpenAI message of an assistant turn's blocks: text joined, tool_use blocks `tool_calls`
// (each remembered in `calls` by id), thinking `reasoning_content`.
bool AssistantBlocks(const Json& blocks, size_t i, std::map<std::string, std::string>& calls,
                     Json& out, HttpError* error) {
  std::string text, thinking;
  Json tool_calls = Json::array();
  for (size_t j = 0; j < blocks.size(); ++j) {
    const Json& b = blocks[j];
    const std::string type = BlockType(b);
    const Json* value = type == "text"       ? Find(b, "text")
                        : type == "thinking" ? Find(b, "thinking")
                                             : nullptr;
    if (value && value->is_string()) {
      (type == "text" ? text : thinking) += value->get<std::string>();
      continue;
    }
    if (type == "redacted_thinking") continue;  // opaque: nothing a template can show
    const Json* id = type == "tool_use" ? Find(b, "id") : nullptr;
    const Json* name = type == "tool_use" ? Find(b, "name") : nullptr;
    const Json* input = type == "tool_use" ? Find(b, "input") : nullptr;
    if (!id || !id->is_string() || !name || !name->is_string() || (input && !input->is_object())) {
      return Fail(error, "messages",
                  fmt::format("`messages[{}].content[{}]` must be a text, thinking or tool_use "
                              "block {{\"type\": \"tool_use\", \"id\": \"...\", \"name\": "
                              "\"...\", \"input\": {{...}}}} (got type `{}`)",
                              i, j, type));
    }
    calls[id->get<std::string>()] = name->get<std::string>();
    tool_calls.push_back(
        Json{{"id", *id},
             {"type", "function"},
             {"function", {{"name", *name}, {"arguments", input ? input->dump() : "{}"}}}});
  }
  Json m{{"role", "assistant"}, {"content", text}};
  if (!tool_calls.empty()) {
    if (text.empty()) m["content"] = nullptr;
    m["tool_calls"] = std::move(tool_calls);
  }
  if (!thinking.empty()) m["reasoning_content"] = std::move(thinking);
  out.push_back(std::move(m));
  return true;
}

// `system` and `messages` into OpenAI's `messages`.
bool TranslateMessages(const Json& body, Json& openai, HttpError* error) {
  Json out = Json::array();
  if (const Json* system = Find(body, "system")) {
    std::string text;
    if (!TextOf(*system, "system", &text, error)) return false;
    out.push_back(Json{{"role", "system"}, {"content", std::move(text)}});
  }
  const Json* messages = Find(body, "messages");
  if (!messages || !messages->is_array() || messages->empty()) {
    return Fail(error, "messages",
                "`messages` must be a non-empty array of {\"role\", \"content\"} objects");
  }
  std::map<std::string, std::string> calls;  // tool_use id -> the function's name
  for (size_t i = 0; i < messages->size(); ++i) {
    const Json& m = (*messages)[i];
    const Json* role = m.is_object() ? Find(m, "role") : nullptr;
    const Json* content = m.is_object() ? Find(m, "content") : nullptr;
    if (!role || (*role != "user" && *role != "assistant") || !content ||
        !(content->is_string() || content->is_array())) {
      return Fail(error, "messages",
                  fmt::format("`messages[{}]` must be {{\"role\": \"user\" or \"assistant\", "
                              "\"content\": a string or an array of blocks}}",
                              i));
    }
    const bool user = *role == "user";
    if (!user && i + 1 == messages->size()) {
      return Fail(error, "messages",
                  "the last message must be the user's: continuing a final assistant message "
                  "(prefill) is not supported");
    }
    if (content->is_string()) {
      out.push_back(Json{{"role", *role}, {"content", *content}});
    } else if (!(user ? UserBlocks(*content, i, calls, out, error)
                      : AssistantBlocks(*content, i, calls, out, error))) {
      return false;
    }
  }
  openai["messages"] = std::move(out);
  return true;
}

// `tools` into OpenAI functions: custom tools only (server tools run at Anthropic).
bool TranslateTools(const Json& tools, Json& openai, HttpError* error) {
  if (!tools.is_array()) {
    return Fail(error, "tools",
                fmt::format("`tools` must be an array, got {}", JsonTypeName(tools)));
  }
  Json out = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& t = tools[i];
    const Json* name = t.is_object() ? Find(t, "name") : nullptr;
    const Json* schema = t.is_object() ? Find(t, "input_schema") : nullptr;
    const std::string type = BlockType(t);
    if (!name || !name->is_string() || (schema && !schema->is_object()) ||
        !(type.empty() || type == "custom")) {
      return Fail(error, "tools",
                  fmt::format("`tools[{}]` must be {{\"name\": \"...\", \"description\": "
                              "\"...\", \"input_schema\": {{...}}}} (server tools such as `{}` "
                              "are not supported)",
                              i, type));
    }
    Json fn{{"name", *name}};
    if (const Json* d = Find(t, "description"); d && d->is_string()) fn["description"] = *d;
    fn["parameters"] = schema ? *schema : Json{{"type", "object"}, {"properties", Json::object()}};
    out.push_back(Json{{"type", "function"}, {"function", std::move(fn)}});
  }
  openai["tools"] = std::move(out);
  return true;
}

// tool_choice {"type": "auto" | "any" | "tool" (with `name`) | "none"}.
bool TranslateToolChoice(const Json& choice, Json& openai, HttpError* error) {
  const std::string type = BlockType(choice);
  const Json* name = type == "tool" ? Find(choice, "name") : nullptr;
  if (type == "auto" || type == "none") {
    openai["tool_choice"] = type;
  } else if (type == "any") {
    openai["tool_choice"] = "required";
  } else if (name && name->is_string()) {
    openai["tool_choice"] = Json{{"type", "function"}, {"function", {{"name", *name}}}};
  } else {
    return Fail(error, "tool_choice",
                fmt::format("`tool_choice` must be {{\"type\": \"auto\"}}, {{\"type\": \"any\"}}, "
                            "{{\"type\": \"none\"}} or {{\"type\": \"tool\", \"name\": \"...\"}}, "
                            "got {}",
                            choice.dump().substr(0, 200)));
  }
  return true;
}

// stop_sequences, metadata and thinking; the fields OpenAI names alike are copied as they are
// (ParseOpenAiObject checks their types), with our extensions.
bool TranslateFields(const Json& body, AnthropicRoute route, Json& openai, HttpError* error) {
  const bool generate = route == AnthropicRoute::kMessages;
  for (const char* name : {"model", "max_tokens", "temperature", "top_p", "top_k", "stream", "seed",
                           "deterministic", "speculation", "timeout", "ignore_eos", "keep_alive"}) {
    const Json* v = Find(body, name);
    if (v && (generate || std::string_view(name) == "model")) openai[name] = *v;
  }
  if (generate && !Find(body, "max_tokens")) {
    return Fail(error, "max_tokens", "`max_tokens` is required (an integer >= 1)");
  }
  if (const Json* stops = Find(body, "stop_sequences"); stops && generate) {
    bool ok = stops->is_array();
    for (size_t i = 0; ok && i < stops->size(); ++i) ok = (*stops)[i].is_string();
    if (!ok) return Fail(error, "stop_sequences", "`stop_sequences` must be an array of strings");
    openai["stop"] = *stops;
  }
  if (const Json* metadata = Find(body, "metadata"); metadata && !metadata->is_object()) {
    return Fail(error, "metadata", "`metadata` must be an object ({\"user_id\": \"...\"})");
  }
  if (const Json* thinking = Find(body, "thinking")) {
    const std::string type = BlockType(*thinking);
    if (type != "enabled" && type != "disabled") {
      return Fail(error, "thinking",
                  "`thinking` must be {\"type\": \"enabled\", \"budget_tokens\": N} or "
                  "{\"type\": \"disabled\"}");
    }
    // The switch reasoning templates read (Qwen 3, SmolLM3); others ignore it.
    openai["chat_template_kwargs"] = Json{{"enable_thinking", type == "enabled"}};
  }
  return true;
}

}  // namespace

std::optional<Json> TranslateAnthropicRequest(const Json& body, AnthropicRoute route,
                                              HttpError* error) {
  Json openai = Json::object();
  if (!TranslateFields(body, route, openai, error) || !TranslateMessages(body, openai, error)) {
    return std::nullopt;
  }
  if (const Json* tools = Find(body, "tools"); tools && !TranslateTools(*tools, openai, error)) {
    return std::nullopt;
  }
  if (const Json* choice = Find(body, "tool_choice");
      choice && !TranslateToolChoice(*choice, openai, error)) {
    return std::nullopt;
  }
  return openai;
}

std::optional<AnthropicRequest> ParseAnthropicRequest(std::string_view body, AnthropicRoute route,
                                                      HttpError* error) {
  std::optional<Json> json = ParseJsonObject(body, error);
  if (!json) return std::nullopt;
  std::optional<Json> openai = TranslateAnthropicRequest(*json, route, error);
  if (!openai) return std::nullopt;
  std::optional<OpenAiRequest> chat = ParseOpenAiObject(Endpoint::kChatCompletions, *openai, error);
  if (!chat) {
    // The OpenAI parser names its own fields: say them as this API does.
    if (error->param == "stop") error->param = "stop_sequences";
    for (auto [from, to] : {std::pair{"`stop`", "`stop_sequences`"},
                            std::pair{".function.parameters`", ".input_schema`"}}) {
      if (size_t at = error->message.find(from); at != std::string::npos) {
        error->message.replace(at, std::string_view(from).size(), to);
      }
    }
    return std::nullopt;
  }
  AnthropicRequest r{std::move(*chat), {}};
  if (const Json* stops = Find(*openai, "stop"))
    r.stop_sequences = stops->get<std::vector<std::string>>();
  return r;
}

}  // namespace smallmind::gateway::http

#include "gateway/http/openai_request.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "gateway/http/json_type_name.h"

#include "shared/json_reader.h"
#include "shared/json_schema.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;

// Reads optional fields of one JSON object; a missing or null field leaves the output as it was.
// The first type error fills `error` and every later read fails.
class Fields {
 public:
  Fields(const Json& object, HttpError* error, std::string prefix = {})
      : object_(object), error_(error), prefix_(std::move(prefix)) {}

  bool ok() const { return ok_; }
  HttpError* error() const { return error_; }
  const Json* Find(const char* name) const {
    auto it = object_.find(name);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  bool Fail(const char* name, std::string message) {
    if (ok_) *error_ = MakeError(400, std::move(message), prefix_ + name);
    ok_ = false;
    return false;
  }
  bool WrongType(const char* name, const char* want, const Json& got) {
    return Fail(name,
                fmt::format("`{}{}` must be {}, got {}", prefix_, name, want, JsonTypeName(got)));
  }

  bool Bool(const char* name, bool* out) {
    const Json* v = ok_ ? Find(name) : nullptr;
    if (!v) return ok_;
    if (!v->is_boolean()) return WrongType(name, "a boolean", *v);
    *out = v->get<bool>();
    return true;
  }
  bool Number(const char* name, double* out) {
    const Json* v = ok_ ? Find(name) : nullptr;
    if (!v) return ok_;
    if (!v->is_number()) return WrongType(name, "a number", *v);
    *out = v->get<double>();
    return true;
  }
  // Floats into optional proto fields go through here.
  template <typename Setter>
  bool Float(const char* name, Setter set) {
    double d = 0;
    const Json* v = ok_ ? Find(name) : nullptr;
    if (!v) return ok_;
    if (!Number(name, &d)) return false;
    set(static_cast<float>(d));
    return true;
  }
  bool Int(const char* name, int64_t lo, int64_t hi, int64_t* out) {
    const Json* v = ok_ ? Find(name) : nullptr;
    if (!v) return ok_;
    if (!v->is_number_integer()) return WrongType(name, "an integer", *v);
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
      return Fail(name, fmt::format("`{}{}` must be in [{}, {}], got {}", prefix_, name, lo, hi,
                                    v->get<uint64_t>()));
    }
    const int64_t i = v->get<int64_t>();
    if (i < lo || i > hi) {
      return Fail(name,
                  fmt::format("`{}{}` must be in [{}, {}], got {}", prefix_, name, lo, hi, i));
    }
    *out = i;
    return true;
  }
  bool String(const char* name, std::string* out) {
    const Json* v = ok_ ? Find(name) : nullptr;
    if (!v) return ok_;
    if (!v->is_string()) return WrongType(name, "a string", *v);
    *out = v->get<std::string>();
    return true;
  }

 private:
  const Json& object_;
  HttpError* error_;
  const std::string prefix_;
  bool ok_ = true;
};

// `stop`: a string or an array of strings.
bool ReadStop(Fields& f, smallmind::v1::StoppingOptions* stopping) {
  const Json* v = f.Find("stop");
  if (!v) return f.ok();
  if (v->is_string()) {
    stopping->add_stop(v->get<std::string>());
    return true;
  }
  if (!v->is_array()) return f.WrongType("stop", "a string or an array of strings", *v);
  for (const Json& s : *v) {
    if (!s.is_string()) return f.WrongType("stop", "a string or an array of strings", s);
    stopping->add_stop(s.get<std::string>());
  }
  return true;
}

// `response_format` {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}: the
// schema is compiled here so that one this server cannot enforce is a 400 naming what it cannot;
// `strict` may be anything (the schema is always enforced), a missing `schema` is any object.
bool ReadJsonSchema(Fields& f, const Json& format, smallmind::v1::GenerateRequest* g) {
  const auto spec = format.find("json_schema");
  if (spec == format.end() || !spec->is_object()) {
    return f.Fail("response_format",
                  "`response_format.json_schema` must be an object with the `schema`");
  }
  Fields fields(*spec, f.error(), "response_format.json_schema.");
  std::string name;
  bool strict = false;
  if (!fields.String("name", &name) || !fields.Bool("strict", &strict)) return false;
  const auto schema = spec->find("schema");
  const std::string text =
      schema == spec->end() || schema->is_null() ? std::string("{}") : schema->dump();
  if (const auto compiled = shared::JsonSchema::Compile(text); !compiled.ok()) {
    return f.Fail("response_format",
                  "`response_format.json_schema.schema`: " + compiled.status().message());
  }
  g->set_response_format(smallmind::v1::RESPONSE_FORMAT_JSON_SCHEMA);
  g->set_json_schema(text);
  return true;
}

// `response_format`: text, json_object or json_schema (the worker constrains the output to one
// JSON object, or one the schema allows); the OpenAI fields that would change what the model may
// output that this server does not implement, are refused with a 400 naming them rather than
// ignored, so a client that relies on them (expects a schema's keys, a banned token to stay out)
// learns it at once. `logit_bias` maps token ids (decimal strings) to biases.
bool ReadOutputConstraints(Fields& f, smallmind::v1::GenerateRequest* g) {
  if (const Json* v = f.Find("response_format"); v && f.ok()) {
    auto type = v->is_object() ? v->find("type") : v->end();
    if (!v->is_object() || type == v->end() || !type->is_string()) {
      return f.Fail("response_format",
                    "`response_format` must be an object with a string `type`, got " +
                        std::string(JsonTypeName(*v)));
    }
    const std::string name = type->get<std::string>();
    if (name == "json_object") {
      g->set_response_format(smallmind::v1::RESPONSE_FORMAT_JSON_OBJECT);
    } else if (name == "json_schema") {
      if (!ReadJsonSchema(f, *v, g)) return false;
    } else if (name != "text") {
      return f.Fail("response_format",
                    fmt::format("`response_format` type `{}` is not supported: use "
                                "\"json_schema\", \"json_object\" or \"text\"",
                                name));
    }
  }
  if (const Json* v = f.Find("logit_bias"); v && f.ok()) {
    if (!v->is_object()) return f.WrongType("logit_bias", "an object", *v);
    auto* bias = g->mutable_sampling()->mutable_logit_bias();
    for (const auto& [key, value] : v->items()) {
      // Keys are token ids in decimal (JSON keys are strings); ranges are validate's.
      uint32_t id = 0;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      if (key.empty() || ec != std::errc() || end != key.data() + key.size()) {
        return f.Fail("logit_bias", fmt::format("`logit_bias` keys must be token ids (decimal "
                                                "integers in [0, 2^32)), got \"{}\"",
                                                key.substr(0, 64)));
      }
      if (!value.is_number()) {
        return f.Fail("logit_bias", fmt::format("`logit_bias` values must be numbers, got {} for "
                                                "token {}",
                                                JsonTypeName(value), id));
      }
      (*bias)[id] = static_cast<float>(value.get<double>());
    }
  }
  return f.ok();
}

// Our extensions "deterministic" (the bitwise-reproducible path) and "speculation" (false: no
// speculative decoding for the request; it changes the speed only, never the tokens).
void ReadRuntime(Fields& f, smallmind::v1::RuntimeOptions* runtime) {
  bool deterministic = false;
  if (f.Bool("deterministic", &deterministic)) runtime->set_deterministic(deterministic);
  bool speculation = true;
  if (f.Bool("speculation", &speculation) && !speculation) {
    runtime->set_speculation(smallmind::v1::SPECULATION_OFF);
  }
}

// Ollama's `keep_alive`: a duration string ("5m", "0", "-1") or a number of seconds.
bool ReadKeepAlive(Fields& f, OpenAiRequest& r) {
  const Json* keep = f.Find("keep_alive");
  if (!keep || !f.ok()) return f.ok();
  if (!keep->is_number() && !keep->is_string()) {
    return f.WrongType("keep_alive", "a duration string or a number of seconds", *keep);
  }
  shared::Result<KeepAlive> parsed = keep->is_number()
                                         ? KeepAliveFromSeconds(keep->get<double>(), "keep_alive")
                                         : ParseKeepAlive(keep->get<std::string>(), "keep_alive");
  if (!parsed.ok()) return f.Fail("keep_alive", parsed.status().message());
  r.keep_alive = *parsed;
  return true;
}

// The fields both endpoints share: sampling, stopping, runtime, n, stream and our extensions.
bool ReadCommon(Fields& f, OpenAiRequest& r) {
  auto& g = r.generate;
  auto* s = g.mutable_sampling();
  int64_t i = 0;
  f.String("model", &r.model);
  if (!ReadKeepAlive(f, r)) return false;
  f.Float("temperature", [s](float x) { s->set_temperature(x); });
  f.Float("top_p", [s](float x) { s->set_top_p(x); });
  f.Float("min_p", [s](float x) { s->set_min_p(x); });
  f.Float("repetition_penalty", [s](float x) { s->set_repetition_penalty(x); });
  f.Float("presence_penalty", [s](float x) { s->set_presence_penalty(x); });
  f.Float("frequency_penalty", [s](float x) { s->set_frequency_penalty(x); });
  // vLLM: -1 (or 0) = off.
  if (f.Find("top_k") && f.Int("top_k", -1, std::numeric_limits<uint32_t>::max(), &i)) {
    s->set_top_k(i < 0 ? 0 : static_cast<uint32_t>(i));
  }
  if (const Json* seed = f.Find("seed"); seed && f.ok()) {
    if (seed->is_number_unsigned()) {
      s->set_seed(seed->get<uint64_t>());
    } else if (seed->is_number_integer()) {
      return f.Fail("seed",
                    fmt::format("`seed` must be in [0, 2^64), got {}", seed->get<int64_t>()));
    } else {
      return f.WrongType("seed", "an integer", *seed);
    }
  }
  int64_t n = 1;
  if (f.Int("n", 1, std::numeric_limits<int32_t>::max(), &n) && n > kMaxChoices) {
    return f.Fail(
        "n", fmt::format("`n` must be at most {} (choices per request), got {}", kMaxChoices, n));
  }
  r.n = static_cast<uint32_t>(n);
  bool ignore_eos = false;
  if (f.Bool("ignore_eos", &ignore_eos)) g.mutable_stopping()->set_ignore_eos(ignore_eos);
  ReadRuntime(f, g.mutable_runtime());
  ReadStop(f, g.mutable_stopping());
  if (!ReadOutputConstraints(f, &g)) return false;
  f.Bool("stream", &r.stream);
  if (const Json* options = f.Find("stream_options"); options && f.ok()) {
    if (!options->is_object()) return f.WrongType("stream_options", "an object", *options);
    auto it = options->find("include_usage");
    const Json* usage = it == options->end() || it->is_null() ? nullptr : &*it;
    if (usage && !usage->is_boolean()) {
      return f.Fail("stream_options", fmt::format("`stream_options.include_usage` must be a "
                                                  "boolean, got {}",
                                                  JsonTypeName(*usage)));
    }
    r.include_usage = usage && usage->get<bool>();
  }
  std::string user;
  f.String("user", &user);  // accepted, ignored
  f.Number("timeout", &r.timeout_s);
  // Capped: 1e300 seconds once overflowed the deadline's arithmetic into an instant 504.
  if (f.ok() && !(r.timeout_s >= 0 && r.timeout_s <= kMaxTimeoutSeconds)) {
    return f.Fail("timeout", fmt::format("`timeout` must be 0 (none) to {} seconds, got {}",
                                         kMaxTimeoutSeconds, r.timeout_s));
  }
  return f.ok();
}

// max_tokens (and chat's max_completion_tokens, which wins): >= 1.
bool ReadMaxTokens(Fields& f, const char* name, smallmind::v1::StoppingOptions* stopping) {
  int64_t max_tokens = 0;
  if (!f.Find(name)) return f.ok();
  if (!f.Int(name, 1, std::numeric_limits<uint32_t>::max(), &max_tokens)) return false;
  stopping->set_max_new_tokens(static_cast<uint32_t>(max_tokens));
  return true;
}

// `prompt`: a string, an array of token ids, or an array holding one string.
bool ReadPrompt(Fields& f, smallmind::v1::GenerateRequest& g) {
  const Json* v = f.Find("prompt");
  if (!v) return f.ok() && f.Fail("prompt", "`prompt` is required (a string or token ids)");
  if (v->is_string()) {
    g.set_prompt(v->get<std::string>());
    return true;
  }
  constexpr char kWant[] = "a string or an array of token ids";
  if (!v->is_array()) return f.WrongType("prompt", kWant, *v);
  if (v->size() == 1 && (*v)[0].is_string()) {
    g.set_prompt((*v)[0].get<std::string>());
    return true;
  }
  if (!v->empty() && (*v)[0].is_string()) {
    return f.Fail("prompt", fmt::format("`prompt` must be one prompt: batches of {} prompts are "
                                        "not supported (send one request each)",
                                        v->size()));
  }
  auto* ids = g.mutable_prompt_token_ids();
  for (const Json& id : *v) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() > std::numeric_limits<uint32_t>::max()) {
      return f.Fail("prompt", fmt::format("`prompt` token ids must be integers in [0, 2^32), got "
                                          "{}",
                                          id.dump()));
    }
    ids->add_ids(id.get<uint32_t>());
  }
  return true;
}

bool ReadCompletion(Fields& f, OpenAiRequest& r) {
  auto& g = r.generate;
  g.mutable_stopping()->set_max_new_tokens(kCompletionsDefaultMaxTokens);
  if (!ReadPrompt(f, g) || !ReadMaxTokens(f, "max_tokens", g.mutable_stopping())) return false;
  f.Bool("echo", &r.echo);
  if (r.echo && g.has_prompt_token_ids()) {
    return f.Fail("echo", "`echo` needs a text prompt; with token ids the client has the prompt");
  }
  int64_t top = 0;
  if (f.Find("logprobs") && f.Int("logprobs", 0, kMaxTopLogprobs, &top)) {
    r.logprobs = true;
    r.top_logprobs = static_cast<uint32_t>(top);
  }
  if (f.Find("suffix")) return f.Fail("suffix", "`suffix` (insertion) is not supported");
  int64_t best_of = 1;
  return f.Int("best_of", 1, 1, &best_of);
}

// Function `i` of `tools` ({"type": "function", "function": {"name", "parameters"}}): its name
// and, unless `parameters` is null, its parameters' JSON Schema (none: an object without
// properties), or a 400 on `tools` saying what is wrong.
bool ReadTool(Fields& f, const Json& tools, size_t i, std::string* name, Json* parameters) {
  const Json& tool = tools[i];
  const auto fn = tool.is_object() ? tool.find("function") : tool.end();
  const auto type = tool.is_object() ? tool.find("type") : tool.end();
  if (fn == tool.end() || !fn->is_object() || type == tool.end() || *type != "function" ||
      !fn->contains("name") || !(*fn)["name"].is_string()) {
    return f.Fail("tools",
                  fmt::format("`tools[{}]` must be {{\"type\": \"function\", \"function\": "
                              "{{\"name\": \"...\", \"parameters\": {{...}}}}}}",
                              i));
  }
  *name = (*fn)["name"].get<std::string>();
  if (parameters == nullptr) return true;
  const auto params = fn->find("parameters");
  *parameters = params == fn->end() || params->is_null() ? Json{{"type", "object"},
                                                                {"properties", Json::object()},
                                                                {"additionalProperties", false}}
                                                         : *params;
  return true;
}

// `schema` with every local $ref ("#/...") pointing where it will be once the schema is placed at
// the JSON pointer `at` of a larger document.
void MoveRefs(Json& schema, const std::string& at) {
  if (schema.is_object()) {
    for (auto& [key, value] : schema.items()) {
      if (key == "$ref" && value.is_string() &&
          value.get_ref<const std::string&>().starts_with("#")) {
        value = "#" + at + value.get_ref<const std::string&>().substr(1);
      } else {
        MoveRefs(value, at);
      }
    }
  } else if (schema.is_array()) {
    for (Json& e : schema) MoveRefs(e, at);
  }
}

// tool_choice "required" among several tools: the output must be a call of one of them, {"name":
// "f", "arguments": {...}}: one object schema per function, its name a const (the union's
// discriminator) and its arguments the function's parameters.
bool ReadAnyToolCall(Fields& f, OpenAiRequest& r) {
  Json alternatives = Json::array();
  std::vector<std::string> names;
  for (size_t i = 0; i < r.tools.size(); ++i) {
    std::string name;
    Json parameters;
    if (!ReadTool(f, r.tools, i, &name, &parameters)) return false;
    if (const auto compiled = shared::JsonSchema::Compile(parameters.dump()); !compiled.ok()) {
      return f.Fail("tools", fmt::format("`tools[{}].function.parameters`: {}", i,
                                         compiled.status().message()));
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      return f.Fail("tools", fmt::format("`tools` has two functions named `{}`: a call could not "
                                         "say which it is",
                                         name.substr(0, 200)));
    }
    names.push_back(name);
    MoveRefs(parameters, fmt::format("/anyOf/{}/properties/arguments", i));
    alternatives.push_back(
        Json{{"type", "object"},
             {"properties", {{"name", {{"const", name}}}, {"arguments", std::move(parameters)}}},
             {"required", Json::array({"name", "arguments"})},
             {"additionalProperties", false}});
  }
  std::string schema = Json{{"anyOf", std::move(alternatives)}}.dump();
  if (const auto compiled = shared::JsonSchema::Compile(schema); !compiled.ok()) {
    return f.Fail("tools", fmt::format("`tools`: a call of one of them cannot be constrained: {}",
                                       compiled.status().message()));
  }
  r.tool_from_output = true;
  r.tool_schema = std::move(schema);
  return true;
}

// tool_choice: "auto" and "none" leave the model free (the tools reach the template only); a
// named function ({"type": "function", "function": {"name": "f"}}), or "required" with one tool,
// forces a call of it: the output is its arguments, constrained to its `parameters` schema
// (vLLM's named function calling), and the reply a `tool_calls` message. "required" among
// several tools: the output is a call of one of them (ReadAnyToolCall).
bool ReadToolChoice(Fields& f, const Json& choice, OpenAiRequest& r) {
  r.tool_choice_none = choice == "none";
  if (choice == "auto" || choice == "none") return true;
  std::string wanted;
  if (choice.is_object() && choice.value("type", Json()) == "function" &&
      choice.contains("function") && choice["function"].is_object() &&
      choice["function"].value("name", Json()).is_string()) {
    wanted = choice["function"]["name"].get<std::string>();
  } else if (choice != "required") {
    return f.Fail(
        "tool_choice",
        fmt::format("`tool_choice` must be \"auto\", \"none\", \"required\" or "
                    "{{\"type\": \"function\", \"function\": {{\"name\": \"...\"}}}}, got {}",
                    choice.dump().substr(0, 200)));
  }
  const size_t n_tools = r.tools.is_array() ? r.tools.size() : 0;
  if (n_tools == 0) {
    return f.Fail("tool_choice", "`tool_choice` forces a call, but `tools` names no function");
  }
  if (wanted.empty() && n_tools > 1) return ReadAnyToolCall(f, r);
  for (size_t i = 0; i < n_tools; ++i) {
    std::string name;
    Json parameters;
    if (!ReadTool(f, r.tools, i, &name, &parameters)) return false;
    if (!wanted.empty() && name != wanted) continue;
    std::string schema = parameters.dump();
    if (const auto compiled = shared::JsonSchema::Compile(schema); !compiled.ok()) {
      return f.Fail("tools", fmt::format("`tools[{}].function.parameters`: {}", i,
                                         compiled.status().message()));
    }
    r.tool_name = name;
    r.tool_schema = std::move(schema);
    return true;
  }
  return f.Fail("tool_choice",
                fmt::format("`tool_choice` names `{}`, which is not a function in `tools`",
                            wanted.substr(0, 200)));
}

bool ReadChat(Fields& f, OpenAiRequest& r) {
  auto& g = r.generate;
  const Json* messages = f.Find("messages");
  if (!messages) return f.Fail("messages", "`messages` is required (an array of messages)");
  HttpError error;
  if (!CheckMessages(*messages, &error)) return f.Fail("messages", error.message);
  r.messages = *messages;
  if (!ReadMaxTokens(f, "max_tokens", g.mutable_stopping()) ||
      !ReadMaxTokens(f, "max_completion_tokens", g.mutable_stopping())) {
    return false;
  }
  f.Bool("logprobs", &r.logprobs);
  int64_t top = 0;
  if (f.Find("top_logprobs") && f.Int("top_logprobs", 0, kMaxTopLogprobs, &top)) {
    if (!r.logprobs) return f.Fail("top_logprobs", "`top_logprobs` needs `logprobs: true`");
    r.top_logprobs = static_cast<uint32_t>(top);
  }
  f.Bool("add_generation_prompt", &r.add_generation_prompt);
  if (const Json* kwargs = f.Find("chat_template_kwargs"); kwargs && f.ok()) {
    if (!kwargs->is_object()) return f.WrongType("chat_template_kwargs", "an object", *kwargs);
    r.chat_template_kwargs = *kwargs;
  }
  if (const Json* tools = f.Find("tools"); tools && f.ok()) {
    if (!tools->is_array()) return f.WrongType("tools", "an array", *tools);
    r.tools = *tools;
    for (size_t i = 0; i < tools->size(); ++i) {
      std::string name;
      if (!ReadTool(f, *tools, i, &name, /*parameters=*/nullptr)) return false;
      r.tool_functions.push_back(std::move(name));
    }
  }
  if (const Json* choice = f.Find("tool_choice"); choice && f.ok()) {
    return ReadToolChoice(f, *choice, r);
  }
  return f.ok();
}

// `tool_calls` of messages[i], when present: what a template reads of a call (the function's name
// and arguments, JSON text or an object) is there.
bool CheckToolCalls(const Json& m, size_t i, HttpError* error) {
  auto calls = m.find("tool_calls");
  if (calls == m.end() || calls->is_null()) return true;
  for (size_t j = 0; calls->is_array() && j < calls->size(); ++j) {
    const Json& call = (*calls)[j];
    auto fn = call.is_object() ? call.find("function") : call.end();
    auto args = fn != call.end() && fn->is_object() ? fn->find("arguments") : call.end();
    const bool ok = fn != call.end() && fn->is_object() && fn->contains("name") &&
                    (*fn)["name"].is_string() &&
                    (args == fn->end() || args->is_string() || args->is_object());
    if (!ok) {
      *error = MakeError(400,
                         fmt::format("`messages[{}].tool_calls[{}]` must be {{\"type\": "
                                     "\"function\", \"function\": {{\"name\": \"...\", "
                                     "\"arguments\": \"{{...}}\"}}}}",
                                     i, j),
                         "messages");
      return false;
    }
  }
  if (calls->is_array()) return true;
  *error = MakeError(400, fmt::format("`messages[{}].tool_calls` must be an array", i), "messages");
  return false;
}

}  // namespace

std::optional<Json> ParseJsonObject(std::string_view body, HttpError* error) {
  // Linear in the body whatever its shape, with the caps of kBodyJsonLimits (docs/security.md).
  shared::Result<Json> json = shared::ReadJson(body, kBodyJsonLimits, "the body");
  if (!json.ok()) {
    *error = MakeError(400, json.status().message(), {}, "invalid_json");
    return std::nullopt;
  }
  if (!json.value().is_object()) {
    *error = MakeError(
        400, fmt::format("the body must be a JSON object, got {}", JsonTypeName(json.value())));
    return std::nullopt;
  }
  return std::move(json.value());
}

bool ReadModelAndUser(const Json& body, std::string* model, HttpError* error) {
  for (const char* name : {"model", "user"}) {
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_string()) {
      *error = MakeError(400, fmt::format("`{}` must be a string, got {}", name, JsonTypeName(*it)),
                         name);
      return false;
    }
    if (name[0] == 'm') *model = it->get<std::string>();
  }
  return true;
}

bool CheckMessages(const Json& messages, HttpError* error) {
  if (!messages.is_array() || messages.empty()) {
    *error = MakeError(
        400, "`messages` must be a non-empty array of {\"role\", \"content\"} objects", "messages");
    return false;
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    auto role = m.is_object() ? m.find("role") : m.end();
    if (!m.is_object() || role == m.end() || !role->is_string()) {
      *error = MakeError(
          400, fmt::format("`messages[{}]` must be an object with a string `role`", i), "messages");
      return false;
    }
    auto content = m.find("content");
    if (content != m.end() && !content->is_null() && !content->is_string() &&
        !content->is_array()) {
      *error = MakeError(400,
                         fmt::format("`messages[{}].content` must be a string or an array of "
                                     "content parts, got {}",
                                     i, JsonTypeName(*content)),
                         "messages");
      return false;
    }
    if (!CheckToolCalls(m, i, error)) return false;
  }
  return true;
}

std::optional<OpenAiRequest> ParseOpenAiRequest(Endpoint endpoint, std::string_view body,
                                                HttpError* error) {
  std::optional<Json> json = ParseJsonObject(body, error);
  if (!json) return std::nullopt;
  return ParseOpenAiObject(endpoint, *json, error);
}

std::optional<OpenAiRequest> ParseOpenAiObject(Endpoint endpoint, const Json& json,
                                               HttpError* error) {
  OpenAiRequest r;
  r.endpoint = endpoint;
  r.chat_template_kwargs = Json::object();
  Fields f(json, error);
  const bool ok = endpoint == Endpoint::kCompletions ? ReadCompletion(f, r) : ReadChat(f, r);
  if (!ok || !ReadCommon(f, r)) return std::nullopt;
  if (!r.tool_name.empty() || r.tool_from_output) {  // a forced call: the output is the call
    if (r.generate.response_format() != smallmind::v1::RESPONSE_FORMAT_TEXT) {
      f.Fail("tool_choice",
             "`tool_choice` forces a call, whose arguments follow the tool's `parameters`: it "
             "cannot be combined with a `response_format` other than text");
      return std::nullopt;
    }
    r.generate.set_response_format(smallmind::v1::RESPONSE_FORMAT_JSON_SCHEMA);
    r.generate.set_json_schema(r.tool_schema);
  }
  if (r.logprobs) r.generate.set_logprobs(std::max<uint32_t>(1, r.top_logprobs));
  return r;
}

}  // namespace smallmind::gateway::http

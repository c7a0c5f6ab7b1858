#include "gateway/http/http_api.h"

#include <chrono>
#include <random>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "gateway/chat/reasoning_parser.h"
#include "gateway/http/http_error.h"
#include "gateway/http/relayed_completion.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;
using Verb = beast_http::verb;

std::string RandomHex() {
  std::random_device rd;
  return fmt::format("{:08x}", static_cast<uint32_t>(rd()));
}

Response ErrorResponse(const HttpError& error) {
  Response r = JsonResponse(error.status, ErrorBody(error));
  if (error.status == 429) r.set(beast_http::field::retry_after, "1");
  return r;
}

// llama-server's rerank paths, all one route.
bool IsRerankPath(std::string_view path) {
  return path == "/v1/rerank" || path == "/rerank" || path == "/v1/reranking";
}

// The other routes that take POST only.
bool IsPostPath(std::string_view path) {
  return path == "/v1/completions" || path == "/v1/chat/completions" || path == "/v1/embeddings" ||
         path == "/apply-template" || path == "/tokenize" || path == "/detokenize";
}

Response MethodNotAllowed(std::string_view path, const char* allow) {
  Response r = ErrorResponse(
      MakeError(405, fmt::format("{} takes {} only", path, allow), {}, "method_not_allowed"));
  r.set(beast_http::field::allow, allow);
  return r;
}

}  // namespace

HttpApi::HttpApi(std::shared_ptr<RelayEnv> env, smallmind::v1::ModelInfo info,
                 std::shared_ptr<ChatSettingsCache> chat,
                 std::shared_ptr<const ChatSettings> default_chat, HttpApiOptions options)
    : env_(std::move(env)),
      info_(std::move(info)),
      chat_(std::move(chat)),
      default_chat_(std::move(default_chat)),
      options_(std::move(options)),
      model_id_(env_->served_models.primary()),
      created_(std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count()),
      id_prefix_(RandomHex()) {}

bool HttpApi::AcceptsModel(std::string_view name) const {
  if (env_->models) return env_->models->residency().catalog().Find(name) >= 0;
  return env_->served_models.Accepts(name);
}

std::string HttpApi::NextId(std::string_view prefix) {
  return fmt::format("{}{}-{}", prefix, id_prefix_,
                     next_id_.fetch_add(1, std::memory_order_relaxed));
}

void HttpApi::Handle(Request request, std::shared_ptr<Exchange> exchange) {
  const std::string_view target(request.target().data(), request.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  const Verb verb = request.method();
  if (path == "/health") {
    if (verb != Verb::get && verb != Verb::head)
      return exchange->Reply(MethodNotAllowed(path, "GET"));
    return exchange->Reply(Health());
  }
  if (path == "/metrics") {
    if (verb != Verb::get) return exchange->Reply(MethodNotAllowed(path, "GET"));
    if (!options_.metrics) {
      return exchange->Reply(ErrorResponse(MakeError(404, "metrics are not enabled")));
    }
    Response r{beast_http::status::ok, 11};
    r.set(beast_http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    r.body() = options_.metrics();
    return exchange->Reply(std::move(r));
  }
  if (path == "/stats") {
    if (verb != Verb::get) return exchange->Reply(MethodNotAllowed(path, "GET"));
    if (!options_.stats) return exchange->Reply(ErrorResponse(MakeError(404, "stats are off")));
    Response r = JsonResponse(200, options_.stats());
    r.set(beast_http::field::cache_control, "no-store");
    return exchange->Reply(std::move(r));
  }
  // The web chat's files are public (the page asks for a key when the API wants one).
  if (web_page_.Serves(path)) return exchange->Reply(web_page_.Serve(path, request));
  if (path == "/v1/messages" || path.starts_with("/v1/messages/")) {
    return Anthropic(path, request, std::move(exchange));
  }
  const bool models = path == "/v1/models" || path.starts_with("/v1/models/");
  const bool rerank = IsRerankPath(path);
  const bool post_route = IsPostPath(path) || rerank;
  if (!models && !post_route) {
    return exchange->Reply(ErrorResponse(MakeError(
        404,
        fmt::format(
            "no route {} {}",
            std::string_view(request.method_string().data(), request.method_string().size()), path),
        {}, "unknown_url")));
  }
  if (models && verb != Verb::get) return exchange->Reply(MethodNotAllowed(path, "GET"));
  if (post_route && verb != Verb::post) return exchange->Reply(MethodNotAllowed(path, "POST"));
  if (std::optional<HttpError> auth = Authenticate(request)) {
    Response r = ErrorResponse(*auth);
    r.set(beast_http::field::www_authenticate, "Bearer");
    return exchange->Reply(std::move(r));
  }
  if (models) return exchange->Reply(Models(path));
  if (path == "/v1/completions") return Generate(Endpoint::kCompletions, request, exchange);
  if (path == "/v1/chat/completions") {
    return Generate(Endpoint::kChatCompletions, request, exchange);
  }
  if (path == "/v1/embeddings") return Embeddings(request, exchange);
  if (rerank) return Rerank(request, exchange);
  if (path == "/apply-template") return ApplyTemplate(request, exchange);
  Tokenize(request, exchange, /*decode=*/path == "/detokenize");
}

namespace {

// /v1/models' extra facts of a model (issue 42): architecture, shape, RoPE, window and the
// tensor-type mix, from the workers' ModelInfo.
Json ModelFacts(const smallmind::v1::ModelInfo& info) {
  Json mix = Json::object();
  for (const smallmind::v1::TensorTypeUse& use : info.tensor_mix()) {
    mix[use.type()] = Json{{"tensors", use.tensors()}, {"bytes", use.bytes()}};
  }
  return Json{{"architecture", info.architecture()},
              {"parameters", info.parameter_count()},
              {"quantization", info.quantization()},
              {"head_dim", info.head_dim()},
              {"sliding_window", info.sliding_window()},
              {"windowed_layers", info.windowed_layers()},
              {"softcap", {{"attention", info.attn_softcap()}, {"final", info.final_softcap()}}},
              {"experts",
               {{"count", info.experts()},
                {"used", info.experts_used()},
                {"ffn_dim", info.expert_ffn_dim()},
                {"shared_ffn_dim", info.shared_expert_ffn_dim()}}},
              {"rope",
               {{"theta", info.rope_theta()},
                {"scaling", info.rope_scaling()},
                {"factor", info.rope_scaling_factor()},
                {"freqs", info.rope_freqs()},
                {"style", info.rope_style()},
                {"rotary_dims", info.rotary_dims()},
                {"no_rope_period", info.no_rope_period()},
                {"windowed_theta", info.rope_theta_windowed()},
                {"attn_factor", info.rope_attn_factor()}}},
              {"tensor_types", std::move(mix)}};
}

}  // namespace

std::optional<HttpError> HttpApi::Authenticate(const Request& request) const {
  if (!options_.authenticate) return std::nullopt;
  std::optional<std::string> header;
  if (auto it = request.find(beast_http::field::authorization); it != request.end()) {
    header = std::string(it->value().data(), it->value().size());
  } else if (auto key = request.find("x-api-key"); key != request.end()) {
    // Anthropic's header: the same key store as `authorization: Bearer <key>`.
    header = "Bearer " + std::string(key->value().data(), key->value().size());
  }
  shared::Status auth = options_.authenticate(header);
  if (auth.ok()) return std::nullopt;
  return ErrorFromStatus(auth);
}

Response HttpApi::Health() const {
  // Every model's workers; a gateway whose models are all unloaded is healthy (it loads them on
  // use), one whose loaded models have no healthy worker is not.
  size_t healthy = env_->pool->HealthyCount();
  bool loaded = true;
  if (env_->models) {
    healthy = 0;
    loaded = false;
    for (const auto& env : env_->models->envs()) healthy += env->pool->HealthyCount();
    for (const ModelStatus& m : env_->models->residency().Statuses()) {
      loaded = loaded || m.state != ModelState::kUnloaded;
    }
  }
  // The gRPC door counts too: a wedged listener is a gateway to restart (issue 40).
  const bool grpc = env_->grpc_accepting.load();
  const bool ok = (healthy > 0 || !loaded) && grpc;
  Json body{{"status", ok ? "ok" : "unavailable"}, {"workers", healthy}, {"grpc", grpc}};
  return JsonResponse(ok ? 200 : 503, body.dump() + "\n");
}

Response HttpApi::Models(std::string_view path) const {
  // Each name of each model, with the model's state and (once it was loaded) its facts.
  const smallmind::v1::ListModelsResponse listed = ListServedModels(*env_);
  auto entry = [this](const std::string& id, const smallmind::v1::ListedModel& m) {
    // Without routes (one env) the facts are the door's own model's.
    const smallmind::v1::ModelInfo& info = env_->models ? m.info() : info_;
    Json e{{"id", id},
           {"object", "model"},
           {"created", created_},
           {"owned_by", "smallmind"},
           {"state", m.state()}};
    if (info.context_length() > 0) {
      e["max_model_len"] = info.context_length();
      e["context_length"] = info.context_length();
      e["smallmind"] = ModelFacts(info);
    } else {
      e["smallmind"] = Json::object();
    }
    e["smallmind"]["state"] = m.state();
    e["smallmind"]["estimated_bytes"] = m.estimated_bytes();
    e["smallmind"]["keep_alive_ms"] = m.keep_alive_ms();
    if (!m.last_error().empty()) e["smallmind"]["last_error"] = m.last_error();
    return e;
  };
  if (path.starts_with("/v1/models/")) {
    const std::string name(path.substr(std::string_view("/v1/models/").size()));
    for (const smallmind::v1::ListedModel& m : listed.models()) {
      for (const std::string& id : m.names()) {
        if (id == name) return JsonResponse(200, entry(id, m).dump() + "\n");
      }
    }
    return ErrorResponse(MakeError(404, fmt::format("The model `{}` does not exist", name), "model",
                                   "model_not_found"));
  }
  Json data = Json::array();
  for (const smallmind::v1::ListedModel& m : listed.models()) {
    for (const std::string& id : m.names()) data.push_back(entry(id, m));
  }
  Json list{{"object", "list"}, {"data", std::move(data)}};
  return JsonResponse(200, list.dump() + "\n");
}

void HttpApi::Generate(Endpoint endpoint, const Request& request,
                       std::shared_ptr<Exchange> exchange) {
  HttpError error;
  std::optional<OpenAiRequest> r = ParseOpenAiRequest(endpoint, request.body(), &error);
  if (!r) return exchange->Reply(ErrorResponse(error));
  shared::Result<Route> route = RouteModel(env_, r->model, r->keep_alive);
  if (!route.ok()) {
    return exchange->Reply(
        ErrorResponse(MakeError(404, route.status().message(), "model", "model_not_found")));
  }
  const TimePoint deadline = Deadline(r->timeout_s);
  if (endpoint != Endpoint::kChatCompletions) {
    return StartCompletion(*r, *route, nullptr, deadline, std::move(exchange));
  }
  // The template is the model's: wait for it to load (the route holds it busy meanwhile).
  auto held = std::make_shared<Route>(std::move(route).value());
  auto chat = std::make_shared<OpenAiRequest>(std::move(r).value());
  WithChat(held, deadline, exchange, ErrorResponse,
           [this, held, chat, deadline, exchange](const std::shared_ptr<const ChatSettings>& s) {
             HttpError error;
             if (!RenderChat(*s, *chat, &error)) return exchange->Reply(ErrorResponse(error));
             StartCompletion(*chat, *held, s.get(), deadline, exchange);
           });
}

void HttpApi::StartCompletion(const OpenAiRequest& r, const Route& route, const ChatSettings* chat,
                              TimePoint deadline, std::shared_ptr<Exchange> exchange) {
  ResponseShape shape;
  shape.endpoint = chat ? Endpoint::kChatCompletions : Endpoint::kCompletions;
  shape.id = NextId(chat ? "chatcmpl-" : "cmpl-");
  shape.created = Now();
  shape.model = route.env->served_models.primary();
  shape.include_usage = r.include_usage;
  shape.logprobs = r.logprobs;
  shape.top_logprobs = r.top_logprobs;
  if (r.echo) shape.echo_text = r.generate.prompt();
  if (chat && ShapeChat(*chat, r, shape)) {
    shape.tool_call_id = "call_" + shape.id.substr(shape.id.find('-') + 1);
  }
  // The route holds its model busy until the relays count in its env.
  RelayedCompletion::Start(route.env, std::move(exchange), Choices(r, shape), r.stream, deadline);
}

shared::Result<std::shared_ptr<const ChatSettings>> HttpApi::ChatOf(const Route& route) {
  std::optional<ModelStatus> status = RouteStatus(route);
  if (!status) return default_chat_;
  if (!status->info) {
    return shared::Unavailable(
        fmt::format("the model `{}` has no known facts yet", route.env->served_models.primary()));
  }
  return chat_->Get(route.index, status->loads, *status->info, route.env->served_models.primary());
}

void HttpApi::WithChat(std::shared_ptr<Route> route, TimePoint deadline,
                       std::shared_ptr<Exchange> exchange, FailFn fail, ChatThen then) {
  // Back on the strand whatever thread the load ended on; the route stays held until then.
  WhenRouteLoaded(*route, deadline,
                  [this, route, exchange, fail = std::move(fail),
                   then = std::move(then)](const shared::Status& loaded) {
                    exchange->Post([this, route, exchange, fail, then, loaded] {
                      if (!loaded.ok()) return exchange->Reply(fail(ErrorFromStatus(loaded)));
                      shared::Result<std::shared_ptr<const ChatSettings>> chat = ChatOf(*route);
                      if (!chat.ok()) return exchange->Reply(fail(ErrorFromStatus(chat.status())));
                      then(*chat);
                    });
                  });
}

bool HttpApi::RenderChat(const ChatSettings& chat, OpenAiRequest& r, HttpError* error) {
  ChatRequest c;
  c.messages = r.messages;
  c.tools = r.tools;
  c.kwargs = r.chat_template_kwargs;
  c.add_generation_prompt = r.add_generation_prompt;
  shared::Result<ChatPrompt> prompt = chat.prompter.Render(c);
  if (!prompt.ok()) {
    *error = MakeError(400, prompt.status().message(), "messages", "template_error");
    return false;
  }
  r.generate.set_prompt(std::move(prompt->text));
  r.generate.set_parse_special(true);
  if (prompt->add_bos) r.generate.set_add_bos(*prompt->add_bos);
  return true;
}

bool HttpApi::ShapeChat(const ChatSettings& chat, const OpenAiRequest& r, ResponseShape& shape) {
  if (chat.harmony && r.tool_name.empty() && !r.tool_from_output) {
    shape.harmony = true;  // harmony names its calls itself: no tool-call syntax to read
    if (!r.tool_choice_none) shape.tool_functions = r.tool_functions;
    return !shape.tool_functions.empty();
  }
  const bool own_calls = !r.tool_functions.empty() && !r.tool_choice_none &&
                         chat.tool_call_syntax != ToolCallSyntax::kNone;
  if (!r.tool_name.empty() || r.tool_from_output) {
    shape.tool_name = r.tool_name;
    shape.tool_from_output = r.tool_from_output;
  } else if (own_calls) {
    shape.tool_syntax = chat.tool_call_syntax;
    shape.tool_functions = r.tool_functions;
  }
  if (chat.reasoning && r.tool_name.empty() && !r.tool_from_output) {
    shape.reasoning = true;
    shape.reasoning_open = PromptOpensThinking(r.generate.prompt());
  }
  return !r.tool_name.empty() || r.tool_from_output || own_calls;
}

std::chrono::system_clock::time_point HttpApi::Deadline(double timeout_s) {
  if (timeout_s <= 0) return std::chrono::system_clock::time_point::max();
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::duration<double>(timeout_s));
}

int64_t HttpApi::Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<ChoiceSpec> HttpApi::Choices(const OpenAiRequest& r, const ResponseShape& shape) const {
  std::vector<ChoiceSpec> choices;
  for (uint32_t i = 0; i < r.n; ++i) {
    // Choice i is the request with seed + i (wrapping), so that a seeded request's choices
    // differ and each is reproducible alone: choice i equals n = 1 with that seed.
    smallmind::v1::GenerateRequest generate = r.generate;
    if (generate.sampling().has_seed()) {
      generate.mutable_sampling()->set_seed(generate.sampling().seed() + i);
    }
    ResponseShape choice_shape = shape;
    choice_shape.index = i;
    const std::string suffix = i == 0 ? std::string() : fmt::format("-{}", i);
    if (!choice_shape.tool_call_id.empty()) choice_shape.tool_call_id += suffix;
    choices.push_back({std::make_unique<OpenAiFormatter>(std::move(choice_shape),
                                                         pieces_.empty() ? nullptr : &pieces_),
                       Validate(generate, shape.id + suffix)});
  }
  return choices;
}

}  // namespace smallmind::gateway::http

// HttpApi's llama.cpp-named endpoints: /apply-template, /tokenize and /detokenize.
#include <utility>

#include <grpcpp/grpcpp.h>
#include <spdlog/fmt/fmt.h>

#include "gateway/http/http_api.h"
#include "gateway/http/http_error.h"
#include "shared/grpc_status.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::chrono::seconds kTokenizeTimeout{30};

bool ValidUtf8(const std::string& s) {
  Json j = s;
  try {
    (void)j.dump();
  } catch (const Json::type_error&) {
    return false;
  }
  return true;
}

// A /tokenize or /detokenize call: what is asked and, once answered, the worker's answer.
struct TokenizeCall {
  smallmind::v1::TokenizeRequest request;
  smallmind::v1::TokenizeResponse response;
  bool with_pieces = false;
};

// Tokenize's /detokenize body: `tokens`, ids below `vocab_size`, into the call's request. On bad
// input fills `*error` (400) and returns false.
bool FillDetokenize(const Json& body, uint32_t vocab_size, TokenizeCall& call, HttpError* error) {
  auto it = body.find("tokens");
  if (it == body.end() || !it->is_array()) {
    *error = MakeError(400, "`tokens` must be an array of token ids", "tokens");
    return false;
  }
  auto* ids = call.request.mutable_token_ids();
  for (const Json& id : *it) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() >= vocab_size) {
      *error = MakeError(400,
                         fmt::format("`tokens` must hold ids in [0, {}) (the vocabulary), got {}",
                                     vocab_size, id.dump()),
                         "tokens");
      return false;
    }
    ids->add_ids(id.get<uint32_t>());
  }
  return true;
}

// Tokenize's /tokenize body: `content` and the optional `add_special`, `parse_special` and
// `with_pieces` booleans, into the call. On bad input fills `*error` (400) and returns false.
bool FillTokenize(const Json& body, TokenizeCall& call, HttpError* error) {
  auto content = body.find("content");
  if (content == body.end() || !content->is_string()) {
    *error = MakeError(400, "`content` must be a string", "content");
    return false;
  }
  call.request.set_text(content->get<std::string>());
  bool add_special = false, parse_special = true;
  for (auto [name, out] :
       {std::pair{"add_special", &add_special}, std::pair{"parse_special", &parse_special},
        std::pair{"with_pieces", &call.with_pieces}}) {
    auto v = body.find(name);
    if (v == body.end() || v->is_null()) continue;
    if (!v->is_boolean()) {
      *error = MakeError(400, fmt::format("`{}` must be a boolean", name), name);
      return false;
    }
    *out = v->get<bool>();
  }
  call.request.set_add_bos(add_special);
  call.request.set_parse_special(parse_special);
  return true;
}

Response TokenizeAnswer(const TokenizeCall& call) {
  if (call.request.has_token_ids()) {
    return JsonResponse(200, Json{{"content", call.response.text()}}.dump() + "\n");
  }
  Json tokens = Json::array();
  for (int i = 0; i < call.response.token_ids_size(); ++i) {
    const uint32_t id = call.response.token_ids(i);
    if (!call.with_pieces) {
      tokens.push_back(id);
      continue;
    }
    const std::string& piece = i < call.response.pieces_size() ? call.response.pieces(i) : "";
    Json entry{{"id", id}};
    if (ValidUtf8(piece)) {
      entry["piece"] = piece;
    } else {
      Json bytes = Json::array();
      for (unsigned char c : piece) bytes.push_back(static_cast<int>(c));
      entry["piece"] = std::move(bytes);
    }
    tokens.push_back(std::move(entry));
  }
  return JsonResponse(200, Json{{"tokens", std::move(tokens)}}.dump() + "\n");
}

// The route of a llama.cpp-style body's optional `model` (absent or null: the default model),
// as llama-server's router takes it; on a bad one the error to reply (400: not a string, 404:
// not served).
std::shared_ptr<ModelRoutes::Route> RouteBodyModel(const std::shared_ptr<RelayEnv>& env,
                                                   const Json& body, HttpError* error) {
  std::string model;
  if (auto v = body.find("model"); v != body.end() && !v->is_null()) {
    if (!v->is_string()) {
      *error = MakeError(400, "`model` must be a string", "model");
      return nullptr;
    }
    model = v->get<std::string>();
  }
  shared::Result<ModelRoutes::Route> route = RouteModel(env, model);
  if (!route.ok()) {
    *error = MakeError(404, route.status().message(), "model", "model_not_found");
    return nullptr;
  }
  return std::make_shared<ModelRoutes::Route>(std::move(route).value());
}

}  // namespace

void HttpApi::ApplyTemplate(const Request& request, std::shared_ptr<Exchange> exchange) {
  HttpError error;
  std::optional<Json> body = ParseJsonObject(request.body(), &error);
  if (!body) return exchange->Reply(JsonResponse(error.status, ErrorBody(error)));
  auto reply_error = [](const HttpError& e) { return JsonResponse(e.status, ErrorBody(e)); };
  auto c = std::make_shared<ChatRequest>();
  auto get = [&](const char* name) -> const Json* {
    auto it = body->find(name);
    return it == body->end() || it->is_null() ? nullptr : &*it;
  };
  auto fail = [&](std::string message, const char* param) {
    exchange->Reply(reply_error(MakeError(400, std::move(message), param)));
  };
  const Json* messages = get("messages");
  if (!messages) return fail("`messages` is required (an array of messages)", "messages");
  if (!CheckMessages(*messages, &error)) return exchange->Reply(reply_error(error));
  c->messages = *messages;
  if (const Json* v = get("add_generation_prompt")) {
    if (!v->is_boolean())
      return fail("`add_generation_prompt` must be a boolean", "add_generation_prompt");
    c->add_generation_prompt = v->get<bool>();
  }
  if (const Json* v = get("chat_template_kwargs")) {
    if (!v->is_object())
      return fail("`chat_template_kwargs` must be an object", "chat_template_kwargs");
    c->kwargs = *v;
  }
  if (const Json* v = get("tools")) c->tools = *v;
  // Test hook (documented): render with other BOS/EOS texts than the model's.
  for (const char* name : {"bos_token", "eos_token"}) {
    if (const Json* v = get(name)) {
      if (!v->is_string()) return fail(fmt::format("`{}` must be a string", name), name);
      (name[0] == 'b' ? c->bos_token : c->eos_token) = v->get<std::string>();
    }
  }
  // `model`: that model's template; absent = the default.
  std::shared_ptr<Route> held = RouteBodyModel(env_, *body, &error);
  if (!held) return exchange->Reply(reply_error(error));
  WithChat(held, TimePoint::max(), exchange, reply_error,
           [c, exchange, reply_error](const std::shared_ptr<const ChatSettings>& s) {
             shared::Result<ChatPrompt> prompt = s->prompter.Render(*c);
             if (!prompt.ok()) {
               return exchange->Reply(reply_error(
                   MakeError(400, prompt.status().message(), "messages", "template_error")));
             }
             exchange->Reply(JsonResponse(200, Json{{"prompt", prompt->text}}.dump() + "\n"));
           });
}

void HttpApi::Tokenize(const Request& request, std::shared_ptr<Exchange> exchange, bool decode) {
  HttpError error;
  std::optional<Json> body = ParseJsonObject(request.body(), &error);
  auto reply_error = [](const HttpError& e) { return JsonResponse(e.status, ErrorBody(e)); };
  if (!body) return exchange->Reply(reply_error(error));
  // `model` (optional): that model's tokenizer, loaded first.
  std::shared_ptr<Route> held = RouteBodyModel(env_, *body, &error);
  if (!held) return exchange->Reply(reply_error(error));
  auto parsed = std::make_shared<Json>(std::move(body).value());
  WithChat(held, TimePoint::max(), exchange, reply_error,
           [this, held, parsed, exchange, decode,
            reply_error](const std::shared_ptr<const ChatSettings>& s) {
             HttpError error;
             auto call = std::make_shared<TokenizeCall>();
             const bool filled = decode ? FillDetokenize(*parsed, s->vocab_size, *call, &error)
                                        : FillTokenize(*parsed, *call, &error);
             if (!filled) return exchange->Reply(reply_error(error));
             CallTokenize(
                 *held->env->pool, call->request, exchange,
                 [call](const smallmind::v1::TokenizeResponse& response) {
                   call->response = response;
                   return TokenizeAnswer(*call);
                 },
                 reply_error);
           });
}

namespace {

// A worker Tokenize call in flight; deletes itself when it answered.
struct WorkerTokenize {
  grpc::ClientContext context;
  smallmind::v1::TokenizeRequest request;
  smallmind::v1::TokenizeResponse response;
  std::shared_ptr<WorkerClient> link;
  std::shared_ptr<Exchange> exchange;
  std::function<Response(const smallmind::v1::TokenizeResponse&)> answer;
  std::function<Response(const HttpError&)> fail;
};

}  // namespace

void HttpApi::CallTokenize(WorkerPool& pool, smallmind::v1::TokenizeRequest request,
                           std::shared_ptr<Exchange> exchange,
                           std::function<Response(const smallmind::v1::TokenizeResponse&)> answer,
                           std::function<Response(const HttpError&)> fail) {
  auto call = std::make_unique<WorkerTokenize>();
  call->link = pool.Pick();
  if (!call->link) return exchange->Reply(fail(ErrorFromStatus(pool.NoWorkerStatus())));
  call->request = std::move(request);
  call->exchange = std::move(exchange);
  call->answer = std::move(answer);
  call->fail = std::move(fail);
  call->context.set_deadline(std::chrono::system_clock::now() + kTokenizeTimeout);
  WorkerTokenize* raw = call.release();
  raw->link->stub().async()->Tokenize(
      &raw->context, &raw->request, &raw->response, [raw](grpc::Status status) {
        std::unique_ptr<WorkerTokenize> call(raw);
        call->link->EndRequest();
        Response answer = status.ok() ? call->answer(call->response)
                                      : call->fail(ErrorFromStatus(shared::FromGrpcStatus(status)));
        std::shared_ptr<Exchange> exchange = call->exchange;
        exchange->Post(
            [exchange, answer = std::move(answer)] { exchange->Reply(std::move(answer)); });
      });
}

}  // namespace smallmind::gateway::http

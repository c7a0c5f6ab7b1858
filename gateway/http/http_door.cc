#include "gateway/http/http_door.h"

#include <fstream>
#include <sstream>
#include <utility>

#include <grpcpp/grpcpp.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "gateway/chat/chat_prompt.h"
#include "gateway/http/chat_settings.h"
#include "gateway/http/stats_summary.h"
#include "gateway/relay/model_routes.h"
#include "shared/grpc_status.h"

namespace smallmind::gateway::http {
namespace {

constexpr std::chrono::seconds kPiecesTimeout{30};

shared::Result<std::string> ReadFile(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return shared::InvalidArgument(fmt::format("{} {}: cannot read it", flag, path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every token's text (what it adds to a decoded text), from one worker Tokenize call.
shared::Result<TokenPieces> FetchTokenPieces(WorkerPool& pool, uint32_t vocab_size) {
  std::shared_ptr<WorkerClient> link = pool.Pick();
  if (!link) return pool.NoWorkerStatus();
  smallmind::v1::TokenizeRequest request;
  for (uint32_t id = 0; id < vocab_size; ++id) request.mutable_token_ids()->add_ids(id);
  smallmind::v1::TokenizeResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kPiecesTimeout);
  const grpc::Status status = link->stub().Tokenize(&context, request, &response);
  link->EndRequest();
  if (!status.ok()) return shared::FromGrpcStatus(status);
  return TokenPieces(response.pieces().begin(), response.pieces().end());
}

// "host:port", a bare IPv6 host bracketed.
std::string HostPort(const std::string& host, int port) {
  const bool bare_ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return fmt::format("{}:{}", bare_ipv6 ? "[" + host + "]" : host, port);
}

// GET /stats' answer: the digest of the gateway's metrics; null when it has none.
std::function<std::string()> StatsRoute(const DoorContext& context) {
  if (!context.metric_families) return nullptr;
  return [families = context.metric_families] { return StatsSummaryJson(families()); };
}

// The chat flags with every template file read now (--chat-template, each model's
// chat-template=FILE), so that a request never reads a file.
shared::Result<ChatFlags> ReadChatFlags(const HttpOptions& options, const DoorContext& context) {
  ChatFlags flags;
  if (!options.chat_template_file.empty()) {
    SM_ASSIGN_OR_RETURN(flags.fallback.text,
                        ReadFile(options.chat_template_file, "--chat-template"));
  }
  flags.fallback.origin = "--chat-template " + options.chat_template_file;
  if (!options.chat_template_date.empty()) {
    SM_ASSIGN_OR_RETURN(flags.pinned_now, ParseTemplateDate(options.chat_template_date));
  }
  flags.tool_call_syntax = options.tool_call_syntax;
  flags.reasoning_format = options.reasoning_format;
  if (!context.env->models) return flags;
  for (const CatalogEntry& entry : context.env->models->residency().catalog().entries()) {
    TemplateSource source;
    if (!entry.chat_template_file.empty()) {
      SM_ASSIGN_OR_RETURN(source.text,
                          ReadFile(entry.chat_template_file,
                                   fmt::format("--model `{}` chat-template", entry.id())));
      source.origin = "chat-template=" + entry.chat_template_file;
    }
    flags.model_sources.push_back(std::move(source));
  }
  return flags;
}

}  // namespace

HttpDoor::~HttpDoor() { Shutdown(std::chrono::system_clock::now()); }

shared::Status HttpDoor::Start(const DoorContext& context) {
  SM_ASSIGN_OR_RETURN(ChatFlags flags, ReadChatFlags(options_, context));
  // The default model's settings now: a template that does not parse stops the start; the other
  // models' are built on their first chat request (ChatSettingsCache).
  auto chat = std::make_shared<ChatSettingsCache>(std::move(flags));
  std::shared_ptr<const ChatSettings> default_chat;
  if (context.env->models) {
    const ModelStatus status = context.env->models->residency().Status(0);
    SM_ASSIGN_OR_RETURN(default_chat,
                        chat->Get(0, status.loads, context.model_info, status.names.front()));
  } else {
    SM_ASSIGN_OR_RETURN(ChatSettings settings,
                        MakeChatSettings(context.model_info, 0, chat->flags()));
    spdlog::info("HTTP {}", DescribeChatSettings(settings, chat->flags()));
    default_chat = std::make_shared<const ChatSettings>(std::move(settings));
  }
  HttpApiOptions api_options;
  api_options.authenticate = context.authenticate;
  api_options.metrics = context.metrics;
  api_options.stats = StatsRoute(context);
  api_ = std::make_unique<HttpApi>(context.env, context.model_info, std::move(chat),
                                   std::move(default_chat), std::move(api_options));
  shared::Result<TokenPieces> pieces =
      FetchTokenPieces(*context.env->pool, context.model_info.vocab_size());
  if (pieces.ok()) {
    api_->SetTokenPieces(std::move(pieces).value());
  } else {
    spdlog::warn("HTTP logprobs will carry no token text: {}", pieces.status().ToString());
  }
  HttpServerOptions server_options;
  server_options.host = context.listen_host;
  server_options.port = options_.port;
  server_options.threads = options_.threads;
  server_options.max_connections = options_.max_connections;
  server_options.limits.max_body_bytes = options_.max_body_bytes;
  server_options.tls = {context.tls_cert_chain_pem, context.tls_private_key_pem,
                        context.tls_client_ca_pem};
  host_ = context.listen_host;
  tls_ = !context.tls_cert_chain_pem.empty();
  SM_RETURN_IF_ERROR(server_.Start(server_options, [api = api_.get()](Request r, auto exchange) {
    api->Handle(std::move(r), std::move(exchange));
  }));
  spdlog::info("HTTP (OpenAI API) on {}", listen_address());
  return shared::Status::Ok();
}

void HttpDoor::Shutdown(std::chrono::system_clock::time_point deadline) {
  server_.Shutdown(deadline);
}

std::string HttpDoor::listen_address() const {
  return HostPort(host_.empty() ? "0.0.0.0" : host_, server_.port());
}

std::string HttpDoor::address() const {
  const bool wildcard = host_ == "0.0.0.0" || host_ == "::" || host_ == "[::]" || host_.empty();
  return fmt::format("{}://{}", tls_ ? "https" : "http",
                     HostPort(wildcard ? "127.0.0.1" : host_, server_.port()));
}

}  // namespace smallmind::gateway::http

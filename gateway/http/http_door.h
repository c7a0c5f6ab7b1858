// HttpDoor: the OpenAI-compatible HTTP door as a PublicDoor: reads the chat template files
// (--chat-template, each model's chat-template=FILE) into the per-model ChatSettingsCache and
// builds the default model's settings, learns each token's text for logprobs (one Tokenize call),
// and runs HttpServer with HttpApi. Built by main() when --http-port is given; Start and Shutdown
// come from the gateway's control thread.
#pragma once

#include <memory>
#include <string>

#include "gateway/http/http_api.h"
#include "gateway/http/http_options.h"
#include "gateway/http/http_server.h"
#include "gateway/relay/public_door.h"

namespace smallmind::gateway::http {

class HttpDoor final : public PublicDoor {
 public:
  explicit HttpDoor(HttpOptions options) : options_(std::move(options)) {}
  ~HttpDoor() override;

  shared::Status Start(const DoorContext& context) override;
  void Shutdown(std::chrono::system_clock::time_point deadline) override;
  void CancelStreams() override { server_.AbortAll(); }
  std::string address() const override;

  int port() const { return server_.port(); }
  // The address bound: --listen-host and the port, e.g. 0.0.0.0:8080 (address() is where a
  // local client connects).
  std::string listen_address() const;

 private:
  const HttpOptions options_;
  std::string host_;
  bool tls_ = false;
  std::unique_ptr<HttpApi> api_;
  HttpServer server_;  // after api_: destroyed first, its connections end before the api goes
};

}  // namespace smallmind::gateway::http

// HttpClient: the `smallmind chat` and `smallmind models` commands' connection to a gateway's
// HTTP door (plain HTTP/1.1 over Boost.Beast, one connection per call): a JSON GET, and a POST
// whose Server-Sent Events reply is handed over event by event. Interrupt() ends a stream in
// flight from any thread (the socket is shut down; the server sees the client leave and cancels
// the request). One call at a time per object; Interrupt is thread-safe.
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "shared/status.h"

namespace smallmind::cli {

struct HttpAnswer {
  int status = 0;
  nlohmann::json body;  // null when the body is not JSON
};

class HttpClient {
 public:
  // `base`: "http://host:port" or "host:port"; `api_key` ("" = none) goes out as Bearer.
  static shared::Result<HttpClient> Create(const std::string& base, std::string api_key);
  HttpClient(HttpClient&& other) noexcept;

  shared::Result<HttpAnswer> Get(const std::string& target);
  // POSTs `body` and calls `on_event` with each `data:` event's JSON until [DONE] or the end.
  // A non-200 reply comes back as its status and JSON error body without events; an interrupted
  // stream as `interrupted` true.
  struct StreamEnd {
    HttpAnswer answer;
    bool interrupted = false;
  };
  shared::Result<StreamEnd> Stream(const std::string& target, const nlohmann::json& body,
                                   const std::function<void(const nlohmann::json&)>& on_event);
  // Ends the stream in flight now; one that has not connected yet ends as soon as it does. The
  // mark stays until ClearInterrupt (safe from any thread, also when no stream runs).
  void Interrupt();
  void ClearInterrupt();

  const std::string& host() const { return host_; }
  const std::string& port() const { return port_; }

 private:
  HttpClient(std::string host, std::string port, std::string api_key)
      : host_(std::move(host)), port_(std::move(port)), api_key_(std::move(api_key)) {}
  // Records the socket of the stream in flight (-1 = none); false when Interrupt came first.
  bool SetActiveSocket(int fd);
  bool interrupted();

  std::string host_;
  std::string port_;
  std::string api_key_;
  std::mutex mu_;
  int active_fd_ = -1;        // guarded by mu_
  bool interrupted_ = false;  // guarded by mu_
};

// `"message"` of an OpenAI/Anthropic error body, else the status line.
std::string HttpErrorText(const HttpAnswer& answer);

}  // namespace smallmind::cli

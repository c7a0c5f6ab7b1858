// HttpServer: the gateway's HTTP/1.1 door (--http-port): an acceptor and a small pool of Asio
// threads of its own (no thread per connection) running one HttpSession per connection, plain or
// TLS, each request handed to the Handler (HttpApi). Built and started by the gateway; Start and
// Shutdown are called from one thread, the rest is internal and thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "gateway/http/http_session.h"
#include "shared/rate_limited_log.h"
#include "shared/status.h"

namespace smallmind::gateway::http {

// PEM text of the TLS material (the gateway's TlsCredentials); empty cert = plaintext.
struct HttpTls {
  std::string cert_chain_pem;
  std::string private_key_pem;
  std::string client_ca_pem;  // non-empty: clients must present a certificate it signed
};

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0 = any free port (see port())
  int threads = 2;
  // Open connections at most; one more is answered 503 and closed (TLS: closed), so that idle
  // connections cannot take every descriptor of the process (--http-max-connections).
  int max_connections = 1024;
  SessionLimits limits;
  HttpTls tls;
};

class HttpServer final : private SessionOwner {
 public:
  HttpServer() = default;
  ~HttpServer();  // Shutdown(now)
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts the threads. Errors name the address (in use, bad host) or the TLS
  // material. `handler` must stay valid until Shutdown returns.
  shared::Status Start(const HttpServerOptions& options, Handler handler);

  // Stops accepting; idle connections close, requests in flight get until `deadline` to finish,
  // then their connections are closed (their handlers see the client gone). Returns once every
  // connection ended (bounded) and the threads stopped. Idempotent.
  void Shutdown(std::chrono::system_clock::time_point deadline);

  // Closes every connection now, requests in flight included (their handlers see the client
  // gone). Thread-safe.
  void AbortAll();

  int port() const { return port_; }

 private:
  void Accept();
  void Accepted(boost::asio::ip::tcp::socket socket);
  // After a failed accept: the next one at once, or after a pause that grows while descriptors
  // stay exhausted (EMFILE/ENFILE), so the loop neither spins nor floods the log.
  void AcceptFailed(const boost::system::error_code& ec);
  void ForEachSession(const std::function<void(SessionControl&)>& fn);
  void SessionEnded(const void* session) override;
  bool draining() const override;
  // Waits until no session is left or `deadline`; true when none is left.
  bool WaitForSessions(std::chrono::system_clock::time_point deadline);

  HttpServerOptions options_;
  Handler handler_;
  boost::asio::io_context io_;
  std::optional<boost::asio::ssl::context> tls_;
  std::optional<boost::asio::ip::tcp::acceptor> acceptor_;
  std::optional<boost::asio::steady_timer> accept_pause_;
  std::chrono::milliseconds accept_backoff_{0};  // accept loop only
  shared::RateLimitedLog accept_log_{std::chrono::seconds(10)};
  std::vector<std::thread> threads_;
  int port_ = 0;
  bool stopped_ = false;

  mutable std::mutex mu_;
  std::condition_variable sessions_changed_;
  // Guarded by mu_.
  std::unordered_map<const void*, std::weak_ptr<SessionControl>> sessions_;
  bool draining_ = false;
};

}  // namespace smallmind::gateway::http

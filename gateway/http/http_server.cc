#include "gateway/http/http_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <future>
#include <string_view>
#include <utility>

#include <openssl/ssl.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

namespace smallmind::gateway::http {
namespace {

namespace net = boost::asio;
using net::ip::tcp;

// After the drain deadline, aborted connections end within a round of their handlers.
constexpr std::chrono::seconds kAbortGrace{5};

// OpenSSL names: ECDHE (ECDSA or RSA certificates) with AES-GCM or ChaCha20-Poly1305.
constexpr char kTls12Ciphers[] = "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!eNULL";
constexpr char kTls13Suites[] =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

shared::Status MakeTlsContext(const HttpTls& tls, std::optional<net::ssl::context>* out) {
  try {
    net::ssl::context ctx(net::ssl::context::tls_server);
    ctx.set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                    net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                    net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
    // The modern policy both doors keep (gRPC's own default list is this one): TLS 1.2 only with
    // ECDHE key exchange and an AEAD cipher, and TLS 1.3 (whose suites are all AEAD). OpenSSL's
    // default once let a client pick AES128-SHA: CBC with no forward secrecy.
    SSL_CTX* native = ctx.native_handle();
    if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1 ||
        SSL_CTX_set_ciphersuites(native, kTls13Suites) != 1) {
      return shared::Internal("HTTP TLS setup: OpenSSL refused the cipher policy");
    }
    SSL_CTX_set_options(native, SSL_OP_CIPHER_SERVER_PREFERENCE);
    ctx.use_certificate_chain(net::buffer(tls.cert_chain_pem));
    ctx.use_private_key(net::buffer(tls.private_key_pem), net::ssl::context::pem);
    if (!tls.client_ca_pem.empty()) {
      ctx.add_certificate_authority(net::buffer(tls.client_ca_pem));
      ctx.set_verify_mode(net::ssl::verify_peer | net::ssl::verify_fail_if_no_peer_cert);
    }
    out->emplace(std::move(ctx));
  } catch (const boost::system::system_error& e) {
    return shared::InvalidArgument(fmt::format("HTTP TLS setup: {}", e.what()));
  }
  return shared::Status::Ok();
}

// Connections past half the open-file limit would leave too few descriptors for the gRPC port,
// the workers' channels and the files the gateway opens: the cap is lowered to it.
int CapToDescriptors(int max_connections) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return max_connections;
  }
  const auto half = static_cast<int>(std::min<rlim_t>(limit.rlim_cur / 2, 1 << 30));
  if (max_connections <= half) return max_connections;
  spdlog::warn("--http-max-connections {} lowered to {}: half the open-file limit ({})",
               max_connections, std::max(half, 1), limit.rlim_cur);
  return std::max(half, 1);
}

}  // namespace

HttpServer::~HttpServer() { Shutdown(std::chrono::system_clock::now()); }

shared::Status HttpServer::Start(const HttpServerOptions& options, Handler handler) {
  options_ = options;
  handler_ = std::move(handler);
  if (!options_.tls.cert_chain_pem.empty()) {
    SM_RETURN_IF_ERROR(MakeTlsContext(options_.tls, &tls_));
  }
  boost::system::error_code ec;
  std::string host = options_.host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const net::ip::address address = net::ip::make_address(host, ec);
  if (ec) {
    return shared::InvalidArgument(
        fmt::format("--http-port: cannot listen on host '{}': {}", options_.host, ec.message()));
  }
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(options_.port));
  acceptor_.emplace(io_);
  acceptor_->open(endpoint.protocol(), ec);
  if (!ec) acceptor_->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_->bind(endpoint, ec);
  if (!ec) acceptor_->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor_.reset();
    return shared::Unavailable(fmt::format("cannot listen for HTTP on {}:{}: {}", options_.host,
                                           options_.port, ec.message()));
  }
  port_ = acceptor_->local_endpoint().port();
  options_.max_connections = CapToDescriptors(options_.max_connections);
  accept_pause_.emplace(io_);
  Accept();
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    threads_.emplace_back([this] { io_.run(); });
  }
  return shared::Status::Ok();
}

void HttpServer::Accept() {
  acceptor_->async_accept(net::make_strand(io_),
                          [this](boost::system::error_code ec, tcp::socket socket) {
                            if (ec == net::error::operation_aborted || !acceptor_->is_open())
                              return;
                            if (ec) return AcceptFailed(ec);
                            accept_backoff_ = std::chrono::milliseconds(0);
                            Accepted(std::move(socket));
                            Accept();
                          });
}

void HttpServer::Accepted(tcp::socket socket) {
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);  // SSE chunks go out at once
  // Released after the lock: a session that already ended on another thread (a failed TLS
  // handshake is that quick) is destroyed with this last reference, and its destructor takes mu_
  // (SessionEnded). Released under the lock, it deadlocked the accept loop and every later drain.
  std::shared_ptr<SessionControl> session;
  std::unique_lock<std::mutex> lock(mu_);
  if (draining_) return;
  if (static_cast<int>(sessions_.size()) >= options_.max_connections) {
    lock.unlock();
    if (!tls_) {  // one short non-blocking write: a full socket buffer just drops the answer
      const std::string body = fmt::format(
          R"({{"error":{{"message":"the gateway has {} open HTTP connections, its limit; retry )"
          R"(later","type":"server_error","param":null,"code":"too_many_connections"}}}})",
          options_.max_connections);
      const std::string busy = fmt::format(
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
          "Connection: close\r\nRetry-After: 1\r\nContent-Length: {}\r\n\r\n{}",
          body.size(), body);
      socket.non_blocking(true, ignored);
      socket.write_some(net::buffer(busy), ignored);
    }
    accept_log_.Warn("HTTP connection refused: {} connections are open (--http-max-connections)",
                     options_.max_connections);
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    return;
  }
  session =
      StartSession(std::move(socket), tls_ ? &*tls_ : nullptr, options_.limits, handler_, this);
  sessions_.emplace(session.get(), session);
}

void HttpServer::AcceptFailed(const boost::system::error_code& ec) {
  const bool out_of_fds = ec == net::error::no_descriptors || ec.value() == ENFILE ||
                          ec == net::error::no_buffer_space || ec == net::error::no_memory;
  accept_log_.Warn("HTTP accept failed: {}{}", ec.message(),
                   out_of_fds ? " (out of descriptors: pausing the accept loop)" : "");
  if (!out_of_fds) return Accept();
  // 10 ms doubling to 1 s: a listener retried at once on EMFILE spun (1.58 M log lines in 5 s).
  accept_backoff_ = std::clamp(accept_backoff_ * 2, std::chrono::milliseconds(10),
                               std::chrono::milliseconds(1000));
  accept_pause_->expires_after(accept_backoff_);
  accept_pause_->async_wait([this](boost::system::error_code wait_ec) {
    if (wait_ec || !acceptor_->is_open()) return;
    Accept();
  });
}

void HttpServer::SessionEnded(const void* session) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(session);
  sessions_changed_.notify_all();
}

bool HttpServer::draining() const {
  std::lock_guard<std::mutex> lock(mu_);
  return draining_;
}

bool HttpServer::WaitForSessions(std::chrono::system_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return sessions_changed_.wait_until(lock, deadline, [this] { return sessions_.empty(); });
}

void HttpServer::ForEachSession(const std::function<void(SessionControl&)>& fn) {
  std::vector<std::shared_ptr<SessionControl>> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, weak] : sessions_) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) fn(*s);
}

void HttpServer::AbortAll() {
  ForEachSession([](SessionControl& s) { s.Abort(); });
}

void HttpServer::Shutdown(std::chrono::system_clock::time_point deadline) {
  if (stopped_) return;
  stopped_ = true;
  // Closed on an io thread (the accept loop runs there), and waited for: no session starts after.
  if (acceptor_ && !threads_.empty()) {
    std::promise<void> closed;
    net::post(io_, [this, &closed] {
      boost::system::error_code ignored;
      acceptor_->close(ignored);
      if (accept_pause_) accept_pause_->cancel();
      closed.set_value();
    });
    closed.get_future().wait();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    draining_ = true;
  }
  ForEachSession([](SessionControl& s) { s.Drain(); });
  if (!WaitForSessions(deadline)) {
    ForEachSession([](SessionControl& s) { s.Abort(); });
    if (!WaitForSessions(std::chrono::system_clock::now() + kAbortGrace)) {
      spdlog::error("HTTP: connections still open after shutdown");
    }
  }
  io_.stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  acceptor_.reset();
}

}  // namespace smallmind::gateway::http

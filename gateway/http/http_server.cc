#include "gateway/http/http_server.h"

#include <future>
#include <utility>

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

shared::Status MakeTlsContext(const HttpTls& tls, std::optional<net::ssl::context>* out) {
  try {
    net::ssl::context ctx(net::ssl::context::tls_server);
    ctx.set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                    net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                    net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
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
  Accept();
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    threads_.emplace_back([this] { io_.run(); });
  }
  return shared::Status::Ok();
}

void HttpServer::Accept() {
  acceptor_->async_accept(
      net::make_strand(io_), [this](boost::system::error_code ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted || !acceptor_->is_open()) return;
        if (!ec) {
          boost::system::error_code ignored;
          socket.set_option(tcp::no_delay(true), ignored);  // SSE chunks go out at once
          // Released after the lock: a session that already ended on another thread (a failed
          // TLS handshake is that quick) is destroyed with this last reference, and its
          // destructor takes mu_ (SessionEnded). Released under the lock, it deadlocked the
          // accept loop and every later drain.
          std::shared_ptr<SessionControl> session;
          std::lock_guard<std::mutex> lock(mu_);
          if (!draining_) {
            session = StartSession(std::move(socket), tls_ ? &*tls_ : nullptr, options_.limits,
                                   handler_, this);
            sessions_.emplace(session.get(), session);
          }
        } else {
          spdlog::warn("HTTP accept failed: {}", ec.message());
        }
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

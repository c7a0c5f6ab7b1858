// HttpSession: one client connection of the HTTP door (plain TCP or TLS): reads requests one at a
// time with bounded header and body sizes and idle/read timeouts, hands each to the handler as an
// Exchange, writes its answer (whole, or as a chunked event stream), keeps the connection alive
// between requests and watches for the client leaving while a request runs. Started by
// HttpServer; runs on its strand of the server's io_context. Not thread-safe beyond Exchange::Post.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "gateway/http/exchange.h"
#include "shared/request_limits.h"

namespace smallmind::gateway::http {

struct SessionLimits {
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = shared::kMaxRequestBytes;
  // A connection with no request in flight and no bytes arriving is closed after this; it also
  // bounds the time to receive one request and the TLS handshake.
  std::chrono::milliseconds idle_timeout{60000};
  // One write (a response, an event chunk) must finish within this, or the client is dropped.
  std::chrono::milliseconds write_timeout{60000};
};

// How long a handler told of the server's stop has to end its answer.
inline constexpr std::chrono::seconds kStopGrace{2};

using Handler = std::function<void(Request request, std::shared_ptr<Exchange> exchange)>;

// What a session tells its server: it ended (to stop tracking it), and asks whether the server is
// draining (then a connection closes after its current answer instead of reading another).
class SessionOwner {
 public:
  virtual void SessionEnded(const void* session) = 0;
  virtual bool draining() const = 0;

 protected:
  ~SessionOwner() = default;
};

// A running session's controls, held weakly by the server for shutdown.
class SessionControl {
 public:
  virtual ~SessionControl() = default;
  // Close now if no request is in flight; otherwise after the current answer.
  virtual void Drain() = 0;
  // End now, in-flight requests included: a handler that asked (Exchange::OnServerStop) is told
  // and gets kStopGrace to end its answer; otherwise, or after that, the connection closes (the
  // client is gone for the handler).
  virtual void Abort() = 0;
};

// Starts a session on `socket`; with `tls` non-null the TLS handshake comes first. `owner` and
// `handler` must outlive it (the server waits for its sessions before it is destroyed).
std::shared_ptr<SessionControl> StartSession(boost::asio::ip::tcp::socket socket,
                                             boost::asio::ssl::context* tls,
                                             const SessionLimits& limits, const Handler& handler,
                                             SessionOwner* owner);

}  // namespace smallmind::gateway::http

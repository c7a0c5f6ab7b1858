#include "gateway/http/http_session.h"

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <deque>
#include <optional>
#include <utility>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include "gateway/http/http_error.h"

namespace smallmind::gateway::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
using beast::error_code;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The header of an event stream; its body goes out as HTTP/1.1 chunks.
constexpr char kEventStreamHeader[] =
    "HTTP/1.1 200 OK\r\nServer: smallmind\r\nContent-Type: text/event-stream\r\n"
    "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";

// How long a refused request's remaining bytes are read and dropped before closing.
constexpr std::chrono::seconds kLingerTimeout{2};

std::string Chunk(const std::string& data) {
  return data.empty() ? std::string() : fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

template <typename Stream>
class Session;

// One request's Exchange; stale (ignored) once its session moved on to the next request.
template <typename Stream>
class SessionExchange final : public Exchange {
 public:
  SessionExchange(std::shared_ptr<Session<Stream>> session, uint64_t id)
      : session_(std::move(session)), id_(id) {}
  void Post(std::function<void()> fn) override { session_->Post(std::move(fn)); }
  void Reply(Response response) override { session_->Reply(id_, std::move(response)); }
  void Send(std::string events, std::function<void(bool)> done) override {
    session_->Send(id_, std::move(events), std::move(done));
  }
  void EndStream(bool close) override { session_->EndStream(id_, close); }
  void OnClientGone(std::function<void()> fn) override {
    session_->OnClientGone(id_, std::move(fn));
  }
  void OnServerStop(std::function<void()> fn) override {
    session_->OnServerStop(id_, std::move(fn));
  }

 private:
  const std::shared_ptr<Session<Stream>> session_;
  const uint64_t id_;
};

template <typename Stream>
class Session final : public SessionControl, public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, const SessionLimits& limits, const Handler& handler, SessionOwner* owner)
      : stream_(std::move(stream)), limits_(limits), handler_(handler), owner_(owner) {}
  ~Session() override { owner_->SessionEnded(static_cast<SessionControl*>(this)); }

  void Run() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      Lowest().expires_after(limits_.idle_timeout);
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](error_code ec) {
                                if (ec) return self->Close();
                                self->ReadHeader();
                              });
    } else {
      Post([self = this->shared_from_this()] { self->ReadHeader(); });
    }
  }

  void Post(std::function<void()> fn) { net::post(stream_.get_executor(), std::move(fn)); }
  void Drain() override {
    Post([self = this->shared_from_this()] {
      if (!self->in_flight_) self->Close();
    });
  }
  void Abort() override {
    Post([self = this->shared_from_this()] { self->Stop(); });
  }

  void Reply(uint64_t id, Response response) {
    if (id != exchange_id_ || ended_) return;
    ended_ = true;
    response.set(beast_http::field::server, "smallmind");
    response.keep_alive(keep_alive_ && !owner_->draining());
    response.prepare_payload();
    writes_.push_back({{}, nullptr, false});
    response_.emplace(std::move(response));
    StartWrite();
  }
  void Send(uint64_t id, std::string events, std::function<void(bool)> done) {
    if (id != exchange_id_ || ended_ || gone_) {
      if (done) Post([done = std::move(done)] { done(false); });
      return;
    }
    std::string bytes;
    if (!stream_started_) {
      stream_started_ = true;
      bytes = kEventStreamHeader;
      bytes += keep_alive_ ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
    }
    bytes += Chunk(events);
    writes_.push_back({std::move(bytes), std::move(done), false});
    StartWrite();
  }
  void EndStream(uint64_t id, bool close) {
    if (id != exchange_id_ || ended_) return;
    ended_ = true;
    if (close) keep_alive_ = false;
    writes_.push_back({stream_started_ ? "0\r\n\r\n" : "", nullptr, true});
    StartWrite();
  }
  void OnClientGone(uint64_t id, std::function<void()> fn) {
    if (id != exchange_id_) return;
    if (gone_) return Post(std::move(fn));
    on_gone_ = std::move(fn);
  }
  void OnServerStop(uint64_t id, std::function<void()> fn) {
    if (id != exchange_id_ || ended_) return;
    if (stopping_) return Post(std::move(fn));
    on_stop_ = std::move(fn);
  }

 private:
  struct Write {
    std::string bytes;               // raw bytes; empty with response_ set: the response
    std::function<void(bool)> done;  // null for the final write of an exchange
    bool last = false;               // ends an event stream
  };

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void ReadHeader() {
    if (owner_->draining()) return Close();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(limits_.max_header_bytes));
    parser_->body_limit(limits_.max_body_bytes);
    Lowest().expires_after(limits_.idle_timeout);
    beast_http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(error_code ec) {
    if (ec) return OnReadError(ec);
    const auto& req = parser_->get();
    if (beast::iequals(req[beast_http::field::expect], "100-continue")) {
      auto cont = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
      net::async_write(stream_, net::buffer(*cont),
                       [self = this->shared_from_this(), cont](error_code ec, size_t) {
                         if (ec) return self->Close();
                         self->ReadBody();
                       });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    Lowest().expires_after(limits_.idle_timeout);
    beast_http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](error_code ec, size_t) { self->OnRequest(ec); });
  }

  // A request that could not be read: say why when the client can still hear it, then close.
  void OnReadError(error_code ec) {
    HttpError error;
    if (ec == beast_http::error::body_limit) {
      error = MakeError(
          413, fmt::format("the request body is larger than {} bytes", limits_.max_body_bytes), {},
          "request_too_large");
    } else if (ec == beast_http::error::header_limit) {
      error = MakeError(
          431, fmt::format("the request header is larger than {} bytes", limits_.max_header_bytes),
          {}, "header_too_large");
    } else if (ec.category() ==
                   beast_http::make_error_code(beast_http::error::bad_target).category() &&
               ec != beast_http::error::end_of_stream && ec != beast_http::error::partial_message) {
      error = MakeError(400, "malformed HTTP request: " + ec.message(), {}, "bad_request");
    } else {
      return Close();  // the client left, timed out or the connection failed
    }
    ++exchange_id_;
    ended_ = false;
    in_flight_ = true;
    keep_alive_ = false;
    linger_ = true;
    Reply(exchange_id_, JsonResponse(error.status, ErrorBody(error)));
  }

  void OnRequest(error_code ec) {
    if (ec) return OnReadError(ec);
    Request request = parser_->release();
    keep_alive_ = request.keep_alive();
    ++exchange_id_;
    ended_ = false;
    in_flight_ = true;
    gone_ = false;
    stream_started_ = false;
    on_gone_ = nullptr;
    on_stop_ = nullptr;
    Lowest().expires_never();
    WatchClient();
    try {
      handler_(std::move(request),
               std::make_shared<SessionExchange<Stream>>(this->shared_from_this(), exchange_id_));
    } catch (const std::exception& e) {
      // A handler bug must cost one request, not the gateway and every stream it carries.
      spdlog::error("HTTP: a request's handler failed: {}", e.what());
      if (stream_started_) {
        EndStream(exchange_id_, /*close=*/true);
      } else {
        Reply(exchange_id_,
              JsonResponse(500, ErrorBody(MakeError(500,
                                                    "internal error: the server could not "
                                                    "handle this request",
                                                    {}, "internal_error"))));
      }
    }
  }

  // While a request runs the client sends nothing; readable means it closed (or pipelined, which
  // we cannot tell from a TLS alert: then stop watching and let a failed write tell).
  void WatchClient() {
    const uint64_t watch = exchange_id_;
    Lowest().socket().async_wait(
        net::socket_base::wait_read, [self = this->shared_from_this(), watch](error_code ec) {
          if (watch != self->exchange_id_ || !self->in_flight_) return;
          if (!ec) {
            char c = 0;
            const ssize_t n =
                ::recv(self->Lowest().socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
            if (n > 0) return;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return self->WatchClient();
          } else if (ec == net::error::operation_aborted) {
            return;
          }
          self->ClientGone(/*close=*/false);
        });
  }

  // The server stops: the handler that asked ends its answer within kStopGrace, then (or at
  // once, without one) the connection closes.
  void Stop() {
    if (stopping_) return;  // the grace timer closes it
    if (!in_flight_ || ended_ || !on_stop_) return ClientGone(/*close=*/true);
    stopping_ = true;
    keep_alive_ = false;
    stop_timer_.expires_after(kStopGrace);
    stop_timer_.async_wait([self = this->shared_from_this(), id = exchange_id_](error_code ec) {
      if (!ec && id == self->exchange_id_ && self->in_flight_) self->ClientGone(/*close=*/true);
    });
    std::exchange(on_stop_, nullptr)();
  }

  void ClientGone(bool close) {
    if (!in_flight_) return Close();
    if (!gone_) {
      gone_ = true;
      keep_alive_ = false;
      if (on_gone_) std::exchange(on_gone_, nullptr)();
    }
    if (close) Close();
  }

  void StartWrite() {
    if (writing_ || writes_.empty()) return;
    if (gone_ || closed_) return FailWrites();
    writing_ = true;
    Lowest().expires_after(limits_.write_timeout);
    auto on_done = [self = this->shared_from_this()](error_code ec, size_t) { self->OnWrite(ec); };
    if (writes_.front().bytes.empty() && response_) {
      beast_http::async_write(stream_, *response_, std::move(on_done));
    } else if (writes_.front().bytes.empty()) {
      Post([on_done = std::move(on_done)]() mutable { on_done(error_code{}, 0); });
    } else {
      net::async_write(stream_, net::buffer(writes_.front().bytes), std::move(on_done));
    }
  }

  void OnWrite(error_code ec) {
    writing_ = false;
    Write w = std::move(writes_.front());
    writes_.pop_front();
    const bool final = w.last || (!w.done && response_);
    response_.reset();
    if (ec) {
      ClientGone(/*close=*/false);
      if (w.done) w.done(false);
      return FailWrites();
    }
    if (w.done) w.done(true);
    if (final) return FinishExchange();
    StartWrite();
  }

  void FailWrites() {
    std::deque<Write> writes = std::move(writes_);
    writes_.clear();
    response_.reset();
    for (Write& w : writes) {
      if (w.done) w.done(false);
    }
    if (ended_) FinishExchange();
  }

  // The exchange's last byte is out: read the next request, or close.
  void FinishExchange() {
    if (!in_flight_) return;
    in_flight_ = false;
    on_gone_ = nullptr;
    on_stop_ = nullptr;
    stop_timer_.cancel();
    error_code ignored;
    Lowest().socket().cancel(ignored);  // ends WatchClient's wait
    if (linger_ && !gone_) return Linger();
    if (!keep_alive_ || gone_ || owner_->draining()) return Close();
    ReadHeader();
  }

  // After refusing a request whose body was not read: stop sending, then read and drop what the
  // client still sends for a while, so that closing does not reset the connection before the
  // client read the answer.
  void Linger() {
    error_code ignored;
    Lowest().socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    Lowest().expires_after(kLingerTimeout);
    Lowest().async_read_some(net::buffer(linger_buffer_),
                             [self = this->shared_from_this()](error_code ec, size_t) {
                               if (ec) return self->Close();
                               self->Linger();
                             });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    error_code ignored;
    Lowest().socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    Lowest().close();
  }

  Stream stream_;
  const SessionLimits& limits_;
  const Handler& handler_;
  SessionOwner* const owner_;
  beast::flat_buffer buffer_;
  std::optional<beast_http::request_parser<beast_http::string_body>> parser_;
  uint64_t exchange_id_ = 0;  // the current request's number
  bool in_flight_ = false;    // a request was read and its answer is not fully written
  bool ended_ = false;        // its handler gave the last part of the answer
  bool keep_alive_ = true;
  bool gone_ = false;  // the client left during the current request
  bool closed_ = false;
  bool stream_started_ = false;  // the event stream's header went out
  bool writing_ = false;
  bool linger_ = false;  // close by Linger() after the current answer
  std::array<char, 4096> linger_buffer_;
  bool stopping_ = false;  // told the handler of the server's stop
  std::function<void()> on_gone_;
  std::function<void()> on_stop_;
  net::steady_timer stop_timer_{stream_.get_executor()};
  std::deque<Write> writes_;
  std::optional<Response> response_;  // the whole response being written
};

}  // namespace

Response JsonResponse(int status, std::string body) {
  Response r{static_cast<beast_http::status>(status), 11};
  r.set(beast_http::field::content_type, "application/json");
  r.body() = std::move(body);
  return r;
}

std::shared_ptr<SessionControl> StartSession(net::ip::tcp::socket socket, net::ssl::context* tls,
                                             const SessionLimits& limits, const Handler& handler,
                                             SessionOwner* owner) {
  if (tls) {
    auto s = std::make_shared<Session<TlsStream>>(TlsStream(std::move(socket), *tls), limits,
                                                  handler, owner);
    s->Run();
    return s;
  }
  auto s = std::make_shared<Session<PlainStream>>(PlainStream(std::move(socket)), limits, handler,
                                                  owner);
  s->Run();
  return s;
}

}  // namespace smallmind::gateway::http

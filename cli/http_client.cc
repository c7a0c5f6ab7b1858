#include "cli/http_client.h"

#include <sys/socket.h>

#include <cstdint>
#include <limits>
#include <utility>

#include <spdlog/fmt/fmt.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace smallmind::cli {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Json = nlohmann::json;

struct Connection {
  net::io_context io;
  beast::tcp_stream stream{io};
  beast::flat_buffer buffer;
};

shared::Status Failed(const char* what, const HttpClient& c, const beast::error_code& ec) {
  return shared::Unavailable(
      fmt::format("{} http://{}:{}: {}", what, c.host(), c.port(), ec.message()));
}

shared::Status Open(const HttpClient& c, Connection& conn) {
  beast::error_code ec;
  net::ip::tcp::resolver resolver(conn.io);
  const auto endpoints = resolver.resolve(c.host(), c.port(), ec);
  if (ec) return Failed("cannot resolve", c, ec);
  conn.stream.connect(endpoints, ec);
  if (ec) return Failed("cannot connect to", c, ec);
  return shared::Status::Ok();
}

http::request<http::string_body> MakeRequest(http::verb verb, const std::string& target,
                                             const HttpClient& c, const std::string& api_key) {
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, c.host() + ":" + c.port());
  req.set(http::field::user_agent, "smallmind-cli");
  req.keep_alive(false);
  if (!api_key.empty()) req.set(http::field::authorization, "Bearer " + api_key);
  return req;
}

Json ParseJson(const std::string& body) { return Json::parse(body, nullptr, false); }

// Hands each complete `data:` event at the front of `body` to `on_event` and erases it; true
// once [DONE] came.
bool DrainEvents(std::string& body, const std::function<void(const Json&)>& on_event) {
  size_t end;
  while ((end = body.find("\n\n")) != std::string::npos) {
    const std::string event = body.substr(0, end);
    body.erase(0, end + 2);
    size_t pos = 0;
    while (pos < event.size()) {
      size_t eol = event.find('\n', pos);
      if (eol == std::string::npos) eol = event.size();
      std::string_view line(event.data() + pos, eol - pos);
      pos = eol + 1;
      if (!line.starts_with("data:")) continue;
      line.remove_prefix(5);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      if (line == "[DONE]") return true;
      Json j = Json::parse(line, nullptr, false);
      if (!j.is_discarded()) on_event(j);
    }
  }
  return false;
}

}  // namespace

shared::Result<HttpClient> HttpClient::Create(const std::string& base, std::string api_key) {
  std::string rest = base;
  if (rest.starts_with("https://")) {
    return shared::InvalidArgument(
        "--addr " + base + ": the chat client speaks plain HTTP only (give http://HOST:PORT)");
  }
  if (rest.starts_with("http://")) rest = rest.substr(7);
  if (const size_t slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  std::string host = rest, port = "80";
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']', colon) == std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || port.empty()) {
    return shared::InvalidArgument("--addr " + base + ": expected http://HOST:PORT");
  }
  return HttpClient(std::move(host), std::move(port), std::move(api_key));
}

HttpClient::HttpClient(HttpClient&& other) noexcept
    : host_(std::move(other.host_)),
      port_(std::move(other.port_)),
      api_key_(std::move(other.api_key_)) {}

shared::Result<HttpAnswer> HttpClient::Get(const std::string& target) {
  Connection conn;
  SM_RETURN_IF_ERROR(Open(*this, conn));
  auto req = MakeRequest(http::verb::get, target, *this, api_key_);
  beast::error_code ec;
  http::write(conn.stream, req, ec);
  if (ec) return Failed("cannot send to", *this, ec);
  http::response<http::string_body> res;
  http::read(conn.stream, conn.buffer, res, ec);
  if (ec) return Failed("no answer from", *this, ec);
  return HttpAnswer{static_cast<int>(res.result_int()), ParseJson(res.body())};
}

shared::Result<HttpClient::StreamEnd> HttpClient::Stream(
    const std::string& target, const Json& body, const std::function<void(const Json&)>& on_event) {
  Connection conn;
  SM_RETURN_IF_ERROR(Open(*this, conn));
  StreamEnd end;
  if (!SetActiveSocket(conn.stream.socket().native_handle())) {
    end.interrupted = true;
    return end;
  }
  struct Clear {
    HttpClient* c;
    ~Clear() { c->SetActiveSocket(-1); }
  } clear{this};
  auto req = MakeRequest(http::verb::post, target, *this, api_key_);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "text/event-stream");
  req.body() = body.dump();
  req.prepare_payload();
  beast::error_code ec;
  http::write(conn.stream, req, ec);
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // a stream has no size
  if (!ec) http::read_header(conn.stream, conn.buffer, parser, ec);
  end.answer.status = ec ? 0 : static_cast<int>(parser.get().result_int());
  bool done = false;
  while (!ec && end.answer.status == 200 && !done && !parser.is_done()) {
    http::read_some(conn.stream, conn.buffer, parser, ec);
    done = DrainEvents(parser.get().body(), on_event);
  }
  if (!ec && end.answer.status != 200) {
    http::read(conn.stream, conn.buffer, parser, ec);
    end.answer.body = ParseJson(parser.get().body());
  }
  if (interrupted()) {
    end.interrupted = true;
    return end;
  }
  if (ec && !done) return Failed("the stream broke from", *this, ec);
  return end;
}

void HttpClient::Interrupt() {
  std::lock_guard<std::mutex> lock(mu_);
  interrupted_ = true;
  if (active_fd_ >= 0) ::shutdown(active_fd_, SHUT_RDWR);
}

void HttpClient::ClearInterrupt() {
  std::lock_guard<std::mutex> lock(mu_);
  interrupted_ = false;
}

bool HttpClient::SetActiveSocket(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  active_fd_ = fd;
  return !interrupted_ || fd < 0;
}

bool HttpClient::interrupted() {
  std::lock_guard<std::mutex> lock(mu_);
  return interrupted_;
}

std::string HttpErrorText(const HttpAnswer& answer) {
  if (answer.body.is_object() && answer.body.contains("error")) {
    const Json& e = answer.body["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) {
      return fmt::format("{}: {}", answer.status, e["message"].get<std::string>());
    }
  }
  return fmt::format("HTTP status {}", answer.status);
}

}  // namespace smallmind::cli

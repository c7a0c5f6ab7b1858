// A blocking HTTP/1.1 client for the HTTP door's tests: one request per call on a fresh loopback
// connection (or raw bytes, for malformed requests). Header-only; not thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace smallmind::testing {

struct HttpReply {
  int status = 0;
  std::string body;
  boost::beast::http::fields headers;
  bool ok = false;    // a response was read at all
  std::string error;  // why not
  nlohmann::json json() const {
    return nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  }
};

// "http://127.0.0.1:8000" -> {"127.0.0.1", "8000"}.
inline std::pair<std::string, std::string> HostPort(const std::string& base) {
  std::string rest = base.substr(base.find("//") + 2);
  const size_t colon = rest.rfind(':');
  return {rest.substr(0, colon), rest.substr(colon + 1)};
}

// Sends `raw` bytes and reads one response.
inline HttpReply HttpRaw(const std::string& base, const std::string& raw) {
  namespace net = boost::asio;
  namespace http = boost::beast::http;
  HttpReply reply;
  try {
    net::io_context io;
    net::ip::tcp::resolver resolver(io);
    net::ip::tcp::socket socket(io);
    auto [host, port] = HostPort(base);
    net::connect(socket, resolver.resolve(host, port));
    net::write(socket, net::buffer(raw));
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    http::read(socket, buffer, parser);
    const auto& r = parser.get();
    reply.status = r.result_int();
    reply.body = r.body();
    reply.headers = r.base();
    reply.ok = true;
  } catch (const std::exception& e) {
    reply.error = e.what();
  }
  return reply;
}

inline HttpReply HttpCall(const std::string& base, const std::string& method,
                          const std::string& target, const std::string& body = "",
                          const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  std::string raw = method + " " + target + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n";
  for (const auto& [name, value] : headers) raw += name + ": " + value + "\r\n";
  if (!body.empty() || method == "POST") {
    raw +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  raw += "\r\n" + body;
  return HttpRaw(base, raw);
}

}  // namespace smallmind::testing

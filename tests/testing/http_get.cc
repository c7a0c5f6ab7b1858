#include "tests/testing/http_get.h"

#include <exception>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace smallmind::testing {

namespace beast = boost::beast;
namespace http = beast::http;

shared::Result<HttpResponse> HttpGet(const std::string& host, int port, const std::string& target,
                                     std::chrono::milliseconds timeout) {
  try {
    boost::asio::io_context io;
    boost::asio::ip::tcp::resolver resolver(io);
    beast::tcp_stream stream(io);
    stream.expires_after(timeout);
    stream.connect(resolver.resolve(host, std::to_string(port)));
    http::request<http::empty_body> request(http::verb::get, target, 11);
    request.set(http::field::host, host);
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    beast::error_code ignored;
    stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    HttpResponse out;
    out.status = static_cast<int>(response.result_int());
    out.content_type = std::string(response[http::field::content_type]);
    out.body = std::move(response.body());
    return out;
  } catch (const std::exception& e) {
    return shared::Unavailable("GET http://" + host + ":" + std::to_string(port) + target + ": " +
                               e.what());
  }
}

}  // namespace smallmind::testing

// Exchange: one HTTP request's answering side, as the connection (HttpSession) offers it to the
// handlers in HttpApi: a whole response, or a Server-Sent Events stream written chunk by chunk,
// and a signal when the client goes away. Every method except Post runs on the connection's
// strand; Post gets a function there from any thread. After the exchange ended (or the client
// left) Reply/Send are ignored and Send's callback gets false.
#pragma once

#include <functional>
#include <string>

#include <boost/beast/http.hpp>

namespace smallmind::gateway::http {

namespace beast_http = boost::beast::http;
using Request = beast_http::request<beast_http::string_body>;
using Response = beast_http::response<beast_http::string_body>;

class Exchange {
 public:
  virtual ~Exchange() = default;

  // Runs `fn` on the connection's strand.
  virtual void Post(std::function<void()> fn) = 0;
  // The whole answer; ends the exchange.
  virtual void Reply(Response response) = 0;
  // A chunk of a `text/event-stream` 200 response (the header goes out with the first one).
  // `done(ok)` runs on the strand once it was written (ok) or could not be (client gone).
  virtual void Send(std::string events, std::function<void(bool ok)> done) = 0;
  // The last chunk of the event stream; ends the exchange. `close` drops the connection after it
  // (the stream failed half-way).
  virtual void EndStream(bool close) = 0;
  // `fn` runs on the strand if the client disconnects before the exchange ended.
  virtual void OnClientGone(std::function<void()> fn) = 0;
  // `fn` runs on the strand if the server stops (a drain past its deadline, a forced stop) before
  // the exchange ended: the handler should end its answer at once (a stream with its final chunk
  // and an error event) and gets a few seconds for it before the connection is closed. Without
  // it the connection just closes.
  virtual void OnServerStop(std::function<void()> fn) = 0;
};

// A JSON response with the given status (Content-Type application/json).
Response JsonResponse(int status, std::string body);

}  // namespace smallmind::gateway::http

#include "gateway/grpc/listener_watch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

namespace smallmind::gateway {
namespace {

using Clock = std::chrono::steady_clock;

// What a client sends first on plaintext HTTP/2: the preface and an empty SETTINGS frame.
const std::string kHttp2Preface = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
                                  std::string("\x00\x00\x00\x04\x00\x00\x00\x00\x00", 9);

// A TLS ClientHello offering h2, made with a memory BIO (no socket: only its bytes are sent).
std::string ClientHello() {
  std::string out;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return out;
  SSL* ssl = SSL_new(ctx);
  BIO* rbio = BIO_new(BIO_s_mem());
  BIO* wbio = BIO_new(BIO_s_mem());
  if (ssl != nullptr && rbio != nullptr && wbio != nullptr) {
    static const unsigned char kAlpn[] = {2, 'h', '2'};
    SSL_set_alpn_protos(ssl, kAlpn, sizeof(kAlpn));
    SSL_set_bio(ssl, rbio, wbio);  // ssl owns both now
    rbio = wbio = nullptr;
    SSL_set_connect_state(ssl);
    SSL_do_handshake(ssl);  // wants to read the ServerHello; the ClientHello is in wbio
    char* data = nullptr;
    const long n = BIO_get_mem_data(SSL_get_wbio(ssl), &data);
    if (n > 0) out.assign(data, static_cast<size_t>(n));
  }
  BIO_free(rbio);
  BIO_free(wbio);
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  return out;
}

// Waits for `events` on `fd` until `deadline`; true when they came.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

}  // namespace

ListenerState JudgeListener(std::optional<std::chrono::milliseconds> failing_for,
                            const ListenerWatchOptions& options) {
  if (!failing_for) return ListenerState::kServing;
  if (*failing_for >= options.exit_after) return ListenerState::kWedged;
  if (*failing_for >= options.not_serving_after) return ListenerState::kNotServing;
  return ListenerState::kServing;
}

bool ProbeListener(int port, bool tls, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0 ||
            (errno == EINPROGRESS && WaitFor(fd, POLLOUT, deadline));
  int error = 0;
  socklen_t len = sizeof(error);
  ok = ok && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
  const std::string hello = tls ? ClientHello() : kHttp2Preface;
  ok = ok && !hello.empty() &&
       ::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(hello.size());
  // Any answer, or the server closing the connection, means it was accepted.
  ok = ok && WaitFor(fd, POLLIN, deadline);
  ::close(fd);
  return ok;
}

ListenerWatch::ListenerWatch(ListenerWatchOptions options, Probe probe,
                             std::function<void(bool)> on_serving, std::function<void()> on_wedged)
    : options_(options),
      probe_(std::move(probe)),
      on_serving_(std::move(on_serving)),
      on_wedged_(std::move(on_wedged)) {
  if (options_.interval.count() > 0) thread_ = std::thread([this] { Run(); });
}

ListenerWatch::~ListenerWatch() { Stop(); }

void ListenerWatch::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ListenerWatch::Run() {
  std::optional<Clock::time_point> first_failure;
  ListenerState state = ListenerState::kServing;
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, options_.interval, [this] { return stopping_; })) {
    lock.unlock();
    const bool answered = probe_();
    const auto now = Clock::now();
    if (answered) {
      first_failure.reset();
    } else if (!first_failure) {
      first_failure = now;
    }
    std::optional<std::chrono::milliseconds> failing_for;
    if (first_failure) {
      failing_for = std::chrono::duration_cast<std::chrono::milliseconds>(now - *first_failure);
    }
    const ListenerState next = JudgeListener(failing_for, options_);
    if (next != state) {
      if (next == ListenerState::kServing) on_serving_(true);
      if (state == ListenerState::kServing) on_serving_(false);
      if (next == ListenerState::kWedged) on_wedged_();
      state = next;
    }
    lock.lock();
    if (state == ListenerState::kWedged) return;  // the gateway is on its way out
  }
}

}  // namespace smallmind::gateway

// ListenerWatch: the gateway's probe of its own gRPC port tells a listener that accepts from one
// that does not, and a failing one turns NOT_SERVING, then wedged, in that order (issue 40).
#include "gateway/grpc/listener_watch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

using std::chrono::milliseconds;

TEST(ListenerWatchTest, JudgeListenerGoesNotServingThenWedgedAsFailuresLast) {
  ListenerWatchOptions o;
  o.not_serving_after = milliseconds(10);
  o.exit_after = milliseconds(30);
  EXPECT_EQ(JudgeListener(std::nullopt, o), ListenerState::kServing);
  EXPECT_EQ(JudgeListener(milliseconds(0), o), ListenerState::kServing) << "one miss is no wedge";
  EXPECT_EQ(JudgeListener(milliseconds(10), o), ListenerState::kNotServing);
  EXPECT_EQ(JudgeListener(milliseconds(29), o), ListenerState::kNotServing);
  EXPECT_EQ(JudgeListener(milliseconds(30), o), ListenerState::kWedged);
}

// A loopback TCP listener; `accepting` = a thread accepts and answers each connection.
class Listener {
 public:
  explicit Listener(bool accepting) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (accepting) {
      thread_ = std::thread([this] {
        const int c = ::accept(fd_, nullptr, nullptr);  // one probe is all a test sends
        if (c < 0) return;
        char buffer[64];
        if (::read(c, buffer, sizeof(buffer)) > 0) ::write(c, "\0\0\0\4\0\0\0\0\0", 9);
        ::close(c);
      });
    }
  }
  ~Listener() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes a blocked accept
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(ListenerWatchTest, AProbeNeedsTheServerToAcceptAndAnswer) {
  {
    Listener answering(/*accepting=*/true);
    EXPECT_TRUE(ProbeListener(answering.port(), /*tls=*/false, milliseconds(5000)));
  }
  // Connections queue in the kernel's backlog, completed, but nobody accepts them: the wedge.
  Listener wedged(/*accepting=*/false);
  EXPECT_FALSE(ProbeListener(wedged.port(), /*tls=*/false, milliseconds(200)));
  EXPECT_FALSE(ProbeListener(wedged.port(), /*tls=*/true, milliseconds(200)));
}

TEST(ListenerWatchTest, FailingProbesTurnNotServingThenWedgedAndAnAnswerServesAgain) {
  ListenerWatchOptions o;
  o.interval = milliseconds(1);
  o.not_serving_after = milliseconds(0);  // the first failure
  o.exit_after = milliseconds(3600000);
  std::atomic<int> probes{0};
  std::mutex mu;
  std::vector<bool> serving;  // the callbacks in order
  std::promise<void> back;
  {
    ListenerWatch watch(
        o, [&] { return ++probes > 3; },  // three misses, then answers
        [&](bool s) {
          std::lock_guard<std::mutex> lock(mu);
          serving.push_back(s);
          if (s) back.set_value();
        },
        [] { ADD_FAILURE() << "wedged before exit_after"; });
    ASSERT_EQ(back.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  }
  EXPECT_EQ(serving, (std::vector<bool>{false, true}));

  o.exit_after = milliseconds(0);
  std::promise<void> wedged;
  {
    ListenerWatch watch(
        o, [] { return false; }, [&](bool s) { EXPECT_FALSE(s); }, [&] { wedged.set_value(); });
    EXPECT_EQ(wedged.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  }
}

}  // namespace
}  // namespace smallmind::gateway

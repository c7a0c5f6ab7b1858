#include "gateway/grpc/listen_address.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

// A listening loopback socket on a free port, closed at scope exit.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { Close(); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(ListenAddressTest, FormatsBareIpv6HostsInBrackets) {
  EXPECT_EQ(FormatListenAddress("0.0.0.0", 50051), "0.0.0.0:50051");
  EXPECT_EQ(FormatListenAddress("::", 1), "[::]:1");
  EXPECT_EQ(FormatListenAddress("[::1]", 2), "[::1]:2");
  EXPECT_EQ(FormatListenAddress("localhost", 3), "localhost:3");
  EXPECT_TRUE(IsWildcardHost("[::]"));
  EXPECT_FALSE(IsWildcardHost("127.0.0.1"));
}

TEST(ListenAddressTest, APortWithAListenerIsRefusedOnItsHostAndOnTheWildcard) {
  Listener listener;
  for (const char* host : {"127.0.0.1", "0.0.0.0", "localhost"}) {
    const shared::Status status = CheckPortFree(host, listener.port());
    EXPECT_EQ(status.code(), shared::StatusCode::kUnavailable) << host;
    EXPECT_NE(status.message().find("already in use"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(std::to_string(listener.port())), std::string::npos);
  }
  listener.Close();
  EXPECT_TRUE(CheckPortFree("127.0.0.1", listener.port()).ok());
}

TEST(ListenAddressTest, PortZeroIsAlwaysFree) { EXPECT_TRUE(CheckPortFree("127.0.0.1", 0).ok()); }

TEST(ListenAddressTest, AForeignHostIsAnError) {
  // TEST-NET-1 (RFC 5737) is never an address of this machine.
  const shared::Status foreign = CheckPortFree("192.0.2.1", 50051);
  EXPECT_EQ(foreign.code(), shared::StatusCode::kUnavailable);
  EXPECT_NE(foreign.message().find("not one of this machine's"), std::string::npos)
      << foreign.message();
}

}  // namespace
}  // namespace smallmind::gateway

// Descriptor exhaustion and the gRPC listener (issue 40): a gateway under a 200-descriptor limit
// gets a flood of connections to its gRPC port, more than it can accept; once the flood ends, its
// gRPC port either serves again or the gateway says NOT_SERVING and exits with status 3 for its
// supervisor. A silent wedge (up, but never accepting again) fails the test.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "smallmind/v1/inference.grpc.pb.h"
#include "tests/testing/child_process.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind {
namespace {

using std::chrono::milliseconds;

bool Answers(const std::string& address) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = v1::Inference::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + milliseconds(1000));
  v1::ModelInfo info;
  return stub->GetModelInfo(&context, {}, &info).ok();
}

// `n` connections to 127.0.0.1:`port` (bounded by n), held open until the result is destroyed.
std::vector<int> Flood(int port, int n) {
  std::vector<int> fds;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) break;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      break;
    }
    fds.push_back(fd);
  }
  return fds;
}

TEST(GatewayFdFloodTest, AfterAnFdFloodTheGrpcPortServesAgainOrTheGatewayExitsForItsSupervisor) {
  const testing::ScopedTempDir runtime("fdflood");
  auto child = testing::ChildProcess::Spawn(
      {"/usr/bin/prlimit", "--nofile=200:200", testing::BinaryPath("smallmind-gateway"), "--model",
       "builtin:tiny", "--workers", "1", "--listen-host", "127.0.0.1", "--port", "0",
       "--runtime-dir", runtime.path(), "--listener-probe-ms", "200", "--listener-exit-ms", "4000",
       "--drain-seconds", "0"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  testing::ChildProcess& gateway = **child;
  auto line = gateway.WaitForLine("listening on", milliseconds(60000));
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  const std::string address = line->substr(line->rfind(' ') + 1);
  ASSERT_TRUE(Answers(address));
  const int port = std::stoi(address.substr(address.rfind(':') + 1));

  {
    std::vector<int> flood = Flood(port, 400);  // twice the gateway's descriptors
    EXPECT_GT(flood.size(), 200u) << "the flood did not reach the gateway's limit";
    std::vector<int> more = Flood(port, 50);  // while it is out of descriptors
    ::usleep(1000 * 1000);
    for (int fd : flood) ::close(fd);
    for (int fd : more) ::close(fd);
  }
  // Bounded: 200 rounds of a 1 s call or a 100 ms wait.
  bool recovered = false;
  int status = -1;
  for (int round = 0; round < 200 && !recovered && status == -1; ++round) {
    status = gateway.Wait(milliseconds(100));
    if (status == -1) recovered = Answers(address);
  }
  if (recovered) {
    SUCCEED() << "the gRPC port accepts again";
    EXPECT_EQ(gateway.Terminate(milliseconds(20000)), 0);
  } else {
    ASSERT_NE(status, -1) << "silent wedge: the gateway is up and its gRPC port never answers";
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 3) << "a wedged listener exits with status 3";
  }
}

}  // namespace
}  // namespace smallmind

// The real smallmind-gateway attached by a real DNS name: `--worker-endpoints localhost:PORT`
// resolved by the system resolver (/etc/hosts) to a smallmind-worker started on its own on TCP.
// The worker is killed and started again on its address, and the gateway reconnects to it. (Names
// with several addresses that change are covered in process: tests/gateway/attached_workers_test.)
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/testing/free_port.h"
#include "tests/testing/rpc/gateway_fixture.h"

namespace smallmind {
namespace {

constexpr std::chrono::milliseconds kStartup{60000};

// Addresses `localhost` has here (as the gateway's resolver sees them), each one worker.
int LocalhostAddresses() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  if (getaddrinfo("localhost", nullptr, &hints, &found) != 0) return 0;
  std::set<std::string> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char host[NI_MAXHOST];
    if (getnameinfo(a->ai_addr, a->ai_addrlen, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) ==
        0) {
      addresses.insert(host);
    }
  }
  freeaddrinfo(found);
  return static_cast<int>(addresses.size());
}

// A worker listening on every address of localhost (gRPC binds each), KV cache in process memory
// so that a SIGKILL leaves nothing behind.
std::unique_ptr<testing::ChildProcess> StartWorker(int port) {
  auto child = testing::ChildProcess::Spawn(
      {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", testing::BinaryPath("smallmind-worker"),
       "--model", "builtin:tiny", "--listen", "localhost:" + std::to_string(port), "--kv-segment",
       "none", "--threads", "1", "--kv-memory-mb", "16", "--exit-with-parent"});
  if (!child.ok() || !(*child)->WaitForLine("serving on", kStartup).ok()) return nullptr;
  return std::move(child).value();
}

v1::GenerateRequest Request(int i) {
  v1::GenerateRequest request;
  request.set_prompt("dns " + std::to_string(i));
  request.mutable_stopping()->set_max_new_tokens(4);
  return request;
}

TEST(GatewayDnsWorkersTest, AttachesByHostNameAndReconnectsToARestartedWorker) {
  const int addresses = LocalhostAddresses();
  ASSERT_GE(addresses, 1) << "localhost does not resolve";
  const int port = testing::FreePort();
  ASSERT_NE(port, 0);
  auto worker = StartWorker(port);
  ASSERT_NE(worker, nullptr);

  testing::GatewayOptions options;
  options.workers = addresses;  // the fixture waits for this many ready workers
  options.extra_args = {"--worker-endpoints", "localhost:" + std::to_string(port),
                        "--resolve-interval-ms", "200"};
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  for (int i = 0; i < 2 * addresses; ++i) {
    auto outcome = testing::RunGenerate(gateway.stub(), Request(i));
    ASSERT_TRUE(outcome.status.ok()) << outcome.status.error_message();
    EXPECT_LT(outcome.last()->timings().worker_id(), static_cast<uint32_t>(addresses));
  }

  worker->Signal(SIGKILL);
  ASSERT_NE(worker->Wait(kStartup), -1);
  worker = StartWorker(port);
  ASSERT_NE(worker, nullptr);
  // The gateway polls its workers every 500 ms and reconnects within a second; until then a
  // request may find no worker (bounded retries, no fixed sleep as synchronization).
  grpc::Status last;
  for (int attempt = 0; attempt < 300; ++attempt) {
    auto outcome = testing::RunGenerate(gateway.stub(), Request(attempt));
    last = outcome.status;
    if (last.ok()) break;
    EXPECT_EQ(last.error_code(), grpc::StatusCode::UNAVAILABLE) << last.error_message();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(last.ok()) << "the gateway never reconnected: " << last.error_message();
  EXPECT_TRUE(gateway.Stop().ok());
  EXPECT_NE(worker->Terminate(kStartup), -1);
}

}  // namespace
}  // namespace smallmind

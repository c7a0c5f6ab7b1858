#include "tests/testing/rpc/secure_gateway.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>

#include <gtest/gtest.h>

namespace smallmind::testing {

using std::chrono::milliseconds;

shared::Result<std::unique_ptr<SecureGateway>> SecureGateway::Start(
    std::vector<std::string> flags) {
  auto gateway = std::unique_ptr<SecureGateway>(new SecureGateway());
  std::vector<std::string> argv = {BinaryPath("smallmind-gateway"),
                                   "--port",
                                   "0",
                                   "--listen-host",
                                   "127.0.0.1",
                                   "--model",
                                   "builtin:tiny",
                                   "--workers",
                                   "1",
                                   "--runtime-dir",
                                   gateway->runtime_.path()};
  const bool http = std::find(flags.begin(), flags.end(), "--http-port") != flags.end();
  argv.insert(argv.end(), flags.begin(), flags.end());
  SM_ASSIGN_OR_RETURN(gateway->process_, ChildProcess::Spawn(argv));
  if (http) {
    SM_ASSIGN_OR_RETURN(std::string line,
                        gateway->process_->WaitForLine("HTTP at", milliseconds(60000)));
    gateway->http_address_ = line.substr(line.rfind(' ') + 1);
  }
  SM_ASSIGN_OR_RETURN(std::string line,
                      gateway->process_->WaitForLine("listening on", milliseconds(60000)));
  gateway->address_ = line.substr(line.rfind(' ') + 1);
  return gateway;
}

SecureGateway::~SecureGateway() {
  const int status = process_->Terminate(milliseconds(60000));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
}

}  // namespace smallmind::testing

#include "tests/testing/test_certificates.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "tests/testing/child_process.h"

namespace smallmind::testing {
namespace {

// P-256 keys take milliseconds to make; the certificates outlive any test run.
constexpr char kKey[] = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

std::string FindOnPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string candidate = std::string(dirs.substr(0, colon)) + "/" + std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return "";
}

// Shell lines that make a CA (self-signed) named `name`.
std::string CaScript(const std::string& name) {
  return std::string("openssl req -x509 ") + kKey + " -keyout " + name + ".key -out " + name +
         ".pem -days 3 -subj /CN=smallmind-test-" + name + "\n";
}

// Shell lines that make `name`.pem/.key signed by CA `ca` with extensions `ext`.
std::string LeafScript(const std::string& name, const std::string& ca, const std::string& ext,
                       int serial) {
  return "printf '" + ext + "\\n' > " + name + ".ext\nopenssl req " + kKey + " -keyout " + name +
         ".key -out " + name + ".csr -subj /CN=smallmind-test-" + name +
         "\nopenssl x509 -req -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca +
         ".key -set_serial " + std::to_string(serial) + " -days 3 -extfile " + name + ".ext -out " +
         name + ".pem\n";
}

}  // namespace

shared::Result<TestCertificates> MakeTestCertificates(const std::string& dir) {
  const std::string openssl = FindOnPath("openssl");
  if (openssl.empty()) {
    return shared::NotFound("openssl is not installed (scripts/install_deps.sh installs it)");
  }
  const std::string script =
      "set -e\ncd '" + dir + "'\nexec 2>openssl.log >&2\n" + CaScript("ca") +
      LeafScript("server", "ca",
                 "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\\nextendedKeyUsage=serverAuth",
                 2) +
      LeafScript("client", "ca", "extendedKeyUsage=clientAuth", 3) + CaScript("other_ca") +
      LeafScript("other_client", "other_ca", "extendedKeyUsage=clientAuth", 4);
  SM_ASSIGN_OR_RETURN(auto shell, ChildProcess::Spawn({"/bin/sh", "-c", script}));
  const int status = shell->Wait(std::chrono::seconds(60));
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return shared::Internal("openssl failed making test certificates (wait status " +
                            std::to_string(status) + "): " + ReadTextFile(dir + "/openssl.log"));
  }
  TestCertificates c;
  c.dir = dir;
  c.ca_cert = dir + "/ca.pem";
  c.server_cert = dir + "/server.pem";
  c.server_key = dir + "/server.key";
  c.client_cert = dir + "/client.pem";
  c.client_key = dir + "/client.key";
  c.other_ca_cert = dir + "/other_ca.pem";
  c.other_client_cert = dir + "/other_client.pem";
  c.other_client_key = dir + "/other_client.key";
  return c;
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace smallmind::testing

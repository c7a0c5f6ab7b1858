#include "gateway/workers/stale_runtime_files.h"

#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace smallmind::gateway {
namespace {

namespace fs = std::filesystem;

// A private runtime directory under $TMPDIR, removed at scope end.
struct RuntimeDir {
  fs::path path;
  RuntimeDir() {
    std::string tmpl = (fs::temp_directory_path() / "stale-test-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~RuntimeDir() { fs::remove_all(path); }
  fs::path MakeGatewayDir(pid_t pid) const {
    const fs::path dir = path / ("smallmind-" + std::to_string(pid) + "-AbC123");
    fs::create_directory(dir);
    return dir;
  }
};

bool Contains(const std::vector<std::string>& removed, const fs::path& p) {
  return std::find(removed.begin(), removed.end(), p.string()) != removed.end();
}

// A killed gateway whose parent has not reaped it yet is a zombie: kill(pid, 0) still succeeds,
// so its directory was once kept forever.
TEST(StaleRuntimeFilesTest, ADirectoryOfAZombieGatewayIsRemoved) {
  RuntimeDir runtime;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);  // exited, not reaped
  const fs::path dir = runtime.MakeGatewayDir(child);
  const std::vector<std::string> removed = ReclaimStaleRuntimeFiles(runtime.path.string());
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(Contains(removed, dir));
  EXPECT_FALSE(fs::exists(dir));
}

// The pid in the name now belongs to a process that started after the directory last changed
// (this test process, against a directory dated an hour back): the gateway is gone.
TEST(StaleRuntimeFilesTest, ADirectoryWhosePidWasReusedIsRemoved) {
  RuntimeDir runtime;
  const fs::path dir = runtime.MakeGatewayDir(::getpid());
  timeval times[2];
  ::gettimeofday(&times[0], nullptr);
  times[0].tv_sec -= 3600;
  times[1] = times[0];
  ASSERT_EQ(::utimes(dir.c_str(), times), 0);
  const std::vector<std::string> removed = ReclaimStaleRuntimeFiles(runtime.path.string());
  EXPECT_TRUE(Contains(removed, dir));
  EXPECT_FALSE(fs::exists(dir));
}

// The same pid with a directory made after the process started: a live gateway's, kept.
TEST(StaleRuntimeFilesTest, ADirectoryOfALiveGatewayIsKept) {
  RuntimeDir runtime;
  const fs::path dir = runtime.MakeGatewayDir(::getpid());
  const std::vector<std::string> removed = ReclaimStaleRuntimeFiles(runtime.path.string());
  EXPECT_FALSE(Contains(removed, dir));
  EXPECT_TRUE(fs::exists(dir));
}

}  // namespace
}  // namespace smallmind::gateway

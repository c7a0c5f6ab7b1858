#include "tests/testing/scoped_temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include <gtest/gtest.h>

#include "shared/check.h"

namespace smallmind::testing {
namespace {

// Keeps a socket under the directory well inside sun_path's 108 bytes.
constexpr size_t kMaxPrefix = 24;

std::string DefaultPrefix() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const ::testing::TestSuite* suite = ::testing::UnitTest::GetInstance()->current_test_suite();
  std::string name = info != nullptr ? info->test_suite_name()
                                     : (suite != nullptr ? suite->name() : "smallmind-test");
  for (char& c : name) {
    if (c == '/') c = '_';  // parameterized suites: "Prefix/Suite"
  }
  return name;
}

}  // namespace

ScopedTempDir::ScopedTempDir(std::string_view prefix) {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  SM_CHECK(!ec) << "no temporary directory ($TMPDIR or /tmp): " << ec.message();
  std::string name = prefix.empty() ? DefaultPrefix() : std::string(prefix);
  if (name.size() > kMaxPrefix) name.resize(kMaxPrefix);
  std::string templ = (base / (name + "-XXXXXX")).string();
  const bool made = ::mkdtemp(templ.data()) != nullptr;
  SM_CHECK(made) << "cannot make a temporary directory " << templ << ": " << std::strerror(errno);
  path_ = std::move(templ);
}

ScopedTempDir::~ScopedTempDir() { Remove(); }

ScopedTempDir::ScopedTempDir(ScopedTempDir&& other) noexcept
    : path_(std::exchange(other.path_, std::string())) {}

ScopedTempDir& ScopedTempDir::operator=(ScopedTempDir&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::exchange(other.path_, std::string());
  }
  return *this;
}

std::string ScopedTempDir::File(std::string_view name) const {
  return path_ + "/" + std::string(name);
}

void ScopedTempDir::Remove() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (ec)
    ADD_FAILURE() << "cannot remove the temporary directory " << path_ << ": " << ec.message();
  path_.clear();
}

}  // namespace smallmind::testing

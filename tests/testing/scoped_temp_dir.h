// ScopedTempDir: a fresh private directory for one test (or one fixture), made under $TMPDIR
// (else /tmp) and removed with everything in it when the object goes out of scope. Every test that
// writes a file or a socket makes it in one of these, so a run leaves nothing behind. Not
// thread-safe; move-only.
#pragma once

#include <string>
#include <string_view>

namespace smallmind::testing {

class ScopedTempDir {
 public:
  // Makes $TMPDIR/<prefix>-XXXXXX with mode 0700; an empty prefix uses the running test suite's
  // name (shortened: Unix socket paths inside must stay under 108 bytes). Aborts the test
  // binary, naming the directory, if it cannot be made.
  explicit ScopedTempDir(std::string_view prefix = "");
  ~ScopedTempDir();
  ScopedTempDir(ScopedTempDir&& other) noexcept;
  ScopedTempDir& operator=(ScopedTempDir&& other) noexcept;
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name; makes nothing.
  std::string File(std::string_view name) const;

 private:
  void Remove();

  std::string path_;  // "" once moved from
};

}  // namespace smallmind::testing

// StandaloneSegmentName: a standalone worker's KV segment name has a random part, is found again
// by a restart, and nothing another user made or could change is trusted (issue 40).
#include "worker/kv/segment_name_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::worker {
namespace {

constexpr const char* kBase = "smallmind-kv-unix-tmp-w.sock";

bool IsRandomNameOf(const std::string& name) {
  const std::string base = kBase;
  return name.size() == base.size() + 17 && name.starts_with(base + "-") &&
         name.find_first_not_of("0123456789abcdef", base.size() + 1) == std::string::npos;
}

TEST(SegmentNameFileTest, ANewNameHasARandomPartAndARestartFindsItAgain) {
  const testing::ScopedTempDir parent("segname");
  auto dir = OwnerOnlyKvDir(parent.path());
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(dir->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto first = StandaloneSegmentName(*dir, kBase);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(IsRandomNameOf(*first)) << *first;
  auto again = StandaloneSegmentName(*dir, kBase);  // the warm restart
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *first);
  ASSERT_EQ(::stat((*dir + "/" + kBase + ".name").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Another directory (another machine, or after a clean exit) draws another name.
  RemoveSegmentName(*dir, kBase);
  EXPECT_NE(::access(dir->c_str(), F_OK), 0) << "the empty directory goes with the last name";
  auto dir2 = OwnerOnlyKvDir(parent.path());
  ASSERT_TRUE(dir2.ok());
  auto fresh = StandaloneSegmentName(*dir2, kBase);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(*fresh, *first) << "64 random bits drew the same name twice";
  auto renewed = RenewSegmentName(*dir2, kBase);
  ASSERT_TRUE(renewed.ok());
  EXPECT_NE(*renewed, *fresh);
  EXPECT_EQ(*StandaloneSegmentName(*dir2, kBase), *renewed);
  RemoveSegmentName(*dir2, kBase);
}

TEST(SegmentNameFileTest, ADirectoryOthersCanReadIsRefused) {
  const testing::ScopedTempDir parent("segname");
  const std::string dir = parent.path() + "/smallmind-kv-" + std::to_string(geteuid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  auto refused = OwnerOnlyKvDir(parent.path());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), shared::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find(dir), std::string::npos) << refused.status().message();
  ::rmdir(dir.c_str());
  // A symlink planted at the directory's name is refused too.
  ASSERT_EQ(::mkdir((parent.path() + "/elsewhere").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((parent.path() + "/elsewhere").c_str(), dir.c_str()), 0);
  EXPECT_FALSE(OwnerOnlyKvDir(parent.path()).ok());
  ::unlink(dir.c_str());
  ::rmdir((parent.path() + "/elsewhere").c_str());
}

TEST(SegmentNameFileTest, ANameFileOthersCouldWriteOrWithAForeignNameIsRefused) {
  const testing::ScopedTempDir parent("segname");
  auto dir = OwnerOnlyKvDir(parent.path());
  ASSERT_TRUE(dir.ok());
  const std::string file = *dir + "/" + kBase + ".name";
  std::ofstream(file) << kBase << "-0123456789abcdef\n";
  ASSERT_EQ(::chmod(file.c_str(), 0666), 0);
  auto open_mode = StandaloneSegmentName(*dir, kBase);
  ASSERT_FALSE(open_mode.ok());
  EXPECT_EQ(open_mode.status().code(), shared::StatusCode::kFailedPrecondition);
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  EXPECT_EQ(*StandaloneSegmentName(*dir, kBase), std::string(kBase) + "-0123456789abcdef");
  // A file pointing at a segment of another name (someone else's) is not followed.
  std::ofstream(file, std::ios::trunc) << "smallmind-kv-victim-0123456789abcdef\n";
  EXPECT_FALSE(StandaloneSegmentName(*dir, kBase).ok());
  if (geteuid() == 0) {  // root can make a file another uid owns
    std::ofstream(file, std::ios::trunc) << kBase << "-0123456789abcdef\n";
    ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(StandaloneSegmentName(*dir, kBase).ok()) << "a name file nobody owns";
  }
  ::unlink(file.c_str());
  ::rmdir(dir->c_str());
}

}  // namespace
}  // namespace smallmind::worker

#include "shared/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

namespace smallmind::shared {
namespace {

// A name no other test (or test process) uses.
std::string TestName() {
  static std::atomic<int> counter{0};
  return "smallmind-test-shm-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

// Removes the name at scope end, whatever the test did.
struct NameGuard {
  std::string name = TestName();
  ~NameGuard() { ShmSegment::Remove(name); }
};

TEST(ShmSegmentTest, CreatesAZeroedSegmentWithMode0600AndRemovesItOnDestruction) {
  NameGuard g;
  {
    auto seg = ShmSegment::Create(g.name, 8192);
    ASSERT_TRUE(seg.ok()) << seg.status().ToString();
    ASSERT_EQ((*seg)->size(), 8192u);
    EXPECT_TRUE((*seg)->created());
    const auto* bytes = static_cast<const unsigned char*>((*seg)->data());
    for (size_t i = 0; i < 8192; i += 511) EXPECT_EQ(bytes[i], 0) << i;
    struct stat st;
    ASSERT_EQ(stat(ShmSegment::PathOf(g.name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(st.st_size, 8192);
  }
  EXPECT_FALSE(ShmSegment::Exists(g.name));
}

TEST(ShmSegmentTest, ModeIs0600WhateverTheUmask) {
  NameGuard g;
  const mode_t old = umask(0);
  auto seg = ShmSegment::Create(g.name, 4096);
  umask(old);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  struct stat st;
  ASSERT_EQ(stat(ShmSegment::PathOf(g.name).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(ShmSegmentTest, CreateFailsWhenTheNameExists) {
  NameGuard g;
  auto first = ShmSegment::Create(g.name, 4096);
  ASSERT_TRUE(first.ok());
  auto second = ShmSegment::Create(g.name, 4096);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("already exists"), std::string::npos);
}

TEST(ShmSegmentTest, AttachIsRefusedWhileALiveHolderHasTheSegment) {
  NameGuard g;
  auto holder = ShmSegment::Create(g.name, 4096);
  ASSERT_TRUE(holder.ok());
  auto other = ShmSegment::Attach(g.name);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(other.status().message().find("in use"), std::string::npos);
}

TEST(ShmSegmentTest, AKeptSegmentIsAttachedWithItsBytesOnceItsHolderIsGone) {
  NameGuard g;
  {
    auto holder = ShmSegment::Create(g.name, 4096);
    ASSERT_TRUE(holder.ok());
    std::memcpy((*holder)->data(), "warm", 5);
    (*holder)->set_remove_on_close(false);
  }
  ASSERT_TRUE(ShmSegment::Exists(g.name));
  auto seg = ShmSegment::Attach(g.name);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  EXPECT_FALSE((*seg)->created());
  EXPECT_EQ((*seg)->size(), 4096u);
  EXPECT_STREQ(static_cast<const char*>((*seg)->data()), "warm");
}

// A segment planted under a worker's name by another user (mode 0666, or 0600 but theirs) was
// once attached read-write as a warm restart, and its planter read the prompts back out of it.
// Now only a segment of this uid with no group/other bit is attached.
TEST(ShmSegmentTest, AttachRefusesASegmentOthersCanReadOrThatIsNotOurs) {
  NameGuard g;
  for (mode_t mode : {0666, 0640, 0604, 0660}) {
    const int fd = ::shm_open(g.name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(::ftruncate(fd, 4096), 0);
    ASSERT_EQ(::fchmod(fd, mode), 0);
    auto seg = ShmSegment::Attach(g.name);
    ASSERT_FALSE(seg.ok()) << mode;
    EXPECT_EQ(seg.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(seg.status().message().find("refusing to use it"), std::string::npos)
        << seg.status().message();
    if (::geteuid() == 0 && mode == 0666) {  // root can plant a segment as another user
      ASSERT_EQ(::fchmod(fd, 0600), 0);
      ASSERT_EQ(::fchown(fd, 65534, 65534), 0);
      auto theirs = ShmSegment::Attach(g.name);
      ASSERT_FALSE(theirs.ok());
      EXPECT_NE(theirs.status().message().find("owned by uid 65534"), std::string::npos)
          << theirs.status().message();
    }
    ::close(fd);
    ASSERT_TRUE(ShmSegment::Remove(g.name));
  }
}

TEST(ShmSegmentTest, AttachOfAMissingNameIsNotFound) {
  NameGuard g;
  auto seg = ShmSegment::Attach(g.name);
  ASSERT_FALSE(seg.ok());
  EXPECT_EQ(seg.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(ShmSegment::Remove(g.name));
}

TEST(ShmSegmentTest, ReserveGivesTheSegmentItsPages) {
  NameGuard g;
  auto seg = ShmSegment::Create(g.name, 1 << 20);
  ASSERT_TRUE(seg.ok());
  ASSERT_TRUE((*seg)->Reserve().ok());
  struct stat st;
  ASSERT_EQ(stat(ShmSegment::PathOf(g.name).c_str(), &st), 0);
  EXPECT_GE(st.st_blocks * 512, 1 << 20);  // allocated, not sparse
}

// Minor page faults this process has taken so far.
long MinorFaults() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// After Reserve every page is mapped into the process: writing the whole segment (what decode
// steps do as they fill KV blocks) takes no page fault, and a re-attached segment's bytes are
// kept by it.
TEST(ShmSegmentTest, ReserveMapsEveryPageAndKeepsTheBytes) {
  NameGuard g;
  constexpr size_t kBytes = 16 << 20, kPage = 4096;
  {
    auto holder = ShmSegment::Create(g.name, kBytes);
    ASSERT_TRUE(holder.ok());
    auto* bytes = static_cast<unsigned char*>((*holder)->data());
    for (size_t i = 0; i < kBytes; i += kPage) bytes[i] = static_cast<unsigned char>(i / kPage);
    (*holder)->set_remove_on_close(false);
  }
  auto seg = ShmSegment::Attach(g.name);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  ASSERT_TRUE((*seg)->Reserve().ok());
  auto* bytes = static_cast<volatile unsigned char*>((*seg)->data());
  const long before = MinorFaults();
  int kept = 0;
  for (size_t i = 0; i < kBytes; i += kPage) {
    kept += bytes[i] == static_cast<unsigned char>(i / kPage);
    bytes[i] = 1;
  }
  const long faults = MinorFaults() - before;
  EXPECT_EQ(kept, static_cast<int>(kBytes / kPage));
  EXPECT_LT(faults, 64) << "of " << kBytes / kPage << " pages";  // was one a page
  ShmSegment::Remove(g.name);
}

TEST(ShmSegmentTest, RejectsNamesThatCannotNameASegment) {
  for (const std::string& bad :
       std::vector<std::string>{"", "a/b", ".hidden", "sp ace", std::string(201, 'x')}) {
    EXPECT_FALSE(ShmSegment::CheckName(bad).ok()) << bad;
    auto seg = ShmSegment::Create(bad, 4096);
    ASSERT_FALSE(seg.ok()) << bad;
    EXPECT_EQ(seg.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(ShmSegment::CheckName("smallmind-1234-ab_C.d-w0").ok());
}

}  // namespace
}  // namespace smallmind::shared

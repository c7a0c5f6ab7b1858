#include "shared/huge_region.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace smallmind::shared {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

TEST(HugeRegionTest, EmptyRegionHasNoMemory) {
  HugeRegion none;
  EXPECT_EQ(none.data(), nullptr);
  EXPECT_EQ(none.size(), 0u);
  HugeRegion zero(0);
  EXPECT_EQ(zero.data(), nullptr);
  EXPECT_EQ(zero.size(), 0u);
}

TEST(HugeRegionTest, RegionIsAlignedZeroedAndWritable) {
  const size_t bytes = 5 * kHugePage + 123;  // not a multiple of the huge page
  HugeRegion r(bytes);
  ASSERT_NE(r.data(), nullptr);
  EXPECT_EQ(r.size(), bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r.data()) % kHugePage, 0u);
  for (size_t i : {size_t{0}, kHugePage - 1, kHugePage, 3 * kHugePage + 7, bytes - 1}) {
    EXPECT_EQ(r.data()[i], std::byte{0}) << "byte " << i;
    r.data()[i] = std::byte{0x5a};
    EXPECT_EQ(r.data()[i], std::byte{0x5a}) << "byte " << i;
  }
}

TEST(HugeRegionTest, PrefaultKeepsTheRegionZeroedAndWritable) {
  const size_t bytes = 3 * kHugePage + 5;
  HugeRegion r(bytes);
  ASSERT_TRUE(r.Prefault().ok());
  for (size_t i = 0; i < bytes; i += 4093) EXPECT_EQ(r.data()[i], std::byte{0}) << "byte " << i;
  r.data()[bytes - 1] = std::byte{1};
  EXPECT_EQ(r.data()[bytes - 1], std::byte{1});
  HugeRegion none;
  EXPECT_TRUE(none.Prefault().ok());  // nothing to do
}

TEST(HugeRegionTest, MapSaysWhenTheMemoryCannotBeHad) {
  const Result<HugeRegion> r = HugeRegion::Map(size_t{1} << 60);  // 1 EiB
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("cannot map"), std::string::npos) << r.status().message();
}

TEST(HugeRegionTest, MoveHandsTheMemoryOver) {
  HugeRegion a(100);
  std::byte* p = a.data();
  p[99] = std::byte{7};
  HugeRegion b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.data()[99], std::byte{7});
  HugeRegion c(kHugePage);
  c = std::move(b);  // c's own region is unmapped, b's taken
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), 100u);
  EXPECT_EQ(b.data(), nullptr);  // NOLINT(bugprone-use-after-move)
}

TEST(HugeRegionTest, CountsHugePagesOnlyInsideTheRange) {
  EXPECT_EQ(HugePageBytes(nullptr, 100), 0u);
  HugeRegion r(4 * kHugePage);
  ASSERT_TRUE(r.Prefault().ok());
  EXPECT_EQ(HugePageBytes(r.data(), 0), 0u);
  const size_t all = HugePageBytes(r.data(), r.size());
  EXPECT_LE(all, r.size());  // how many depends on the kernel's mode and free memory
  EXPECT_LE(HugePageBytes(r.data(), kHugePage), kHugePage);
  if (TransparentHugePages() == "never") {
    EXPECT_EQ(all, 0u);
  }
}

// A region takes memory as it is written: none untouched, a page (4 KiB, or a huge page under
// THP) for one byte, all of it once prefaulted; counted only inside the range asked about.
TEST(HugeRegionTest, CountsResidentBytesAsTheRegionIsWritten) {
  EXPECT_EQ(ResidentBytes(nullptr, 100), 0u);
  HugeRegion r(4 * kHugePage);
  EXPECT_EQ(ResidentBytes(r.data(), r.size()), 0u);
  r.data()[0] = std::byte{1};
  const size_t one = ResidentBytes(r.data(), r.size());
  EXPECT_GE(one, 4096u);
  EXPECT_LE(one, kHugePage);
  ASSERT_TRUE(r.Prefault().ok());
  EXPECT_EQ(ResidentBytes(r.data(), r.size()), r.size());
  EXPECT_EQ(ResidentBytes(r.data() + kHugePage, kHugePage), kHugePage);
}

TEST(HugeRegionTest, NamesTheKernelsMode) {
  const std::string mode = TransparentHugePages();
  EXPECT_TRUE(mode == "always" || mode == "madvise" || mode == "never" || mode == "unavailable")
      << mode;
}

}  // namespace
}  // namespace smallmind::shared

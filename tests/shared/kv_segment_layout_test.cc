#include "shared/kv_segment_layout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace smallmind::shared {
namespace {

KvGeometry Geometry() {
  KvGeometry g;
  g.block_size = 16;
  g.n_layers = 2;
  g.n_kv_heads = 4;
  g.head_dim = 8;
  g.dtype = static_cast<uint32_t>(KvDType::kF32);
  g.block_count = 10;
  return g;
}

// A whole segment image for Geometry() with a valid header.
std::vector<unsigned char> Image(uint64_t fingerprint) {
  const KvSegmentLayout l = ComputeKvSegmentLayout(Geometry());
  std::vector<unsigned char> image(l.total_bytes, 0);
  const KvSegmentHeader h = MakeKvSegmentHeader(Geometry(), fingerprint, 42);
  std::memcpy(image.data(), &h, sizeof(h));
  return image;
}

KvSegmentHeader* Header(std::vector<unsigned char>& image) {
  return reinterpret_cast<KvSegmentHeader*>(image.data());
}

std::string Mismatch(const std::vector<unsigned char>& image, uint64_t fingerprint = 7) {
  return KvSegmentMismatch(image.data(), image.size(), Geometry(), fingerprint);
}

TEST(KvSegmentLayoutTest, PlacesHeaderMetadataTokensThenPageAlignedData) {
  const KvGeometry g = Geometry();
  const KvSegmentLayout l = ComputeKvSegmentLayout(g);
  EXPECT_EQ(l.meta_offset, sizeof(KvSegmentHeader));
  EXPECT_GE(l.tokens_offset, l.meta_offset + 10 * sizeof(KvBlockMeta));
  EXPECT_EQ(l.tokens_offset % 64, 0u);
  EXPECT_GE(l.data_offset, l.tokens_offset + 10 * 16 * sizeof(int32_t));
  EXPECT_EQ(l.data_offset % 4096, 0u);
  EXPECT_EQ(l.block_bytes, 2u * 2 * 16 * 32 * sizeof(float));  // layers x (K,V) x slots x kv_dim
  EXPECT_EQ(l.total_bytes, l.data_offset + 10 * l.block_bytes);
}

TEST(KvSegmentLayoutTest, AMatchingSegmentHasNoMismatch) { EXPECT_EQ(Mismatch(Image(7)), ""); }

TEST(KvSegmentLayoutTest, BadMagicIsNotASmallmindSegment) {
  auto image = Image(7);
  Header(image)->magic ^= 1;
  EXPECT_NE(Mismatch(image).find("not a smallmind KV segment"), std::string::npos);
}

TEST(KvSegmentLayoutTest, AnotherLayoutVersionIsNamed) {
  auto image = Image(7);
  Header(image)->layout_version = kKvSegmentLayoutVersion + 1;
  Header(image)->header_seal = KvHeaderSeal(*Header(image));
  EXPECT_NE(Mismatch(image).find("layout version 2"), std::string::npos) << Mismatch(image);
}

TEST(KvSegmentLayoutTest, AnUnsealedHeaderIsIncomplete) {
  auto image = Image(7);
  Header(image)->header_seal = 0;
  EXPECT_NE(Mismatch(image).find("incomplete"), std::string::npos);
  image = Image(7);
  Header(image)->owner_pid = 43;  // any field changed after sealing breaks the seal
  EXPECT_NE(Mismatch(image).find("incomplete"), std::string::npos);
}

TEST(KvSegmentLayoutTest, OtherGeometryIsNamedWithBothShapes) {
  for (uint32_t KvGeometry::*field :
       {&KvGeometry::block_size, &KvGeometry::n_layers, &KvGeometry::n_kv_heads,
        &KvGeometry::head_dim, &KvGeometry::dtype, &KvGeometry::block_count}) {
    KvGeometry other = Geometry();
    other.*field += 1;
    auto image = Image(7);
    const std::string why = KvSegmentMismatch(image.data(), image.size(), other, 7);
    EXPECT_NE(why.find("geometry differs"), std::string::npos) << why;
  }
  auto image = Image(7);
  KvGeometry other = Geometry();
  other.n_layers = 3;
  EXPECT_NE(KvSegmentMismatch(image.data(), image.size(), other, 7).find("3 layers"),
            std::string::npos);
}

TEST(KvSegmentLayoutTest, AnotherModelsFingerprintIsNamed) {
  const std::string why = Mismatch(Image(7), 8);
  EXPECT_NE(why.find("another model"), std::string::npos) << why;
  EXPECT_NE(why.find("0000000000000007"), std::string::npos) << why;
}

TEST(KvSegmentLayoutTest, ATruncatedSegmentIsRejected) {
  auto image = Image(7);
  EXPECT_NE(KvSegmentMismatch(image.data(), image.size() - 4096, Geometry(), 7).find("bytes"),
            std::string::npos);
  EXPECT_NE(KvSegmentMismatch(image.data(), 100, Geometry(), 7).find("too small"),
            std::string::npos);
}

TEST(KvSegmentLayoutTest, BlockSealsAreNonzeroAndDependOnEveryField) {
  const uint64_t s = KvBlockSeal(1, 2, 16);
  EXPECT_NE(s, 0u);
  EXPECT_NE(KvBlockSeal(3, 2, 16), s);
  EXPECT_NE(KvBlockSeal(1, 3, 16), s);
  EXPECT_NE(KvBlockSeal(1, 2, 15), s);
  EXPECT_EQ(KvBlockSeal(1, 2, 16), s);
}

}  // namespace
}  // namespace smallmind::shared

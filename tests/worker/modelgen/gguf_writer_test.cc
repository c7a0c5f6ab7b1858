#include "worker/modelgen/gguf_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::worker {
namespace {

using kernels::DType;

// Expected bytes, spelled out field by field as the GGUF spec defines them (little-endian).
class Bytes {
 public:
  Bytes& Raw(std::string_view s) {
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& U16(uint16_t v) { return Put(&v, 2); }
  Bytes& U32(uint32_t v) { return Put(&v, 4); }
  Bytes& U64(uint64_t v) { return Put(&v, 8); }
  Bytes& F32(float v) { return Put(&v, 4); }
  Bytes& Str(std::string_view s) { return U64(s.size()).Raw(s); }
  Bytes& PadTo(size_t alignment) {
    b_.resize((b_.size() + alignment - 1) / alignment * alignment, 0);
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return b_; }

 private:
  Bytes& Put(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
    return *this;
  }
  std::vector<uint8_t> b_;
};

std::vector<uint8_t> F32Bytes(std::vector<float> v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

TEST(GgufWriterTest, WritesHeaderAndMetadataAsTheSpecLaysThemOut) {
  GgufWriter w;
  w.AddU32("a.b", 7);
  w.AddString("s", "hi");
  w.Add("f", GgufWriteValue::F32(1.5f));
  w.Add("u16", GgufWriteValue::U16(0xbeef));
  auto buf = w.WriteBuffer();
  ASSERT_TRUE(buf.ok()) << buf.status().ToString();
  Bytes want;
  want.Raw("GGUF").U32(3).U64(0).U64(4);
  want.Str("a.b").U32(4).U32(7);
  want.Str("s").U32(8).Str("hi");
  want.Str("f").U32(6).F32(1.5f);
  want.Str("u16").U32(2).U16(0xbeef);
  want.PadTo(32);
  EXPECT_EQ(*buf, want.bytes());
}

TEST(GgufWriterTest, EncodesArraysWithElementTypeAndCountAndNestsThem) {
  GgufWriter w;
  const std::vector<std::string> strs = {"x", "yz"};
  const std::vector<int16_t> shorts = {1, -2};
  const bool flags[3] = {true, false, true};
  w.AddStringArray("s", strs);
  w.Add("b", GgufWriteValue::Array<bool>(flags));
  std::vector<GgufWriteValue> inner;
  inner.push_back(GgufWriteValue::Array<int16_t>(shorts));
  inner.push_back(GgufWriteValue::StringArray(std::span<const std::string>(strs).first(1)));
  w.Add("n", GgufWriteValue::ArrayOfArrays(std::move(inner)));
  auto buf = w.WriteBuffer();
  ASSERT_TRUE(buf.ok()) << buf.status().ToString();
  Bytes want;
  want.Raw("GGUF").U32(3).U64(0).U64(3);
  want.Str("s").U32(9).U32(8).U64(2).Str("x").Str("yz");
  want.Str("b").U32(9).U32(7).U64(3).Raw(std::string("\x01\x00\x01", 3));
  want.Str("n").U32(9).U32(9).U64(2);
  want.U32(3).U64(2).U16(1).U16(static_cast<uint16_t>(-2));  // first element: INT16[2]
  want.U32(8).U64(1).Str("x");                               // second: STRING[1]
  want.PadTo(32);
  EXPECT_EQ(*buf, want.bytes());
}

TEST(GgufWriterTest, AlignsTensorDataAndWritesDimsInnermostFirst) {
  GgufWriter w(64);
  const int64_t w_dims[] = {3, 2};  // 2 rows of 3
  const int64_t b_dims[] = {5};
  w.AddTensor("w", DType::kF32, w_dims, F32Bytes({1, 2, 3, 4, 5, 6}));
  w.AddTensor("b", DType::kF32, b_dims, F32Bytes({7, 8, 9, 10, 11}));
  auto buf = w.WriteBuffer();
  ASSERT_TRUE(buf.ok()) << buf.status().ToString();
  Bytes want;
  want.Raw("GGUF").U32(3).U64(2).U64(1);
  want.Str("general.alignment").U32(4).U32(64);  // written because it is not the default 32
  want.Str("w").U32(2).U64(3).U64(2).U32(0).U64(0);
  want.Str("b").U32(1).U64(5).U32(0).U64(64);  // 24 bytes of "w" padded to 64
  want.PadTo(64);
  const size_t data_start = want.bytes().size();
  want.Raw(std::string(reinterpret_cast<const char*>(F32Bytes({1, 2, 3, 4, 5, 6}).data()), 24));
  want.PadTo(64);
  want.Raw(std::string(reinterpret_cast<const char*>(F32Bytes({7, 8, 9, 10, 11}).data()), 20));
  want.PadTo(64);
  EXPECT_EQ(data_start % 64, 0u);
  EXPECT_EQ(*buf, want.bytes());
}

TEST(GgufWriterTest, WriteFileReportsProgressAfterEveryTensor) {
  GgufWriter w(64);
  const int64_t w_dims[] = {3, 2};
  const int64_t b_dims[] = {5};
  w.AddTensor("w", DType::kF32, w_dims, F32Bytes({1, 2, 3, 4, 5, 6}));
  w.AddTensor("b", DType::kF32, b_dims, F32Bytes({7, 8, 9, 10, 11}));
  const testing::ScopedTempDir dir("progress");
  std::vector<std::vector<uint64_t>> calls;
  ASSERT_TRUE(w.WriteFile(dir.File("m.gguf"), [&](size_t done, size_t total, uint64_t bytes,
                                                  uint64_t bytes_total) {
                 calls.push_back({done, total, bytes, bytes_total});
               }).ok());
  // Each tensor's bytes padded to 64: 24 -> 64, 20 -> 64.
  const std::vector<std::vector<uint64_t>> want = {{1, 2, 64, 128}, {2, 2, 128, 128}};
  EXPECT_EQ(calls, want);
}

TEST(GgufWriterTest, FillFunctionProducesTensorDataAtWriteTime) {
  GgufWriter w;
  const int64_t dims[] = {64, 2};  // two Q8_0 rows of two blocks
  size_t asked = 0;
  w.AddTensor("q", DType::kQ8_0, dims, [&asked](std::span<uint8_t> out) {
    asked = out.size();
    for (size_t i = 0; i < out.size(); i++) out[i] = static_cast<uint8_t>(i);
  });
  auto buf = w.WriteBuffer();
  ASSERT_TRUE(buf.ok()) << buf.status().ToString();
  EXPECT_EQ(asked, 4u * 34u);
  ASSERT_EQ(buf->size() % 32, 0u);
  // The data is the last tensor: it ends at 136 bytes, padded to 160 from the data start.
  const size_t data_start = buf->size() - 160;
  EXPECT_EQ((*buf)[data_start + 135], 135);
  EXPECT_EQ((*buf)[data_start + 136], 0);
}

TEST(GgufWriterTest, WriteFileStoresTheSameBytesAndLeavesNoTemporary) {
  const testing::ScopedTempDir tmp;
  const std::filesystem::path dir = tmp.path();
  const std::string path = (dir / "m.gguf").string();
  GgufWriter w;
  w.AddString("general.architecture", "llama");
  const int64_t dims[] = {4};
  w.AddTensor("t", DType::kF32, dims, F32Bytes({1, 2, 3, 4}));
  ASSERT_TRUE(w.WriteFile(path).ok());
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(file, *w.WriteBuffer());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  const shared::Status bad = w.WriteFile((dir / "missing" / "m.gguf").string());
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("missing/m.gguf"), std::string::npos) << bad.message();
}

// Each misuse fails the writer with a message naming the problem; nothing is written.
TEST(GgufWriterTest, RejectsMalformedKeysTensorsAndAlignment) {
  struct Case {
    const char* what;
    void (*build)(GgufWriter&);
    const char* message;
  };
  const Case cases[] = {
      {"duplicate key",
       [](GgufWriter& w) {
         w.AddU32("k", 1);
         w.AddU32("k", 2);
       },
       "duplicate metadata key 'k'"},
      {"empty key", [](GgufWriter& w) { w.AddU32("", 1); }, "metadata key"},
      {"control byte in key", [](GgufWriter& w) { w.AddU32("a\nb", 1); }, "printable ASCII"},
      {"explicit alignment", [](GgufWriter& w) { w.AddU32("general.alignment", 64); },
       "general.alignment"},
      {"duplicate tensor",
       [](GgufWriter& w) {
         const int64_t d[] = {1};
         w.AddTensor("t", DType::kF32, d, F32Bytes({1}));
         w.AddTensor("t", DType::kF32, d, F32Bytes({1}));
       },
       "duplicate tensor name 't'"},
      {"long tensor name",
       [](GgufWriter& w) {
         const int64_t d[] = {1};
         w.AddTensor(std::string(64, 'x'), DType::kF32, d, F32Bytes({1}));
       },
       "1 to 63 bytes"},
      {"partial block",
       [](GgufWriter& w) {
         const int64_t d[] = {16};
         w.AddTensor("q", DType::kQ8_0, d, std::vector<uint8_t>(17));
       },
       "not a multiple of the Q8_0 block size"},
      {"zero dim",
       [](GgufWriter& w) {
         const int64_t d[] = {4, 0};
         w.AddTensor("z", DType::kF32, d, std::vector<uint8_t>());
       },
       "dimension < 1"},
      {"five dims",
       [](GgufWriter& w) {
         const int64_t d[] = {1, 1, 1, 1, 1};
         w.AddTensor("z", DType::kF32, d, F32Bytes({1}));
       },
       "1 to 4 dims"},
      {"wrong data size",
       [](GgufWriter& w) {
         const int64_t d[] = {4};
         w.AddTensor("t", DType::kF32, d, F32Bytes({1, 2, 3}));
       },
       "has 12 bytes of data, its shape and type need 16"},
  };
  for (const Case& c : cases) {
    GgufWriter w;
    c.build(w);
    EXPECT_FALSE(w.status().ok()) << c.what;
    EXPECT_NE(w.status().message().find(c.message), std::string::npos)
        << c.what << ": " << w.status().message();
    EXPECT_FALSE(w.WriteBuffer().ok()) << c.what;
  }
  for (uint32_t bad_alignment : {0u, 4u, 48u}) {
    GgufWriter w(bad_alignment);
    EXPECT_FALSE(w.WriteBuffer().ok()) << bad_alignment;
  }
}

}  // namespace
}  // namespace smallmind::worker

// Hand-made broken GGUF files: a valid file from GgufWriter, then one field corrupted or the file
// cut short. Each must be rejected with an InvalidArgument naming the file and the problem.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "worker/model/gguf/gguf_reader.h"
#include "worker/modelgen/gguf_writer.h"

namespace smallmind::worker {
namespace {

using kernels::DType;
using Buffer = std::vector<uint8_t>;

constexpr char kName[] = "broken.gguf";

// A valid file: 5 KVs and two tensors, "t0" F32 [2 rows of 8] at offset 0 and "t1" Q8_0 [32] at 64.
Buffer BaseFile(uint32_t alignment = 32) {
  GgufWriter w(alignment);
  w.AddString("general.architecture", "llama");
  w.AddU32("key.a", 1);
  w.AddU32("key.b", 2);
  w.AddBool("flag", true);
  const std::vector<std::string> tokens = {"a", "b"};
  w.AddStringArray("toks", tokens);
  const int64_t t0_dims[] = {8, 2};
  const int64_t t1_dims[] = {32};
  w.AddTensor("t0", DType::kF32, t0_dims, Buffer(64, 1));
  w.AddTensor("t1", DType::kQ8_0, t1_dims, Buffer(34, 2));
  auto buf = w.WriteBuffer();
  EXPECT_TRUE(buf.ok());
  return *buf;
}

// Offset of the first occurrence of `needle`'s bytes (each needle here occurs once).
size_t Find(const Buffer& b, std::string_view needle) {
  for (size_t i = 0; i + needle.size() <= b.size(); i++) {
    if (std::memcmp(b.data() + i, needle.data(), needle.size()) == 0) return i;
  }
  ADD_FAILURE() << "needle not found: " << needle;
  return 0;
}

void PutU32(Buffer& b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void PutU64(Buffer& b, size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

// Field offsets inside the tensor info of "t0" (2 dims) or "t1" (1 dim), after the name bytes.
size_t DimsAt(const Buffer& b, const char* name) { return Find(b, name) + 2 + 4; }
size_t TypeAt(const Buffer& b, const char* name, int n_dims) {
  return DimsAt(b, name) + 8 * n_dims;
}
size_t OffsetAt(const Buffer& b, const char* name, int n_dims) {
  return TypeAt(b, name, n_dims) + 4;
}
// The value of a KV: after the key bytes and the 4-byte type.
size_t ValueAt(const Buffer& b, std::string_view key) { return Find(b, key) + key.size() + 4; }

void ExpectRejected(const Buffer& b, const std::string& problem) {
  const auto f = GgufFile::FromBuffer(b, kName);
  ASSERT_FALSE(f.ok()) << "accepted a file that should fail with: " << problem;
  EXPECT_EQ(f.status().code(), shared::StatusCode::kInvalidArgument);
  const std::string& msg = f.status().message();
  EXPECT_EQ(msg.rfind(std::string(kName) + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find(problem), std::string::npos) << "message: " << msg;
}

TEST(GgufReaderRejectTest, TheBaseFileIsValid) {
  const auto f = GgufFile::FromBuffer(BaseFile(), kName);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->tensors()[1].offset, 64u);
}

TEST(GgufReaderRejectTest, RejectsBadMagicAndUnsupportedVersions) {
  Buffer b = BaseFile();
  b[0] = 'X';
  ExpectRejected(b, "not a GGUF file: it starts with \"XGUF\"");
  for (auto [version, problem] :
       std::vector<std::pair<uint32_t, std::string>>{{1, "GGUF version 1"},
                                                     {4, "unsupported GGUF version 4"},
                                                     {0, "unsupported GGUF version 0"},
                                                     {0x03000000u, "big-endian"}}) {
    b = BaseFile();
    PutU32(b, 4, version);
    ExpectRejected(b, problem);
  }
  ExpectRejected(Buffer{'G', 'G'}, "not a GGUF file");
}

TEST(GgufReaderRejectTest, RejectsCountsTheFileCannotHold) {
  Buffer b = BaseFile();
  PutU64(b, 8, uint64_t{1} << 40);  // tensor_count
  ExpectRejected(b, "tensors; the limit is");
  b = BaseFile();
  PutU64(b, 8, 40000);  // under the limit, but 40000 infos need more bytes than the file has
  ExpectRejected(b, "more than the");
  b = BaseFile();
  PutU64(b, 16, std::numeric_limits<uint64_t>::max());  // metadata_kv_count
  ExpectRejected(b, "metadata entries");
}

TEST(GgufReaderRejectTest, RejectsAbsurdStringAndArrayLengths) {
  Buffer b = BaseFile();
  PutU64(b, 24, uint64_t{1} << 62);  // length of the first key
  ExpectRejected(b, "key claims 4611686018427387904 bytes");
  b = BaseFile();
  PutU64(b, ValueAt(b, "general.architecture"), 1000000);  // the string value "llama"
  ExpectRejected(b, "string value claims 1000000 bytes");
  b = BaseFile();
  PutU64(b, ValueAt(b, "toks") + 4, uint64_t{1} << 60);  // array count, after its element type
  ExpectRejected(b, "array of 1152921504606846976 STRING elements cannot fit");
}

TEST(GgufReaderRejectTest, RejectsMalformedMetadata) {
  Buffer b = BaseFile();
  b[Find(b, "key.b") + 4] = 'a';
  ExpectRejected(b, "metadata key 'key.a': duplicate metadata key");
  b = BaseFile();
  PutU32(b, ValueAt(b, "key.a") - 4, 13);
  ExpectRejected(b, "metadata key 'key.a': unknown value type 13");
  b = BaseFile();
  PutU32(b, ValueAt(b, "toks"), 99);
  ExpectRejected(b, "unknown array element type 99");
  b = BaseFile();
  b[ValueAt(b, "flag")] = 2;
  ExpectRejected(b, "BOOL value is 2");
  b = BaseFile();
  b[Find(b, "key.a") + 1] = 0x01;
  ExpectRejected(b, "is not a non-empty ASCII string");
}

TEST(GgufReaderRejectTest, RejectsArraysNestedTooDeep) {
  GgufWriter w;
  GgufWriteValue v = GgufWriteValue::Array<int32_t>(std::span<const int32_t>());
  for (int depth = 0; depth < 9; depth++) {
    std::vector<GgufWriteValue> items;
    items.push_back(std::move(v));
    v = GgufWriteValue::ArrayOfArrays(std::move(items));
  }
  w.Add("deep", std::move(v));
  ExpectRejected(*w.WriteBuffer(), "nested more than 8 levels deep");
}

TEST(GgufReaderRejectTest, RejectsBadAlignment) {
  for (uint32_t bad : {48u, 0u, 3u}) {
    Buffer b = BaseFile(64);
    PutU32(b, ValueAt(b, "general.alignment"), bad);
    ExpectRejected(b, "general.alignment': must be a power of two, got " + std::to_string(bad));
  }
  Buffer b = BaseFile(64);
  PutU32(b, ValueAt(b, "general.alignment") - 4, 6);  // now a FLOAT32
  ExpectRejected(b, "must be an unsigned integer, not FLOAT32");
}

TEST(GgufReaderRejectTest, RejectsMalformedTensorInfos) {
  Buffer b = BaseFile();
  b[Find(b, "t1") + 1] = '0';
  ExpectRejected(b, "tensor 't0': duplicate tensor name");
  b = BaseFile();
  PutU32(b, TypeAt(b, "t1", 1), 16);
  ExpectRejected(b, "tensor 't1': unsupported tensor type 16 (IQ2_XXS)");
  b = BaseFile();
  PutU32(b, TypeAt(b, "t1", 1), 1000);
  ExpectRejected(b, "unsupported tensor type 1000 (unknown)");
  for (uint32_t n_dims : {0u, 5u}) {
    b = BaseFile();
    PutU32(b, Find(b, "t0") + 2, n_dims);
    ExpectRejected(b, "n_dims is " + std::to_string(n_dims));
  }
  b = BaseFile();
  PutU64(b, DimsAt(b, "t0") + 8, 0);
  ExpectRejected(b, "tensor 't0': dimension 1 is 0");
  b = BaseFile();
  PutU64(b, DimsAt(b, "t0"), std::numeric_limits<uint64_t>::max());
  ExpectRejected(b, "dimension 0 is 18446744073709551615");
  b = BaseFile();
  PutU64(b, DimsAt(b, "t0"), uint64_t{1} << 40);
  PutU64(b, DimsAt(b, "t0") + 8, uint64_t{1} << 40);
  ExpectRejected(b, "element count overflows");
  b = BaseFile();
  PutU64(b, DimsAt(b, "t0"), uint64_t{1} << 31);  // 2^62 F32 elements: 2^64 bytes
  PutU64(b, DimsAt(b, "t0") + 8, uint64_t{1} << 31);
  ExpectRejected(b, "data size overflows");
  b = BaseFile();
  PutU64(b, DimsAt(b, "t1"), 16);
  ExpectRejected(b, "row length 16 is not a multiple of the Q8_0 block size 32");
}

TEST(GgufReaderRejectTest, RejectsTensorDataOutsideTheFileMisalignedOrOverlapping) {
  Buffer b = BaseFile();
  PutU64(b, OffsetAt(b, "t1", 1), 68);
  ExpectRejected(b, "data offset 68 is not a multiple of the alignment 32");
  b = BaseFile();
  PutU64(b, OffsetAt(b, "t1", 1), uint64_t{1} << 20);
  ExpectRejected(b, "tensor 't1' data [1048576, +34) runs past the end");
  b = BaseFile();
  PutU64(b, OffsetAt(b, "t1", 1), std::numeric_limits<uint64_t>::max() - 31);
  ExpectRejected(b, "runs past the end");
  b = BaseFile();
  PutU64(b, OffsetAt(b, "t1", 1), 32);  // t0 covers [0, 64)
  ExpectRejected(b, "tensors 't0' and 't1' overlap");
  b = BaseFile();
  PutU64(b, DimsAt(b, "t1"), 96);  // 102 bytes from offset 64: past the 128-byte data section
  ExpectRejected(b, "runs past the end of the 128-byte data section");
}

TEST(GgufReaderRejectTest, RejectsTheFileCutShortAtEveryLength) {
  const Buffer full = BaseFile();
  const auto valid = GgufFile::FromBuffer(full, kName);
  ASSERT_TRUE(valid.ok());
  // The last tensor ("t1", 34 bytes at 64) ends before the padding that closes the file; a file
  // without that trailing padding is still complete, so cuts are tried up to the data's end.
  const size_t data_end = (*valid)->data_offset() + 64 + 34;
  ASSERT_LT(data_end, full.size());
  EXPECT_TRUE(GgufFile::FromBuffer(Buffer(full.begin(), full.begin() + data_end), kName).ok());
  ExpectRejected(Buffer(), "empty buffer");
  for (size_t n = 1; n < data_end; n++) {
    const Buffer cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    const auto f = GgufFile::FromBuffer(cut, kName);
    ASSERT_FALSE(f.ok()) << "accepted the first " << n << " bytes";
    ASSERT_EQ(f.status().message().rfind("broken.gguf: ", 0), 0u) << f.status().message();
  }
  const size_t in_offset = OffsetAt(full, "t1", 1) + 3;  // 3 bytes into t1's offset field
  ExpectRejected(Buffer(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(in_offset)),
                 "tensor 't1': truncated file: tensor data offset needs 8 bytes but only 3");
}

// Random single-byte corruptions: the reader either accepts the file or returns a Status; it never
// crashes, and anything it accepts keeps every tensor inside the buffer.
TEST(GgufReaderRejectTest, SurvivesRandomByteCorruption) {
  const Buffer full = BaseFile();
  std::mt19937 rng(42);
  int rejected = 0;
  for (int i = 0; i < 3000; i++) {
    Buffer b = full;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 3); k++) {
      b[rng() % b.size()] = static_cast<uint8_t>(rng());
    }
    const auto f = GgufFile::FromBuffer(b, kName);
    if (!f.ok()) {
      rejected++;
      continue;
    }
    for (const GgufTensorInfo& t : (*f)->tensors()) {
      ASSERT_LE((*f)->data_offset() + t.offset + t.n_bytes, b.size());
    }
  }
  EXPECT_GT(rejected, 100);
}

}  // namespace
}  // namespace smallmind::worker

#include "worker/model/gguf/gguf_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "kernels/quant_blocks.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"
#include "worker/modelgen/gguf_writer.h"

namespace smallmind::worker {
namespace {

using kernels::DType;

std::unique_ptr<GgufFile> MustParse(const std::vector<uint8_t>& bytes) {
  auto file = GgufFile::FromBuffer(bytes, "mem.gguf");
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  return file.ok() ? std::move(file).value() : nullptr;
}

std::vector<uint8_t> MustWrite(const GgufWriter& w) {
  auto buf = w.WriteBuffer();
  EXPECT_TRUE(buf.ok()) << buf.status().ToString();
  return buf.ok() ? *buf : std::vector<uint8_t>();
}

GgufWriteValue NestedArrays(int depth) {
  if (depth == 1) {
    const int32_t v[] = {depth, -depth};
    return GgufWriteValue::Array<int32_t>(v);
  }
  std::vector<GgufWriteValue> items;
  items.push_back(NestedArrays(depth - 1));
  items.push_back(NestedArrays(depth - 1));
  return GgufWriteValue::ArrayOfArrays(std::move(items));
}

TEST(GgufReaderTest, ReadsBackEveryScalarType) {
  GgufWriter w;
  w.Add("t.u8", GgufWriteValue::U8(250));
  w.Add("t.i8", GgufWriteValue::I8(-100));
  w.Add("t.u16", GgufWriteValue::U16(65000));
  w.Add("t.i16", GgufWriteValue::I16(-32000));
  w.Add("t.u32", GgufWriteValue::U32(4000000000u));
  w.Add("t.i32", GgufWriteValue::I32(-2000000000));
  w.Add("t.f32", GgufWriteValue::F32(0.1f));
  w.Add("t.bool", GgufWriteValue::Bool(true));
  w.Add("t.str", GgufWriteValue::String("h\xc3\xa9llo"));
  w.Add("t.u64", GgufWriteValue::U64(std::numeric_limits<uint64_t>::max()));
  w.Add("t.i64", GgufWriteValue::I64(std::numeric_limits<int64_t>::min()));
  w.Add("t.f64", GgufWriteValue::F64(0.1));
  auto f = MustParse(MustWrite(w));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->metadata().size(), 12u);
  EXPECT_EQ(f->metadata()[0].key, "t.u8");
  EXPECT_EQ(f->Find("t.u8")->type(), GgufType::kU8);
  EXPECT_EQ(*f->GetU32("t.u8"), 250u);
  EXPECT_EQ(*f->GetInt("t.i8"), -100);
  EXPECT_EQ(*f->GetU32("t.u16"), 65000u);
  EXPECT_EQ(*f->GetInt("t.i16"), -32000);
  EXPECT_EQ(*f->GetU32("t.u32"), 4000000000u);
  EXPECT_EQ(*f->GetInt("t.i32"), -2000000000);
  EXPECT_EQ(*f->GetF32("t.f32"), 0.1f);
  EXPECT_TRUE(*f->GetBool("t.bool"));
  EXPECT_EQ(*f->GetString("t.str"), "h\xc3\xa9llo");
  EXPECT_EQ(*f->GetU64("t.u64"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(*f->GetInt("t.i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(*f->Find("t.f64")->AsDouble(), 0.1);
  EXPECT_EQ(*f->GetF32("t.f64"), 0.1f);
  EXPECT_EQ(f->Find("t.absent"), nullptr);
}

TEST(GgufReaderTest, TypedGettersRejectMismatchesAndValuesThatDoNotFit) {
  GgufWriter w;
  w.Add("neg", GgufWriteValue::I32(-1));
  w.Add("big", GgufWriteValue::U64(uint64_t{1} << 40));
  w.Add("huge", GgufWriteValue::U64(std::numeric_limits<uint64_t>::max()));
  w.AddString("name", "x");
  auto f = MustParse(MustWrite(w));
  ASSERT_NE(f, nullptr);
  const auto missing = f->GetU32("nope");
  EXPECT_EQ(missing.status().code(), shared::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("mem.gguf: metadata key 'nope' not found"),
            std::string::npos);
  const auto wrong_type = f->GetU32("name");
  EXPECT_EQ(wrong_type.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_type.status().message().find("'name' is STRING, expected an integer"),
            std::string::npos)
      << wrong_type.status().message();
  EXPECT_FALSE(f->GetU32("neg").ok());
  EXPECT_EQ(*f->GetInt("neg"), -1);
  EXPECT_FALSE(f->GetU32("big").ok());
  EXPECT_EQ(*f->GetU64("big"), uint64_t{1} << 40);
  EXPECT_FALSE(f->GetInt("huge").ok());
  EXPECT_FALSE(f->GetString("neg").ok());
  EXPECT_FALSE(f->GetF32("neg").ok());
  EXPECT_FALSE(f->GetBool("neg").ok());
  EXPECT_FALSE(f->GetStringArray("name").ok());
}

TEST(GgufReaderTest, ReadsBackArraysOfEveryTypeIncludingNestedOnes) {
  GgufWriter w;
  const uint8_t u8[] = {1, 255};
  const int8_t i8[] = {-1, 2};
  const uint16_t u16[] = {3, 65535};
  const int16_t i16[] = {-4, 5};
  const uint32_t u32[] = {6, 7};
  const int32_t i32[] = {-8, 2147483647};
  const float f32[] = {0.5f, -1.25f};
  const bool bools[] = {true, false};
  const uint64_t u64[] = {9, uint64_t{1} << 33};
  const int64_t i64[] = {-10, 11};
  const double f64[] = {0.25, 1e300};
  const std::vector<std::string> strs = {"", "a", "tok\xe2\x96\x81"};
  w.Add("a.u8", GgufWriteValue::Array<uint8_t>(u8));
  w.Add("a.i8", GgufWriteValue::Array<int8_t>(i8));
  w.Add("a.u16", GgufWriteValue::Array<uint16_t>(u16));
  w.Add("a.i16", GgufWriteValue::Array<int16_t>(i16));
  w.Add("a.u32", GgufWriteValue::Array<uint32_t>(u32));
  w.AddI32Array("a.i32", i32);
  w.AddF32Array("a.f32", f32);
  w.Add("a.bool", GgufWriteValue::Array<bool>(bools));
  w.Add("a.u64", GgufWriteValue::Array<uint64_t>(u64));
  w.Add("a.i64", GgufWriteValue::Array<int64_t>(i64));
  w.Add("a.f64", GgufWriteValue::Array<double>(f64));
  w.AddStringArray("a.str", strs);
  w.Add("a.empty", GgufWriteValue::Array<float>(std::span<const float>()));
  w.Add("a.nested", NestedArrays(3));
  auto f = MustParse(MustWrite(w));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(*f->GetI32Array("a.u8"), (std::vector<int32_t>{1, 255}));
  EXPECT_EQ(*f->GetI32Array("a.i8"), (std::vector<int32_t>{-1, 2}));
  EXPECT_EQ(*f->GetI32Array("a.u16"), (std::vector<int32_t>{3, 65535}));
  EXPECT_EQ(*f->GetI32Array("a.i16"), (std::vector<int32_t>{-4, 5}));
  EXPECT_EQ(*f->GetI32Array("a.u32"), (std::vector<int32_t>{6, 7}));
  EXPECT_EQ(*f->GetI32Array("a.i32"), (std::vector<int32_t>{-8, 2147483647}));
  EXPECT_EQ(*f->GetF32Array("a.f32"), (std::vector<float>{0.5f, -1.25f}));
  const GgufValue* b = f->Find("a.bool");
  ASSERT_EQ(b->elem_type(), GgufType::kBool);
  EXPECT_TRUE(*b->FixedAt(0).AsBool());
  EXPECT_FALSE(*b->FixedAt(1).AsBool());
  EXPECT_FALSE(f->GetI32Array("a.u64").ok());  // 2^33 does not fit in int32
  EXPECT_EQ(*f->Find("a.u64")->FixedAt(1).AsUint64(), uint64_t{1} << 33);
  EXPECT_EQ(*f->GetI32Array("a.i64"), (std::vector<int32_t>{-10, 11}));
  EXPECT_EQ(*f->Find("a.f64")->FixedAt(1).AsDouble(), 1e300);
  EXPECT_EQ(*f->GetStringArray("a.str"), strs);
  EXPECT_TRUE(f->GetF32Array("a.empty")->empty());
  EXPECT_FALSE(f->GetF32Array("a.str").ok());
  const GgufValue* n = f->Find("a.nested");
  ASSERT_EQ(n->elem_type(), GgufType::kArray);
  ASSERT_EQ(n->size(), 2u);
  const GgufValue& leaf = n->items()[1].items()[0];
  ASSERT_EQ(leaf.elem_type(), GgufType::kI32);
  EXPECT_EQ(*leaf.FixedAt(0).AsInt64(), 1);
  EXPECT_EQ(*leaf.FixedAt(1).AsInt64(), -1);
}

// One tensor of every supported type, each with a distinct byte pattern.
struct TypedTensor {
  const char* name;
  DType type;
  std::vector<int64_t> dims;
  size_t n_bytes;
};

const TypedTensor kTypedTensors[] = {
    {"f32", DType::kF32, {3, 2}, 24},
    {"f16", DType::kF16, {5}, 10},
    {"bf16", DType::kBF16, {2, 2, 2}, 16},
    {"q8_0", DType::kQ8_0, {64, 3}, 6 * 34},
    {"q4_0", DType::kQ4_0, {32, 1, 2}, 2 * 18},
    {"q4_k", DType::kQ4_K, {256, 2}, 2 * 144},
    {"q6_k", DType::kQ6_K, {512, 1, 1, 1}, 2 * 210},
};

class GgufReaderAlignmentTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GgufReaderAlignmentTest, TensorViewsPointAtAlignedDataInTheFile) {
  const uint32_t alignment = GetParam();
  GgufWriter w(alignment);
  w.AddString("general.architecture", "test");
  for (size_t i = 0; i < std::size(kTypedTensors); i++) {
    const TypedTensor& t = kTypedTensors[i];
    std::vector<uint8_t> data(t.n_bytes);
    for (size_t k = 0; k < data.size(); k++) data[k] = static_cast<uint8_t>(k * 7 + i);
    w.AddTensor(t.name, t.type, t.dims, std::move(data));
  }
  auto f = MustParse(MustWrite(w));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->alignment(), alignment);
  EXPECT_EQ(f->data_offset() % alignment, 0u);
  ASSERT_EQ(f->tensors().size(), std::size(kTypedTensors));
  for (size_t i = 0; i < std::size(kTypedTensors); i++) {
    const TypedTensor& want = kTypedTensors[i];
    const GgufTensorInfo* t = f->FindTensor(want.name);
    ASSERT_NE(t, nullptr) << want.name;
    EXPECT_EQ(t, &f->tensors()[i]);
    EXPECT_EQ(t->type, want.type);
    EXPECT_EQ(t->n_dims, static_cast<int>(want.dims.size()));
    int64_t n = 1;
    for (size_t d = 0; d < want.dims.size(); d++) {
      EXPECT_EQ(t->dims[d], want.dims[d]);
      n *= want.dims[d];
    }
    EXPECT_EQ(t->n_elements, n);
    EXPECT_EQ(t->n_rows(), n / want.dims[0]);
    EXPECT_EQ(t->n_bytes, want.n_bytes);
    const uint8_t* data = f->TensorData(*t);
    EXPECT_EQ(static_cast<uint64_t>(data - f->bytes().data()) % alignment, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % std::min<uint32_t>(alignment, 64), 0u);
    for (size_t k = 0; k < want.n_bytes; k++) {
      ASSERT_EQ(data[k], static_cast<uint8_t>(k * 7 + i)) << want.name << " byte " << k;
    }
  }
  EXPECT_EQ(f->FindTensor("absent"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Alignments, GgufReaderAlignmentTest, ::testing::Values(32u, 64u));

TEST(GgufReaderTest, OpenMapsAFileWrittenByTheWriter) {
  const testing::ScopedTempDir tmp;
  const std::filesystem::path dir = tmp.path();
  const std::string path = (dir / "m.gguf").string();
  GgufWriter w;
  w.AddU32("llama.block_count", 2);
  const int64_t dims[] = {32};
  std::vector<uint8_t> q8(34, 0);
  q8[0] = 0x00;
  q8[1] = 0x3c;  // d = 1.0 (fp16, little-endian)
  q8[2] = 0xfb;  // qs[0] = -5
  w.AddTensor("q", DType::kQ8_0, dims, q8);
  ASSERT_TRUE(w.WriteFile(path).ok());
  auto f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->path(), path);
  EXPECT_EQ((*f)->file_size(), std::filesystem::file_size(path));
  EXPECT_EQ(*(*f)->GetU32("llama.block_count"), 2u);
  const auto* block =
      reinterpret_cast<const kernels::BlockQ8_0*>((*f)->TensorData((*f)->tensors()[0]));
  EXPECT_EQ(kernels::Fp16ToFp32(block->d), 1.0f);
  EXPECT_EQ(block->qs[0], -5);

  const auto missing = GgufFile::Open((dir / "absent.gguf").string());
  EXPECT_EQ(missing.status().code(), shared::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("absent.gguf"), std::string::npos);
  std::ofstream((dir / "empty.gguf").string()).close();
  const auto empty = GgufFile::Open((dir / "empty.gguf").string());
  EXPECT_NE(empty.status().message().find("empty.gguf: empty file"), std::string::npos)
      << empty.status().message();
  const auto directory = GgufFile::Open(dir.string());
  EXPECT_NE(directory.status().message().find("not a regular file"), std::string::npos);
}

std::string SharedPath(const std::string& rel) { return testing::SharedDataPath(rel); }

TEST(GgufReaderTest, ReadsStories260KMetadataAndEmbeddingsMatchingTheLlama2cCheckpoint) {
  const std::string gguf = SharedPath("models/stories260K.gguf");
  const std::string bin = SharedPath("models/stories260K.bin");
  SM_REQUIRE_SHARED_DATA("models/stories260K.gguf");
  SM_REQUIRE_SHARED_DATA("models/stories260K.bin");
  auto f = GgufFile::Open(gguf);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const GgufFile& file = **f;
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.alignment(), 32u);
  EXPECT_EQ(*file.GetString("general.architecture"), "llama");
  EXPECT_EQ(*file.GetU32("llama.embedding_length"), 64u);
  EXPECT_EQ(*file.GetU32("llama.block_count"), 5u);
  EXPECT_EQ(*file.GetU32("llama.attention.head_count"), 8u);
  EXPECT_EQ(*file.GetU32("llama.attention.head_count_kv"), 4u);
  EXPECT_NEAR(*file.GetF32("llama.attention.layer_norm_rms_epsilon"), 1e-5f, 1e-9f);
  EXPECT_EQ(*file.GetString("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(*file.GetU32("tokenizer.ggml.bos_token_id"), 1u);
  const auto tokens = file.GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 512u);
  EXPECT_EQ((*tokens)[1], "<s>");
  EXPECT_EQ((*tokens)[3], "<0x00>");
  EXPECT_EQ(file.GetF32Array("tokenizer.ggml.scores")->size(), 512u);
  EXPECT_EQ(file.GetI32Array("tokenizer.ggml.token_type")->size(), 512u);
  EXPECT_EQ(file.tensors().size(), 48u);

  const GgufTensorInfo* emb = file.FindTensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->type, DType::kF32);
  ASSERT_EQ(emb->n_dims, 2);
  EXPECT_EQ(emb->dims[0], 64);
  EXPECT_EQ(emb->dims[1], 512);
  // stories260K.bin: a 7-int32 header, then token_embedding_table [vocab=512, dim=64] f32.
  std::ifstream in(bin, std::ios::binary);
  std::vector<char> want(512 * 64 * sizeof(float));
  in.seekg(7 * sizeof(int32_t));
  ASSERT_TRUE(in.read(want.data(), static_cast<std::streamsize>(want.size())));
  ASSERT_EQ(emb->n_bytes, want.size());
  EXPECT_EQ(std::memcmp(file.TensorData(*emb), want.data(), want.size()), 0);
}

TEST(GgufReaderTest, OpensEveryTokenizerVectorVocabulary) {
  const std::string dir = SharedPath("tokenizer-vectors");
  SM_REQUIRE_SHARED_DATA("tokenizer-vectors");
  int opened = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".gguf") continue;
    auto f = GgufFile::Open(entry.path().string());
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_TRUE((*f)->tensors().empty()) << entry.path();
    EXPECT_TRUE((*f)->GetString("tokenizer.ggml.model").ok()) << entry.path();
    const auto tokens = (*f)->GetStringArray("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
    EXPECT_GT(tokens->size(), 1000u) << entry.path();
    opened++;
  }
  EXPECT_GE(opened, 10);
}

}  // namespace
}  // namespace smallmind::worker

// GgufWriter: builds a GGUF v3 file (metadata of every value type, tensors with alignment padding)
// exactly as the spec (ggml docs/gguf.md) lays it out, so other GGUF readers load it too. Used by
// tests and smallmind-modelgen. Not thread-safe: one writer per file, on one thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernels/dtype.h"
#include "shared/status.h"
#include "worker/model/gguf/gguf_value.h"

namespace smallmind::worker {

// One metadata value to write, owning its data: a scalar, a string or an array (arrays nest).
class GgufWriteValue {
 public:
  static GgufWriteValue U8(uint8_t v) { return Scalar(GgufType::kU8, v); }
  static GgufWriteValue I8(int8_t v) { return Scalar(GgufType::kI8, v); }
  static GgufWriteValue U16(uint16_t v) { return Scalar(GgufType::kU16, v); }
  static GgufWriteValue I16(int16_t v) { return Scalar(GgufType::kI16, v); }
  static GgufWriteValue U32(uint32_t v) { return Scalar(GgufType::kU32, v); }
  static GgufWriteValue I32(int32_t v) { return Scalar(GgufType::kI32, v); }
  static GgufWriteValue F32(float v) { return Scalar(GgufType::kF32, v); }
  static GgufWriteValue Bool(bool v) { return Scalar(GgufType::kBool, static_cast<uint8_t>(v)); }
  static GgufWriteValue U64(uint64_t v) { return Scalar(GgufType::kU64, v); }
  static GgufWriteValue I64(int64_t v) { return Scalar(GgufType::kI64, v); }
  static GgufWriteValue F64(double v) { return Scalar(GgufType::kF64, v); }
  static GgufWriteValue String(std::string_view v);

  // An array of a fixed-size type: T is one of uint8_t, int8_t, ..., int64_t, float, double, bool.
  template <typename T>
  static GgufWriteValue Array(std::span<const T> items);
  static GgufWriteValue StringArray(std::span<const std::string> items);
  // An array whose elements are arrays (each with its own element type).
  static GgufWriteValue ArrayOfArrays(std::vector<GgufWriteValue> items);

  GgufType type() const { return type_; }
  // Appends the value's encoding (without a type tag) to out: the bytes that follow a KV's type.
  void AppendTo(std::vector<uint8_t>* out) const;

 private:
  template <typename T>
  static GgufWriteValue Scalar(GgufType type, T v);
  template <typename T>
  static constexpr GgufType TypeOf();

  GgufType type_ = GgufType::kU8;
  GgufType elem_type_ = GgufType::kU8;  // arrays
  uint64_t count_ = 0;                  // arrays: element count
  std::vector<uint8_t> bytes_;  // scalar / fixed-size array elements (little-endian) / string bytes
  std::vector<std::string> strings_;   // array of STRING
  std::vector<GgufWriteValue> items_;  // array of ARRAY
};

class GgufWriter {
 public:
  // Fills a tensor's data ([n_bytes] bytes, in the tensor's type) when the file is written, so
  // large models are generated one tensor at a time.
  using TensorFill = std::function<void(std::span<uint8_t> out)>;

  // alignment: a power of two and a multiple of 8 (spec); written as general.alignment unless 32.
  explicit GgufWriter(uint32_t alignment = 32);

  // Errors (duplicate or malformed key, bad tensor) are kept: the first one fails status() and
  // every Write*(), so a run of Add calls needs one check at the end.
  void Add(std::string_view key, GgufWriteValue value);
  void AddString(std::string_view key, std::string_view v) { Add(key, GgufWriteValue::String(v)); }
  void AddU32(std::string_view key, uint32_t v) { Add(key, GgufWriteValue::U32(v)); }
  void AddI32(std::string_view key, int32_t v) { Add(key, GgufWriteValue::I32(v)); }
  void AddF32(std::string_view key, float v) { Add(key, GgufWriteValue::F32(v)); }
  void AddBool(std::string_view key, bool v) { Add(key, GgufWriteValue::Bool(v)); }
  void AddStringArray(std::string_view key, std::span<const std::string> v) {
    Add(key, GgufWriteValue::StringArray(v));
  }
  void AddF32Array(std::string_view key, std::span<const float> v) {
    Add(key, GgufWriteValue::Array<float>(v));
  }
  void AddI32Array(std::string_view key, std::span<const int32_t> v) {
    Add(key, GgufWriteValue::Array<int32_t>(v));
  }

  // dims innermost first (a [rows, cols] row-major matrix is {cols, rows}); 1 to 4 dims, each >= 1,
  // dims[0] a multiple of the type's block size. `data` must hold exactly the tensor's bytes.
  void AddTensor(std::string_view name, kernels::DType type, std::span<const int64_t> dims,
                 std::vector<uint8_t> data);
  void AddTensor(std::string_view name, kernels::DType type, std::span<const int64_t> dims,
                 TensorFill fill);

  // Called after each tensor is written: tensors done and in all, data bytes done and in all.
  using Progress = std::function<void(size_t, size_t, uint64_t, uint64_t)>;

  const shared::Status& status() const { return status_; }
  shared::Status WriteFile(const std::string& path, const Progress& progress = {}) const;
  shared::Result<std::vector<uint8_t>> WriteBuffer() const;

 private:
  struct Tensor {
    std::string name;
    kernels::DType type;
    std::vector<int64_t> dims;
    uint64_t n_bytes = 0;
    uint64_t offset = 0;        // from the start of the data section
    std::vector<uint8_t> data;  // when fill is empty
    TensorFill fill;
  };
  using Sink = std::function<shared::Status(std::span<const uint8_t>)>;

  void Fail(std::string message);
  bool CheckTensor(std::string_view name, kernels::DType type, std::span<const int64_t> dims,
                   uint64_t* n_bytes);
  std::vector<uint8_t> HeaderAndInfos() const;
  shared::Status Emit(const Sink& sink, const Progress& progress = {}) const;

  uint32_t alignment_;
  shared::Status status_;
  std::vector<uint8_t> kv_bytes_;  // the metadata KVs, encoded
  uint64_t kv_count_ = 0;
  std::set<std::string, std::less<>> keys_;
  std::set<std::string, std::less<>> tensor_names_;
  std::vector<Tensor> tensors_;
  uint64_t data_bytes_ = 0;  // size of the data section so far (aligned)
};

template <typename T>
constexpr GgufType GgufWriteValue::TypeOf() {
  static_assert(std::is_same_v<T, bool> || std::is_same_v<T, uint8_t> ||
                    std::is_same_v<T, int8_t> || std::is_same_v<T, uint16_t> ||
                    std::is_same_v<T, int16_t> || std::is_same_v<T, uint32_t> ||
                    std::is_same_v<T, int32_t> || std::is_same_v<T, uint64_t> ||
                    std::is_same_v<T, int64_t> || std::is_same_v<T, float> ||
                    std::is_same_v<T, double>,
                "not a GGUF fixed-size type");
  if constexpr (std::is_same_v<T, bool>) return GgufType::kBool;
  if constexpr (std::is_same_v<T, uint8_t>) return GgufType::kU8;
  if constexpr (std::is_same_v<T, int8_t>) return GgufType::kI8;
  if constexpr (std::is_same_v<T, uint16_t>) return GgufType::kU16;
  if constexpr (std::is_same_v<T, int16_t>) return GgufType::kI16;
  if constexpr (std::is_same_v<T, uint32_t>) return GgufType::kU32;
  if constexpr (std::is_same_v<T, int32_t>) return GgufType::kI32;
  if constexpr (std::is_same_v<T, uint64_t>) return GgufType::kU64;
  if constexpr (std::is_same_v<T, int64_t>) return GgufType::kI64;
  if constexpr (std::is_same_v<T, float>) return GgufType::kF32;
  return GgufType::kF64;
}

template <typename T>
GgufWriteValue GgufWriteValue::Scalar(GgufType type, T v) {
  GgufWriteValue out;
  out.type_ = type;
  out.bytes_.resize(sizeof(T));
  std::memcpy(out.bytes_.data(), &v, sizeof(T));  // little-endian host (static_assert'ed)
  return out;
}

template <typename T>
GgufWriteValue GgufWriteValue::Array(std::span<const T> items) {
  GgufWriteValue out;
  out.type_ = GgufType::kArray;
  out.elem_type_ = TypeOf<T>();
  out.count_ = items.size();
  out.bytes_.resize(items.size() * sizeof(T));
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < items.size(); i++) out.bytes_[i] = items[i] ? 1 : 0;  // spec: 0 or 1
  } else if (!items.empty()) {
    std::memcpy(out.bytes_.data(), items.data(), out.bytes_.size());
  }
  return out;
}

}  // namespace smallmind::worker

// GgufValue: one metadata value of a GGUF file as parsed by GgufFile: a scalar, a string, or an
// array (of scalars, strings or nested arrays). Strings and array payloads are views into the
// file's bytes, so a value is valid only while the GgufFile that made it lives. Immutable;
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace smallmind::worker {

// gguf_metadata_value_type of the GGUF spec (ggml docs/gguf.md); values are the on-disk ids.
enum class GgufType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

inline constexpr uint32_t kGgufTypeCount = 13;

// "UINT32", "STRING", ...; "UNKNOWN" for an id outside the spec.
const char* GgufTypeName(GgufType type);
// Bytes of one value of a fixed-size type; 0 for STRING, ARRAY and ids outside the spec.
size_t GgufFixedSize(GgufType type);
bool IsGgufIntegerType(GgufType type);

class GgufValue {
 public:
  GgufValue() = default;

  // Builders used by the parser. `raw` holds the value's little-endian bytes, zero-extended.
  static GgufValue Scalar(GgufType type, uint64_t raw);
  static GgufValue String(std::string_view s);
  // count elements of a fixed-size type, packed little-endian at data (inside the file's bytes).
  static GgufValue FixedArray(GgufType elem_type, const uint8_t* data, uint64_t count);
  static GgufValue StringArray(std::vector<std::string_view> items);
  static GgufValue NestedArray(std::vector<GgufValue> items);

  GgufType type() const { return type_; }
  bool is_array() const { return type_ == GgufType::kArray; }

  // The value of an integer-typed scalar when it fits the target type; nullopt otherwise.
  std::optional<int64_t> AsInt64() const;
  std::optional<uint64_t> AsUint64() const;
  // The value of an F32 or F64 scalar (an F64 is rounded to double precision as stored).
  std::optional<double> AsDouble() const;
  std::optional<bool> AsBool() const;
  std::optional<std::string_view> AsString() const;

  // Arrays: element type and count (0 for a non-array).
  GgufType elem_type() const { return elem_type_; }
  uint64_t size() const { return is_array() ? count_ : 0; }
  // Element i of an array of a fixed-size type, as a scalar; i < size().
  GgufValue FixedAt(uint64_t i) const;
  // The elements of an array of strings / of arrays (empty for other arrays).
  std::span<const std::string_view> strings() const { return strings_; }
  std::span<const GgufValue> items() const { return items_; }

 private:
  GgufType type_ = GgufType::kU8;
  GgufType elem_type_ = GgufType::kU8;   // arrays only
  uint64_t raw_ = 0;                     // scalars: little-endian bytes, zero-extended
  uint64_t count_ = 0;                   // arrays: element count
  const uint8_t* fixed_data_ = nullptr;  // arrays of a fixed-size type: [count_ * elem size] bytes
  std::string_view str_;                 // STRING
  std::vector<std::string_view> strings_;  // array of STRING: [count_]
  std::vector<GgufValue> items_;           // array of ARRAY: [count_]
};

}  // namespace smallmind::worker

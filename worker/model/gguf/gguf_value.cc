#include "worker/model/gguf/gguf_value.h"

#include <bit>
#include <cstring>
#include <limits>
#include <utility>

namespace smallmind::worker {

static_assert(std::endian::native == std::endian::little, "GGUF values are read as little-endian");

const char* GgufTypeName(GgufType type) {
  switch (type) {
    case GgufType::kU8: return "UINT8";
    case GgufType::kI8: return "INT8";
    case GgufType::kU16: return "UINT16";
    case GgufType::kI16: return "INT16";
    case GgufType::kU32: return "UINT32";
    case GgufType::kI32: return "INT32";
    case GgufType::kF32: return "FLOAT32";
    case GgufType::kBool: return "BOOL";
    case GgufType::kString: return "STRING";
    case GgufType::kArray: return "ARRAY";
    case GgufType::kU64: return "UINT64";
    case GgufType::kI64: return "INT64";
    case GgufType::kF64: return "FLOAT64";
  }
  return "UNKNOWN";
}

size_t GgufFixedSize(GgufType type) {
  switch (type) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kBool: return 1;
    case GgufType::kU16:
    case GgufType::kI16: return 2;
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kF32: return 4;
    case GgufType::kU64:
    case GgufType::kI64:
    case GgufType::kF64: return 8;
    case GgufType::kString:
    case GgufType::kArray: return 0;
  }
  return 0;
}

bool IsGgufIntegerType(GgufType type) {
  switch (type) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kU16:
    case GgufType::kI16:
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kU64:
    case GgufType::kI64: return true;
    default: return false;
  }
}

GgufValue GgufValue::Scalar(GgufType type, uint64_t raw) {
  GgufValue v;
  v.type_ = type;
  v.raw_ = raw;
  return v;
}

GgufValue GgufValue::String(std::string_view s) {
  GgufValue v;
  v.type_ = GgufType::kString;
  v.str_ = s;
  return v;
}

GgufValue GgufValue::FixedArray(GgufType elem_type, const uint8_t* data, uint64_t count) {
  GgufValue v;
  v.type_ = GgufType::kArray;
  v.elem_type_ = elem_type;
  v.fixed_data_ = data;
  v.count_ = count;
  return v;
}

GgufValue GgufValue::StringArray(std::vector<std::string_view> items) {
  GgufValue v;
  v.type_ = GgufType::kArray;
  v.elem_type_ = GgufType::kString;
  v.count_ = items.size();
  v.strings_ = std::move(items);
  return v;
}

GgufValue GgufValue::NestedArray(std::vector<GgufValue> items) {
  GgufValue v;
  v.type_ = GgufType::kArray;
  v.elem_type_ = GgufType::kArray;
  v.count_ = items.size();
  v.items_ = std::move(items);
  return v;
}

std::optional<int64_t> GgufValue::AsInt64() const {
  switch (type_) {
    case GgufType::kU8:
    case GgufType::kU16:
    case GgufType::kU32: return static_cast<int64_t>(raw_);
    case GgufType::kI8: return static_cast<int8_t>(raw_);
    case GgufType::kI16: return static_cast<int16_t>(raw_);
    case GgufType::kI32: return static_cast<int32_t>(raw_);
    case GgufType::kI64: return static_cast<int64_t>(raw_);
    case GgufType::kU64:
      if (raw_ > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(raw_);
    default: return std::nullopt;
  }
}

std::optional<uint64_t> GgufValue::AsUint64() const {
  if (type_ == GgufType::kU64) return raw_;
  const std::optional<int64_t> v = AsInt64();
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::optional<double> GgufValue::AsDouble() const {
  if (type_ == GgufType::kF32) return std::bit_cast<float>(static_cast<uint32_t>(raw_));
  if (type_ == GgufType::kF64) return std::bit_cast<double>(raw_);
  return std::nullopt;
}

std::optional<bool> GgufValue::AsBool() const {
  if (type_ != GgufType::kBool) return std::nullopt;
  return raw_ != 0;
}

std::optional<std::string_view> GgufValue::AsString() const {
  if (type_ != GgufType::kString) return std::nullopt;
  return str_;
}

GgufValue GgufValue::FixedAt(uint64_t i) const {
  const size_t size = GgufFixedSize(elem_type_);
  uint64_t raw = 0;
  if (is_array() && fixed_data_ != nullptr && i < count_) {
    std::memcpy(&raw, fixed_data_ + i * size, size);  // little-endian: low bytes first
  }
  return Scalar(elem_type_, raw);
}

}  // namespace smallmind::worker

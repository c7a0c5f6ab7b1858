// ParseGguf: bytes of a GGUF file -> GgufContents, validating everything a later reader relies on.
// Layout per the GGUF spec (ggml docs/gguf.md): header (magic "GGUF", uint32 version, uint64
// tensor_count, uint64 metadata_kv_count), the metadata KVs (string key, uint32 value type, value),
// the tensor infos (string name, uint32 n_dims, uint64 dims[n_dims] innermost first, uint32 ggml
// type, uint64 offset from the data section), zero padding to general.alignment, then the data.
// Every count and length is checked against the bytes left before anything is sized from it.
#include "worker/model/gguf/gguf_parser.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

namespace smallmind::worker {
namespace {

using shared::Result;
using shared::Status;

constexpr uint64_t kMaxKeyBytes = 65535;      // spec: keys are at most 2^16 - 1 bytes
constexpr uint64_t kMaxTensorNameBytes = 64;  // spec: tensor names are at most 64 bytes
constexpr int kMaxArrayDepth = 8;  // nested arrays (real files use none); bounds the recursion
// Real models have < 100 metadata entries and < 100k tensors; larger counts are hostile and would
// only cost memory (each parsed entry takes up to ~8x its smallest encoding).
constexpr uint64_t kMaxEntries = uint64_t{1} << 20;
// Smallest encodings, to bound counts by the bytes left: a KV is a key length, a 1-byte key, a
// type and a 1-byte value; a tensor info is a name length, a 1-byte name, n_dims, one dim, a type
// and an offset; a string is its length; a nested array is an element type and a length.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;
constexpr uint64_t kMinStringBytes = 8;
constexpr uint64_t kMinArrayBytes = 4 + 8;

std::string Num(uint64_t v) { return std::to_string(v); }

// Bytes from a file shown safely in a message: printable ASCII kept, the rest as \xNN, cut at 80.
std::string Printable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 80; i++) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
      out += static_cast<char>(ch);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  if (s.size() > 80) out += "...";
  return out;
}

// ggml_type names, so an unsupported tensor type is reported by name (ggml docs/gguf.md).
const char* GgmlTypeName(uint32_t t) {
  static constexpr const char* kNames[] = {
      "F32",   "F16",        "Q4_0",       "Q4_1",       "Q4_2",     "Q4_3",     "Q5_0",
      "Q5_1",  "Q8_0",       "Q8_1",       "Q2_K",       "Q3_K",     "Q4_K",     "Q5_K",
      "Q6_K",  "Q8_K",       "IQ2_XXS",    "IQ2_XS",     "IQ3_XXS",  "IQ1_S",    "IQ4_NL",
      "IQ3_S", "IQ2_S",      "IQ4_XS",     "I8",         "I16",      "I32",      "I64",
      "F64",   "IQ1_M",      "BF16",       "Q4_0_4_4",   "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",
      "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4"};
  return t < std::size(kNames) ? kNames[t] : "unknown";
}

// Reads little-endian fields; errors name the file, the item being read (context) and the offset.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  uint64_t pos() const { return pos_; }
  uint64_t size() const { return bytes_.size(); }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  const uint8_t* here() const { return bytes_.data() + pos_; }
  void set_context(std::string context) { context_ = std::move(context); }

  Status Error(const std::string& what) const { return ErrorAt(what, pos_); }
  Status ErrorAt(const std::string& what, uint64_t at) const {
    std::string msg = name_ + ": ";
    if (!context_.empty()) msg += context_ + ": ";
    return shared::InvalidArgument(msg + what + " (at byte " + Num(at) + ")");
  }
  Status Need(uint64_t n, const char* what) const {
    if (n <= remaining()) return Status::Ok();
    return Error(std::string("truncated file: ") + what + " needs " + Num(n) + " bytes but only " +
                 Num(remaining()) + " of the file's " + Num(size()) + " remain");
  }
  Status Skip(uint64_t n, const char* what) {
    SM_RETURN_IF_ERROR(Need(n, what));
    pos_ += n;
    return Status::Ok();
  }
  template <typename T>
  Status Read(T* out, const char* what) {
    SM_RETURN_IF_ERROR(Need(sizeof(T), what));
    std::memcpy(out, here(), sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }
  // A GGUF string: uint64 byte length, then the bytes (no terminator).
  Status ReadString(std::string_view* out, uint64_t max_len, const char* what) {
    const uint64_t at = pos_;
    uint64_t len = 0;
    SM_RETURN_IF_ERROR(Read(&len, what));
    if (len > max_len) {
      return ErrorAt(std::string(what) + " claims " + Num(len) + " bytes, more than the " +
                         Num(max_len) + " allowed",
                     at);
    }
    SM_RETURN_IF_ERROR(Need(len, what));
    *out = std::string_view(reinterpret_cast<const char*>(here()), len);
    pos_ += len;
    return Status::Ok();
  }

 private:
  std::span<const uint8_t> bytes_;
  const std::string& name_;
  std::string context_;
  uint64_t pos_ = 0;
};

Status ParseValue(Cursor& c, uint32_t raw_type, int depth, GgufValue* out);

Status ParseArray(Cursor& c, int depth, GgufValue* out) {
  if (depth >= kMaxArrayDepth) {
    return c.Error("arrays nested more than " + Num(kMaxArrayDepth) + " levels deep");
  }
  uint32_t raw_elem = 0;
  uint64_t count = 0;
  SM_RETURN_IF_ERROR(c.Read(&raw_elem, "array element type"));
  if (raw_elem >= kGgufTypeCount) return c.Error("unknown array element type " + Num(raw_elem));
  const GgufType elem = static_cast<GgufType>(raw_elem);
  SM_RETURN_IF_ERROR(c.Read(&count, "array length"));
  const size_t fixed = GgufFixedSize(elem);
  const uint64_t min_elem_bytes =
      fixed > 0 ? fixed : (elem == GgufType::kString ? kMinStringBytes : kMinArrayBytes);
  if (count > c.remaining() / min_elem_bytes) {
    return c.Error("array of " + Num(count) + " " + GgufTypeName(elem) +
                   " elements cannot fit in the " + Num(c.remaining()) + " bytes left");
  }
  if (fixed > 0) {
    const uint8_t* data = c.here();
    if (elem == GgufType::kBool) {
      for (uint64_t i = 0; i < count; i++) {
        if (data[i] > 1) return c.Error("BOOL array element " + Num(i) + " is " + Num(data[i]));
      }
    }
    SM_RETURN_IF_ERROR(c.Skip(count * fixed, "array elements"));
    *out = GgufValue::FixedArray(elem, data, count);
    return Status::Ok();
  }
  if (elem == GgufType::kString) {
    std::vector<std::string_view> items;
    items.reserve(count);  // bounded above by the bytes left
    for (uint64_t i = 0; i < count; i++) {
      std::string_view s;
      SM_RETURN_IF_ERROR(c.ReadString(&s, c.remaining(), "string array element"));
      items.push_back(s);
    }
    *out = GgufValue::StringArray(std::move(items));
    return Status::Ok();
  }
  std::vector<GgufValue> items;
  items.reserve(count);  // bounded above by the bytes left
  for (uint64_t i = 0; i < count; i++) {
    items.emplace_back();
    SM_RETURN_IF_ERROR(ParseArray(c, depth + 1, &items.back()));
  }
  *out = GgufValue::NestedArray(std::move(items));
  return Status::Ok();
}

Status ParseValue(Cursor& c, uint32_t raw_type, int depth, GgufValue* out) {
  if (raw_type >= kGgufTypeCount) return c.Error("unknown value type " + Num(raw_type));
  const GgufType type = static_cast<GgufType>(raw_type);
  if (const size_t size = GgufFixedSize(type); size > 0) {
    SM_RETURN_IF_ERROR(c.Need(size, GgufTypeName(type)));
    uint64_t raw = 0;
    std::memcpy(&raw, c.here(), size);  // little-endian: zero-extended
    if (type == GgufType::kBool && raw > 1) {
      return c.Error("BOOL value is " + Num(raw) + "; it must be 0 or 1");
    }
    *out = GgufValue::Scalar(type, raw);
    return c.Skip(size, GgufTypeName(type));
  }
  if (type == GgufType::kString) {
    std::string_view s;
    SM_RETURN_IF_ERROR(c.ReadString(&s, c.remaining(), "string value"));
    *out = GgufValue::String(s);
    return Status::Ok();
  }
  return ParseArray(c, depth, out);
}

Status ParseHeader(Cursor& c, GgufContents* out, uint64_t* n_tensors, uint64_t* n_kv) {
  if (c.remaining() < 4 || std::memcmp(c.here(), "GGUF", 4) != 0) {
    const std::string_view magic(reinterpret_cast<const char*>(c.here()),
                                 std::min<uint64_t>(4, c.remaining()));
    return c.Error("not a GGUF file: it starts with \"" + Printable(magic) +
                   "\" instead of the magic \"GGUF\"");
  }
  SM_RETURN_IF_ERROR(c.Skip(4, "magic"));
  SM_RETURN_IF_ERROR(c.Read(&out->version, "version"));
  if (out->version == 0x02000000u || out->version == 0x03000000u) {
    return c.Error("big-endian GGUF files are not supported");
  }
  if (out->version == 1) {
    return c.Error(
        "GGUF version 1 (32-bit counts) is not supported; re-convert the model with a "
        "current llama.cpp");
  }
  if (out->version != 2 && out->version != 3) {
    return c.Error("unsupported GGUF version " + Num(out->version) +
                   " (versions 2 and 3 are read)");
  }
  SM_RETURN_IF_ERROR(c.Read(n_tensors, "tensor_count"));
  SM_RETURN_IF_ERROR(c.Read(n_kv, "metadata_kv_count"));
  if (*n_kv > kMaxEntries || *n_tensors > kMaxEntries) {
    return c.Error("header claims " + Num(*n_kv) + " metadata entries and " + Num(*n_tensors) +
                   " tensors; the limit is " + Num(kMaxEntries) + " of each");
  }
  if (*n_kv > c.remaining() / kMinKvBytes || *n_tensors > c.remaining() / kMinTensorInfoBytes ||
      *n_kv * kMinKvBytes + *n_tensors * kMinTensorInfoBytes > c.remaining()) {
    return c.Error("header claims " + Num(*n_kv) + " metadata entries and " + Num(*n_tensors) +
                   " tensors, more than the " + Num(c.remaining()) + " bytes left can hold");
  }
  return Status::Ok();
}

bool IsPrintableAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; });
}

Status ParseMetadata(Cursor& c, uint64_t n_kv, GgufContents* out) {
  out->metadata.reserve(n_kv);  // bounded by the bytes left (ParseHeader)
  for (uint64_t i = 0; i < n_kv; i++) {
    c.set_context("metadata entry " + Num(i));
    std::string_view key;
    SM_RETURN_IF_ERROR(c.ReadString(&key, kMaxKeyBytes, "key"));
    if (key.empty() || !IsPrintableAscii(key)) {
      return c.Error("key \"" + Printable(key) + "\" is not a non-empty ASCII string");
    }
    c.set_context("metadata key '" + Printable(key) + "'");
    if (out->metadata_index.count(key) > 0) return c.Error("duplicate metadata key");
    uint32_t type = 0;
    SM_RETURN_IF_ERROR(c.Read(&type, "value type"));
    GgufValue value;
    SM_RETURN_IF_ERROR(ParseValue(c, type, 0, &value));
    out->metadata_index.emplace(key, out->metadata.size());
    out->metadata.push_back({key, std::move(value)});
  }
  return Status::Ok();
}

Status ResolveAlignment(Cursor& c, GgufContents* out) {
  const auto it = out->metadata_index.find(kGgufAlignmentKey);
  if (it == out->metadata_index.end()) return Status::Ok();
  c.set_context(std::string("metadata key '") + kGgufAlignmentKey + "'");
  const GgufValue& v = out->metadata[it->second].value;
  const std::optional<uint64_t> a = v.AsUint64();
  if (!a) return c.Error(std::string("must be an unsigned integer, not ") + GgufTypeName(v.type()));
  if (*a == 0 || *a > std::numeric_limits<uint32_t>::max() || !std::has_single_bit(*a)) {
    return c.Error("must be a power of two, got " + Num(*a));
  }
  out->alignment = static_cast<uint32_t>(*a);
  return Status::Ok();
}

// Reads n_dims and the dims, filling t's shape and element count.
Status ParseShape(Cursor& c, GgufTensorInfo* t) {
  uint32_t n_dims = 0;
  SM_RETURN_IF_ERROR(c.Read(&n_dims, "n_dims"));
  if (n_dims == 0 || n_dims > static_cast<uint32_t>(kGgufMaxDims)) {
    return c.Error("n_dims is " + Num(n_dims) + "; it must be 1 to " + Num(kGgufMaxDims));
  }
  t->n_dims = static_cast<int>(n_dims);
  int64_t n = 1;
  for (int d = 0; d < t->n_dims; d++) {
    uint64_t dim = 0;
    SM_RETURN_IF_ERROR(c.Read(&dim, "dimension"));
    if (dim == 0 || dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return c.Error("dimension " + Num(d) + " is " + Num(dim));
    }
    t->dims[d] = static_cast<int64_t>(dim);
    if (__builtin_mul_overflow(n, t->dims[d], &n)) return c.Error("element count overflows");
  }
  t->n_elements = n;
  return Status::Ok();
}

Status ParseTensorInfo(Cursor& c, uint64_t i, GgufContents* out) {
  c.set_context("tensor " + Num(i));
  std::string_view name;
  SM_RETURN_IF_ERROR(c.ReadString(&name, kMaxTensorNameBytes, "tensor name"));
  if (name.empty()) return c.Error("empty tensor name");
  c.set_context("tensor '" + Printable(name) + "'");
  if (out->tensor_index.count(name) > 0) return c.Error("duplicate tensor name");
  GgufTensorInfo t;
  t.name = std::string(name);
  SM_RETURN_IF_ERROR(ParseShape(c, &t));
  uint32_t type = 0;
  SM_RETURN_IF_ERROR(c.Read(&type, "tensor type"));
  const kernels::DTypeTraits* traits = kernels::GetDTypeTraits(type);
  if (traits == nullptr) {
    return c.Error("unsupported tensor type " + Num(type) + " (" + GgmlTypeName(type) +
                   "); supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, "
                   "Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, MXFP4");
  }
  t.type = static_cast<kernels::DType>(type);
  if (t.dims[0] % traits->block_elems != 0) {
    return c.Error("row length " + Num(t.dims[0]) + " is not a multiple of the " + traits->name +
                   " block size " + Num(traits->block_elems));
  }
  const uint64_t blocks = static_cast<uint64_t>(t.n_elements / traits->block_elems);
  if (__builtin_mul_overflow(blocks, traits->block_bytes, &t.n_bytes)) {
    return c.Error("data size overflows");
  }
  SM_RETURN_IF_ERROR(c.Read(&t.offset, "tensor data offset"));
  if (t.offset % out->alignment != 0) {
    return c.Error("data offset " + Num(t.offset) + " is not a multiple of the alignment " +
                   Num(out->alignment));
  }
  out->tensor_index.emplace(name, out->tensors.size());
  out->tensors.push_back(std::move(t));
  return Status::Ok();
}

// The data section starts at the first aligned offset after the tensor infos; every tensor must
// lie inside the file, and no two may overlap.
Status CheckLayout(Cursor& c, GgufContents* out) {
  c.set_context("");
  const uint64_t a = out->alignment;
  out->data_offset = (c.pos() + a - 1) / a * a;
  if (out->tensors.empty()) return Status::Ok();  // vocab-only files may end right after metadata
  if (out->data_offset > c.size()) {
    return c.Error("the tensor data section would start at byte " + Num(out->data_offset) +
                   ", past the end of the " + Num(c.size()) + "-byte file");
  }
  const uint64_t data_size = c.size() - out->data_offset;
  for (const GgufTensorInfo& t : out->tensors) {
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      return c.ErrorAt("tensor '" + Printable(t.name) + "' data [" + Num(t.offset) + ", +" +
                           Num(t.n_bytes) + ") runs past the end of the " + Num(data_size) +
                           "-byte data section",
                       out->data_offset);
    }
  }
  std::vector<size_t> order(out->tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return out->tensors[x].offset < out->tensors[y].offset; });
  for (size_t k = 1; k < order.size(); k++) {
    const GgufTensorInfo& prev = out->tensors[order[k - 1]];
    const GgufTensorInfo& next = out->tensors[order[k]];
    if (prev.offset + prev.n_bytes > next.offset) {
      return c.ErrorAt(
          "tensors '" + Printable(prev.name) + "' and '" + Printable(next.name) + "' overlap",
          out->data_offset + next.offset);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<GgufContents> ParseGguf(std::span<const uint8_t> bytes, const std::string& name) {
  Cursor c(bytes, name);
  GgufContents out;
  uint64_t n_tensors = 0;
  uint64_t n_kv = 0;
  SM_RETURN_IF_ERROR(ParseHeader(c, &out, &n_tensors, &n_kv));
  SM_RETURN_IF_ERROR(ParseMetadata(c, n_kv, &out));
  SM_RETURN_IF_ERROR(ResolveAlignment(c, &out));
  out.tensors.reserve(n_tensors);  // bounded by the bytes left (ParseHeader)
  for (uint64_t i = 0; i < n_tensors; i++) SM_RETURN_IF_ERROR(ParseTensorInfo(c, i, &out));
  SM_RETURN_IF_ERROR(CheckLayout(c, &out));
  return out;
}

}  // namespace smallmind::worker

// Layout written (ggml docs/gguf.md, version 3, little-endian): "GGUF", uint32 version, uint64
// tensor_count, uint64 metadata_kv_count; each KV as string key + uint32 type + value; each tensor
// info as string name + uint32 n_dims + uint64 dims (innermost first) + uint32 ggml type + uint64
// offset from the data section; zero padding to the alignment; then each tensor's data at its
// (aligned) offset, zero-padded to the alignment. Strings are a uint64 length then the bytes.
#include "worker/modelgen/gguf_writer.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "worker/model/gguf/gguf_reader.h"

namespace smallmind::worker {

using shared::Result;
using shared::Status;

static_assert(std::endian::native == std::endian::little, "GGUF is written little-endian");
static_assert(sizeof(bool) == 1);

namespace {

constexpr uint32_t kGgufVersion = 3;
constexpr size_t kMaxKeyBytes = 65535;  // spec
// ggml's readers keep names in char[GGML_MAX_NAME = 64] with the terminator, so at most 63 bytes.
constexpr size_t kMaxTensorNameBytes = 63;

void PutU32(std::vector<uint8_t>* out, uint32_t v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out->insert(out->end(), p, p + sizeof(v));
}

void PutU64(std::vector<uint8_t>* out, uint64_t v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out->insert(out->end(), p, p + sizeof(v));
}

void PutString(std::vector<uint8_t>* out, std::string_view s) {
  PutU64(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

bool IsPrintableAscii(std::string_view s) {
  for (char ch : s) {
    if (ch < 0x20 || ch >= 0x7f) return false;
  }
  return true;
}

}  // namespace

GgufWriteValue GgufWriteValue::String(std::string_view v) {
  GgufWriteValue out;
  out.type_ = GgufType::kString;
  out.bytes_.assign(v.begin(), v.end());
  return out;
}

GgufWriteValue GgufWriteValue::StringArray(std::span<const std::string> items) {
  GgufWriteValue out;
  out.type_ = GgufType::kArray;
  out.elem_type_ = GgufType::kString;
  out.count_ = items.size();
  out.strings_.assign(items.begin(), items.end());
  return out;
}

GgufWriteValue GgufWriteValue::ArrayOfArrays(std::vector<GgufWriteValue> items) {
  for (const GgufWriteValue& item : items) {
    SM_CHECK(item.type() == GgufType::kArray) << "ArrayOfArrays items must be arrays";
  }
  GgufWriteValue out;
  out.type_ = GgufType::kArray;
  out.elem_type_ = GgufType::kArray;
  out.count_ = items.size();
  out.items_ = std::move(items);
  return out;
}

void GgufWriteValue::AppendTo(std::vector<uint8_t>* out) const {
  if (type_ == GgufType::kString) {
    PutString(out, std::string_view(reinterpret_cast<const char*>(bytes_.data()), bytes_.size()));
    return;
  }
  if (type_ != GgufType::kArray) {
    out->insert(out->end(), bytes_.begin(), bytes_.end());
    return;
  }
  // An array: element type, element count, then the elements without type tags (a nested array
  // element is itself element type + count + elements).
  PutU32(out, static_cast<uint32_t>(elem_type_));
  PutU64(out, count_);
  if (elem_type_ == GgufType::kString) {
    for (const std::string& s : strings_) PutString(out, s);
  } else if (elem_type_ == GgufType::kArray) {
    for (const GgufWriteValue& item : items_) item.AppendTo(out);
  } else {
    out->insert(out->end(), bytes_.begin(), bytes_.end());
  }
}

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment) {
  if (alignment == 0 || !std::has_single_bit(alignment) || alignment % 8 != 0) {
    alignment_ = kGgufDefaultAlignment;
    Fail("alignment " + std::to_string(alignment) + " is not a power of two multiple of 8");
  }
}

void GgufWriter::Fail(std::string message) {
  if (status_.ok()) status_ = shared::InvalidArgument("GGUF writer: " + std::move(message));
}

void GgufWriter::Add(std::string_view key, GgufWriteValue value) {
  if (key.empty() || key.size() > kMaxKeyBytes || !IsPrintableAscii(key)) {
    return Fail("metadata key '" + std::string(key.substr(0, 80)) +
                "' must be 1 to 65535 printable ASCII bytes");
  }
  if (key == kGgufAlignmentKey) {
    return Fail("general.alignment is written from the alignment given to the GgufWriter");
  }
  if (!keys_.emplace(key).second) return Fail("duplicate metadata key '" + std::string(key) + "'");
  PutString(&kv_bytes_, key);
  PutU32(&kv_bytes_, static_cast<uint32_t>(value.type()));
  value.AppendTo(&kv_bytes_);
  kv_count_++;
}

bool GgufWriter::CheckTensor(std::string_view name, kernels::DType type,
                             std::span<const int64_t> dims, uint64_t* n_bytes) {
  const std::string shown(name.substr(0, 80));
  if (name.empty() || name.size() > kMaxTensorNameBytes) {
    Fail("tensor name '" + shown + "' must be 1 to 63 bytes");
    return false;
  }
  if (!tensor_names_.emplace(name).second) {
    Fail("duplicate tensor name '" + shown + "'");
    return false;
  }
  const kernels::DTypeTraits* traits = kernels::GetDTypeTraits(static_cast<uint32_t>(type));
  if (traits == nullptr || dims.empty() || dims.size() > static_cast<size_t>(kGgufMaxDims)) {
    Fail("tensor '" + shown + "' needs a supported type and 1 to 4 dims");
    return false;
  }
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d < 1 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) {
      Fail("tensor '" + shown + "' has a dimension < 1 or too many elements");
      return false;
    }
  }
  if (dims[0] % traits->block_elems != 0) {
    Fail("tensor '" + shown + "' row length " + std::to_string(dims[0]) +
         " is not a multiple of the " + traits->name + " block size");
    return false;
  }
  *n_bytes = n / traits->block_elems * traits->block_bytes;
  return true;
}

void GgufWriter::AddTensor(std::string_view name, kernels::DType type,
                           std::span<const int64_t> dims, std::vector<uint8_t> data) {
  uint64_t n_bytes = 0;
  if (!CheckTensor(name, type, dims, &n_bytes)) return;
  if (data.size() != n_bytes) {
    return Fail("tensor '" + std::string(name) + "' has " + std::to_string(data.size()) +
                " bytes of data, its shape and type need " + std::to_string(n_bytes));
  }
  tensors_.push_back({std::string(name),
                      type,
                      {dims.begin(), dims.end()},
                      n_bytes,
                      data_bytes_,
                      std::move(data),
                      nullptr});
  data_bytes_ = AlignUp(data_bytes_ + n_bytes, alignment_);
}

void GgufWriter::AddTensor(std::string_view name, kernels::DType type,
                           std::span<const int64_t> dims, TensorFill fill) {
  uint64_t n_bytes = 0;
  if (!CheckTensor(name, type, dims, &n_bytes)) return;
  SM_CHECK(fill != nullptr) << "AddTensor needs a fill function";
  tensors_.push_back({std::string(name),
                      type,
                      {dims.begin(), dims.end()},
                      n_bytes,
                      data_bytes_,
                      {},
                      std::move(fill)});
  data_bytes_ = AlignUp(data_bytes_ + n_bytes, alignment_);
}

std::vector<uint8_t> GgufWriter::HeaderAndInfos() const {
  const bool write_alignment = alignment_ != kGgufDefaultAlignment;
  std::vector<uint8_t> out;
  // Header, KVs, the alignment KV, and per tensor: name, n_dims, 4 dims, type, offset; + padding.
  out.reserve(24 + kv_bytes_.size() + 64 + tensors_.size() * (8 + 64 + 4 + 32 + 4 + 8) +
              alignment_);
  for (char ch : {'G', 'G', 'U', 'F'}) out.push_back(static_cast<uint8_t>(ch));
  PutU32(&out, kGgufVersion);
  PutU64(&out, tensors_.size());
  PutU64(&out, kv_count_ + (write_alignment ? 1 : 0));
  out.insert(out.end(), kv_bytes_.begin(), kv_bytes_.end());
  if (write_alignment) {
    PutString(&out, kGgufAlignmentKey);
    PutU32(&out, static_cast<uint32_t>(GgufType::kU32));
    PutU32(&out, alignment_);
  }
  for (const Tensor& t : tensors_) {
    PutString(&out, t.name);
    PutU32(&out, static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) PutU64(&out, static_cast<uint64_t>(d));
    PutU32(&out, static_cast<uint32_t>(t.type));
    PutU64(&out, t.offset);
  }
  out.resize(AlignUp(out.size(), alignment_), 0);  // the data section starts aligned
  return out;
}

Status GgufWriter::Emit(const Sink& sink, const Progress& progress) const {
  SM_RETURN_IF_ERROR(status_);
  SM_RETURN_IF_ERROR(sink(HeaderAndInfos()));
  const std::vector<uint8_t> zeros(alignment_, 0);
  std::vector<uint8_t> scratch;
  size_t done = 0;
  uint64_t bytes_done = 0;
  for (const Tensor& t : tensors_) {
    if (t.fill) {
      scratch.assign(t.n_bytes, 0);
      t.fill(std::span<uint8_t>(scratch));
      SM_RETURN_IF_ERROR(sink(scratch));
    } else {
      SM_RETURN_IF_ERROR(sink(t.data));
    }
    const uint64_t pad = AlignUp(t.n_bytes, alignment_) - t.n_bytes;
    SM_RETURN_IF_ERROR(sink(std::span<const uint8_t>(zeros.data(), pad)));
    bytes_done += t.n_bytes + pad;
    if (progress) progress(++done, tensors_.size(), bytes_done, data_bytes_);
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> GgufWriter::WriteBuffer() const {
  std::vector<uint8_t> out;
  SM_RETURN_IF_ERROR(Emit([&out](std::span<const uint8_t> bytes) {
    out.insert(out.end(), bytes.begin(), bytes.end());
    return Status::Ok();
  }));
  return out;
}

Status GgufWriter::WriteFile(const std::string& path, const Progress& progress) const {
  SM_RETURN_IF_ERROR(status_);
  // Write beside the target and rename, so a reader never sees a half-written model.
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return shared::Internal(tmp + ": cannot create: " + std::strerror(errno));
  }
  Status st = Emit(
      [&](std::span<const uint8_t> bytes) {
        if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
          return shared::Internal(tmp + ": write failed: " + std::strerror(errno));
        }
        return Status::Ok();
      },
      progress);
  if (std::fclose(f) != 0 && st.ok()) {
    st = shared::Internal(tmp + ": close failed: " + std::strerror(errno));
  }
  if (st.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    st = shared::Internal(path + ": cannot rename from " + tmp + ": " + std::strerror(errno));
  }
  if (!st.ok()) std::remove(tmp.c_str());
  return st;
}

}  // namespace smallmind::worker

#include "worker/model/gguf/gguf_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

namespace smallmind::worker {

using shared::Result;
using shared::Status;

namespace {

constexpr std::align_val_t kBufferAlignment{64};

bool IsInteger(const GgufValue& v) { return IsGgufIntegerType(v.type()); }
bool IsFloat(const GgufValue& v) {
  return v.type() == GgufType::kF32 || v.type() == GgufType::kF64;
}
bool IsBool(const GgufValue& v) { return v.type() == GgufType::kBool; }
bool IsString(const GgufValue& v) { return v.type() == GgufType::kString; }
bool IsStringArray(const GgufValue& v) {
  return v.is_array() && v.elem_type() == GgufType::kString;
}
bool IsFloatArray(const GgufValue& v) {
  return v.is_array() && (v.elem_type() == GgufType::kF32 || v.elem_type() == GgufType::kF64);
}
bool IsIntegerArray(const GgufValue& v) { return v.is_array() && IsGgufIntegerType(v.elem_type()); }

std::string Describe(const GgufValue& v) {
  if (!v.is_array()) return GgufTypeName(v.type());
  return std::string("ARRAY of ") + GgufTypeName(v.elem_type());
}

}  // namespace

void GgufFile::AlignedDelete::operator()(uint8_t* p) const {
  ::operator delete[](p, kBufferAlignment);
}

GgufFile::~GgufFile() {
  if (mapping_ != nullptr) munmap(mapping_, static_cast<size_t>(size_));
}

Result<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return shared::NotFound(path + ": cannot open GGUF file: " + std::strerror(errno));
  }
  struct stat st = {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return shared::InvalidArgument(path + ": not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return shared::InvalidArgument(path + ": empty file, not a GGUF model");
  }
  void* addr = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (addr == MAP_FAILED) {
    return shared::Internal(path + ": cannot map GGUF file: " + std::strerror(map_errno));
  }
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = path;
  file->mapping_ = addr;
  file->data_ = static_cast<const uint8_t*>(addr);
  file->size_ = static_cast<uint64_t>(st.st_size);
  SM_RETURN_IF_ERROR(file->Parse());
  return file;
}

Result<std::unique_ptr<GgufFile>> GgufFile::FromBuffer(std::span<const uint8_t> bytes,
                                                       std::string name) {
  if (bytes.empty()) return shared::InvalidArgument(name + ": empty buffer, not a GGUF model");
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = std::move(name);
  file->owned_.reset(static_cast<uint8_t*>(::operator new[](bytes.size(), kBufferAlignment)));
  std::memcpy(file->owned_.get(), bytes.data(), bytes.size());
  file->data_ = file->owned_.get();
  file->size_ = bytes.size();
  SM_RETURN_IF_ERROR(file->Parse());
  return file;
}

Status GgufFile::Parse() {
  Result<GgufContents> contents = ParseGguf(bytes(), path_);
  if (!contents.ok()) return contents.status();
  contents_ = std::move(contents).value();
  return Status::Ok();
}

const GgufValue* GgufFile::Find(std::string_view key) const {
  const auto it = contents_.metadata_index.find(key);
  return it == contents_.metadata_index.end() ? nullptr : &contents_.metadata[it->second].value;
}

const GgufTensorInfo* GgufFile::FindTensor(std::string_view name) const {
  const auto it = contents_.tensor_index.find(name);
  return it == contents_.tensor_index.end() ? nullptr : &contents_.tensors[it->second];
}

Status GgufFile::Mismatch(std::string_view key, const GgufValue& v, const char* wanted) const {
  return shared::InvalidArgument(path_ + ": metadata key '" + std::string(key) + "' is " +
                                 Describe(v) + ", expected " + wanted);
}

Result<const GgufValue*> GgufFile::FindTyped(std::string_view key, const char* wanted,
                                             bool (*accepts)(const GgufValue&)) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) {
    return shared::NotFound(path_ + ": metadata key '" + std::string(key) + "' not found");
  }
  if (!accepts(*v)) return Mismatch(key, *v, wanted);
  return v;
}

Result<std::string> GgufFile::GetString(std::string_view key) const {
  SM_ASSIGN_OR_RETURN(const GgufValue* v, FindTyped(key, "STRING", IsString));
  return std::string(*v->AsString());
}

Result<uint64_t> GgufFile::GetU64(std::string_view key) const {
  SM_ASSIGN_OR_RETURN(const GgufValue* v, FindTyped(key, "an integer", IsInteger));
  const std::optional<uint64_t> u = v->AsUint64();
  if (!u) {
    return shared::InvalidArgument(path_ + ": metadata key '" + std::string(key) + "' is " +
                                   std::to_string(*v->AsInt64()) + ", expected a value >= 0");
  }
  return *u;
}

Result<uint32_t> GgufFile::GetU32(std::string_view key) const {
  SM_ASSIGN_OR_RETURN(const uint64_t u, GetU64(key));
  if (u > std::numeric_limits<uint32_t>::max()) {
    return shared::InvalidArgument(path_ + ": metadata key '" + std::string(key) + "' is " +
                                   std::to_string(u) + ", more than a uint32 holds");
  }
  return static_cast<uint32_t>(u);
}

Result<int64_t> GgufFile::GetInt(std::string_view key) const {
  SM_ASSIGN_OR_RETURN(const GgufValue* v, FindTyped(key, "an integer", IsInteger));
  const std::optional<int64_t> i = v->AsInt64();
  if (!i) {
    return shared::InvalidArgument(path_ + ": metadata key '" + std::string(key) + "' is " +
                                   std::to_string(*v->AsUint64()) + ", more than an int64 holds");
  }
  return *i;
}

Result<float> GgufFile::GetF32(std::string_view key) const {
  SM_ASSIGN_OR_RETURN(const GgufValue* v, FindTyped(key, "FLOAT32", IsFloat));
  return static_cast<float>(*v->AsDouble());
}

Result<bool> GgufFile::GetBool(std::string_view key) const {
  SM_ASSIGN_OR_RETURN(const GgufValue* v, FindTyped(key, "BOOL", IsBool));
  return *v->AsBool();
}

Result<std::vector<std::string>> GgufFile::GetStringArray(std::string_view key) const {
  SM_ASSIGN_OR_RETURN(const GgufValue* v, FindTyped(key, "ARRAY of STRING", IsStringArray));
  return std::vector<std::string>(v->strings().begin(), v->strings().end());
}

Result<std::vector<float>> GgufFile::GetF32Array(std::string_view key) const {
  SM_ASSIGN_OR_RETURN(const GgufValue* v, FindTyped(key, "ARRAY of FLOAT32", IsFloatArray));
  std::vector<float> out(v->size());  // the elements are in the file: size is bounded by it
  for (uint64_t i = 0; i < v->size(); i++) out[i] = static_cast<float>(*v->FixedAt(i).AsDouble());
  return out;
}

Result<std::vector<int32_t>> GgufFile::GetI32Array(std::string_view key) const {
  SM_ASSIGN_OR_RETURN(const GgufValue* v, FindTyped(key, "ARRAY of INT32", IsIntegerArray));
  std::vector<int32_t> out(v->size());  // the elements are in the file: size is bounded by it
  for (uint64_t i = 0; i < v->size(); i++) {
    const std::optional<int64_t> e = v->FixedAt(i).AsInt64();
    if (!e || *e < std::numeric_limits<int32_t>::min() ||
        *e > std::numeric_limits<int32_t>::max()) {
      return shared::InvalidArgument(path_ + ": metadata key '" + std::string(key) + "' element " +
                                     std::to_string(i) + " does not fit in an int32");
    }
    out[i] = static_cast<int32_t>(*e);
  }
  return out;
}

}  // namespace smallmind::worker

// Test helpers for GGUF files rewritten key by key: parse a buffer, copy a generated model's
// metadata and tensors into a GgufWriter with one thing added (or one key dropped), and load the
// result as the worker would. Header-only, for tests/worker/model; not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/modelgen/gguf_writer.h"

namespace smallmind::worker {

inline std::unique_ptr<GgufFile> Parse(const std::vector<uint8_t>& bytes) {
  auto f = GgufFile::FromBuffer(bytes, "mem.gguf");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(f).value() : nullptr;
}

// The scalar or array `v` (of the types the generator writes) as a value to write.
inline GgufWriteValue Copy(const GgufValue& v) {
  if (!v.is_array()) {
    switch (v.type()) {
      case GgufType::kString: return GgufWriteValue::String(*v.AsString());
      case GgufType::kBool: return GgufWriteValue::Bool(*v.AsBool());
      case GgufType::kF32: return GgufWriteValue::F32(static_cast<float>(*v.AsDouble()));
      case GgufType::kI32: return GgufWriteValue::I32(static_cast<int32_t>(*v.AsInt64()));
      default: return GgufWriteValue::U32(static_cast<uint32_t>(*v.AsUint64()));
    }
  }
  if (v.elem_type() == GgufType::kString) {
    const std::vector<std::string> s(v.strings().begin(), v.strings().end());
    return GgufWriteValue::StringArray(s);
  }
  if (v.elem_type() == GgufType::kF32) {
    std::vector<float> f;
    for (uint64_t i = 0; i < v.size(); i++)
      f.push_back(static_cast<float>(*v.FixedAt(i).AsDouble()));
    return GgufWriteValue::Array<float>(f);
  }
  std::vector<int32_t> n;
  for (uint64_t i = 0; i < v.size(); i++)
    n.push_back(static_cast<int32_t>(*v.FixedAt(i).AsInt64()));
  return GgufWriteValue::Array<int32_t>(n);
}

// `src` rewritten with `edit` applied to a writer holding its metadata (tensors follow), without
// its key `drop_key` and its tensor `drop_tensor` if named.
inline std::vector<uint8_t> Rewritten(const std::vector<uint8_t>& src,
                                      const std::function<void(GgufWriter&)>& edit,
                                      const std::string& drop_key = "",
                                      const std::string& drop_tensor = "") {
  std::unique_ptr<GgufFile> f = Parse(src);
  GgufWriter w;
  for (const GgufKeyValue& kv : f->metadata()) {
    if (kv.key != drop_key) w.Add(kv.key, Copy(kv.value));
  }
  edit(w);
  for (const GgufTensorInfo& t : f->tensors()) {
    if (t.name == drop_tensor) continue;
    const uint8_t* p = f->TensorData(t);
    w.AddTensor(t.name, t.type, std::span<const int64_t>(t.dims.data(), t.n_dims),
                std::vector<uint8_t>(p, p + t.n_bytes));
  }
  auto out = w.WriteBuffer();
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : std::vector<uint8_t>();
}

// The status of reading the config and mapping the weights of `bytes`.
inline shared::Status LoadStatus(const std::vector<uint8_t>& bytes) {
  std::unique_ptr<GgufFile> f = Parse(bytes);
  if (f == nullptr) return shared::Internal("unparsable");
  SM_ASSIGN_OR_RETURN(ModelConfig c, GgufModelConfig(*f));
  WeightStorage storage = WeightStorage::Allocate(f->file_size());
  std::memcpy(storage.mutable_data(), f->bytes().data(), f->file_size());
  SM_ASSIGN_OR_RETURN(Weights w, MapGgufWeights(*f, c, std::move(storage)));
  return ValidateLlamaWeights(c, w);
}

inline void ExpectRefusedNaming(const std::vector<uint8_t>& bytes, const std::string& name) {
  const shared::Status s = LoadStatus(bytes);
  ASSERT_FALSE(s.ok()) << name;
  EXPECT_NE(s.message().find("'" + name + "'"), std::string::npos) << s.message();
}

}  // namespace smallmind::worker

// libFuzzer target for the GGUF reader: any bytes must either parse into a file whose every view
// stays inside the buffer, or fail with a Status; never crash, hang or over-allocate. Built by
// tests/fuzz/CMakeLists.txt with clang only (-fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/ref/dequant_ref.h"
#include "worker/model/gguf/gguf_reader.h"

namespace smallmind::worker {
namespace {

// Reads every part of a value (nested arrays included) so ASan sees each byte the views cover.
uint64_t Touch(const GgufValue& v) {
  uint64_t sum = 0;
  if (auto s = v.AsString()) {
    for (char ch : *s) sum += static_cast<uint8_t>(ch);
  }
  if (auto i = v.AsInt64()) sum += static_cast<uint64_t>(*i);
  if (auto d = v.AsDouble()) sum += static_cast<uint64_t>(*d == *d);
  if (!v.is_array()) return sum;
  for (std::string_view s : v.strings()) sum += s.empty() ? 0 : static_cast<uint8_t>(s.back());
  for (const GgufValue& item : v.items()) sum += Touch(item);
  if (GgufFixedSize(v.elem_type()) > 0) {
    for (uint64_t i = 0; i < v.size(); i++) sum += Touch(v.FixedAt(i));
  }
  return sum;
}

void Exercise(const GgufFile& f) {
  volatile uint64_t sink = 0;
  for (const GgufKeyValue& kv : f.metadata()) {
    sink = sink + Touch(kv.value);
    // The typed getters on every key: they must fail cleanly on any type mismatch.
    sink = sink + f.GetString(kv.key).ok() + f.GetU32(kv.key).ok() + f.GetInt(kv.key).ok() +
           f.GetF32(kv.key).ok() + f.GetBool(kv.key).ok() + f.GetI32Array(kv.key).ok() +
           f.GetF32Array(kv.key).ok() + f.GetStringArray(kv.key).ok();
  }
  std::vector<float> row;
  for (const GgufTensorInfo& t : f.tensors()) {
    const uint8_t* data = f.TensorData(t);
    sink = sink + data[0] + data[t.n_bytes - 1];
    // Dequantize the first row when it is small: its bytes must lie inside the tensor.
    const kernels::DTypeTraits* traits = kernels::GetDTypeTraits(static_cast<uint32_t>(t.type));
    if (traits != nullptr && t.dims[0] <= 4096 &&
        kernels::RowBytes(*traits, t.dims[0]) <= t.n_bytes) {
      row.resize(static_cast<size_t>(t.dims[0]));
      kernels::DequantizeRef(t.type, data, row.data(), t.dims[0]);
      sink = sink + (row[0] == row[0]);
    }
  }
}

}  // namespace
}  // namespace smallmind::worker

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file =
      smallmind::worker::GgufFile::FromBuffer(std::span<const uint8_t>(data, size), "fuzz.gguf");
  if (file.ok()) smallmind::worker::Exercise(**file);
  return 0;
}

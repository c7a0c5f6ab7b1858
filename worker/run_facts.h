// RunFacts: what every request on one worker runs with and its determinism receipt reports beside
// the request's own path, threads and seed: the kernel set, the engine's thread count, the model
// fingerprint and the KV cache's element type. Built once by Worker::Start and read by the Submit
// reactors; immutable after, so thread-safe.
#pragma once

#include <string>

namespace smallmind::worker {

struct RunFacts {
  std::string kernel_isa;         // kernels::IsaName of the set the engine dispatched ("avx2")
  int engine_threads = 1;         // threads of the engine's pool: what max_threads = 0 means
  std::string model_fingerprint;  // FormatFingerprint(ModelFingerprint(model))
  std::string kv_dtype;           // kernels::KvTypeName of the KV pool ("f16")
};

}  // namespace smallmind::worker

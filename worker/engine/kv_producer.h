// KvProducer: names the code that writes K/V into the pool (kernel set, element type, and path when
// the two paths' kernels differ), from which the prefix cache's chain roots are made: cached blocks
// are reused only where a fresh computation would give the same bits, also after a warm restart by
// a worker built or configured differently. Called once by the Worker; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/exec_mode.h"
#include "worker/engine/engine.h"
#include "worker/kv/prefix_cache.h"

namespace smallmind::worker {

// The producer of K/V that `engine` writes on `mode`.
uint64_t KvProducer(const Engine& engine, kernels::ExecMode mode);

// `options` with the chain roots of `engine` running a model of `model_fingerprint`: one root for
// both paths when they write the same K/V (Engine::paths_write_same_kv), else one per path.
PrefixCacheOptions WithChainRoots(PrefixCacheOptions options, const Engine& engine,
                                  uint64_t model_fingerprint);

}  // namespace smallmind::worker

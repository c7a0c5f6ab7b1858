#include "worker/engine/kv_producer.h"

#include <string_view>

#include "kernels/dispatch.h"
#include "shared/hash64.h"
#include "shared/kv_segment_layout.h"
#include "worker/kv/block_hash.h"

namespace smallmind::worker {

uint64_t KvProducer(const Engine& engine, kernels::ExecMode mode) {
  kernels::Isa isa = engine.options().isa;
  if (isa == kernels::Isa::kBest) isa = kernels::BestIsa();
  const std::string_view name = kernels::IsaName(isa);
  shared::StreamHasher h;
  h.Update(name.data(), name.size());
  h.UpdateWord(shared::kKvSegmentLayoutVersion);
  h.UpdateWord(static_cast<uint64_t>(engine.kv_type()));
  h.UpdateWord(engine.paths_write_same_kv() ? 0 : 1 + static_cast<uint64_t>(mode));
  return h.Finish();
}

PrefixCacheOptions WithChainRoots(PrefixCacheOptions options, const Engine& engine,
                                  uint64_t model_fingerprint) {
  options.deterministic_root =
      KvChainRoot(model_fingerprint, KvProducer(engine, kernels::ExecMode::kDeterministic));
  options.parallel_root =
      KvChainRoot(model_fingerprint, KvProducer(engine, kernels::ExecMode::kParallel));
  return options;
}

}  // namespace smallmind::worker

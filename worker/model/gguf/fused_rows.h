// SplitRows: a fused weight matrix (Phi-3's attn_qkv.weight = q, k and v rows; its ffn_up.weight =
// gate and up rows) read as consecutive row ranges, each a TensorView into the same mapped bytes:
// nothing is copied, and every kernel sees an ordinary matrix. Called by the GGUF loader;
// stateless, thread-safe.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "shared/status.h"
#include "worker/model/weights.h"

namespace smallmind::worker {

// Views of rows [0, rows[0]), [rows[0], rows[0] + rows[1]), ... of `fused`, in order. The counts
// must add up to fused.rows exactly: otherwise InvalidArgument naming `name` and both counts.
shared::Result<std::vector<TensorView>> SplitRows(const TensorView& fused,
                                                  std::span<const int64_t> rows,
                                                  std::string_view name);

}  // namespace smallmind::worker

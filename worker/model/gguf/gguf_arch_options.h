// ReadArchOptions: the family-specific pieces of a GGUF file that its ArchDescription switches on
// (issue 42 items 1, 2): sliding-window layers and their RoPE base, attention and final logit
// soft-capping, the query scale, the embedding scale and the FFN activation, read from the
// `{arch}.*` keys llama.cpp reads for the family, with llama.cpp's defaults when a key is absent.
// Called once per load by gguf_loader.cc; stateless, thread-safe.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "shared/status.h"
#include "worker/model/arch/arch_description.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

// The `{arch}.` key suffixes ReadArchOptions reads for `d` ("attention.sliding_window", ...),
// and the family's ArchDescription::extra_keys, which other parts of the loader read:
// CheckArchKeys accepts them for this family only, so the same key in a family without the
// piece still refuses the file.
std::vector<std::string_view> ArchOptionKeys(const ArchDescription& d);

// Sets c's window, per-layer RoPE, soft-caps, score divisor, embedding scale and activation from
// `f` and `d`; c's shape (layers, heads, head size) and rope must be read already. Errors name the
// key.
shared::Status ReadArchOptions(const GgufFile& f, const ArchDescription& d, ModelConfig* c);

}  // namespace smallmind::worker

// CheckArchKeys: no silent misreads (issue 42 item 5). Every `{arch}.*` metadata key of a GGUF file
// must be one the loader reads, or one known not to change the computation (with the value that
// does not): any other key (soft-capping, a sliding window, experts, a rope variant, a key this
// version has never heard of) refuses the file, naming the key, rather than serving a model that
// computes something else. Called once per load by gguf_loader.cc; stateless, thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "shared/status.h"
#include "worker/model/gguf/gguf_reader.h"

namespace smallmind::worker {

// OK when every key of `file` under "`arch`." is accepted (see the .cc for the list; the expert
// keys only when `experts`, the family having a mixture-of-experts form) or is one of the
// family's `extra_keys` (ArchDescription::extra_keys); otherwise InvalidArgument naming the file,
// the first refused key and why.
shared::Status CheckArchKeys(const GgufFile& file, std::string_view arch, bool experts,
                             std::span<const std::string_view> extra_keys = {});

}  // namespace smallmind::worker

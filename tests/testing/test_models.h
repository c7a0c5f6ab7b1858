// Models that tests make with the real smallmind-modelgen binary. Thread-safe (no shared state).
#pragma once

#include <string>

#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::testing {

// The tiny preset with an 8192-token context, written into `dir` as tiny-8k.gguf: an 8000-token
// stream runs for a second or more (attention over a long context), so a cancel, a disconnect or a
// signal sent after its first token lands long before its last one. "" when smallmind-modelgen
// failed. `dir` must outlive every process that maps the file.
std::string LongContextTinyModel(const ScopedTempDir& dir);

}  // namespace smallmind::testing

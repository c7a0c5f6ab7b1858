// DetectModelFormat: which reader a model file needs, from its first bytes: GGUF (magic "GGUF") or
// a llama2.c checkpoint (a plausible 7-int header). A path that is missing, a directory, unreadable
// or neither format is an error that says which. Called once by LoadModel; stateless, thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "shared/status.h"

namespace smallmind::worker {

enum class ModelFormat { kGguf, kLlama2c };

// Reads the start of `path`. NotFound: "PATH does not exist". InvalidArgument: a directory, a file
// that cannot be read, or one that is neither format, e.g. "x.gguf is neither a GGUF file (magic
// 'GGUF', found 'hell') nor a llama2.c checkpoint (header field dim = 1819043176 is outside [1,
// 65536])".
shared::Result<ModelFormat> DetectModelFormat(const std::string& path);

// The same decision on the first bytes of a file (28 suffice); `name` stands for the path.
shared::Result<ModelFormat> DetectModelFormat(std::span<const std::byte> head,
                                              const std::string& name);

}  // namespace smallmind::worker

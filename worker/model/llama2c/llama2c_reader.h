// Loader for llama2.c checkpoints (the legacy "version 0" .bin layout: 7 int32 header, then float32
// arrays; see ../shared/models/README.md). Called once at worker start; stateless, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "shared/status.h"
#include "worker/model/weights.h"

namespace smallmind::worker {

// Maps `path` and returns its config and F32 weight views (pointing into the mapping). Every way
// the file can be malformed (too short, absurd or inconsistent header, wrong size) is an
// InvalidArgument naming the file; a missing file is NotFound. context_length = seq_len,
// rms_norm_eps 1e-5, rope_theta 10000, interleaved RoPE.
shared::Result<LlamaModel> LoadLlama2cCheckpoint(const std::string& path);
// The same from the bytes of a whole checkpoint in memory, zero-copy: the views point into
// `bytes`, which must outlive the model (e.g. a checkpoint embedded in the binary). `name` stands
// for the path in messages.
shared::Result<LlamaModel> LoadLlama2cCheckpointFromMemory(std::span<const std::byte> bytes,
                                                           const std::string& name);

// Why `head` (the first bytes of a file; 28 suffice) is not a plausible llama2.c header: too
// short, or a field outside bounds far above any published model or inconsistent with another,
// e.g. "header field dim = 1819043176 is outside [1, 65536]". "" when it is plausible.
std::string Llama2cHeaderProblem(std::span<const std::byte> head);

// Whether the classifier is the token embedding (positive vocab_size in the header) or a separate
// matrix after the legacy RoPE tables (negative vocab_size).
enum class ClassifierLayout { kShared, kSeparate };

// Floats of the llama2.c weight arrays of `config`, from the token embedding up to the final norm
// (legacy RoPE tables and a separate classifier excluded).
int64_t Llama2cCoreFloats(const ModelConfig& config);

// Points views at F32 arrays laid out as a llama2.c checkpoint starting `offset` bytes into
// `storage` (whose size the caller has checked). Used by the reader and by the builtin model.
Weights MapLlama2cWeights(const ModelConfig& config, WeightStorage storage, size_t offset,
                          ClassifierLayout classifier);

}  // namespace smallmind::worker

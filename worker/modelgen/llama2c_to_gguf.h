// ConvertLlama2cToGguf: a llama2.c checkpoint plus its tokenizer.bin -> one GGUF file of the llama
// architecture (smallmind-modelgen --from-llama2c). Stateless; thread-safe.
#pragma once

#include <string>

#include "kernels/dtype.h"
#include "shared/status.h"
#include "worker/modelgen/llama_gguf_builder.h"

namespace smallmind::worker {

struct Llama2cConversion {
  std::string model_path;      // llama2.c checkpoint (.bin)
  std::string tokenizer_path;  // its tokenizer.bin
  // Type of the 2-D weights: F32 (the checkpoint's floats, bit for bit), F16, Q8_0 or Q4_0. A
  // matrix whose row length is not a multiple of the type's block stays F32 (see the summary).
  kernels::DType type = kernels::DType::kF32;
  std::string name;  // general.name; empty: the checkpoint's file name without extension
};

// Writes the GGUF to `out_path`: the same tensors under GGUF names (token_embd, blk.N.attn_q, ...,
// output_norm, and output only when the checkpoint has a separate classifier), hyperparameters
// from the header (llama.context_length = seq_len, RMS epsilon 1e-5, RoPE base 10000), and the
// vocabulary with its scores: spaces as U+2581, BOS/EOS as <s>/</s>, token types unknown (<unk>),
// control (BOS, EOS), byte (<0xHH>) and normal, BOS added and the dummy-prefix space as run.c
// does. Errors name the input that is missing or malformed.
shared::Result<GgufBuildSummary> ConvertLlama2cToGguf(const Llama2cConversion& conversion,
                                                      const std::string& out_path);

}  // namespace smallmind::worker

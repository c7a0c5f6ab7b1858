// Scalar reference GELU (tanh approximation) and GeGLU, computed as llama.cpp's CPU backend does:
// through a table of the GELU of every IEEE half, indexed by the input rounded to half. Called
// through KernelTable by the engine (gemma's feed-forward; BERT's, ungated); thread-safe on
// disjoint token ranges. No reduction: every output element is one lookup and one multiply, so the
// SIMD variants give these bits exactly.
#pragma once

#include <cstdint>

#include "kernels/partition.h"

namespace smallmind::kernels {

// 0.5 x (1 + tanh(sqrt(2 / pi) x (1 + 0.044715 x^2))) in float, with std::tanh, the inner
// 1 + 0.044715 x x as one fused multiply-add: ggml's ggml_gelu_f32 as its AVX2/AVX-512 builds
// compile it (the compiler contracts that expression; a build without FMA differs in one of the
// 65536 table entries).
float GeluTanhRef(float x);

// [65536 + 1] halves: entry h = Fp32ToFp16(GeluTanhRef(Fp16ToFp32(h))) (ggml's
// ggml_table_gelu_f16), then one zero entry so a 32-bit gather at any index stays inside. Built on
// the first call (thread-safe), then immutable for the life of the process.
const uint16_t* GeluF16Table();

// llama.cpp's GELU of one float: 0 for x <= -10, x for x >= 10, else the table's value at x
// rounded to half (round-to-nearest-even), widened back to float.
float GeluF16Ref(float x);

// gate[t, i] = GeluF16Ref(gate[t, i]) * up[t, i] for t in tokens (ggml's geglu with its GELU
// table). gate, up: [n_tokens, hidden].
void GeGluRef(float* gate, const float* up, int hidden, RowRange tokens);

// x[t, i] = GeluF16Ref(x[t, i]) for t in tokens (ggml_gelu: BERT's feed-forward, ungated).
// x: [n_tokens, hidden].
void GeluRef(float* x, int hidden, RowRange tokens);

}  // namespace smallmind::kernels

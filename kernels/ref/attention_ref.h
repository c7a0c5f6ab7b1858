// Scalar reference causal attention over a paged KV cache (multi-head and grouped-query). Called
// through KernelTable by the engine, once per sequence and layer; thread-safe on disjoint row
// ranges when each thread passes its own scores scratch. Reduction order: the q.k dot over head_dim
// left to right, softmax as SoftmaxRef, then the weighted V sum over positions FirstPos(p)..p in
// order (0..p without a window).
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace smallmind::kernels {

// For every flat row r = t * n_heads + h in rows: out[t, h, :] = sum over p' in
// [FirstPos(start_pos + t), start_pos + t] of softmax_p'(cap(q[t, h, :] . K[p', kv_h, :] /
// ScoreDivisor())) * V[p', kv_h, :] (cap: SoftCapRef when softcap > 0; with sinks, the softmax is
// SoftmaxWithSinkRef's with head h's sink), with
// kv_h = h / (n_heads / n_kv_heads), K and V read from args.kv (half rows converted exactly). A
// kQ8 cache (head_dim % 32 == 0, <= kKvQ8HeadDimMax) scores q quantized by F32ToQ8Ref per head
// against the quants: per block j in order score = fma(isum_j, dq_j * dk_j, score), then / sqrt;
// out[i] = fma(p * dv_j, v_q[i], out[i]) over positions in order.
void AttentionRef(const AttentionArgs& args, RowRange rows);

// out[i] = Fp32ToFp16(x[i]) (round-to-nearest-even, as F16C's vcvtps2ph).
void F32ToF16Ref(const float* x, uint16_t* out, int64_t n);

// scores[i] = cap * tanh(scores[i] / cap) for i < n: attention logit soft-capping
// (AttentionArgs::softcap), the same scalar code in every attention kernel.
void SoftCapRef(float* scores, int n, float cap);

// Softmax of scores[0, n) with one more logit `sink` in its denominator (AttentionArgs::sinks):
// m = the max of the scores and the sink, scores[i] = exp(scores[i] - m) / (sum of those exps,
// left to right in one float, + exp(sink - m)).
void SoftmaxWithSinkRef(float* scores, int n, float sink);

// Turns probs[0, n), a softmax (any kernel's) of scores whose largest, score_max, sat at `argmax`,
// into the softmax with one more logit `sink`: each times S / (S + exp(sink - score_max)), S the
// row's sum of exps, which is 1 / probs[argmax] (that position's exp is exp(0) = 1). Lets the SIMD
// walks keep their softmax and add a sink after it (exp overflowing to inf gives zeros, the limit).
void AddSinkToSoftmax(float* probs, int n, int argmax, float score_max, float sink);

// Per block of 32: d = max|x| / 127, qs = round-half-even(x * (1 / d)) (0 when d is 0), as
// QuantizeBlockQ8Ref's quants and scales (n % 32 == 0).
void F32ToQ8Ref(const float* x, int8_t* qs, float* d, int64_t n);

}  // namespace smallmind::kernels

// The documented limits and defaults of GenerateRequest fields (inference.proto), in one place for
// both processes: the gateway checks the field ranges (gateway/validate), the worker applies the
// defaults and the model-dependent limits (worker/request_builder) and sizes buffers by them.
// Constants only; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smallmind::shared {

inline constexpr float kMaxTemperature = 100.0f;
inline constexpr float kMaxRepetitionPenalty = 10.0f;
inline constexpr float kMaxAbsPenalty = 2.0f;      // presence and frequency penalties: [-2, 2]
inline constexpr uint32_t kMaxLogprobs = 20;       // top-N alternatives per token
inline constexpr float kMaxAbsLogitBias = 100.0f;  // logit_bias values: [-100, 100]
inline constexpr int kMaxLogitBiasEntries = 4096;  // logit_bias tokens per request
inline constexpr int kMaxStopStrings = 16;
inline constexpr size_t kMaxStopBytes = 256;
// stopping.max_new_tokens = 0 means this many, capped by the room the prompt leaves.
inline constexpr uint32_t kDefaultMaxNewTokens = 256;
// stopping.max_new_tokens with context_overflow = SHIFT, which the context no longer bounds.
inline constexpr uint32_t kMaxNewTokensWithShift = 1u << 20;
// Longer caller ids are refused so that they stay readable in logs.
inline constexpr size_t kMaxRequestIdBytes = 128;
// The largest request either public door of the gateway takes: an HTTP body (larger: 413) and a
// gRPC message (larger: RESOURCE_EXHAUSTED). Under it a long prompt reaches the worker, which
// says how it compares with the context.
inline constexpr size_t kMaxRequestBytes = size_t{8} << 20;

}  // namespace smallmind::shared

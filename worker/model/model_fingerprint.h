// ModelFingerprint: a 64-bit identity of a loaded model's computation: its hyperparameters and the
// type, shape and bytes of every tensor, so it changes whenever the weights do. Names whose K/V a
// KV segment holds (a restarted worker keeps cached blocks only for the same fingerprint) and goes
// into determinism receipts. Called once per load; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "worker/model/weights.h"

namespace smallmind::worker {

// Streams every tensor once (several GB/s); pages of a mapped file are dropped again behind the
// hash, so hashing does not raise the peak resident size of a load.
uint64_t ModelFingerprint(const LlamaModel& model);

// "0123456789abcdef": the fingerprint as 16 hex digits, as logs and receipts print it.
std::string FormatFingerprint(uint64_t fingerprint);

}  // namespace smallmind::worker

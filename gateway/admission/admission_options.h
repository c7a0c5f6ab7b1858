// AdmissionOptions: the gateway queue's limits (part of GatewayConfig; --max-queue,
// --max-in-flight-per-worker, --no-deadline-admission). Plain data; thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace smallmind::gateway {

// The gateway queue (gateway/admission/admission_queue.h; README "Admission and deadlines").
struct AdmissionOptions {
  // Requests waiting for a worker slot; one more gets RESOURCE_EXHAUSTED with a retry hint.
  size_t max_queue = 256;
  // Requests the gateway keeps open on one worker at a time (the worker's --max-seqs default:
  // one batch); 0 = no limit, and then nothing waits in the gateway queue.
  uint32_t max_in_flight_per_worker = 32;
  // Refuse at once (DEADLINE_EXCEEDED) a request whose deadline the queue ahead of it makes
  // unreachable, by the measured prefill and decode rates.
  bool deadline_admission = true;
  // The retry hint before any request finished (nothing measured yet).
  std::chrono::milliseconds retry_after_unmeasured{1000};
  // How often a non-empty queue re-reads the slot count (a worker coming back adds slots).
  std::chrono::milliseconds recheck{100};
};

}  // namespace smallmind::gateway

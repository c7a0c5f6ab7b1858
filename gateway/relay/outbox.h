// A fixed ring of GenerateResponse messages waiting for a slow consumer; the head is the one being
// delivered. Messages are reused, so a relay allocates no message after its first round. Owned by
// one RequestRelay and used under its mutex; not thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "shared/check.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

class Outbox {
 public:
  explicit Outbox(size_t capacity) : slots_(capacity) {
    SM_CHECK(capacity > 0) << "an outbox needs room for one message";
  }

  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

  // A cleared slot at the tail, now counted.
  smallmind::v1::GenerateResponse& Push() {
    SM_CHECK(size_ < slots_.size()) << "outbox overflow";
    smallmind::v1::GenerateResponse& slot = slots_[(head_ + size_) % slots_.size()];
    slot.Clear();
    ++size_;
    return slot;
  }
  // The oldest message. Its address stays valid until Pop.
  const smallmind::v1::GenerateResponse& front() const {
    SM_CHECK(size_ > 0) << "front of an empty outbox";
    return slots_[head_];
  }
  void Pop() {
    SM_CHECK(size_ > 0) << "pop of an empty outbox";
    head_ = (head_ + 1) % slots_.size();
    --size_;
  }
  // Forgets every message after the first `keep` (0 or 1: the one being delivered).
  void Truncate(size_t keep) {
    SM_CHECK(keep <= size_) << "truncate beyond the outbox size";
    size_ = keep;
  }

 private:
  std::vector<smallmind::v1::GenerateResponse> slots_;  // [capacity] ring
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace smallmind::gateway

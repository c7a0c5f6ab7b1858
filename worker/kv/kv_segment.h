// KvSegment: the memory of a worker's KV pool, laid out as shared/kv_segment_layout.h says (header,
// block metadata, block token ids, K/V data), in the named shared-memory segment of the worker
// (mode 0600, removed on clean exit) or, with no name, on the heap. Opening a name that exists
// re-attaches the segment when its header matches this model and geometry (warm restart: the block
// metadata is then BlockPool's to restore), else discards it with one log line saying why and
// makes a new one. Built by the Worker before the scheduler thread starts; afterwards the metadata
// is written only by the scheduler thread and the data only by the engine. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "shared/huge_region.h"
#include "shared/kv_segment_layout.h"
#include "shared/shm_segment.h"
#include "shared/status.h"

namespace smallmind::worker {

struct KvSegmentSpec {
  std::string name;  // shared-memory name (see KvSegmentNameFor); "" = heap memory
  shared::KvGeometry geometry;
  uint64_t model_fingerprint = 0;
};

class KvSegment {
 public:
  static shared::Result<std::unique_ptr<KvSegment>> Open(const KvSegmentSpec& spec);
  ~KvSegment();
  KvSegment(const KvSegment&) = delete;
  KvSegment& operator=(const KvSegment&) = delete;

  // Gives shared memory its pages now (see ShmSegment::Reserve); heap memory has them already.
  shared::Status Reserve();

  // True when an existing segment of this model and geometry was re-attached: its metadata may
  // hold complete blocks a predecessor left.
  bool reattached() const { return reattached_; }
  // Why an existing segment of the name was discarded ("" when none was).
  const std::string& discard_reason() const { return discard_reason_; }
  const std::string& name() const { return name_; }  // "" for heap memory
  bool in_shared_memory() const { return shm_ != nullptr; }

  const shared::KvSegmentHeader& header() const;
  std::span<shared::KvBlockMeta> meta();  // [block_count]
  std::span<int32_t> tokens();            // [block_count * block_size]
  std::span<std::byte> data();  // [block_count][n_layers][K, V][block_size][kv_dim] of dtype
  size_t bytes() const { return bytes_; }

 private:
  KvSegment() = default;
  template <typename T>
  T* At(uint64_t offset) const {
    return reinterpret_cast<T*>(base_ + offset);
  }

  std::string name_;
  std::unique_ptr<shared::ShmSegment> shm_;
  shared::HugeRegion heap_;  // the data when not in shared memory
  std::byte* base_ = nullptr;
  size_t bytes_ = 0;
  bool reattached_ = false;
  std::string discard_reason_;
};

// The segment name of a worker: `requested` when given ("none" means heap memory: returns ""),
// else one derived from the listen address, e.g. "unix:/tmp/w.sock" ->
// "smallmind-kv-unix-tmp-w.sock", so a worker restarted with the same flags finds its predecessor's
// segment.
std::string KvSegmentNameFor(const std::string& requested, const std::string& listen);

}  // namespace smallmind::worker

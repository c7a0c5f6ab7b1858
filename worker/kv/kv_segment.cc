#include "worker/kv/kv_segment.h"

#include <unistd.h>

#include <atomic>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "shared/check.h"
#include "shared/hash64.h"

namespace smallmind::worker {
namespace {

using shared::KvSegmentHeader;

// Writes the header of a fresh (zeroed) segment, its seal last: a successor that finds no seal
// knows the creator died before the segment was ready.
void WriteHeader(std::byte* base, const shared::KvGeometry& geometry, uint64_t fingerprint) {
  KvSegmentHeader h =
      shared::MakeKvSegmentHeader(geometry, fingerprint, static_cast<uint32_t>(getpid()));
  const uint64_t seal = h.header_seal;
  h.header_seal = 0;
  auto* dst = reinterpret_cast<KvSegmentHeader*>(base);
  std::memcpy(dst, &h, sizeof(h));
  std::atomic_ref<uint64_t>(dst->header_seal).store(seal, std::memory_order_release);
}

}  // namespace

shared::Result<std::unique_ptr<KvSegment>> KvSegment::Open(const KvSegmentSpec& spec) {
  const shared::KvSegmentLayout layout = shared::ComputeKvSegmentLayout(spec.geometry);
  std::unique_ptr<KvSegment> seg(new KvSegment());
  seg->name_ = spec.name;
  seg->bytes_ = layout.total_bytes;
  if (spec.name.empty()) {
    // Process memory on huge pages where the kernel allows (decode reads the cache every step),
    // zeroed and faulted in now rather than inside decode steps.
    shared::Result<shared::HugeRegion> heap = shared::HugeRegion::Map(layout.total_bytes);
    shared::Status ready = heap.ok() ? heap->Prefault() : heap.status();
    if (!ready.ok()) return shared::ResourceExhausted("KV pool: " + ready.message());
    seg->heap_ = std::move(heap).value();
    seg->base_ = seg->heap_.data();
    WriteHeader(seg->base_, spec.geometry, spec.model_fingerprint);
    return seg;
  }
  auto attached = shared::ShmSegment::Attach(spec.name);
  if (attached.ok()) {
    std::unique_ptr<shared::ShmSegment> old = std::move(attached).value();
    seg->discard_reason_ =
        shared::KvSegmentMismatch(old->data(), old->size(), spec.geometry, spec.model_fingerprint);
    if (seg->discard_reason_.empty()) {
      seg->shm_ = std::move(old);
      seg->base_ = static_cast<std::byte*>(seg->shm_->data());
      seg->reattached_ = true;
      // This process owns it now: record that, resealing the header.
      WriteHeader(seg->base_, spec.geometry, spec.model_fingerprint);
      return seg;
    }
    spdlog::warn("discarding KV segment {}: {}; making a new one",
                 shared::ShmSegment::PathOf(spec.name), seg->discard_reason_);
    old.reset();  // unmaps and removes the name
  } else if (attached.status().code() != shared::StatusCode::kNotFound) {
    return attached.status();
  }
  SM_ASSIGN_OR_RETURN(seg->shm_, shared::ShmSegment::Create(spec.name, layout.total_bytes));
  seg->base_ = static_cast<std::byte*>(seg->shm_->data());
  WriteHeader(seg->base_, spec.geometry, spec.model_fingerprint);
  return seg;
}

KvSegment::~KvSegment() = default;

shared::Status KvSegment::Reserve() { return shm_ ? shm_->Reserve() : shared::Status::Ok(); }

const KvSegmentHeader& KvSegment::header() const { return *At<KvSegmentHeader>(0); }

std::span<shared::KvBlockMeta> KvSegment::meta() {
  const KvSegmentHeader& h = header();
  return {At<shared::KvBlockMeta>(h.meta_offset), h.geometry.block_count};
}

std::span<int32_t> KvSegment::tokens() {
  const KvSegmentHeader& h = header();
  return {At<int32_t>(h.tokens_offset), size_t{h.geometry.block_count} * h.geometry.block_size};
}

std::span<std::byte> KvSegment::data() {
  const KvSegmentHeader& h = header();
  return {At<std::byte>(h.data_offset), h.geometry.block_count * h.block_bytes};
}

std::string KvSegmentNameFor(const std::string& requested, const std::string& listen) {
  if (requested == "none") return "";
  if (!requested.empty()) return requested;
  std::string name = "smallmind-kv-";
  bool dash = false;  // collapse runs of replaced characters
  for (char c : listen) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_';
    if (keep) {
      name += c;
      dash = false;
    } else if (!dash) {
      name += '-';
      dash = true;
    }
  }
  if (name.size() > 120) {  // long socket paths: keep the tail and make the whole unique
    shared::StreamHasher hasher;
    hasher.Update(listen.data(), listen.size());
    name = fmt::format("smallmind-kv-{:016x}-{}", hasher.Finish(), name.substr(name.size() - 80));
  }
  return name;
}

}  // namespace smallmind::worker

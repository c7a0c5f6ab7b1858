#include "shared/kv_segment_layout.h"

#include <cstring>

#include <fmt/format.h>

namespace smallmind::shared {

uint64_t KvHeaderSeal(const KvSegmentHeader& h) {
  // Every byte before header_seal, as one stream (the struct has no padding: static_asserts above
  // pin its size, and every field is explicitly laid out).
  StreamHasher hasher(0x4EAD'E125'EA1ULL);
  hasher.Update(&h, offsetof(KvSegmentHeader, header_seal));
  const uint64_t s = hasher.Finish();
  return s == 0 ? 1 : s;
}

KvSegmentHeader MakeKvSegmentHeader(const KvGeometry& geometry, uint64_t fingerprint,
                                    uint32_t owner_pid) {
  KvSegmentHeader h{};  // every field and reserved byte zero
  const KvSegmentLayout l = ComputeKvSegmentLayout(geometry);
  h.magic = kKvSegmentMagic;
  h.layout_version = kKvSegmentLayoutVersion;
  h.header_bytes = sizeof(KvSegmentHeader);
  h.model_fingerprint = fingerprint;
  h.geometry = geometry;
  h.owner_pid = owner_pid;
  h.meta_offset = l.meta_offset;
  h.tokens_offset = l.tokens_offset;
  h.data_offset = l.data_offset;
  h.block_bytes = l.block_bytes;
  h.total_bytes = l.total_bytes;
  h.header_seal = KvHeaderSeal(h);
  return h;
}

std::string DescribeKvGeometry(const KvGeometry& g) {
  return fmt::format("{}-token blocks x {} layers x {} KV heads x {} dims, {}, {} blocks",
                     g.block_size, g.n_layers, g.n_kv_heads, g.head_dim,
                     g.dtype == static_cast<uint32_t>(KvDType::kF32)   ? std::string("f32")
                     : g.dtype == static_cast<uint32_t>(KvDType::kF16) ? std::string("f16")
                     : g.dtype == static_cast<uint32_t>(KvDType::kQ8)
                         ? std::string("q8")
                         : fmt::format("dtype {}", g.dtype),
                     g.block_count);
}

std::string KvSegmentMismatch(const void* segment, uint64_t segment_bytes,
                              const KvGeometry& geometry, uint64_t fingerprint) {
  if (segment_bytes < sizeof(KvSegmentHeader)) {
    return fmt::format("it is {} bytes, too small for a header", segment_bytes);
  }
  KvSegmentHeader h;
  std::memcpy(&h, segment, sizeof(h));
  if (h.magic != kKvSegmentMagic) {
    return fmt::format("it is not a smallmind KV segment (magic {:#018x})", h.magic);
  }
  if (h.layout_version != kKvSegmentLayoutVersion || h.header_bytes != sizeof(KvSegmentHeader)) {
    return fmt::format("it has layout version {} ({}-byte header); this worker writes version {}",
                       h.layout_version, h.header_bytes, kKvSegmentLayoutVersion);
  }
  if (h.header_seal != KvHeaderSeal(h)) {
    return "its header is incomplete (its creator died while initialising it)";
  }
  if (!(h.geometry == geometry)) {
    return fmt::format("its geometry differs ({}; this worker wants {})",
                       DescribeKvGeometry(h.geometry), DescribeKvGeometry(geometry));
  }
  if (h.model_fingerprint != fingerprint) {
    return fmt::format("it holds another model's K/V (fingerprint {:016x}, this model {:016x})",
                       h.model_fingerprint, fingerprint);
  }
  const KvSegmentLayout l = ComputeKvSegmentLayout(geometry);
  if (h.meta_offset != l.meta_offset || h.tokens_offset != l.tokens_offset ||
      h.data_offset != l.data_offset || h.block_bytes != l.block_bytes ||
      h.total_bytes != l.total_bytes) {
    return "its offsets do not match its geometry";
  }
  if (segment_bytes != h.total_bytes) {
    return fmt::format("it is {} bytes, its header says {}", segment_bytes, h.total_bytes);
  }
  return "";
}

}  // namespace smallmind::shared

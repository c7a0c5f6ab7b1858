// A scalar stand-in for vpdpbusd on 256-bit registers, for the emulated kernel tables
// (vnni_emulated.cc, zmm_emulated.cc), which build it with AVX2 alone into their own namespaces
// (SMALLMIND_X86_NS, defined before this is included).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace smallmind::kernels::SMALLMIND_X86_NS {

// Each int32 lane of acc plus the 4 products of its unsigned bytes of u and signed bytes of s
// (wrapping, as the instruction does; the cores never come near it).
inline __m256i EmulatedDpBusd(__m256i acc, __m256i u, __m256i s) {
  alignas(32) uint8_t ub[32];
  alignas(32) int8_t sb[32];
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(ub), u);
  _mm256_store_si256(reinterpret_cast<__m256i*>(sb), s);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  for (int l = 0; l < 8; l++) {
    uint32_t sum = static_cast<uint32_t>(lanes[l]);
    for (int i = 0; i < 4; i++) sum += static_cast<uint32_t>(ub[4 * l + i] * sb[4 * l + i]);
    lanes[l] = static_cast<int32_t>(sum);
  }
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS

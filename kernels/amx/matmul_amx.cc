// The AMX Q8_0 matmul (kernels/amx/amx_q8_0.h) on the real tile instructions. Built with
// -mamx-tile -mamx-int8 and the AVX-512 flags (kernels/CMakeLists.txt): the shared headers compile
// here into namespace amx (SMALLMIND_X86_NS, kernels/avx2/avx2_util.h).
#define SMALLMIND_X86_NS amx

#include <immintrin.h>

#include <cstddef>

#include "kernels/amx/amx_kernels.h"
#include "kernels/amx/amx_q8_0.h"

namespace smallmind::kernels::amx {
namespace {

inline __m256i DpBusd(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }

// GCC's tile intrinsics paste the tile number into their assembly text, so each takes a literal:
// the tiles amx_q8_0.h uses (0 .. 5) are spelled out.
#define SMALLMIND_AMX_TILE_CASES(op) op(0) op(1) op(2) op(3) op(4) op(5)

struct Tiles {
  static void Configure(const AmxTileConfig& cfg) {
    // GCC 12 does not see LDTILECFG read its operand and may drop the stores that filled it (a
    // microbenchmark got a config of zeros and SIGILL): make them visible first.
    asm volatile("" : : "r"(&cfg) : "memory");
    _tile_loadconfig(&cfg);
  }
  static void Release() { _tile_release(); }
  template <int k>
  static void Load(const void* p, size_t stride) {
    static_assert(0 <= k && k <= 5);
#define SMALLMIND_AMX_LOAD(n) \
  if constexpr (k == n) _tile_loadd(n, p, stride);
    SMALLMIND_AMX_TILE_CASES(SMALLMIND_AMX_LOAD)
#undef SMALLMIND_AMX_LOAD
  }
  template <int k>
  static void Store(void* p, size_t stride) {
    static_assert(0 <= k && k <= 5);
#define SMALLMIND_AMX_STORE(n) \
  if constexpr (k == n) _tile_stored(n, p, stride);
    SMALLMIND_AMX_TILE_CASES(SMALLMIND_AMX_STORE)
#undef SMALLMIND_AMX_STORE
  }
  template <int k>
  static void Zero() {
    static_assert(0 <= k && k <= 5);
#define SMALLMIND_AMX_ZERO(n) \
  if constexpr (k == n) _tile_zero(n);
    SMALLMIND_AMX_TILE_CASES(SMALLMIND_AMX_ZERO)
#undef SMALLMIND_AMX_ZERO
  }
  // The two products amx_q8_0.h issues: C 4 + p += A p . B 2 + p, p = 0, 1.
  template <int c, int a, int b>
  static void DpBsud() {
    static_assert((c == 4 && a == 0 && b == 2) || (c == 5 && a == 1 && b == 3));
    if constexpr (c == 4) {
      _tile_dpbsud(4, 0, 2);
    } else {
      _tile_dpbsud(5, 1, 3);
    }
  }
};

#undef SMALLMIND_AMX_TILE_CASES

}  // namespace

void MatmulQ8_0x16Q8Amx(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  AmxQ8_0<Tiles, &DpBusd>::Matmul(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels::amx

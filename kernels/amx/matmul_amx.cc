// The AMX Q8_0 matmul (kernels/amx/amx_q8_0.h) on the real tile instructions. Built with
// -mamx-tile -mamx-int8 and the AVX-512 flags (kernels/CMakeLists.txt): the shared headers compile
// here into namespace amx (SMALLMIND_X86_NS, kernels/x86/x86_util.h).
#define SMALLMIND_X86_NS amx

#include <immintrin.h>

#include <cstddef>

#include "kernels/amx/amx_q8_0.h"
#include "kernels/amx/kernels_amx.h"
#include "kernels/avx512/kernels_avx512.h"

namespace smallmind::kernels::amx {
namespace {

// GCC's tile intrinsics paste the tile number into their assembly text, so each takes a literal:
// SMALLMIND_AMX_ON_TILE(k, OP) runs OP(n) for the literal n == k of the tiles amx_q8_0.h uses.
#define SMALLMIND_AMX_ON_TILE(k, OP)   \
  static_assert(0 <= (k) && (k) <= 5); \
  if constexpr ((k) == 0)              \
    OP(0);                             \
  else if constexpr ((k) == 1)         \
    OP(1);                             \
  else if constexpr ((k) == 2)         \
    OP(2);                             \
  else if constexpr ((k) == 3)         \
    OP(3);                             \
  else if constexpr ((k) == 4)         \
    OP(4);                             \
  else                                 \
    OP(5)

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
#define SMALLMIND_AMX_LOAD(n) _tile_loadd(n, p, stride)
    SMALLMIND_AMX_ON_TILE(k, SMALLMIND_AMX_LOAD);
#undef SMALLMIND_AMX_LOAD
  }
  template <int k>
  static void Store(void* p, size_t stride) {
#define SMALLMIND_AMX_STORE(n) _tile_stored(n, p, stride)
    SMALLMIND_AMX_ON_TILE(k, SMALLMIND_AMX_STORE);
#undef SMALLMIND_AMX_STORE
  }
  template <int k>
  static void Zero() {
    SMALLMIND_AMX_ON_TILE(k, _tile_zero);
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

#undef SMALLMIND_AMX_ON_TILE

}  // namespace

void MatmulQ8_0x16Q8Amx(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  AmxQ8_0<Tiles, &avx512::MatmulQ8_0x16Q8RowsAvx512>::Matmul(w, xq, y, n_tokens, in_dim, out_dim,
                                                             rows);
}

}  // namespace smallmind::kernels::amx

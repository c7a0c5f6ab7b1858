// Built with -mavx2 -mfma -mf16c (tests/CMakeLists.txt): the shared kernel headers compile here
// into namespace amx_emulated (SMALLMIND_X86_NS, kernels/x86/x86_util.h).
#define SMALLMIND_X86_NS amx_emulated

#include "tests/kernels/amx_emulated.h"

#include <immintrin.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/amx/amx_q8_0.h"
#include "kernels/avx2/kernels_avx2.h"
#include "tests/kernels/zmm_emulated.h"

namespace smallmind::kernels::amx_emulated {
namespace {

// The tile registers of this thread and the shape LDTILECFG gave them. An instruction on a tile
// the configuration does not allow (more than 16 rows or 64 bytes, unconfigured, mismatched
// shapes) aborts, as the real one faults.
struct TileState {
  bool configured = false;
  uint8_t rows[8] = {};
  uint16_t colsb[8] = {};
  alignas(64) uint8_t data[8][16][64] = {};
};
thread_local TileState tiles;

void Require(bool ok) {
  if (!ok) std::abort();
}

struct Tiles {
  static void Configure(const AmxTileConfig& cfg) {
    Require(cfg.palette == 1 && cfg.start_row == 0);
    for (int k = 0; k < 8; k++) {
      Require(cfg.rows[k] <= 16 && cfg.colsb[k] <= 64);
      tiles.rows[k] = cfg.rows[k];
      tiles.colsb[k] = cfg.colsb[k];
    }
    std::memset(tiles.data, 0, sizeof(tiles.data));
    tiles.configured = true;
  }
  static void Release() { tiles = TileState{}; }
  template <int k>
  static void Load(const void* p, size_t stride) {
    Require(tiles.configured && tiles.rows[k] > 0);
    for (int r = 0; r < tiles.rows[k]; r++) {
      std::memcpy(tiles.data[k][r], static_cast<const uint8_t*>(p) + r * stride, tiles.colsb[k]);
    }
  }
  template <int k>
  static void Store(void* p, size_t stride) {
    Require(tiles.configured && tiles.rows[k] > 0);
    for (int r = 0; r < tiles.rows[k]; r++) {
      std::memcpy(static_cast<uint8_t*>(p) + r * stride, tiles.data[k][r], tiles.colsb[k]);
    }
  }
  template <int k>
  static void Zero() {
    Require(tiles.configured);
    std::memset(tiles.data[k], 0, sizeof(tiles.data[k]));
  }
  // TDPBSUD: C (M x N int32) += A (M x 4K signed bytes) . B (K x 4N unsigned bytes).
  template <int c, int a, int b>
  static void DpBsud() {
    Require(tiles.configured);
    const int m_rows = tiles.rows[c], n_cols = tiles.colsb[c] / 4, k_quads = tiles.colsb[a] / 4;
    Require(tiles.rows[a] == m_rows && tiles.rows[b] == k_quads && tiles.colsb[b] == 4 * n_cols);
    for (int m = 0; m < m_rows; m++) {
      for (int n = 0; n < n_cols; n++) {
        int32_t sum;
        std::memcpy(&sum, &tiles.data[c][m][4 * n], 4);
        for (int k = 0; k < k_quads; k++) {
          for (int i = 0; i < 4; i++) {
            sum += static_cast<int8_t>(tiles.data[a][m][4 * k + i]) *
                   static_cast<int32_t>(tiles.data[b][k][4 * n + i]);
          }
        }
        std::memcpy(&tiles.data[c][m][4 * n], &sum, 4);
      }
    }
  }
};

void MatmulQ8_0(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  AmxQ8_0<Tiles, &testing::EmulatedMatmulQ8_0x16>::Matmul(w, xq, y, n_tokens, in_dim, out_dim,
                                                          rows);
}

}  // namespace
}  // namespace smallmind::kernels::amx_emulated

namespace smallmind::kernels::testing {

KernelTable EmulatedAmxKernelTable(ExecMode mode) {
  // The real table is the AVX-512 one with AMX's Q8_0: here the emulated AVX-512 one with this.
  KernelTable t = EmulatedZmmKernelTable(mode);
  t.matmul[WeightSlot(DType::kQ8_0)] =
      avx2::Q8_0x16uOp(&amx_emulated::MatmulQ8_0, MatmulInput::kQ8);
  return t;
}

}  // namespace smallmind::kernels::testing

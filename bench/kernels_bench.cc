// Google Benchmark of every kernel per ISA, path, weight type and shape (bench-110M and bench-1B
// matrices; n_tokens 1 = decode, 128 = prefill), with bytes_per_second (weight bytes streamed) and
// GFLOP/s counters. Decode matmuls cycle through enough copies of the matrix (>= 256 MiB) that the
// weights come from DRAM, as in a real model, not from the last-level cache, and on transparent
// huge pages, as the worker's packed weights are; the .../cached rows of batched decode read one
// copy (from L2/L3), and BM_Q8StepRoof/avx2 and /avx512 run the integer step of the Q8 matmuls
// alone on registers: together they say how far a batched decode step is from what the core can
// do (the roof, then the kernel in cache, then the kernel from DRAM).
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/attention_ref.h"
#include "kernels/ref/dequant_ref.h"
#include "shared/huge_region.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

constexpr size_t kDramBytes = size_t{256} << 20;

struct MatmulCase {
  Isa isa;
  ExecMode mode;
  DType type;
  int out_dim, in_dim, n_tokens;
  bool cached = false;  // one copy of the matrix, whatever n_tokens
};

void BM_Matmul(benchmark::State& state, MatmulCase c) {
  const KernelTable table = SelectKernels(c.isa, c.mode);
  const MatmulOp& op = *table.MatmulFor(c.type);
  // The layout the op reads (packed at load time when it has a PackFn, whose size may differ
  // from the GGUF one: Q5_1 widened to bytes, IQ4_XS's unpacked scales).
  const std::vector<uint8_t> w0 = testing::Pack(
      op, testing::RandomWeights(c.type, c.out_dim, c.in_dim, 1), c.out_dim, c.in_dim);
  const size_t bytes = w0.size();
  // Copies so that one pass over all of them exceeds the caches (decode); one copy for prefill,
  // which is compute-bound and reads each matrix once per many tokens.
  // Batched decode (a few tokens) streams the weights from DRAM too.
  const size_t copies = c.n_tokens <= 32 && !c.cached ? (kDramBytes + bytes - 1) / bytes : 1;
  // On transparent huge pages, as the worker's packed weights are (worker/engine/packed_weights):
  // on 4 KiB pages every page is a TLB miss and a stop for the hardware prefetchers.
  const shared::HugeRegion w(bytes * copies);
  for (size_t i = 0; i < copies; i++) {
    std::memcpy(w.data() + i * bytes, w0.data(), bytes);
  }
  const std::vector<float> x = testing::RandomFloats(static_cast<size_t>(c.n_tokens) * c.in_dim, 2);
  std::vector<uint8_t> xq(static_cast<size_t>(c.n_tokens) * Q8ActRowBytes(c.in_dim));
  std::vector<uint8_t> octets(Q8ActOctetsBytes(c.n_tokens, c.in_dim));
  std::vector<float> y(static_cast<size_t>(c.n_tokens) * c.out_dim);
  size_t next = 0;
  for (auto _ : state) {
    const void* input = x.data();
    // The per-op activation quantization is part of the cost.
    if (op.input == MatmulInput::kQ8Octets && c.n_tokens > 1) {
      table.quantize_q8_octets(x.data(), octets.data(), c.in_dim, c.n_tokens, 0,
                               (c.n_tokens + kQ8ActOctet - 1) / kQ8ActOctet);
      input = octets.data();
    } else if (op.input != MatmulInput::kF32) {
      const QuantizeQ8Fn quantize = op.input == MatmulInput::kQ8_1  ? table.quantize_q8_1
                                    : op.input == MatmulInput::kQ8K ? table.quantize_q8_k
                                                                    : table.quantize_q8;
      quantize(x.data(), xq.data(), c.in_dim, AllRows(c.n_tokens));
      input = xq.data();
    }
    op.fn(w.data() + next * bytes, input, y.data(), c.n_tokens, c.in_dim, c.out_dim,
          AllRows(c.out_dim));
    benchmark::ClobberMemory();
    next = (next + 1) % copies;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * c.out_dim * c.in_dim * c.n_tokens * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

void RegisterMatmuls() {
  struct Shape {
    const char* name;
    int out_dim, in_dim;
  };
  const Shape shapes[] = {
      {"1B.wq", 2048, 2048},  {"1B.w1", 5632, 2048},
      {"1B.w2", 2048, 5632},  {"110M.w1", 2048, 768},
      {"110M.w2", 768, 2048}, {"110M.cls", 32000, 768}};  // the classifier: 22% of the model's work
  // Every SIMD set this CPU runs (the VNNI ones beside AVX2, side by side).
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAmx}) {
    if (CpuSupports(isa)) isas.push_back(isa);
  }
  if (isas.empty()) isas.push_back(Isa::kRef);
  for (Isa isa : isas) {
    for (DType type :
         {DType::kQ8_0, DType::kQ4_0, DType::kF32, DType::kF16, DType::kQ4_K, DType::kQ5_K,
          DType::kQ6_K, DType::kIQ4_XS, DType::kQ4_1, DType::kQ5_1, DType::kQ2_K, DType::kQ3_K}) {
      for (const Shape& s : shapes) {
        for (int n_tokens : {1, 3, 7, 8, 12, 16, 25, 128}) {
          // Batched decode (3-25 tokens: whole tiles and ragged batches) where the served
          // benchmarks run (Q8_0 bench-110M), and the K-quants' ragged tiles (3 and 7 tokens) on
          // one 1B matrix; the classifier shape only for Q8_0.
          const std::string_view shape = s.name;
          const bool batch = n_tokens > 1 && n_tokens < 128;
          const bool q8_small = type == DType::kQ8_0 && shape.starts_with("110M.");
          const bool kquant_ragged = (type == DType::kQ4_K || type == DType::kQ6_K) &&
                                     shape == "1B.w1" && (n_tokens == 3 || n_tokens == 7);
          if ((batch && !q8_small && !kquant_ragged) || (shape == "110M.cls" && !q8_small))
            continue;
          for (ExecMode mode : {ExecMode::kDeterministic, ExecMode::kParallel}) {
            const std::string name = std::string("BM_Matmul/") + IsaName(isa) + "/" +
                                     (mode == ExecMode::kDeterministic ? "det" : "par") + "/" +
                                     GetDTypeTraits(static_cast<uint32_t>(type))->name + "/" +
                                     s.name + "/tokens:" + std::to_string(n_tokens);
            benchmark::RegisterBenchmark(name.c_str(), BM_Matmul,
                                         MatmulCase{isa, mode, type, s.out_dim, s.in_dim, n_tokens})
                ->Unit(benchmark::kMicrosecond);
            if (shape == "110M.w1" &&
                ((q8_small && (n_tokens == 8 || n_tokens == 16)) || n_tokens == 1)) {
              benchmark::RegisterBenchmark(
                  (name + "/cached").c_str(), BM_Matmul,
                  MatmulCase{isa, mode, type, s.out_dim, s.in_dim, n_tokens, true})
                  ->Unit(benchmark::kMicrosecond);
            }
          }
        }
      }
    }
  }
  // The scalar oracle once, for scale.
  benchmark::RegisterBenchmark(
      "BM_Matmul/ref/Q8_0/1B.wq/tokens:1", BM_Matmul,
      MatmulCase{Isa::kRef, ExecMode::kDeterministic, DType::kQ8_0, 2048, 2048, 1})
      ->Unit(benchmark::kMicrosecond);
}

// One step of the AVX2 Q8 matmuls into acc: 32 multiply-adds (4 quants of 8 rows, one token) as
// sign, maddubs, madd and add. asm keeps every step (the compiler would fold loop-invariant ones).
__attribute__((target("avx2"), always_inline)) inline void Q8Step(__m256i& acc, __m256i w,
                                                                  __m256i x, __m256i ones) {
  __m256i t;
  asm volatile(
      "vpsignb %[w], %[x], %[t]\n\tvpmaddubsw %[t], %[w], %[t]\n\t"
      "vpmaddwd %[ones], %[t], %[t]\n\tvpaddd %[t], %[a], %[a]"
      : [t] "=&x"(t), [a] "+x"(acc)
      : [w] "x"(w), [x] "x"(x), [ones] "x"(ones));
}

// The integer step of the AVX2 Q8 matmuls (q8_0x8.h, matmul_q8_avx2.cc) alone, in 8
// independent chains on registers, so neither memory nor latency limits it; GMAC/s =
// multiply-adds per second on one core. A 32-lane step cannot take fewer instructions on AVX2
// (maddubs needs one unsigned side, its int16 pairs must widen before the next step adds);
// VNNI's dpbusd does madd and add in one.
__attribute__((target("avx2"))) void BM_Q8StepRoof(benchmark::State& state) {
  constexpr int64_t kSteps = 1 << 16;  // per iteration, 8 a loop trip
  __m256i a0 = _mm256_set1_epi8(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  const __m256i w = _mm256_set1_epi8(3), x = _mm256_set1_epi8(2), ones = _mm256_set1_epi16(1);
  for (auto _ : state) {
    for (int64_t i = 0; i < kSteps / 8; i++) {
      Q8Step(a0, w, x, ones);
      Q8Step(a1, w, x, ones);
      Q8Step(a2, w, x, ones);
      Q8Step(a3, w, x, ones);
      Q8Step(a4, w, x, ones);
      Q8Step(a5, w, x, ones);
      Q8Step(a6, w, x, ones);
      Q8Step(a7, w, x, ones);
    }
  }
  __m256i sum[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
  benchmark::DoNotOptimize(sum);
  state.counters["GMAC/s"] = benchmark::Counter(
      32.0 * kSteps * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

// The integer step of the AVX-512 Q8 matmuls alone, in 12 independent chains on registers: the
// core's VNNI roof, GMAC/s on one core. A Q8_0 block adds to the 8 dpbusd of each (group, token)
// pair a convert, a multiply and an FMA (x16_zmm.h Block; the bits every ISA shares): issued on
// the same vector units, 8 of 11 slots multiply-add, 73% of this roof. Session 28, Zen 4 VM, one
// core: 235 GMAC/s here, and BM_Matmul/avx512/par/Q8_0/110M.w1/tokens:128 344 GFLOP/s = 172
// GMAC/s, 73%: the Q8_0 matmul runs at its instruction mix's roof.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void BM_Q8StepRoofAvx512(
    benchmark::State& state) {
  constexpr int64_t kSteps = 12 << 12;  // per iteration, 12 a loop trip
  __m512i a0 = _mm512_set1_epi8(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0,
          a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  const __m512i w = _mm512_set1_epi8(3), x = _mm512_set1_epi8(2);
  for (auto _ : state) {
    for (int64_t i = 0; i < kSteps / 12; i++) {
      // One step of the AVX-512 Q8 matmuls (x16_zmm.h) on each chain: vpdpbusd, 64 multiply-adds
      // (4 quants of 16 rows, one token). asm keeps every step.
      asm volatile(
          "vpdpbusd %[x], %[w], %[a0]\n\tvpdpbusd %[x], %[w], %[a1]\n\t"
          "vpdpbusd %[x], %[w], %[a2]\n\tvpdpbusd %[x], %[w], %[a3]\n\t"
          "vpdpbusd %[x], %[w], %[a4]\n\tvpdpbusd %[x], %[w], %[a5]\n\t"
          "vpdpbusd %[x], %[w], %[a6]\n\tvpdpbusd %[x], %[w], %[a7]\n\t"
          "vpdpbusd %[x], %[w], %[a8]\n\tvpdpbusd %[x], %[w], %[a9]\n\t"
          "vpdpbusd %[x], %[w], %[a10]\n\tvpdpbusd %[x], %[w], %[a11]"
          : [a0] "+v"(a0), [a1] "+v"(a1), [a2] "+v"(a2), [a3] "+v"(a3), [a4] "+v"(a4),
            [a5] "+v"(a5), [a6] "+v"(a6), [a7] "+v"(a7), [a8] "+v"(a8), [a9] "+v"(a9),
            [a10] "+v"(a10), [a11] "+v"(a11)
          : [w] "v"(w), [x] "v"(x));
    }
  }
  __m512i sum[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
  benchmark::DoNotOptimize(sum);
  state.counters["GMAC/s"] = benchmark::Counter(
      64.0 * kSteps * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

// ---- the other kernels, 1B shapes: dim 2048, ffn 5632, 32 heads of 64 over 4 KV heads ----

void Rates(benchmark::State& state, double bytes, double flops) {
  const auto it = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(it * bytes));
  state.counters["GFLOP/s"] = benchmark::Counter(it * flops / 1e9, benchmark::Counter::kIsRate);
}

void BM_RmsNorm(benchmark::State& state, Isa isa, int n_tokens) {
  const KernelTable k = SelectKernels(isa, ExecMode::kDeterministic);
  const int dim = 2048;
  std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * dim, 1), out(x.size());
  const std::vector<float> w = testing::RandomFloats(dim, 2);
  for (auto _ : state) k.rmsnorm(x.data(), w.data(), out.data(), dim, 1e-5f, AllRows(n_tokens));
  Rates(state, 8.0 * n_tokens * dim, 4.0 * n_tokens * dim);
}

void BM_SwiGlu(benchmark::State& state, Isa isa, int n_tokens) {
  const KernelTable k = SelectKernels(isa, ExecMode::kDeterministic);
  const int hidden = 5632;
  std::vector<float> g = testing::RandomFloats(size_t(n_tokens) * hidden, 1);
  const std::vector<float> u = testing::RandomFloats(g.size(), 2);
  for (auto _ : state) k.swiglu(g.data(), u.data(), hidden, AllRows(n_tokens));
  Rates(state, 12.0 * n_tokens * hidden, 5.0 * n_tokens * hidden);
}

void BM_Softmax(benchmark::State& state, Isa isa, int len) {
  const KernelTable k = SelectKernels(isa, ExecMode::kDeterministic);
  std::vector<float> x = testing::RandomFloats(size_t(len), 1, -5, 5);
  for (auto _ : state) k.softmax(x.data(), len, AllRows(1));
  Rates(state, 8.0 * len, 4.0 * len);
}

void BM_Rope(benchmark::State& state, Isa isa, int n_tokens) {
  const KernelTable k = SelectKernels(isa, ExecMode::kDeterministic);
  const int heads = 32, head_dim = 64;
  std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * heads * head_dim, 1);
  std::vector<int32_t> pos(static_cast<size_t>(n_tokens));
  for (int i = 0; i < n_tokens; i++) pos[i] = 100 + i;
  for (auto _ : state) {
    k.rope(x.data(), pos.data(), heads, head_dim, RopeFreqs{}, RopeLayout::kInterleaved,
           AllRows(n_tokens * heads));
  }
  Rates(state, 8.0 * n_tokens * heads * head_dim, 3.0 * n_tokens * heads * head_dim);
}

void BM_QuantizeQ8(benchmark::State& state, int n_tokens) {
  const KernelTable k = SelectKernels(BestIsa(), ExecMode::kParallel);
  if (k.quantize_q8 == nullptr) return state.SkipWithError("no Q8 activation kernels");
  const int dim = 2048;
  const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * dim, 1);
  std::vector<uint8_t> xq(size_t(n_tokens) * Q8ActRowBytes(dim));
  for (auto _ : state) k.quantize_q8(x.data(), xq.data(), dim, AllRows(n_tokens));
  Rates(state, 5.0 * n_tokens * dim, 3.0 * n_tokens * dim);
}

// Matmul inputs quantized into octets (MatmulInput::kQ8Octets): bench-110M's 768-wide rows for
// a batch of 16 (a 16-stream decode step) and a 128-token prefill.
void BM_QuantizeQ8Octets(benchmark::State& state, int n_tokens) {
  const KernelTable k = SelectKernels(BestIsa(), ExecMode::kParallel);
  if (k.quantize_q8_octets == nullptr) return state.SkipWithError("no Q8 octet kernels");
  const int dim = 768, n_octets = (n_tokens + kQ8ActOctet - 1) / kQ8ActOctet;
  const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * dim, 1);
  std::vector<uint8_t> octets(Q8ActOctetsBytes(n_tokens, dim));
  for (auto _ : state) k.quantize_q8_octets(x.data(), octets.data(), dim, n_tokens, 0, n_octets);
  Rates(state, 5.0 * n_tokens * dim, 5.0 * n_tokens * dim);
}

// One token attending to `context` positions (decode), all heads, over a paged cache: bench-1B's
// 32 query heads on 4 KV heads, or bench-110M's 12 heads with their own KV heads.
// `tokens` query tokens (a decode token, or the end of a prefill chunk) at the end of `context`
// positions, over a cache of scrambled blocks, in the items OpRunner gives a kernel call (runs of
// kAttentionTileTokens tokens) with room for their rows in the scratch, as OpRunner gives it.
// A decode token (tokens 1) walks the caches of enough sequences to come from DRAM, or with
// `cached` one sequence's cache again and again (the kernel's own speed, no memory stalls).
void BM_Attention(benchmark::State& state, Isa isa, KvType type, int context, int heads,
                  int kv_heads, int tokens, bool cached) {
  const KernelTable k = SelectKernels(isa, ExecMode::kDeterministic);
  const int head_dim = 64, kv_dim = kv_heads * head_dim, block = 16;
  const int blocks = (context + block - 1) / block;
  // Decode reads each sequence's cache once per step, long after the step's weights went through
  // the caches: one token's calls walk the caches of enough sequences to exceed them.
  const int64_t row = KvRowElems(type, kv_dim);  // elements per cache row
  const size_t elem = static_cast<size_t>(KvTypeBytes(type));
  const size_t seq_bytes = size_t(blocks) * 2 * block * row * elem;
  const int seqs =
      tokens == 1 && !cached ? static_cast<int>((kDramBytes + seq_bytes - 1) / seq_bytes) : 1;
  const size_t n_rows = size_t(seqs) * blocks * 2 * block;
  const std::vector<float> cache = testing::RandomFloats(n_rows * kv_dim, 1);
  std::vector<std::byte> rows(n_rows * row * elem);  // the cache rows in `type`
  for (size_t r = 0; r < n_rows; r++) {
    const float* x = cache.data() + r * kv_dim;
    std::byte* out = rows.data() + r * row * elem;
    if (type == KvType::kF16) {
      for (int i = 0; i < kv_dim; i++) {
        const uint16_t h = Fp32ToFp16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
    } else if (type == KvType::kQ8) {
      F32ToQ8Ref(x, reinterpret_cast<int8_t*>(out), reinterpret_cast<float*>(out + kv_dim), kv_dim);
    } else {
      std::memcpy(out, x, kv_dim * sizeof(float));
    }
  }
  const void* base = rows.data();
  std::vector<int32_t> tables(static_cast<size_t>(seqs) * blocks);  // sequence s: its own blocks
  for (int s = 0; s < seqs; s++) {
    for (int b = 0; b < blocks; b++) tables[size_t(s) * blocks + b] = s * blocks + (b * 5) % blocks;
  }
  const std::vector<float> q = testing::RandomFloats(size_t(tokens) * heads * head_dim, 2);
  std::vector<float> out(q.size());
  // OpRunner's scratch (worker/engine/activations.cc): a tile's rows, up to 3 << 16 floats.
  std::vector<float> scores(std::max<size_t>(
      size_t{kAttentionHeadsPerPass} * context,
      std::min<size_t>(size_t{kAttentionTileTokens} * heads * context, size_t{3} << 16)));
  AttentionArgs a;
  a.q = q.data();
  a.out = out.data();
  a.scores = scores.data();
  a.scores_size = static_cast<int64_t>(scores.size());
  a.n_tokens = tokens;
  a.start_pos = context - tokens;
  a.n_heads = heads;
  a.n_kv_heads = kv_heads;
  a.head_dim = head_dim;
  a.kv.k = base;
  a.kv.v = static_cast<const char*>(base) + elem * block * row;
  a.kv.type = type;
  a.kv.block_table = std::span<const int32_t>(tables).first(blocks);
  a.kv.block_size = block;
  a.kv.block_stride = 2L * block * row;
  a.kv.row_stride = row;
  a.kv.scales_offset = kv_dim;
  int seq = 0;
  for (auto _ : state) {
    a.kv.block_table = std::span<const int32_t>(tables).subspan(size_t(seq) * blocks, blocks);
    for (int t = 0; t < tokens; t += kAttentionTileTokens) {
      k.attention(a, RowRange{t * heads, std::min(tokens, t + kAttentionTileTokens) * heads});
    }
    seq = (seq + 1) % seqs;
  }
  const double positions = static_cast<double>(tokens) * (context - tokens / 2);
  Rates(state, 2.0 * static_cast<double>(elem * row) * positions,
        4.0 * heads * positions * head_dim);
}

void RegisterOthers() {
  for (Isa isa : {Isa::kRef, BestIsa()}) {
    const std::string p = std::string("/") + IsaName(isa);
    for (int n : {1, 128}) {
      const std::string t = "/tokens:" + std::to_string(n);
      benchmark::RegisterBenchmark(("BM_RmsNorm" + p + "/2048" + t).c_str(), BM_RmsNorm, isa, n);
      benchmark::RegisterBenchmark(("BM_SwiGlu" + p + "/5632" + t).c_str(), BM_SwiGlu, isa, n);
      benchmark::RegisterBenchmark(("BM_Rope" + p + "/32x64" + t).c_str(), BM_Rope, isa, n);
    }
    for (int len : {128, 2048}) {
      benchmark::RegisterBenchmark(("BM_Softmax" + p + "/" + std::to_string(len)).c_str(),
                                   BM_Softmax, isa, len);
    }
  }
  // Attention also on the AVX2 kernel where a wider table replaces it, for the comparison.
  std::vector<Isa> attention_isas = {Isa::kRef, BestIsa()};
  if (BestIsa() != Isa::kAvx2 && CpuSupports(Isa::kAvx2)) attention_isas.push_back(Isa::kAvx2);
  for (Isa isa : attention_isas) {
    const std::string p = std::string("/") + IsaName(isa);
    for (int len : {128, 2048}) {
      for (int tokens : {1, 32}) {
        const std::string t =
            "/context:" + std::to_string(len) + "/tokens:" + std::to_string(tokens);
        for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
          const std::string kv = type == KvType::kF16  ? "/f16"
                                 : type == KvType::kQ8 ? "/q8"
                                                       : "/f32";
          benchmark::RegisterBenchmark(("BM_Attention" + p + kv + "/32x64" + t).c_str(),
                                       BM_Attention, isa, type, len, 32, 4, tokens, false);
          benchmark::RegisterBenchmark(("BM_Attention" + p + kv + "/12x64-mha" + t).c_str(),
                                       BM_Attention, isa, type, len, 12, 12, tokens, false);
          if (tokens == 1) {  // one sequence's cache, in the core's caches
            benchmark::RegisterBenchmark(
                ("BM_Attention" + p + kv + "/12x64-mha" + t + "/cached").c_str(), BM_Attention, isa,
                type, len, 12, 12, tokens, true);
          }
        }
      }
    }
  }
  for (int n : {1, 128}) {
    benchmark::RegisterBenchmark(("BM_QuantizeQ8/2048/tokens:" + std::to_string(n)).c_str(),
                                 BM_QuantizeQ8, n);
  }
  for (int n : {16, 128}) {
    benchmark::RegisterBenchmark(("BM_QuantizeQ8Octets/768/tokens:" + std::to_string(n)).c_str(),
                                 BM_QuantizeQ8Octets, n);
  }
  if (CpuSupports(Isa::kAvx2)) {
    benchmark::RegisterBenchmark("BM_Q8StepRoof/avx2", BM_Q8StepRoof)
        ->Unit(benchmark::kMicrosecond);
  }
  if (CpuSupports(Isa::kAvx512)) {
    benchmark::RegisterBenchmark("BM_Q8StepRoof/avx512", BM_Q8StepRoofAvx512)
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace smallmind::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  smallmind::kernels::RegisterMatmuls();
  smallmind::kernels::RegisterOthers();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

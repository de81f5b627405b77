// The cube of the optimised library: C[M, N] (+)= A[M, K] @ B[K, N] into an FP32 C, with FP32,
// FP16 or BF16 operands, as a register-blocked GEMM. The path is chosen when the kernel is
// compiled, by the target's features (-march=native, or the lower target PYPTO_NATIVE_ISA
// forces; docs/isa.md "Matmul fast paths"):
//   - FP32: B packed into K x NR column panels, A read in place (MR row pointers, each value
//     broadcast), an MR x NR micro-kernel with its accumulators in vector registers
//     (8 x 32 with AVX-512, 6 x 16 with AVX2, 6 x 8 portable). K is blocked by KC.
//   - BF16 with AVX512_BF16: vdpbf16ps on (k, k+1) pairs: B packed pair-interleaved, A's pairs
//     broadcast in place; FP32 accumulation (the instruction flushes subnormal inputs and
//     results to zero).
//   - BF16 with AMX-BF16 as well (and Linux granting the tile data): tdpbf16ps on the tile
//     registers for whole 32 x 32 blocks of C and the multiples of 32 of each K block (A
//     copied in tile order, B the same pair-interleaved panels); the tails on vdpbf16ps.
//   - FP16, and BF16 without AVX512_BF16: the operands widened to FP32 while packing (exact),
//     then the FP32 micro-kernel.
//   - M within three row panels of MR on the FP32 micro-kernel (the decode layer's 16 rows on
//     AVX2): B not packed, read in place and widened on the fly by each row panel (BF16: the
//     row's 32-bit pairs split into even and odd columns by a shift and an and), its lines
//     prefetched ahead.
//   - M <= GR (GEMV-shaped: a few rows against a large weight): no packing; every B row is
//     read once, straight from the tile, by a GR x W kernel (pairs interleaved on the fly for
//     vdpbf16ps, widened on the fly otherwise). BF16 with AMX and M <= 16: amx_gemv, the rows
//     as tile rows, B read once in 32 x 64 blocks pair-interleaved into a 4 KiB buffer.
// Products of two FP16 / BF16 values are exact in FP32, so every path differs from the
// reference only in the order of the FP32 additions (and, for vdpbf16ps, in flushing).
#pragma once
#include "pypto/isa/optimized/half.h"
#include "pypto/isa/optimized/vec.h"

namespace pto_opt {

#if defined(__AVX512F__)
constexpr int MR = 8;   // 16 accumulators + 2 B vectors of 32 zmm registers
constexpr int GR = 16;  // the GEMV kernel: 16 accumulators + 1 B vector
#else
constexpr int MR = 6;  // 12 accumulators + 2 B + 1 broadcast of 16 registers
constexpr int GR = 8;
#endif
constexpr int NR = 2 * W;
constexpr long long KC = 256;  // even: vdpbf16ps pairs never straddle a K block

#if defined(__AVX512BF16__) && defined(__AVX512F__)
#define PTO_MM_DPBF16 1
#endif
// AMX (Sapphire Rapids and later): BF16 blocks of 32 x 32 on the tile registers. Compiled
// only for targets with AMX-BF16 (-march=native on such a CPU); untested on machines without.
#if defined(PTO_MM_DPBF16) && defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__linux__)
#define PTO_MM_AMX 1
#endif

// The paths this compilation takes, by operand dtype (the native engine reports them:
// pypto._core.native_matmul_paths(), benchmarks' "path" field).
#if defined(__AVX512F__)
#define PTO_MM_ISA "avx512"
#elif defined(__AVX2__) && defined(__FMA__)
#define PTO_MM_ISA "avx2"
#elif defined(__AVX__)
#define PTO_MM_ISA "avx"
#else
#define PTO_MM_ISA "scalar"  // SSE2 (x86-64) or the host's baseline vectors
#endif
#if defined(__AVX512F__)
#define PTO_MM_BLOCK "8x32"
#elif defined(__AVX__)
#define PTO_MM_BLOCK "6x16"
#else
#define PTO_MM_BLOCK "6x8"
#endif
#if defined(__FMA__)
#define PTO_MM_MAC " fma "
#else
#define PTO_MM_MAC " mul+add "
#endif
constexpr const char* kMatmulPathFp32 = PTO_MM_ISA PTO_MM_MAC PTO_MM_BLOCK;
#if defined(PTO_MM_AMX)
// The AMX path takes whole 32 x 32 blocks of C and the multiples of 32 of each K block, and
// the whole of a GEMV shape (M <= 16: amx_gemv); the rest (row, column and K tails of larger
// M) and a process the OS refuses the tile data take vdpbf16ps. matmul_path_bf16_run() says
// which this process runs.
constexpr const char* kMatmulPathBf16 =
    "amx tdpbf16ps 32x32, M <= 16 64-column blocks (tails: avx512_bf16 vdpbf16ps " PTO_MM_BLOCK ")";
constexpr const char* kMatmulPathBf16Refused = "avx512_bf16 vdpbf16ps " PTO_MM_BLOCK " (amx: the OS refused the tile data)";
constexpr const char* kMatmulPathBf16Failed = "avx512_bf16 vdpbf16ps " PTO_MM_BLOCK " (amx: the probe product did not run on the tiles)";
#elif defined(PTO_MM_DPBF16)
constexpr const char* kMatmulPathBf16 = "avx512_bf16 vdpbf16ps " PTO_MM_BLOCK;
#else
constexpr const char* kMatmulPathBf16 = PTO_MM_ISA " widen" PTO_MM_MAC PTO_MM_BLOCK;
#endif
#if defined(__F16C__) && defined(__AVX__)
constexpr const char* kMatmulPathFp16 = PTO_MM_ISA " f16c widen" PTO_MM_MAC PTO_MM_BLOCK;
#else
constexpr const char* kMatmulPathFp16 = PTO_MM_ISA " widen" PTO_MM_MAC PTO_MM_BLOCK;
#endif

// ---- the FP32 micro-kernels ----------------------------------------------------------------

// The lanes of e and o interleaved: (e0, o0, e1, o1, ...), first and second halves.
inline vf zip_lo(vf e, vf o) {
#if defined(__AVX512F__)
  return __builtin_shuffle(e, o, vi{0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23});
#elif defined(__AVX__)
  return __builtin_shuffle(e, o, vi{0, 8, 1, 9, 2, 10, 3, 11});
#else
  return __builtin_shuffle(e, o, vi{0, 4, 1, 5});
#endif
}
inline vf zip_hi(vf e, vf o) {
#if defined(__AVX512F__)
  return __builtin_shuffle(e, o, vi{8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31});
#elif defined(__AVX__)
  return __builtin_shuffle(e, o, vi{4, 12, 5, 13, 6, 14, 7, 15});
#else
  return __builtin_shuffle(e, o, vi{2, 6, 3, 7});
#endif
}

// C[m x n] += sum_p a[i][p] * B(p) for R rows (a: R row pointers, rows past m repeat a valid
// row; their sums are dropped) and V vectors of columns; `bl(p, v)` gives B's vector v of row p.
// PAIRS (V == 2): bl(p, 0) gives B's even columns and bl(p, 1) its odd ones (a BF16 row read
// as 32-bit pairs and split: two instructions widen 2 W columns); the sums are zipped back.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the BF16 pair split reads the first of a pair in the low half");
template <int R, int V, class BL, bool PAIRS = false, bool STEP8 = false>
inline void fma_kernel(long long k, const float* const* a, BL bl, float* C, long long ldc, long long m, long long n) {
  vf c[R][V];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) c[i][v] = vf{};
  auto step = [&](long long p) __attribute__((always_inline)) {
    vf b[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) b[v] = bl(p, v);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const vf x = splat(a[i][p]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) c[i][v] += x * b[v];
    }
  };
  // A's R rows are read in place, often a power-of-two stride apart (a tile of a larger
  // tensor), which no hardware prefetcher follows: each row's line two ahead, once a line.
  // STEP8 (B packed in cache): eight steps per iteration, no loop overhead between the FMAs
  // (1024^3 program +1-3%; B read in place from memory is slower so: 16 x 8192 x 1024 GEMV
  // 4.5 -> 5.2 ms).
  long long p = 0;
  for (; STEP8 && p + 8 <= k; p += 8) {
    if ((p & 15) == 0)
#pragma GCC unroll 16
      for (int i = 0; i < R; ++i) __builtin_prefetch(a[i] + p + 32, 0, 3);
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) step(p + q);
  }
  for (; p < k; ++p) {
    if ((p & 15) == 0)
#pragma GCC unroll 16
      for (int i = 0; i < R; ++i) __builtin_prefetch(a[i] + p + 32, 0, 3);
    step(p);
  }
  if constexpr (PAIRS) {
    static_assert(V == 2);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const vf e = c[i][0], o = c[i][1];
      c[i][0] = zip_lo(e, o);
      c[i][1] = zip_hi(e, o);
    }
  }
  if (m == R && n == V * W) {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) st(C + i * ldc + v * W, ld(C + i * ldc + v * W) + c[i][v]);
    return;
  }
  for (long long i = 0; i < m; ++i) {
    float t[V * W];
    for (int v = 0; v < V; ++v) st(t + v * W, c[i][v]);
    for (long long j = 0; j < n; ++j) C[i * ldc + j] += t[j];
  }
}

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__) && defined(__x86_64__)
#define PTO_MM_ASM_X16 1
// The R x 16 FP32 kernels (R = 6, 4) on a packed B panel (rows of 16 floats, 64 bytes apart),
// written in assembly: the FMAs of fma_kernel<R, 2> in the same order (bit for bit), the 2 R
// sums fixed in ymm0.., B in ymm12-13, the broadcasts in ymm14-15, eight K steps per loop
// iteration. GCC's allocation of the C++ kernel moved sums between registers and mixed FMA
// forms inside the loop: harness of the 1024^3 program's calls on one core, 69-75 -> 82-84
// GFLOPS (docs/performance.md). C[R x 16] (row stride ldc) += the sums; every row is valid.
// The pieces (the assembler computes the displacements): row i of step s into sums e, o
// through broadcast register x; B's row s; a step of 4 or 6 rows; zeroing and storing sums.
#define PTO_X16_ROW(i, e, o, x, s)                            \
  "vbroadcastss 4*" #s "(%[a" #i "],%[r],4), %%ymm" #x "\n\t" \
  "vfmadd231ps %%ymm12, %%ymm" #x ", %%ymm" #e "\n\t"         \
  "vfmadd231ps %%ymm13, %%ymm" #x ", %%ymm" #o "\n\t"
#define PTO_X16_B(s) "vmovups 64*" #s "(%[pb]), %%ymm12\n\t" "vmovups 64*" #s "+32(%[pb]), %%ymm13\n\t"
#define PTO_X16_STEP4(s) \
  PTO_X16_B(s) PTO_X16_ROW(0, 0, 1, 14, s) PTO_X16_ROW(1, 2, 3, 15, s) PTO_X16_ROW(2, 4, 5, 14, s) PTO_X16_ROW(3, 6, 7, 15, s)
#define PTO_X16_STEP6(s) PTO_X16_STEP4(s) PTO_X16_ROW(4, 8, 9, 14, s) PTO_X16_ROW(5, 10, 11, 15, s)
#define PTO_X16_ZERO(e, o) "vxorps %%ymm" #e ", %%ymm" #e ", %%ymm" #e "\n\t" "vxorps %%ymm" #o ", %%ymm" #o ", %%ymm" #o "\n\t"
#define PTO_X16_STORE(e, o)                                                                    \
  "vaddps (%[c]), %%ymm" #e ", %%ymm" #e "\n\t" "vmovups %%ymm" #e ", (%[c])\n\t"              \
  "vaddps 32(%[c]), %%ymm" #o ", %%ymm" #o "\n\t" "vmovups %%ymm" #o ", 32(%[c])\n\t" \
  "add %[ldc], %[c]\n\t"
#define PTO_X16_PF(i) "prefetcht0 128(%[a" #i "],%[r],4)\n\t"
// The kernel: zero the sums, eight steps an iteration while eight remain, then one at a time,
// then add the sums to C. `STEP`, `ZERO`, `PF`, `STORE`: the row count's pieces.
#define PTO_X16_KERNEL(STEP, ZERO, PF, STORE)                                                              \
  ZERO "cmp %[k8], %[r]\n\t" "jge 2f\n\t" "1:\n\t" PF STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) \
  STEP(7) "add $8, %[r]\n\t" "add $512, %[pb]\n\t" "cmp %[k8], %[r]\n\t" "jl 1b\n\t" "2:\n\t"               \
  "cmp %[k], %[r]\n\t" "jge 4f\n\t" "3:\n\t" STEP(0) "inc %[r]\n\t" "add $64, %[pb]\n\t" "cmp %[k], %[r]\n\t" \
  "jl 3b\n\t" "4:\n\t" STORE
template <int R>
inline void fma_x16_packed(long long k, const float* const* a, const float* panel, float* C, long long ldc) {
  static_assert(R == 4 || R == 6, "a 4- or 6-row kernel");
  // Rows past R are not read (their operands only keep one operand list for both kernels).
  const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = R > 4 ? a[4] : a[0], *a5 = R > 4 ? a[5] : a[0];
  long long r = 0;
  const long long k8 = k & ~7LL, ldc4 = ldc * 4;
#define PTO_X16_OPERANDS                                                                                       \
  : [r] "+r"(r), [pb] "+r"(panel), [c] "+r"(C)                                                                 \
  : [a0] "r"(a0), [a1] "r"(a1), [a2] "r"(a2), [a3] "r"(a3), [a4] "r"(a4), [a5] "r"(a5), [k8] "r"(k8), [k] "r"(k), \
    [ldc] "r"(ldc4)                                                                                            \
  : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",  \
    "xmm13", "xmm14", "xmm15", "memory", "cc"
  if constexpr (R == 6)
    asm volatile(PTO_X16_KERNEL(PTO_X16_STEP6,
                                PTO_X16_ZERO(0, 1) PTO_X16_ZERO(2, 3) PTO_X16_ZERO(4, 5) PTO_X16_ZERO(6, 7)
                                    PTO_X16_ZERO(8, 9) PTO_X16_ZERO(10, 11),
                                PTO_X16_PF(0) PTO_X16_PF(1) PTO_X16_PF(2) PTO_X16_PF(3) PTO_X16_PF(4) PTO_X16_PF(5),
                                PTO_X16_STORE(0, 1) PTO_X16_STORE(2, 3) PTO_X16_STORE(4, 5) PTO_X16_STORE(6, 7)
                                    PTO_X16_STORE(8, 9) PTO_X16_STORE(10, 11)) PTO_X16_OPERANDS);
  else
    asm volatile(PTO_X16_KERNEL(PTO_X16_STEP4, PTO_X16_ZERO(0, 1) PTO_X16_ZERO(2, 3) PTO_X16_ZERO(4, 5) PTO_X16_ZERO(6, 7),
                                PTO_X16_PF(0) PTO_X16_PF(1) PTO_X16_PF(2) PTO_X16_PF(3),
                                PTO_X16_STORE(0, 1) PTO_X16_STORE(2, 3) PTO_X16_STORE(4, 5) PTO_X16_STORE(6, 7))
                     PTO_X16_OPERANDS);
#undef PTO_X16_OPERANDS
}
#endif

#if defined(PTO_MM_DPBF16)
// acc (16 fp32) += pairs of b (32 bf16) . the bf16 pair at a, broadcast (vdpbf16ps). Written
// as assembly so that no intrinsic header is parsed and both GCC and Clang accept it.
inline void dpbf16(vf& acc, vi b, const unsigned short* a) {
  asm("vdpbf16ps %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(b), "m"(*reinterpret_cast<const int*>(a)));
}
inline void dpbf16_reg(vf& acc, vi b, vi a) { asm("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(b), "v"(a)); }
inline vi ldi(const void* p) {
  typedef int vi_u __attribute__((vector_size(W * 4), aligned(2), may_alias));
  return *reinterpret_cast<const vi_u*>(p);
}

// The vdpbf16ps kernel: k values of K (pairs from a[i] + 0, an odd last one alone); bl(q, v)
// gives the 32 bf16 of pair q (rows 2q, 2q+1 interleaved) for vector v of columns.
template <int R, int V, class BL>
inline void dp_kernel(long long k, const unsigned short* const* a, BL bl, float* C, long long ldc, long long m,
                      long long n) {
  vf c[R][V];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) c[i][v] = vf{};
  const long long pairs = k / 2;
  for (long long q = 0; q < pairs; ++q) {
    vi b[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) b[v] = bl(q, v);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) dpbf16(c[i][v], b[v], a[i] + 2 * q);
  }
  if (k & 1) {  // the last k alone: the pair (a, 0); bl gives (b, 0)
    vi b[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) b[v] = bl(pairs, v);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      vi x = {static_cast<int>(a[i][k - 1])};
      x = __builtin_shuffle(x, vi{});
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) dpbf16_reg(c[i][v], b[v], x);
    }
  }
  if (m == R && n == V * W) {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) st(C + i * ldc + v * W, ld(C + i * ldc + v * W) + c[i][v]);
    return;
  }
  for (long long i = 0; i < m; ++i) {
    float t[V * W];
    for (int v = 0; v < V; ++v) st(t + v * W, c[i][v]);
    for (long long j = 0; j < n; ++j) C[i * ldc + j] += t[j];
  }
}

// The 32 bf16 (r0[j], r1[j]) for j < W (r1 null: zeros).
inline vi interleave_rows(const unsigned short* r0, const unsigned short* r1) {
  const vh lo = ld_bits(r0), hi = r1 ? ld_bits(r1) : vh{};
  typedef unsigned short v2h __attribute__((vector_size(W * 4)));
  const v2h x = __builtin_shufflevector(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25,
                                        10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  vi r;
  __builtin_memcpy(&r, &x, sizeof r);
  return r;
}
#endif

#if defined(PTO_MM_AMX)
// The cube's Left / Right / Acc on AMX tile registers: tmm0-3 four 16 x 16 FP32 Acc blocks
// (32 x 32 of C), tmm4-5 two 16-row x 32-bf16 Left blocks (A copied in tile order),
// tmm6-7 two 16-pair x 16-column Right blocks of the pair-interleaved B panel (row stride
// NR pairs). Linux grants the tile data state on request (arch_prctl ARCH_REQ_XCOMP_PERM,
// feature 18), once per process; a refusal keeps the vdpbf16ps path. (A namespace-scope
// state, not a function-local static: kernels link without libstdc++'s guard functions; two
// threads asking at once both make the same request.)
inline int amx_state = 0;  // 0: not asked yet, 1: granted, 2: refused
inline bool amx_permitted() {
  int s = __atomic_load_n(&amx_state, __ATOMIC_RELAXED);
  if (s == 0) {
    long r;
    asm volatile("syscall" : "=a"(r) : "0"(158L), "D"(0x1023L), "S"(18L) : "rcx", "r11", "memory");
    s = r == 0 ? 1 : 2;
    __atomic_store_n(&amx_state, s, __ATOMIC_RELAXED);
  }
  return s == 1;
}
// Set by every gemm_acc of this library that runs tdpbf16ps blocks (the path probe clears it
// and checks that its product set it: the AMX branch runs, not only compiles). Written only
// when clear: no store to a shared line per call.
inline int amx_gemm_ran = 0;
struct alignas(64) AmxConfig {
  unsigned char palette, start_row, reserved[14];
  unsigned short colsb[16];
  unsigned char rows[16];
};
// The tile shapes are loaded at the start of every gemm_acc that uses them and released at
// its end: another library on the same thread (oneDNN's AMX kernels under torch) may load
// its own configuration or release the tiles between two of our calls.
inline void amx_begin() {
  AmxConfig cfg{};
  cfg.palette = 1;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  asm volatile("ldtilecfg %0" ::"m"(cfg));
  if (!__atomic_load_n(&amx_gemm_ran, __ATOMIC_RELAXED)) __atomic_store_n(&amx_gemm_ran, 1, __ATOMIC_RELAXED);
}
inline void amx_end() { asm volatile("tilerelease" ::); }
// C[32 x 32] (ldc) += A[32 x k] @ the packed panel (k / 2 pair rows of NR); A in tile order
// (Ap[p / 32][row][32]: each 16 x 32 Left tile 1 KiB contiguous); k a multiple of 32; the
// tiles configured (amx_begin).
inline void amx_block(float* C, long long ldc, const unsigned short* Ap, const unsigned short* panel, long long k) {
  const long long sc = ldc * 4, sa = 64, sb = NR * 4;
  asm volatile("tileloadd (%0,%1,1), %%tmm0" ::"r"(C), "r"(sc) : "memory");
  asm volatile("tileloadd (%0,%1,1), %%tmm1" ::"r"(C + 16), "r"(sc) : "memory");
  asm volatile("tileloadd (%0,%1,1), %%tmm2" ::"r"(C + 16 * ldc), "r"(sc) : "memory");
  asm volatile("tileloadd (%0,%1,1), %%tmm3" ::"r"(C + 16 * ldc + 16), "r"(sc) : "memory");
  for (long long p = 0; p < k; p += 32) {
    const unsigned short* b = panel + (p / 2) * NR * 2;
    asm volatile("tileloadd (%0,%1,1), %%tmm4" ::"r"(Ap + p * 32), "r"(sa) : "memory");
    asm volatile("tileloadd (%0,%1,1), %%tmm5" ::"r"(Ap + p * 32 + 16 * 32), "r"(sa) : "memory");
    asm volatile("tileloadd (%0,%1,1), %%tmm6" ::"r"(b), "r"(sb) : "memory");
    asm volatile("tileloadd (%0,%1,1), %%tmm7" ::"r"(b + 32), "r"(sb) : "memory");
    asm volatile("tdpbf16ps %%tmm6, %%tmm4, %%tmm0\n\t"
                 "tdpbf16ps %%tmm7, %%tmm4, %%tmm1\n\t"
                 "tdpbf16ps %%tmm6, %%tmm5, %%tmm2\n\t"
                 "tdpbf16ps %%tmm7, %%tmm5, %%tmm3" ::);
  }
  asm volatile("tilestored %%tmm0, (%0,%1,1)" ::"r"(C), "r"(sc) : "memory");
  asm volatile("tilestored %%tmm1, (%0,%1,1)" ::"r"(C + 16), "r"(sc) : "memory");
  asm volatile("tilestored %%tmm2, (%0,%1,1)" ::"r"(C + 16 * ldc), "r"(sc) : "memory");
  asm volatile("tilestored %%tmm3, (%0,%1,1)" ::"r"(C + 16 * ldc + 16), "r"(sc) : "memory");
}

// The GEMV shape (M <= 16 rows against a weight read once) on the tiles: C's rows and A's
// are the tile rows (configured as M), A is copied once per call in tile order
// (Ap[k / 32][M][32], K padded with zeros to a multiple of 32), and every 32-row x 64-column
// block of B is read once from memory, pair-interleaved into a 4 KiB buffer (two,
// alternating: the next block's copy does not wait for this block's tile loads) and
// multiplied as four 16-column Right tiles (tmm5-7) into four Acc tiles (tmm0-3: 64 columns
// of C). Blocks are visited in chunks of 64 columns, K inside. A chunk narrower than 64
// columns is staged through a zero-padded 16 x 64 block of C.
inline void amx_gemv_config(long long m) {
  AmxConfig cfg{};
  cfg.palette = 1;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = t < 5 ? static_cast<unsigned char>(m) : 16;
  asm volatile("ldtilecfg %0" ::"m"(cfg));
  if (!__atomic_load_n(&amx_gemm_ran, __ATOMIC_RELAXED)) __atomic_store_n(&amx_gemm_ran, 1, __ATOMIC_RELAXED);
}
// Scratch bytes amx_gemv needs: Ap, two B blocks, the staged C chunk.
inline long long amx_gemv_scratch_bytes(long long M, long long K) { return (K + 31) / 32 * M * 64 + 2 * 4096 + 4096 + 64; }

inline void amx_gemv(float* C, long long ldc, const unsigned short* A, long long lda, const unsigned short* B,
                     long long ldb, long long M, long long N, long long K, void* scratch) {
  const long long nkb = (K + 31) / 32, nch = (N + 63) / 64;
  unsigned char* base = reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(scratch) + 63) & ~63ULL);
  unsigned short* Ap = reinterpret_cast<unsigned short*>(base);                     // [nkb][M][32]
  unsigned short* Bq = reinterpret_cast<unsigned short*>(base + nkb * M * 64);      // [2][16 pairs][64][2]
  float* Cs = reinterpret_cast<float*>(base + nkb * M * 64 + 2 * 4096);            // [16][64]
  for (long long i = 0; i < M; ++i)
    for (long long kb = 0; kb < nkb; ++kb) {
      unsigned short* d = Ap + (kb * M + i) * 32;
      const unsigned short* s = A + i * lda + kb * 32;
      if (kb * 32 + 32 <= K) {
        __builtin_memcpy(d, s, 64);
      } else {
        for (long long p = 0; p < 32; ++p) d[p] = kb * 32 + p < K ? s[p] : 0;
      }
    }
  amx_gemv_config(M);
  long long step = 0;
  for (long long ch = 0; ch < nch; ++ch) {
    const long long j0 = ch * 64, nn = N - j0 < 64 ? N - j0 : 64;
    float* cp = C + j0;
    long long sc = ldc * 4;
    if (nn < 64) {  // stage the partial chunk (zeros past N)
      for (long long i = 0; i < M; ++i)
        for (long long j = 0; j < 64; ++j) Cs[i * 64 + j] = j < nn ? C[i * ldc + j0 + j] : 0.0f;
      cp = Cs;
      sc = 256;
    }
    asm volatile("tileloadd (%0,%1,1), %%tmm0" ::"r"(cp), "r"(sc) : "memory");
    asm volatile("tileloadd (%0,%1,1), %%tmm1" ::"r"(cp + 16), "r"(sc) : "memory");
    asm volatile("tileloadd (%0,%1,1), %%tmm2" ::"r"(cp + 32), "r"(sc) : "memory");
    asm volatile("tileloadd (%0,%1,1), %%tmm3" ::"r"(cp + 48), "r"(sc) : "memory");
    for (long long kb = 0; kb < nkb; ++kb, ++step) {
      unsigned short* bq = Bq + (step & 1) * 2048;
      const long long k0 = kb * 32, rows = K - k0 < 32 ? K - k0 : 32;
      const unsigned short* r0 = B + k0 * ldb + j0;
      if (nn == 64 && rows == 32) {
        for (int q = 0; q < 16; ++q, r0 += 2 * ldb) {
#pragma GCC unroll 4
          for (int g = 0; g < 4; ++g) {
            const vi x = interleave_rows(r0 + 16 * g, r0 + ldb + 16 * g);
            __builtin_memcpy(bq + q * 128 + g * 32, &x, 64);
          }
        }
      } else {  // zeros past K and past N
        for (int q = 0; q < 16; ++q)
          for (long long j = 0; j < 64; ++j) {
            const bool in = j < nn;
            bq[q * 128 + 2 * j] = in && 2 * q < rows ? r0[2 * q * ldb + j] : 0;
            bq[q * 128 + 2 * j + 1] = in && 2 * q + 1 < rows ? r0[(2 * q + 1) * ldb + j] : 0;
          }
      }
      asm volatile("tileloadd (%0,%1,1), %%tmm4" ::"r"(Ap + kb * M * 32), "r"(64LL) : "memory");
      asm volatile("tileloadd (%0,%1,1), %%tmm5" ::"r"(bq), "r"(256LL) : "memory");
      asm volatile("tdpbf16ps %%tmm5, %%tmm4, %%tmm0" ::);
      asm volatile("tileloadd (%0,%1,1), %%tmm6" ::"r"(bq + 32), "r"(256LL) : "memory");
      asm volatile("tdpbf16ps %%tmm6, %%tmm4, %%tmm1" ::);
      asm volatile("tileloadd (%0,%1,1), %%tmm7" ::"r"(bq + 64), "r"(256LL) : "memory");
      asm volatile("tdpbf16ps %%tmm7, %%tmm4, %%tmm2" ::);
      asm volatile("tileloadd (%0,%1,1), %%tmm5" ::"r"(bq + 96), "r"(256LL) : "memory");
      asm volatile("tdpbf16ps %%tmm5, %%tmm4, %%tmm3" ::);
    }
    asm volatile("tilestored %%tmm0, (%0,%1,1)" ::"r"(cp), "r"(sc) : "memory");
    asm volatile("tilestored %%tmm1, (%0,%1,1)" ::"r"(cp + 16), "r"(sc) : "memory");
    asm volatile("tilestored %%tmm2, (%0,%1,1)" ::"r"(cp + 32), "r"(sc) : "memory");
    asm volatile("tilestored %%tmm3, (%0,%1,1)" ::"r"(cp + 48), "r"(sc) : "memory");
    if (nn < 64)
      for (long long i = 0; i < M; ++i)
        for (long long j = 0; j < nn; ++j) C[i * ldc + j0 + j] = Cs[i * 64 + j];
  }
  amx_end();
}
#endif

// ---- packing -------------------------------------------------------------------------------

inline float to_f32(float x) { return x; }
inline float to_f32(f16 x) { return widen1(x); }
inline float to_f32(bf16 x) { return widen1(x); }
inline vf ld_f32(const float* p) { return ld(p); }
template <class H> inline vf ld_f32(const H* p) { return ldh(p); }

// B[k0 .. k0 + kc, j0 .. j0 + NR] (nn valid columns) as FP32 rows of NR, zero padded.
template <class T>
inline void pack_b(float* dst, const T* B, long long ldb, long long k0, long long kc, long long j0, long long nn) {
  for (long long p = 0; p < kc; ++p) {
    const T* src = B + (k0 + p) * ldb + j0;
    if (nn == NR) {
      st(dst + p * NR, ld_f32(src));
      st(dst + p * NR + W, ld_f32(src + W));
    } else {
      for (long long j = 0; j < NR; ++j) dst[p * NR + j] = j < nn ? to_f32(src[j]) : 0.0f;
    }
  }
}

// Scratch floats matmul needs for these sizes.
inline long long matmul_scratch_floats(long long M, long long N, long long K) {
  const long long kc = K < KC ? K : KC;
  const long long mp = (M + MR - 1) / MR * MR, np = (N + NR - 1) / NR * NR;
  long long gemv = M <= GR ? GR * (K + 1) : 0;  // A k-major for the GEMV kernel
#if defined(PTO_MM_AMX)
  if (M <= 16 && (amx_gemv_scratch_bytes(M, K) + 3) / 4 > gemv) gemv = (amx_gemv_scratch_bytes(M, K) + 3) / 4;
#endif
  const long long blocked = np * (kc + 1) + mp * kc;   // B panels (padded, see gemm_acc); widened A rows (FP16 / BF16)
  return (gemv > blocked ? gemv : blocked) + 64;
}

// The GEMV shape (M <= GR, N a multiple of W): A packed k-major (GR values per k, rows past
// M zero), every B row read once, in place, W columns at a time.
template <class T>
inline void gemv_acc(float* C, long long ldc, const T* A, long long lda, const T* B, long long ldb, long long M,
                     long long N, long long K, float* scratch) {
#if defined(PTO_MM_DPBF16)
  if constexpr (sizeof(T) == 2 && !__is_same(T, f16)) {
    const unsigned short* a = reinterpret_cast<const unsigned short*>(A);
    const unsigned short* b = reinterpret_cast<const unsigned short*>(B);
    unsigned* Aq = reinterpret_cast<unsigned*>(scratch);  // [q][i]: the pair (A[i][2q], A[i][2q+1])
    const long long nq = (K + 1) / 2;
    for (long long q = 0; q < nq; ++q)
      for (int i = 0; i < GR; ++i) {
        const unsigned lo = i < M ? a[i * lda + 2 * q] : 0, hi = i < M && 2 * q + 1 < K ? a[i * lda + 2 * q + 1] : 0;
        Aq[q * GR + i] = lo | hi << 16;
      }
    for (long long j0 = 0; j0 < N; j0 += W) {
      vf c[GR];
#pragma GCC unroll 16
      for (int i = 0; i < GR; ++i) c[i] = vf{};
      const unsigned short* col = b + j0;
      const unsigned* aq = Aq;
      for (long long q = 0; q < nq; ++q, aq += GR) {
        const unsigned short* r0 = col + 2 * q * ldb;
        const vi bv = interleave_rows(r0, 2 * q + 1 < K ? r0 + ldb : nullptr);
#pragma GCC unroll 16
        for (int i = 0; i < GR; ++i) dpbf16(c[i], bv, reinterpret_cast<const unsigned short*>(aq + i));
      }
      for (long long i = 0; i < M; ++i) st(C + i * ldc + j0, ld(C + i * ldc + j0) + c[i]);
    }
    return;
  }
#endif
  float* Ap = scratch;  // [p][i]
  for (long long p = 0; p < K; ++p)
    for (int i = 0; i < GR; ++i) Ap[p * GR + i] = i < M ? to_f32(A[i * lda + p]) : 0.0f;
  for (long long j0 = 0; j0 < N; j0 += W) {
    vf c[GR];
#pragma GCC unroll 16
    for (int i = 0; i < GR; ++i) c[i] = vf{};
    const T* col = B + j0;
    const float* ap = Ap;
    for (long long p = 0; p < K; ++p, ap += GR) {
      const vf bv = ld_f32(col + p * ldb);
#pragma GCC unroll 16
      for (int i = 0; i < GR; ++i) c[i] += splat(ap[i]) * bv;
    }
    for (long long i = 0; i < M; ++i) st(C + i * ldc + j0, ld(C + i * ldc + j0) + c[i]);
  }
}

// C (ldc) += A (lda) @ B (ldb); M x N x K; T is float, f16 or bf16. `scratch` holds
// matmul_scratch_floats(M, N, K) floats.
template <class T>
inline void gemm_acc(float* C, long long ldc, const T* A, long long lda, const T* B, long long ldb, long long M,
                     long long N, long long K, float* scratch) {
  if (M <= 0 || N <= 0 || K <= 0) return;
#if defined(PTO_MM_AMX)
  if constexpr (__is_same(T, bf16)) {
    if (M <= 16 && amx_permitted()) {
      amx_gemv(C, ldc, reinterpret_cast<const unsigned short*>(A), lda, reinterpret_cast<const unsigned short*>(B),
               ldb, M, N, K, scratch);
      return;
    }
  }
#endif
  if (M <= GR && N % W == 0) {
    gemv_acc(C, ldc, A, lda, B, ldb, M, N, K, scratch);
    return;
  }
  const long long npan = (N + NR - 1) / NR, mpan = (M + MR - 1) / MR;
#if defined(PTO_MM_DPBF16)
  if constexpr (sizeof(T) == 2 && !__is_same(T, f16)) {
    const unsigned short* b = reinterpret_cast<const unsigned short*>(B);
    unsigned short* Bq = reinterpret_cast<unsigned short*>(scratch);  // [jp][q][j][2]
#if defined(PTO_MM_AMX)
    const bool amx = M >= 32 && N >= NR && K >= 32 && amx_permitted();
    if (amx) amx_begin();
#endif
    for (long long k0 = 0; k0 < K; k0 += KC) {
      const long long kc = K - k0 < KC ? K - k0 : KC, nq = (kc + 1) / 2;
#if defined(PTO_MM_AMX)
      const long long k32 = kc / 32 * 32;
#endif
      // Pack B pair-interleaved: a pair of rows at a time across every panel (each row read
      // once, left to right), the rows PD pairs ahead prefetched (B is often read from a
      // larger tensor in place, rows a power-of-two stride apart: no hardware prefetcher
      // follows them).
      constexpr long long PD = 4;
      for (long long q = 0; q < nq; ++q) {
        if (q + PD < nq)
          for (long long r = 2 * (q + PD); r < 2 * (q + PD) + 2 && r < kc; ++r)
            for (long long j = 0; j < N; j += 32) __builtin_prefetch(b + (k0 + r) * ldb + j, 0, 3);
        for (long long jp = 0; jp < npan; ++jp) {
          const long long j0 = jp * NR, nn = N - j0 < NR ? N - j0 : NR;
          const unsigned short* r0 = b + (k0 + 2 * q) * ldb + j0;
          const unsigned short* r1 = 2 * q + 1 < kc ? r0 + ldb : nullptr;
          unsigned short* d = Bq + jp * nq * NR * 2 + q * NR * 2;
          if (nn == NR) {
            const vi x0 = interleave_rows(r0, r1), x1 = interleave_rows(r0 + W, r1 ? r1 + W : nullptr);
            __builtin_memcpy(d, &x0, sizeof x0);
            __builtin_memcpy(d + 2 * W, &x1, sizeof x1);
          } else {
            for (long long j = 0; j < NR; ++j) {
              d[2 * j] = j < nn ? r0[j] : 0;
              d[2 * j + 1] = j < nn && r1 ? r1[j] : 0;
            }
          }
        }
      }
      long long amx_rows = 0;  // rows 0 .. amx_rows of the whole panels done on the tiles
#if defined(PTO_MM_AMX)
      // Whole 32 x 32 blocks of C on the tiles, the K block's first k32 values (a multiple of
      // 32), a 32-row block of A at a time (copied in tile order: 1 KiB tiles, whatever lda,
      // whose power-of-two strides would put a tile's rows in a few L1 sets) against every
      // whole panel; the block's last kc - k32 values on vdpbf16ps (pair q from k32 / 2).
      if (amx && k32 > 0) {
        amx_rows = M / 32 * 32;
        unsigned short* Ap = Bq + npan * nq * NR * 2;  // [k32 / 32][32 rows][32]
        const long long full = N / NR;
        for (long long i0 = 0; i0 < amx_rows; i0 += 32) {
          const unsigned short* a0 = reinterpret_cast<const unsigned short*>(A) + i0 * lda + k0;
          for (int r = 0; r < 32; ++r) {
            if (i0 + 32 + r < M)  // the next block's row, for the next copy
              for (long long p = 0; p < k32; p += 32) __builtin_prefetch(a0 + (32 + r) * lda + p, 0, 3);
            for (long long p = 0; p < k32; p += 32) __builtin_memcpy(Ap + p * 32 + r * 32, a0 + r * lda + p, 64);
          }
          for (long long jp = 0; jp < full; ++jp) {
            const unsigned short* panel = Bq + jp * nq * NR * 2;
            amx_block(C + i0 * ldc + jp * NR, ldc, Ap, panel, k32);
            if (kc == k32) continue;
            auto blt = [&](long long q, int v) { return ldi(panel + ((q + k32 / 2) * NR + v * W) * 2); };
            for (int g = 0; g < 32 / MR; ++g) {
              const unsigned short* a[MR];
              for (int i = 0; i < MR; ++i) a[i] = a0 + (g * MR + i) * lda + k32;
              dp_kernel<MR, 2>(kc - k32, a, blt, C + (i0 + g * MR) * ldc + jp * NR, ldc, MR, NR);
            }
          }
        }
      }
#endif
      for (long long jp = 0; jp < npan; ++jp) {
        const long long j0 = jp * NR, nn = N - j0 < NR ? N - j0 : NR;
        const unsigned short* panel = Bq + jp * nq * NR * 2;
        auto bl = [&](long long q, int v) { return ldi(panel + (q * NR + v * W) * 2); };
        long long ip = nn == NR ? amx_rows / MR : 0;
        for (; ip < mpan; ++ip) {
          const long long i0 = ip * MR, mm = M - i0 < MR ? M - i0 : MR;
          const unsigned short* a[MR];
          for (int i = 0; i < MR; ++i)
            a[i] = reinterpret_cast<const unsigned short*>(A + (i0 + (i < mm ? i : mm - 1)) * lda + k0);
          dp_kernel<MR, 2>(kc, a, bl, C + i0 * ldc + j0, ldc, mm, nn);
        }
      }
    }
#if defined(PTO_MM_AMX)
    if (amx) amx_end();
#endif
    return;
  }
#endif
  // At most three row panels (a few rows against a large weight: the decode layer's GEMV
  // shapes on targets without a GEMV kernel for them), B is not packed: each whole NR-column
  // panel is read in place by every row panel, widened on the fly (BF16: a row's 32-bit pairs
  // split into even and odd columns by a shift and an and, the sums zipped back at the end).
  const bool inplace = mpan <= 3;
  float* Bp = scratch;
  for (long long k0 = 0; k0 < K; k0 += KC) {
    const long long kc = K - k0 < KC ? K - k0 : KC;
    // Panels a row longer than they hold: packing writes each B row into every panel, and
    // panels a power-of-two size apart would put those lines in one L1 set.
    const long long ps = NR * (kc + 1);
    float* Aw = Bp + npan * ps;  // FP16 / BF16: A's rows of this K block, widened
    const long long full = N / NR;
    if (!inplace) {
      // The whole panels a B row at a time: each row read once, left to right, into every
      // panel, the row 8 ahead prefetched (panel by panel, the lines of a tile's rows, a
      // power-of-two stride apart in a larger tensor, fall in a few L1 sets; 1024^3 program
      // +3-5%).
      for (long long p = 0; p < kc && full > 0; ++p) {
        const T* src = B + (k0 + p) * ldb;
        if (p + 8 < kc)
          for (long long j = 0; j < full * NR; j += 64 / sizeof(T)) __builtin_prefetch(src + 8 * ldb + j, 0, 3);
        float* dst = Bp + p * NR;
        for (long long jp = 0; jp < full; ++jp, src += NR, dst += ps) {
          st(dst, ld_f32(src));
          st(dst + W, ld_f32(src + W));
        }
      }
    }
    for (long long jp = inplace ? 0 : full; jp < npan; ++jp) {
      const long long j0 = jp * NR;
      if (inplace && N - j0 >= NR) continue;
      pack_b(Bp + jp * ps, B, ldb, k0, kc, j0, N - j0 < NR ? N - j0 : NR);
    }
    if constexpr (!__is_same(T, float)) {
      for (long long i = 0; i < M; ++i) {
        const T* s = A + i * lda + k0;
        float* d = Aw + i * kc;
        long long kk = 0;
        for (; kk + W <= kc; kk += W) st(d + kk, ld_f32(s + kk));
        for (; kk < kc; ++kk) d[kk] = to_f32(s[kk]);
      }
    }
    for (long long jp = 0; jp < npan; ++jp) {
      const long long j0 = jp * NR, nn = N - j0 < NR ? N - j0 : NR;
      const float* panel = Bp + jp * ps;
      auto bl = [panel](long long p, int v) { return ld(panel + p * NR + v * W); };
      // In place: the line two ahead in each B row prefetched 8 rows ahead (the rows are a
      // tile's, often a power-of-two stride apart in a larger weight; the hardware prefetchers
      // miss them). Measured best of 1 to 4 lines and 2 to 16 rows ahead (docs/performance.md).
      const T* bcol = B + k0 * ldb + j0;
      auto pf = [bcol, ldb](long long p) {
        __builtin_prefetch(reinterpret_cast<const char*>(bcol + (p + 8) * ldb) + 128, 0, 3);
      };
      auto bi = [bcol, ldb, pf](long long p, int v) {
        if (v == 0) pf(p);
        return ld_f32(bcol + p * ldb + v * W);
      };
      auto bp = [bcol, ldb, pf](long long p, int v) {  // BF16: even (v = 0) and odd columns
        if (v == 0) pf(p);
        vi x;
        __builtin_memcpy(&x, bcol + p * ldb, sizeof x);
        return as_float(v == 0 ? x << 16 : x & static_cast<int>(0xffff0000u));
      };
      for (long long i0 = 0; i0 < M;) {
        // Row panels of MR, but seven or eight last rows as 4 + 3 or 4 + 4 (MR = 6: M = 128
        // is 20 x 6 + 4 + 4, not 21 x 6 + 2 rows in a 4-row kernel).
        const long long left = M - i0, mm = MR == 6 && (left == 7 || left == 8) ? 4 : left < MR ? left : MR;
        const float* a[MR];
        for (int i = 0; i < MR; ++i) {
          const long long r = i0 + (i < mm ? i : mm - 1);
          if constexpr (__is_same(T, float))
            a[i] = reinterpret_cast<const float*>(A) + r * lda + k0;
          else
            a[i] = Aw + r * kc;
        }
        // A last panel of at most four rows (M = 16 on AVX2: 6 + 6 + 4; 128: ... + 2) runs a
        // 4-row kernel: 8 accumulators, still two FMAs a cycle, no sums computed to be dropped.
        if (!inplace || nn < NR) {
#if defined(PTO_MM_ASM_X16)
          if (nn == NR && (mm == 6 || mm == 4)) {
            if (mm == 6)
              fma_x16_packed<6>(kc, a, panel, C + i0 * ldc + j0, ldc);
            else
              fma_x16_packed<4>(kc, a, panel, C + i0 * ldc + j0, ldc);
            i0 += mm;
            continue;
          }
#endif
          if (mm <= 4 && MR > 4)
            fma_kernel<4, 2, decltype(bl), false, true>(kc, a, bl, C + i0 * ldc + j0, ldc, mm, nn);
          else
            fma_kernel<MR, 2, decltype(bl), false, true>(kc, a, bl, C + i0 * ldc + j0, ldc, mm, nn);
        } else if constexpr (__is_same(T, bf16)) {
          if (mm <= 4 && MR > 4)
            fma_kernel<4, 2, decltype(bp), true>(kc, a, bp, C + i0 * ldc + j0, ldc, mm, nn);
          else
            fma_kernel<MR, 2, decltype(bp), true>(kc, a, bp, C + i0 * ldc + j0, ldc, mm, nn);
        } else {
          if (mm <= 4 && MR > 4)
            fma_kernel<4, 2>(kc, a, bi, C + i0 * ldc + j0, ldc, mm, nn);
          else
            fma_kernel<MR, 2>(kc, a, bi, C + i0 * ldc + j0, ldc, mm, nn);
        }
        i0 += mm;
      }
    }
  }
}

// TMATMUL / TMATMUL_ACC / TMATMUL_BIAS: C = init + A @ B where init is zero (mode 0), the
// tile `init` (mode 1, M x N, row stride ldi; may be C itself) or the bias row (mode 2).
// T (A's and B's element type): float, f16 or bf16; C is FP32.
template <class T>
inline void matmul(float* C, long long ldc, const T* A, long long lda, const T* B, long long ldb, long long M,
                   long long N, long long K, int mode, const float* init, long long ldi, float* scratch) {
  for (long long i = 0; i < M; ++i) {
    float* c = C + i * ldc;
    if (mode == 0) {
      for (long long j = 0; j < N; ++j) c[j] = 0.0f;
    } else {
      const float* s = mode == 2 ? init : init + i * ldi;
      if (s != c) __builtin_memmove(c, s, N * 4);
    }
  }
  gemm_acc(C, ldc, A, lda, B, ldb, M, N, K, scratch);
}

// The BF16 path of this compilation as it runs in this process (the path report): with AMX
// compiled in, a 32 x 32 x 32 product of small integers (exact) through gemm_acc, and its
// first 16 rows (the GEMV blocks), must take the tiles (amx_gemm_ran) and be exact.
inline const char* matmul_path_bf16_run() {
#if defined(PTO_MM_AMX)
  if (!amx_permitted()) return kMatmulPathBf16Refused;
  constexpr int S = 32;
  bf16 a[S * S], b[S * S];
  float c[S * S], want[S * S];
  float scratch[4096];
  auto bits = [](int v) {  // small integers as bf16 (exact)
    float f = static_cast<float>(v);
    unsigned u;
    __builtin_memcpy(&u, &f, 4);
    return bf16{static_cast<unsigned short>(u >> 16)};
  };
  for (int i = 0; i < S * S; ++i) a[i] = bits(i % 7 - 3), b[i] = bits(i % 5 - 2);
  for (int i = 0; i < S; ++i)
    for (int j = 0; j < S; ++j) {
      int t = 0;
      for (int p = 0; p < S; ++p) t += ((i * S + p) % 7 - 3) * ((p * S + j) % 5 - 2);
      want[i * S + j] = static_cast<float>(t);
    }
  // The 32 x 32 blocks (M = 32), then the GEMV blocks (its first 16 rows, M = 16).
  for (int m = S; m >= S / 2; m -= S / 2) {
    if (matmul_scratch_floats(m, S, S) > 4096) return kMatmulPathBf16Failed;
    __atomic_store_n(&amx_gemm_ran, 0, __ATOMIC_RELAXED);
    matmul(c, S, a, S, b, S, m, S, S, 0, nullptr, 0, scratch);
    if (!__atomic_load_n(&amx_gemm_ran, __ATOMIC_RELAXED)) return kMatmulPathBf16Failed;
    for (int i = 0; i < m * S; ++i)
      if (c[i] != want[i]) return kMatmulPathBf16Failed;
  }
  return kMatmulPathBf16;
#else
  return kMatmulPathBf16;
#endif
}

// The FP16 / BF16 spelling the code generator emits (the same template).
template <class H>
inline void matmul_half(float* C, long long ldc, const H* A, long long lda, const H* B, long long ldb, long long M,
                        long long N, long long K, int mode, const float* init, long long ldi, float* scratch) {
  matmul(C, ldc, A, lda, B, ldb, M, N, K, mode, init, ldi, scratch);
}

}  // namespace pto_opt

// The cube of the optimised library: fp32 C[M, N] (+)= A[M, K] @ B[K, N] as a packed,
// register-blocked GEMM. B is packed into K x NR column panels, A into MR x K row panels
// (zero padded), and an MR x NR micro-kernel keeps its accumulators in vector registers
// (6 x 16 with AVX2, 6 x 32 with AVX-512, 6 x 8 portable). K is blocked by KC for cache.
#pragma once
#include "pypto/isa/optimized/half.h"
#include "pypto/isa/optimized/vec.h"

namespace pto_opt {

constexpr int MR = 6;
constexpr int NR = 2 * W;
constexpr long long KC = 256;

// acc[MR x NR] += Ap (k x MR, k-major) @ Bp (k x NR, k-major), then added to C.
inline void micro_kernel(long long k, const float* __restrict Ap, const float* __restrict Bp, float* C, long long ldc,
                         long long m, long long n) {
  vf c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {}, c30 = {}, c31 = {}, c40 = {}, c41 = {}, c50 = {},
     c51 = {};
  for (long long p = 0; p < k; ++p, Ap += MR, Bp += NR) {
    const vf b0 = ld(Bp), b1 = ld(Bp + W);
    vf a;
    a = splat(Ap[0]); c00 += a * b0; c01 += a * b1;
    a = splat(Ap[1]); c10 += a * b0; c11 += a * b1;
    a = splat(Ap[2]); c20 += a * b0; c21 += a * b1;
    a = splat(Ap[3]); c30 += a * b0; c31 += a * b1;
    a = splat(Ap[4]); c40 += a * b0; c41 += a * b1;
    a = splat(Ap[5]); c50 += a * b0; c51 += a * b1;
  }
  const vf rows[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (m == MR && n == NR) {
    for (int i = 0; i < MR; ++i) {
      st(C + i * ldc, ld(C + i * ldc) + rows[i][0]);
      st(C + i * ldc + W, ld(C + i * ldc + W) + rows[i][1]);
    }
    return;
  }
  for (long long i = 0; i < m; ++i) {
    float t[NR];
    st(t, rows[i][0]);
    st(t + W, rows[i][1]);
    for (long long j = 0; j < n; ++j) C[i * ldc + j] += t[j];
  }
}

// Scratch floats matmul needs for these sizes.
inline long long matmul_scratch_floats(long long M, long long N, long long K) {
  const long long kc = K < KC ? K : KC;
  return ((M + MR - 1) / MR) * MR * kc + ((N + NR - 1) / NR) * NR * kc + 64;
}

// C (ldc) += A (lda) @ B (ldb); M x N x K fp32. `scratch` holds matmul_scratch_floats.
inline void gemm_acc(float* C, long long ldc, const float* A, long long lda, const float* B, long long ldb, long long M,
                     long long N, long long K, float* scratch) {
  float* Bp = scratch;
  for (long long k0 = 0; k0 < K; k0 += KC) {
    const long long kc = K - k0 < KC ? K - k0 : KC;
    const long long npan = (N + NR - 1) / NR, mpan = (M + MR - 1) / MR;
    float* Ap = Bp + npan * NR * kc;
    for (long long jp = 0; jp < npan; ++jp) {  // pack B panels: Bp[jp][p][j]
      const long long j0 = jp * NR, nn = N - j0 < NR ? N - j0 : NR;
      float* dst = Bp + jp * NR * kc;
      for (long long p = 0; p < kc; ++p) {
        const float* src = B + (k0 + p) * ldb + j0;
        if (nn == NR) {
          st(dst + p * NR, ld(src));
          st(dst + p * NR + W, ld(src + W));
        } else {
          for (long long j = 0; j < NR; ++j) dst[p * NR + j] = j < nn ? src[j] : 0.0f;
        }
      }
    }
    for (long long ip = 0; ip < mpan; ++ip) {  // pack A panels: Ap[ip][p][i]
      const long long i0 = ip * MR, mm = M - i0 < MR ? M - i0 : MR;
      float* dst = Ap + ip * MR * kc;
      for (long long p = 0; p < kc; ++p)
        for (long long i = 0; i < MR; ++i) dst[p * MR + i] = i < mm ? A[(i0 + i) * lda + k0 + p] : 0.0f;
    }
    for (long long jp = 0; jp < npan; ++jp) {
      const long long j0 = jp * NR, nn = N - j0 < NR ? N - j0 : NR;
      for (long long ip = 0; ip < mpan; ++ip) {
        const long long i0 = ip * MR, mm = M - i0 < MR ? M - i0 : MR;
        micro_kernel(kc, Ap + ip * MR * kc, Bp + jp * NR * kc, C + i0 * ldc + j0, ldc, mm, nn);
      }
    }
  }
}

// TMATMUL / TMATMUL_ACC / TMATMUL_BIAS: C = init + A @ B where init is zero (mode 0), the
// tile `init` (mode 1, M x N, row stride ldi; may be C itself) or the bias row (mode 2).
inline void matmul(float* C, long long ldc, const float* A, long long lda, const float* B, long long ldb, long long M,
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


// TMATMUL* with FP16 / BF16 operands (H: f16 or bf16) and an FP32 Acc: the operands widened to
// FP32 in `scratch` (products of two halves are exact in FP32), then the FP32 kernel; `scratch`
// holds M * K + K * N floats more than matmul_scratch_floats(M, N, K).
template <class H>
inline void matmul_half(float* C, long long ldc, const H* A, long long lda, const H* B, long long ldb, long long M,
                        long long N, long long K, int mode, const float* init, long long ldi, float* scratch) {
  float* a = scratch;
  float* b = a + M * K;
  for (long long i = 0; i < M; ++i)
    for (long long k = 0; k < K; ++k) a[i * K + k] = widen1(A[i * lda + k]);
  for (long long k = 0; k < K; ++k)
    for (long long j = 0; j < N; ++j) b[k * N + j] = widen1(B[k * ldb + j]);
  matmul(C, ldc, a, K, b, N, M, N, K, mode, init, ldi, b + K * N);
}

}  // namespace pto_opt

// SIMD vectors for the optimised tile library, written with GCC/Clang vector extensions so
// that no system header is parsed (kernels compile fast): 16 floats with AVX-512, 8 with
// AVX/AVX2, 4 otherwise (the portable fallback). exp and log are vectorised here.
#pragma once

namespace pto_opt {

#if defined(__AVX512F__)
constexpr int W = 16;
#define PTO_OPT_VECTOR_PATH "avx512"
#elif defined(__AVX__)
constexpr int W = 8;
#define PTO_OPT_VECTOR_PATH "avx2"
#else
constexpr int W = 4;
#define PTO_OPT_VECTOR_PATH "portable"
#endif

typedef float vf __attribute__((vector_size(W * 4)));
typedef int vi __attribute__((vector_size(W * 4)));
typedef float vf_u __attribute__((vector_size(W * 4), aligned(4), may_alias));

inline vf ld(const float* p) { return *reinterpret_cast<const vf_u*>(p); }
inline void st(float* p, vf v) { *reinterpret_cast<vf_u*>(p) = v; }
inline vf splat(float x) {
  vf v = {x};
  return __builtin_shuffle(v, vi{});
}
inline vi as_int(vf v) { vi r; __builtin_memcpy(&r, &v, sizeof r); return r; }
inline vf as_float(vi v) { vf r; __builtin_memcpy(&r, &v, sizeof r); return r; }
inline float qnan() { return __builtin_nanf(""); }

// Loads / stores of the first n < W lanes (the tail of a row); other lanes are zero.
inline vf ld_part(const float* p, long n) {
  float t[W] = {};
  __builtin_memcpy(t, p, n * 4);
  return ld(t);
}
inline void st_part(float* p, vf v, long n) {
  float t[W];
  st(t, v);
  __builtin_memcpy(p, t, n * 4);
}

// max / min with numpy semantics: a NaN in either operand gives NaN.
inline vf vmax(vf a, vf b) {
  vf r = a > b ? a : b;
  return ((a != a) | (b != b)) ? splat(qnan()) : r;
}
inline vf vmin(vf a, vf b) {
  vf r = a < b ? a : b;
  return ((a != a) | (b != b)) ? splat(qnan()) : r;
}
inline float smax(float a, float b) { return (a != a || b != b) ? qnan() : (a > b ? a : b); }
inline float smin(float a, float b) { return (a != a || b != b) ? qnan() : (a < b ? a : b); }

// 2^n for integer lanes n in [-126, 127].
inline vf pow2i(vi n) { return as_float((n + 127) << 23); }

// exp(x): Cody-Waite reduction x = n ln2 + r (|r| <= ln2/2), degree-6 minimax polynomial,
// scaling by 2^n in two steps so that subnormal results are exact. Accuracy: within 1 ulp
// of the correctly rounded result over the whole float range (measured against glibc
// expf by the differential test); exp(NaN) = NaN, overflow gives +inf, underflow 0.
// Whether any lane of a compare mask is set (one OR over the mask's 64-bit words).
inline bool any(vi m) {
#if defined(__AVX__)
  typedef long long v4di_ __attribute__((vector_size(32)));
  v4di_ q[W / 8];
  __builtin_memcpy(q, &m, sizeof q);
  v4di_ r = q[0];
  for (int i = 1; i < W / 8; ++i) r |= q[i];
  return !__builtin_ia32_ptestz256(r, r);
#else
  unsigned long long q[W / 2];
  __builtin_memcpy(q, &m, sizeof q);
  unsigned long long r = 0;
  for (int i = 0; i < W / 2; ++i) r |= q[i];
  return r != 0;
#endif
}
// The range clamp is written as min / max (`a < b ? a : b`, one vminps / vmaxps; a NaN lane
// becomes a bound) and the lanes out of range or NaN are fixed up only where the vector has
// one (xc != x): softmax's exp(x - max) never does. The polynomial and the scaling are the
// same for every lane, so the results equal the branch-free form's bit for bit.
inline vf vexp(vf x) {
  const vf hi = splat(88.72283935546875f), lo = splat(-103.972084045410f);
  vf xc = x < hi ? x : hi;
  xc = xc > lo ? xc : lo;
  vf fx = xc * 1.44269504088896341f;
  fx = (fx + 12582912.0f) - 12582912.0f;  // round to nearest
  vf r = xc - fx * 0.693359375f;
  r = r - fx * -2.12194440e-4f;
  vf p = splat(1.9875691500E-4f);
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * (r * r) + r + 1.0f;
  vi n = __builtin_convertvector(fx, vi);
  vi n1 = n >> 1, n2 = n - n1;
  vf y = p * pow2i(n1) * pow2i(n2);
  if (__builtin_expect(!any(xc != x), 1)) return y;
  y = x > hi ? splat(__builtin_inff()) : y;
  y = x < lo ? splat(0.0f) : y;
  return x != x ? x : y;
}

// log(x): x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) by a degree-9 polynomial in
// m - 1, plus e ln2 in two parts. Accuracy: within 2 ulp of the correctly rounded result
// for positive normal and subnormal inputs (measured by the differential test);
// log(0) = -inf, log(x < 0) = -NaN, log(inf) = inf, log(NaN) = NaN.
inline vf vlog(vf x) {
  vi small = x < 1.17549435e-38f;  // subnormal (or zero / negative): scale up by 2^23
  vf xs = small ? x * 8388608.0f : x;
  vi bits = as_int(xs);
  vi e = ((bits >> 23) & 0xff) - 126;
  e = small ? e - 23 : e;
  vf m = as_float((bits & 0x807fffff) | 0x3f000000);  // [0.5, 1)
  vi lt = m < 0.707106781186547524f;
  e = lt ? e - 1 : e;
  vf t = lt ? m + m - 1.0f : m - 1.0f;
  vf z = t * t;
  vf p = splat(7.0376836292E-2f);
  p = p * t - 1.1514610310E-1f;
  p = p * t + 1.1676998740E-1f;
  p = p * t - 1.2420140846E-1f;
  p = p * t + 1.4249322787E-1f;
  p = p * t - 1.6668057665E-1f;
  p = p * t + 2.0000714765E-1f;
  p = p * t - 2.4999993993E-1f;
  p = p * t + 3.3333331174E-1f;
  vf ef = __builtin_convertvector(e, vf);
  vf y = p * t * z;
  y = y + ef * -2.12194440e-4f;
  y = y - 0.5f * z;
  vf r = t + y;
  r = r + ef * 0.693359375f;
  r = x == __builtin_inff() ? x : r;
  r = x == 0.0f ? splat(-__builtin_inff()) : r;
  r = x < 0.0f ? splat(-qnan()) : r;  // glibc's log: the negative default NaN
  return x != x ? x : r;
}

// Horizontal reductions.
inline float hsum(vf v) {
  float s = 0;
  for (int i = 0; i < W; ++i) s += v[i];
  return s;
}
inline float hmax(vf v) {
  float s = v[0];
  for (int i = 1; i < W; ++i) s = smax(s, v[i]);
  return s;
}
inline float hmin(vf v) {
  float s = v[0];
  for (int i = 1; i < W; ++i) s = smin(s, v[i]);
  return s;
}

}  // namespace pto_opt

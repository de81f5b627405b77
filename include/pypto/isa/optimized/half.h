// fp16 and bf16 tiles for the optimised library: W elements are loaded as 16-bit patterns,
// widened to an fp32 vector (exactly), computed on in fp32 and narrowed back with round to
// nearest, ties to even, bit for bit as pypto/base/fp16.h does (the reference library's
// codec): NaN stays NaN (fp16: the canonical sign | 0x7e00; bf16: quieted, payload kept),
// values past the largest finite number become infinity, subnormals round correctly.
// F16C does the fp16 conversions where the target has it; otherwise (and for single
// elements) the scalar code of fp16.h does. bf16 is the upper half of an fp32: widening is
// a shift and narrowing integer arithmetic.
//
// fp32 arithmetic on widened operands rounded once to fp16 / bf16 is the correctly rounded
// result for + - * / and sqrt (24 bits >= 2 * 11 + 2: the double rounding is innocuous),
// which is what the reference computes. exp, log and 1/sqrt are computed to a few fp32
// ulps; `put` below checks that the fp32 result is far enough from a rounding boundary of
// the narrow format and otherwise computes that element as the reference does (in double,
// rounded once), so the results equal the reference's bit for bit.
#pragma once
#include "pypto/base/fp16.h"
#include "pypto/isa/optimized/vec.h"

namespace pto_opt {

// The element types of fp16 and bf16 tiles: distinct types, so that loads and stores overload.
struct f16 { unsigned short bits; };
struct bf16 { unsigned short bits; };

typedef unsigned short vh __attribute__((vector_size(W * 2)));
typedef unsigned short vh_u __attribute__((vector_size(W * 2), aligned(2), may_alias));
typedef unsigned vu __attribute__((vector_size(W * 4)));

inline vh ld_bits(const void* p) { return *reinterpret_cast<const vh_u*>(p); }
inline void st_bits(void* p, vh v) { *reinterpret_cast<vh_u*>(p) = v; }

// ---- bf16 ---------------------------------------------------------------------------------
inline vf widen(vh h, bf16) { return as_float(__builtin_convertvector(h, vi) << 16); }
inline vh narrow(vf v, bf16) {
  const vu u = reinterpret_cast<vu&>(v);
  const vu r = (u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u            // quiet NaN, payload kept
                                               : (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // nearest even
  return __builtin_convertvector(r, vh);
}
inline float widen1(bf16 h) { return pypto::bf16_to_float(h.bits); }
inline unsigned short narrow1(float v, bf16) { return pypto::float_to_bf16(v); }
inline unsigned short narrow_double(double d, bf16) { return pypto::double_to_bf16(d); }

// ---- fp16 ---------------------------------------------------------------------------------
inline float widen1(f16 h) { return pypto::fp16_to_float(h.bits); }
inline unsigned short narrow1(float v, f16) { return pypto::float_to_fp16(v); }
inline unsigned short narrow_double(double d, f16) { return pypto::double_to_fp16(d); }

#if defined(__F16C__) && defined(__AVX__)
#define PTO_OPT_F16_PATH "f16c"
// F16C converts exactly and rounds to nearest even (imm 0), subnormals included. Narrowing
// keeps a NaN's payload where fp16.h gives sign | 0x7e00: NaNs are made canonical first.
// (Widening quiets a signalling NaN, which fp16.h does not; no result shows the difference:
// arithmetic quiets NaNs, narrowing makes them canonical, and the reference's TCVT to fp32
// quiets them too.)
#if defined(__AVX512F__)  // W == 16
typedef short v16hi_ __attribute__((vector_size(32)));
inline vf cvtph(vh h) { return __builtin_ia32_vcvtph2ps512_mask(reinterpret_cast<v16hi_&>(h), vf{}, 0xffff, 4); }
inline vh cvtps(vf v) {
  const v16hi_ r = __builtin_ia32_vcvtps2ph512_mask(v, 0, v16hi_{}, 0xffff);
  return reinterpret_cast<const vh&>(r);
}
#else  // W == 8
typedef short v8hi_ __attribute__((vector_size(16)));
inline vf cvtph(vh h) { return __builtin_ia32_vcvtph2ps256(reinterpret_cast<v8hi_&>(h)); }
inline vh cvtps(vf v) {
  const v8hi_ r = __builtin_ia32_vcvtps2ph256(v, 0);
  return reinterpret_cast<const vh&>(r);
}
#endif
inline vf widen(vh h, f16) { return cvtph(h); }
inline vh narrow(vf v, f16) {
  const vu u = reinterpret_cast<vu&>(v);
  const vu canonical = (u & 0x80000000u) | 0x7fc00000u;  // narrows to sign | 0x7e00
  return cvtps(v != v ? reinterpret_cast<const vf&>(canonical) : v);
}
#else
#define PTO_OPT_F16_PATH "portable"
// Portable: fp16.h element by element.
inline vf widen(vh h, f16) {
  vf r;
  for (int i = 0; i < W; ++i) r[i] = pypto::fp16_to_float(h[i]);
  return r;
}
inline vh narrow(vf v, f16) {
  vh r;
  for (int i = 0; i < W; ++i) r[i] = pypto::float_to_fp16(v[i]);
  return r;
}
#endif

// ---- loads and stores (the fp32 ones are in vec.h) -----------------------------------------
template <class H> inline vf ldh(const H* p) { return widen(ld_bits(p), H{}); }
template <class H> inline vf ldh_part(const H* p, long n) {
  unsigned short t[W] = {};
  __builtin_memcpy(t, p, n * 2);
  return widen(ld_bits(t), H{});
}
template <class H> inline void sth_part(H* p, vh v, long n) {
  unsigned short t[W];
  st_bits(t, v);
  __builtin_memcpy(p, t, n * 2);
}
inline vf ld(const f16* p) { return ldh(p); }
inline vf ld(const bf16* p) { return ldh(p); }
inline vf ld_part(const f16* p, long n) { return ldh_part(p, n); }
inline vf ld_part(const bf16* p, long n) { return ldh_part(p, n); }
inline void st(f16* p, vf v) { st_bits(p, narrow(v, f16{})); }
inline void st(bf16* p, vf v) { st_bits(p, narrow(v, bf16{})); }
inline void st_part(f16* p, vf v, long n) { sth_part(p, narrow(v, f16{}), n); }
inline void st_part(bf16* p, vf v, long n) { sth_part(p, narrow(v, bf16{}), n); }

// Narrowing with ties away from zero (TCVT mode "round"): the nearest-even result, moved one
// step up in magnitude where v lies exactly halfway between two neighbours and nearest-even
// went down. The distances are exact in fp32 (the values are within an ulp of each other,
// or one is zero); NaN and infinity compare false and keep the nearest-even result, and a
// step up from the largest finite value (to infinity) is never a tie.
template <class H> inline vh narrow_away(vf v, H h) {
  const vh ne = narrow(v, h);
  const vh up = ne + static_cast<unsigned short>(1);
  const vf av = as_float(as_int(v) & 0x7fffffff), aw = as_float(as_int(widen(ne, h)) & 0x7fffffff),
           au = as_float(as_int(widen(up, h)) & 0x7fffffff);
  const vi tie = (aw < av) & ((av - aw) == (au - av));
  const vh m = __builtin_convertvector(tie, vh);  // -1 -> 0xffff
  return (ne & ~m) | (up & m);
}

// One element, as fp32 (widening is exact) and back (rounded once).
inline float ld1(const float* p) { return *p; }
inline float ld1(const f16* p) { return widen1(*p); }
inline float ld1(const bf16* p) { return widen1(*p); }
inline void st1(float* p, float v) { *p = v; }
inline void st1(f16* p, float v) { p->bits = narrow1(v, f16{}); }
inline void st1(bf16* p, float v) { p->bits = narrow1(v, bf16{}); }

// A scalar operand of an fp16 / bf16 instruction: rounded once to the element type (the
// reference's Splat), as fp32.
template <class T> inline float scalar_of(double s);
template <> inline float scalar_of<float>(double s) { return static_cast<float>(s); }
template <> inline float scalar_of<f16>(double s) { return widen1(f16{narrow_double(s, f16{})}); }
template <> inline float scalar_of<bf16>(double s) { return widen1(bf16{narrow_double(s, bf16{})}); }

// NaN lanes made quiet (the reference's TCVT to fp32 goes through double, which quiets them).
inline vf quiet(vf v) { return v != v ? as_float(as_int(v) | 0x400000) : v; }

// ---- results of an operation ---------------------------------------------------------------
// Ops computed in fp32 to within a few ulps (not correctly rounded) have a static `ref`
// giving the reference's double result for one element.
template <class Op, class = void> struct has_ref { static constexpr bool value = false; };
template <class Op> struct has_ref<Op, decltype((void)&Op::ref)> { static constexpr bool value = true; };

// op(a...) narrowed to H. For ops with `ref`: an fp32 result y within kSlack ulps of the
// computed one rounds the same way unless y lies near a rounding boundary of H; there the
// element is computed as the reference computes it. kSlack is well above the error of
// vexp / vlog / 1/sqrt (at most 2 ulps).
constexpr int kSlack = 8;
// The lanes of y whose narrowing could change within kSlack ulps: narrowing y - kSlack and
// y + kSlack ulps (the general test).
template <class H>
inline vi unsure_lanes(vf y, vh h, H) {
  const vh up = narrow(as_float(as_int(y) + kSlack), H{}), down = narrow(as_float(as_int(y) - kSlack), H{});
  return __builtin_convertvector((up != h) | (down != h), vi);
}
// The same test on the bits of y where the rounding boundaries of H are fixed bit patterns:
// fp16 results of magnitude in [2^-14, 65504) (normal fp16; the fp32 bits below the 10
// mantissa bits, 13 of them, are halfway at 0x1000) and bf16 results of finite y (16 low
// bits, halfway at 0x8000). Within a binade the narrowing is monotonic and changes only
// where those low bits pass the halfway pattern, so a lane whose low bits lie more than
// kSlack from it narrows the same at y - kSlack and y + kSlack ulps (across a binade the low
// bits run on from 0 and the result does not change either). `special`: the lanes outside
// that range, which take the general test (the whole vector does, where any lane is one).
inline vi low_bits_near_half(vf y, f16, vi& special) {
  const vi m = as_int(y) & 0x7fffffff;
  special = (m < 0x38800000) | (m >= 0x477fe000);
  return ((m & 0x1fff) >= 0x1000 - kSlack) & ((m & 0x1fff) <= 0x1000 + kSlack);
}
inline vi low_bits_near_half(vf y, bf16, vi& special) {
  const vi m = as_int(y) & 0x7fffffff;
  special = m >= 0x7f800000;
  return ((m & 0xffff) >= 0x8000 - kSlack) & ((m & 0xffff) <= 0x8000 + kSlack);
}
template <class H, class Op, class... A>
inline vh narrow_op(Op op, A... a) {
  const vf y = op(a...);
  vh h = narrow(y, H{});
  if constexpr (has_ref<Op>::value) {
    vi special;
    vi unsure = low_bits_near_half(y, H{}, special);
    if (__builtin_expect(any(special), 0)) unsure = unsure_lanes(y, h, H{});
    if (__builtin_expect(any(unsure), 0))
      for (int i = 0; i < W; ++i)
        if (unsure[i]) h[i] = narrow_double(Op::ref(a[i]...), H{});
  }
  return h;
}

// d[0, W) (or d[0, n)) = op(a...), stored as d's element type.
template <class Op, class... A> inline void put(float* d, Op op, A... a) { st(d, op(a...)); }
template <class Op, class... A> inline void put_part(float* d, long n, Op op, A... a) { st_part(d, op(a...), n); }
template <class Op, class... A> inline void put(f16* d, Op op, A... a) { st_bits(d, narrow_op<f16>(op, a...)); }
template <class Op, class... A> inline void put(bf16* d, Op op, A... a) { st_bits(d, narrow_op<bf16>(op, a...)); }
template <class Op, class... A> inline void put_part(f16* d, long n, Op op, A... a) {
  sth_part(d, narrow_op<f16>(op, a...), n);
}
template <class Op, class... A> inline void put_part(bf16* d, long n, Op op, A... a) {
  sth_part(d, narrow_op<bf16>(op, a...), n);
}

// ---- transposes ------------------------------------------------------------------------------
// m[i] = row i of a W x W block becomes m[k] = column k: log2(W) rounds, each swapping the
// off-diagonal s x s blocks of every 2s x 2s block. The shuffle indices are compile-time
// tables (built by a constexpr constructor), so each round is plain two-source permutes.
struct TransposeIdx {
  int lo[5][W], hi[5][W];
  constexpr TransposeIdx() : lo(), hi() {
    int l = 0;
    for (int s = W / 2; s >= 1; s /= 2, ++l)
      for (int k = 0; k < W; ++k) {
        lo[l][k] = (k & s) ? W + k - s : k;
        hi[l][k] = (k & s) ? W + k : k + s;
      }
  }
};
inline constexpr TransposeIdx kTransposeIdx{};

inline void transpose(vf* m) {
  int l = 0;
#pragma GCC unroll 8
  for (int s = W / 2; s >= 1; s /= 2, ++l) {
    vi lo, hi;
    __builtin_memcpy(&lo, kTransposeIdx.lo[l], sizeof lo);
    __builtin_memcpy(&hi, kTransposeIdx.hi[l], sizeof hi);
#pragma GCC unroll 16
    for (int i = 0; i < W; ++i)
      if (!(i & s)) {
        const vf a = m[i], b = m[i + s];
        m[i] = __builtin_shuffle(a, b, lo);
        m[i + s] = __builtin_shuffle(a, b, hi);
      }
  }
}

}  // namespace pto_opt

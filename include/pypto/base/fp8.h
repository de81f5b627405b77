// The 8-bit float formats FP8E4M3FN (bias 7, 3 mantissa bits, no infinity, NaN = S.1111.111,
// largest 448) and FP8E5M2 (bias 15, 2 mantissa bits, IEEE-like: inf and NaNs): exact
// decoding and rounding from a float under the TCVT round modes. Out of range magnitudes
// (and infinities) become NaN in FP8E4M3FN and infinity in FP8E5M2 under the nearest modes
// and the modes away from zero, as ml_dtypes converts; trunc (and floor/ceil towards zero)
// keep the largest finite value.
#pragma once
#include <cmath>
#include <cstdint>

namespace pypto {

struct Fp8Format {
  int mant_bits, bias;
  bool finite_only;  // E4M3FN: no infinity
  uint8_t max_bits() const { return finite_only ? 0x7E : 0x7B; }
  uint8_t overflow_bits() const { return finite_only ? 0x7F : 0x7C; }  // NaN / inf
  uint8_t nan_bits() const { return finite_only ? 0x7F : 0x7E; }
};

inline constexpr Fp8Format kFp8E4M3FN{3, 7, true};
inline constexpr Fp8Format kFp8E5M2{2, 15, false};

inline double fp8_to_double(uint8_t b, const Fp8Format& f) {
  const bool neg = b & 0x80;
  const int e = (b & 0x7F) >> f.mant_bits, m = b & ((1 << f.mant_bits) - 1);
  const int emax = (1 << (7 - f.mant_bits)) - 1;
  double v;
  if (f.finite_only && e == emax && m == (1 << f.mant_bits) - 1) return std::nan("");
  if (!f.finite_only && e == emax) {
    if (m != 0) return std::nan("");
    v = INFINITY;
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mant_bits);
  } else {
    v = std::ldexp(static_cast<double>((1 << f.mant_bits) | m), e - f.bias - f.mant_bits);
  }
  return neg ? -v : v;
}

// Round modes as in TCVT: 0 nearest even (none / rint), 1 nearest ties away (round), 2 floor,
// 3 ceil, 4 trunc, 5 odd.
inline uint8_t double_to_fp8(double x, const Fp8Format& f, int mode = 0) {
  if (std::isnan(x)) return f.nan_bits();
  const bool neg = std::signbit(x);
  const uint8_t sign = neg ? 0x80 : 0;
  const double ax = std::fabs(x);
  const uint8_t top = f.max_bits();
  // The two neighbours lo <= ax <= hi among the non-negative finite values (bits are
  // monotonic in magnitude); hi = top + 1 stands for "past the largest" (overflow).
  int lo = 0;
  {
    int a = 0, b = top;  // largest bits with value <= ax
    if (ax >= fp8_to_double(top, f)) a = top;
    else
      while (a < b) {
        const int mid = (a + b + 1) / 2;
        if (fp8_to_double(static_cast<uint8_t>(mid), f) <= ax) a = mid;
        else b = mid - 1;
      }
    lo = a;
  }
  const double lo_v = fp8_to_double(static_cast<uint8_t>(lo), f);
  if (lo_v == ax) return static_cast<uint8_t>(lo | sign);
  const int hi = lo + 1;
  // Value of hi; past the largest finite value: one more step of the top binade.
  const double hi_v = hi > top ? lo_v + std::ldexp(1.0, (top >> f.mant_bits) - f.bias - f.mant_bits)
                               : fp8_to_double(static_cast<uint8_t>(hi), f);
  int pick;
  switch (mode) {
    case 1: pick = (ax - lo_v < hi_v - ax) ? lo : hi; break;          // ties away from zero
    case 2: pick = neg ? hi : lo; break;                              // floor
    case 3: pick = neg ? lo : hi; break;                              // ceil
    case 4: pick = lo; break;                                         // trunc
    case 5: pick = (lo & 1) ? lo : hi; break;                         // odd
    default: {                                                         // nearest even
      const double dl = ax - lo_v, dh = hi_v - ax;
      pick = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
    }
  }
  if (pick > top) return static_cast<uint8_t>(f.overflow_bits() | sign);
  return static_cast<uint8_t>(pick | sign);
}

}  // namespace pypto

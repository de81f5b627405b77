// Scalar pl.cast(x, dtype): the one conversion rule of scalar values, used by constant
// folding (ir::CastExpr::make), the scalar machine of both engines and of the host
// (kScalarCast) and the native engine's generated C++. Header-only and free of the rest of
// the project (the generated code includes it). docs/language.md "Scalar pl.cast".
//
//   to an integer dtype  from an integer: wraps to the target's width (two's complement);
//                        from a float: truncates toward zero and saturates at the target's
//                        range, NaN gives 0 (the scalar unit's conversion, as C's and MLIR's
//                        fptosi, and pypto::float_to_int's rule for INT64: the mode
//                        "round" of a scalar cast names no TCVT rounding);
//   to BOOL              1 if the value is non-zero, else 0;
//   to FP32/FP16/BF16    the value rounded to the target's precision (nearest, ties to even:
//                        the scalar unit's conversion), an integer converted first to double.
// INDEX and INT64 are 64-bit signed; UINT64 values live in 64-bit signed registers (the
// value modulo 2^64), and a float saturates at [0, 2^63 - 1] there.
#pragma once
// No <cmath>: generated kernels include this header, and <cmath> alone costs ~150 ms of
// parsing per kernel compile (docs/performance.md "Compile time").
#include <cstdint>

#include "pypto/base/fp16.h"

namespace pypto {

// The target of a scalar cast, as the generated code passes it (a plain integer constant).
enum ScalarCastTarget : int {
  kCastBool = 0, kCastI8, kCastI16, kCastI32, kCastI64, kCastU8, kCastU16, kCastU32, kCastU64,
  kCastF16, kCastBF16, kCastF32
};

inline bool scalar_cast_to_float(int target) { return target >= kCastF16; }

// Integer width and signedness of an integer target (bool: 1 bit, unsigned).
inline int scalar_cast_bits(int target) {
  switch (target) {
    case kCastI8: case kCastU8: return 8;
    case kCastI16: case kCastU16: return 16;
    case kCastI32: case kCastU32: return 32;
    default: return 64;
  }
}
inline bool scalar_cast_signed(int target) { return target >= kCastI8 && target <= kCastI64; }

inline int64_t scalar_cast_int(int64_t v, int target) {
  if (target == kCastBool) return v != 0 ? 1 : 0;
  const int bits = scalar_cast_bits(target);
  if (bits == 64) return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1, u = static_cast<uint64_t>(v) & mask;
  if (scalar_cast_signed(target) && (u >> (bits - 1)))
    return static_cast<int64_t>(u | ~mask);  // sign-extend
  return static_cast<int64_t>(u);
}

// A float scalar to an integer target: truncated toward zero, saturated, NaN as 0.
inline int64_t scalar_cast_float_to_int(double v, int target) {
  if (target == kCastBool) return v != 0 ? 1 : 0;  // NaN != 0: true, as in C and Python
  if (v != v) return 0;
  const double r = __builtin_trunc(v);
  const int bits = scalar_cast_bits(target);
  int64_t lo = 0, hi = INT64_MAX;  // UINT64 is held in a signed register: [0, 2^63 - 1]
  if (scalar_cast_signed(target)) {
    lo = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
    hi = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  } else if (bits < 64) {
    hi = (int64_t{1} << bits) - 1;
  }
  if (r >= 9223372036854775808.0 || r > static_cast<double>(hi)) return hi;
  if (r < static_cast<double>(lo)) return lo;
  return static_cast<int64_t>(r);
}

// A double rounded to the precision of a float target (FP32 / FP16 / BF16).
inline double scalar_cast_float(double v, int target) {
  const float f = static_cast<float>(v);
  if (target == kCastF16) return fp16_to_float(float_to_fp16(f));
  if (target == kCastBF16) return bf16_to_float(float_to_bf16(f));
  return f;
}

}  // namespace pypto

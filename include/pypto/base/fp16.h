// Half-precision formats of the chip: IEEE fp16 and bfloat16 as 16-bit patterns, converted
// to and from float. Narrowing rounds to nearest, ties to even (the hardware default);
// NaN stays NaN and values past the largest finite number become infinity.
#pragma once
#include <cstdint>
#include <cstring>

namespace pypto {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// bfloat16 is the upper half of a float: widening is a shift.
inline float bf16_to_float(uint16_t h) { return float_from_bits(static_cast<uint32_t>(h) << 16); }

inline uint16_t float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;  // round to nearest, ties to even; overflow carries into infinity
  return static_cast<uint16_t>(u >> 16);
}

inline float fp16_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return float_from_bits(sign | 0x7f800000u | (man << 13));  // inf / NaN
  if (exp == 0) {
    // zero or subnormal: man * 2^-24, exact in float
    float v = static_cast<float>(man) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return float_from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t float_to_fp16(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504 (or is infinite)
  if (a < 0x38800000u) {
    // result is subnormal (or zero): value / 2^-24 rounded to an integer, ties to even
    if (a < 0x33000000u) return sign;  // below half the smallest subnormal
    uint32_t exp = a >> 23;
    uint32_t man = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp;  // bits dropped so that the unit is 2^-24
    uint32_t q = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return sign | static_cast<uint16_t>(q);
  }
  // normal: rebias the exponent and round the 13 dropped mantissa bits
  uint32_t r = a - 0x38000000u;  // exponent 127 -> 15
  uint32_t lsb = (r >> 13) & 1u;
  r += 0xfffu + lsb;
  return sign | static_cast<uint16_t>(r >> 13);
}

// d rounded to float with round-to-odd: an exact d stays, any other d takes whichever of
// its two float neighbours has an odd last bit (past the float range: the largest finite
// float). Rounding that float to a format of at most 22 significant bits (fp16: 11, bf16: 8)
// gives d correctly rounded to the format: round-to-odd keeps the sticky information that
// rounding d to nearest float first would lose (d -> float -> fp16 otherwise rounds twice).
inline float double_to_float_odd(double d) {
  const float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || d != d) return f;
  const uint32_t u = float_bits(f);
  if (u & 1u) return f;
  const double ad = d < 0 ? -d : d, af = f < 0 ? -static_cast<double>(f) : static_cast<double>(f);
  return float_from_bits(ad > af ? u + 1u : u - 1u);  // the neighbour on d's side
}

// d correctly rounded (nearest, ties to even) to fp16 / bf16 bits.
inline uint16_t double_to_fp16(double d) { return float_to_fp16(double_to_float_odd(d)); }
inline uint16_t double_to_bf16(double d) { return float_to_bf16(double_to_float_odd(d)); }

}  // namespace pypto

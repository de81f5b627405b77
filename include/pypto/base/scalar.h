// Scalar values of the engines' scalar units and instruction operands, and the one rule that
// turns a float scalar into an integer one. Base layer: used by the ISA's reference library
// and by every engine.
#pragma once
#include <cstdint>

namespace pypto {

// A float scalar as an integer scalar: truncated toward zero, saturated at the int64 range,
// NaN as 0 (a plain C++ cast is undefined there). The native engine's generated code uses
// the same rule (pto_opt::to_int in isa/optimized/abi.h).
inline int64_t float_to_int(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}

// An integer or floating-point scalar (a register value or an immediate).
struct ScalarValue {
  bool is_float = false;
  int64_t i = 0;
  double f = 0.0;
  static ScalarValue of_int(int64_t v) { return {false, v, static_cast<double>(v)}; }
  static ScalarValue of_float(double v) { return {true, float_to_int(v), v}; }
  double as_double() const { return is_float ? f : static_cast<double>(i); }
  int64_t as_int() const { return is_float ? float_to_int(f) : i; }
};

}  // namespace pypto

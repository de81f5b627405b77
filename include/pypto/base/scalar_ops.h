// Scalar arithmetic of the scalar unit: the one definition of integer and float floor
// division and modulo, integer overflow and the results of a zero divisor, used by constant
// folding (passes/simplify.cpp), the scalar machine of both engines and of the host
// (engines/scalar_machine.cpp), the native engine's generated C++ (through
// isa/optimized/abi.h), the @pto.kernel lane API (kernel/lower_lanes.cpp, warp_sim.cpp); the
// torch script's prelude (codegen/torch_codegen.cpp) states the same rules in Python.
// Header-only, without includes (generated kernels include it). docs/isa.md "Scalar semantics".
//
//   a // b, a % b (integers)  Python's: the quotient is rounded toward -inf and the remainder
//                             has the divisor's sign (-7 // 2 == -4, -7 % 2 == 1, 7 % -2 == -1).
//   overflow                  integers are 64-bit: a + b, a - b, a * b whose result does not
//                             fit (-2**63 .. 2**63 - 1) is an error at the user's line at run
//                             time on every engine (offsets and indices are computed this way;
//                             a wrapped offset would pass the bounds check), and is left unfolded
//                             by constant folding so the run reports it where it runs. Division
//                             keeps two's complement: INT64_MIN // -1 == INT64_MIN,
//                             INT64_MIN % -1 == 0, -INT64_MIN == INT64_MIN.
//   integer b == 0            a compile-time constant divisor 0 is a compile error at the
//                             user's line (as Python raises ZeroDivisionError); at run time
//                             every engine raises "integer division by zero" at the line. The
//                             functions below return 0 for it (callers check first).
//   x // y, x % y (floats)    Python's (CPython's float_divmod): x % y has y's sign (a zero
//                             remainder is +0.0 or -0.0 with y's sign), x // y == (x - x % y) / y
//                             rounded to the nearest integer, so 1.0 // 0.1 == 9.0 (not
//                             floor(1.0 / 0.1) == 10.0); -1.0 // inf == -1.0, -1.0 % inf == inf,
//                             inf // 1.0 and inf % 1.0 are NaN, NaN propagates.
//   float y == 0.0            at run time IEEE results, no error (a device cannot raise mid-run;
//                             floats keep going as TDIV does): x // 0.0 == floor(x / 0.0) (+-inf,
//                             NaN for x == 0 or NaN), x % 0.0 == NaN, x / 0.0 == +-inf. A
//                             compile-time constant 0.0 divisor is a compile error (Python's rule).
#pragma once

namespace pypto::scalar {

// Two's-complement wrap-around integer arithmetic (defined behaviour, unlike signed overflow).
inline long long wrap_add(long long a, long long b) { return (long long)((unsigned long long)a + (unsigned long long)b); }
inline long long wrap_sub(long long a, long long b) { return (long long)((unsigned long long)a - (unsigned long long)b); }
inline long long wrap_mul(long long a, long long b) { return (long long)((unsigned long long)a * (unsigned long long)b); }
inline long long wrap_neg(long long a) { return (long long)(0ULL - (unsigned long long)a); }

// a + b, a - b, a * b into *out; true when the exact result does not fit in 64 bits.
inline bool add_overflows(long long a, long long b, long long* out) { return __builtin_add_overflow(a, b, out); }
inline bool sub_overflows(long long a, long long b, long long* out) { return __builtin_sub_overflow(a, b, out); }
inline bool mul_overflows(long long a, long long b, long long* out) { return __builtin_mul_overflow(a, b, out); }

// Integer floor division and modulo (Python's rounding, wrapping on INT64_MIN // -1).
inline long long int_floor_div(long long a, long long b) {
  if (b == 0) return 0;            // callers raise first (see above)
  if (b == -1) return wrap_neg(a);  // INT64_MIN / -1 traps in C
  const long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline long long int_floor_mod(long long a, long long b) {
  if (b == 0 || b == -1) return 0;  // INT64_MIN % -1 traps in C
  const long long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Float modulo with the divisor's sign (Python's x % y); x % 0.0 is NaN.
inline double float_mod(double x, double y) {
  if (y == 0) return __builtin_nan("");
  double m = __builtin_fmod(x, y);
  if (m != 0) {
    if ((y < 0) != (m < 0)) m += y;
  } else {
    m = __builtin_copysign(0.0, y);
  }
  return m;
}

// Float floor division (Python's x // y); x // 0.0 is floor(x / 0.0).
inline double float_floor_div(double x, double y) {
  if (y == 0) return __builtin_floor(x / y);
  const double m = __builtin_fmod(x, y);
  double div = (x - m) / y;
  if (m != 0 && ((y < 0) != (m < 0))) div -= 1.0;
  if (div != 0) {
    double f = __builtin_floor(div);
    if (div - f > 0.5) f += 1.0;
    return f;
  }
  return __builtin_copysign(0.0, x / y);
}

}  // namespace pypto::scalar

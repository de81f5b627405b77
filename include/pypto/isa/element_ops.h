// The arithmetic of one element pair, shared by the tile-tile, tile-scalar and broadcast
// forms of an instruction (TADD, TADDS and TROWEXPANDADD all add the same way). Each op is
// called with two floats (float dtypes: float arithmetic, matching numpy's float32) or two
// int64s (integer dtypes: wrapped to the element width on store).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "pypto/isa/reference.h"

namespace pypto::isa::element_ops {

template <typename T>
constexpr bool is_int = std::is_integral_v<T>;

// Integer arithmetic wraps (two's complement, like numpy): computed on the unsigned type so
// that overflow is defined behaviour.
template <typename T, typename Op>
T wrapping(T a, T b, Op op) {
  if constexpr (is_int<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(op(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));  // modular in C++20
  } else {
    return op(a, b);
  }
}
struct Add { template <typename T> T operator()(T a, T b) const { return wrapping(a, b, [](auto x, auto y) { return static_cast<decltype(x)>(x + y); }); } };
struct Sub { template <typename T> T operator()(T a, T b) const { return wrapping(a, b, [](auto x, auto y) { return static_cast<decltype(x)>(x - y); }); } };
struct Mul { template <typename T> T operator()(T a, T b) const { return wrapping(a, b, [](auto x, auto y) { return static_cast<decltype(x)>(x * y); }); } };

// Maximum / minimum; a NaN operand gives NaN (numpy.maximum / numpy.minimum).
struct Max {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (!is_int<T>) if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return a > b ? a : b;
  }
};
struct Min {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (!is_int<T>) if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return a < b ? a : b;
  }
};

// Division: floats follow IEEE; integers truncate toward zero and reject a zero divisor.
struct Div {
  const TileCall& call;
  template <typename T> T operator()(T a, T b) const {
    if constexpr (is_int<T>) {
      if (b == 0) call.fail_runtime("integer division by zero", "mask or offset the zero divisors first");
    }
    return a / b;
  }
};

// Remainder with the sign of the divisor (numpy.remainder, Python's %); a zero remainder
// is a zero of the divisor's sign (-4 mod 2 = +0, 4 mod -2 = -0).
struct Rem {
  const TileCall& call;
  template <typename T> T operator()(T a, T b) const {
    if constexpr (is_int<T>) {
      if (b == 0) call.fail_runtime("integer remainder by zero", "mask or offset the zero divisors first");
      T r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      T r = std::fmod(a, b);
      if (r == 0) return std::copysign(T(0), b);
      if ((r < 0) != (b < 0)) r += b;
      return r;
    }
  }
};

// Remainder with the sign of the dividend (numpy.fmod, C's fmod / %).
struct FMod {
  const TileCall& call;
  template <typename T> T operator()(T a, T b) const {
    if constexpr (is_int<T>) {
      if (b == 0) call.fail_runtime("integer remainder by zero", "mask or offset the zero divisors first");
      return a % b;
    } else {
      return std::fmod(a, b);
    }
  }
};

// Leaky ReLU / PReLU: a where positive, a * slope elsewhere.
struct Leaky { template <typename T> T operator()(T a, T slope) const { return a > 0 ? a : a * slope; } };

// Bitwise (integer dtypes only; the instruction table rejects floats before we get here).
struct And { int64_t operator()(int64_t a, int64_t b) const { return a & b; } };
struct Or { int64_t operator()(int64_t a, int64_t b) const { return a | b; } };
struct Xor { int64_t operator()(int64_t a, int64_t b) const { return a ^ b; } };
// Shifts by b bits; shifting by 64 or more (or a negative count) gives 0 (left) or the sign (right).
struct Shl {
  int64_t operator()(int64_t a, int64_t b) const {
    return (b < 0 || b >= 64) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
  }
};
struct Shr {
  int64_t operator()(int64_t a, int64_t b) const { return (b < 0 || b >= 64) ? (a < 0 ? -1 : 0) : a >> b; }
};

// dst[r, c] = op(x(r, c), y(r, c)) over dst's valid region, in float or int64 by dst's dtype.
// `x` and `y` are callables (TileRef element, broadcast element or scalar) returning the
// operand for a given (r, c) as float or int64 on request.
template <typename X, typename Y, typename Op>
void map_pairs(const TileRef& dst, X x, Y y, Op op) {
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c)
      if (dst.is_float()) dst.set_f(r, c, op(x.f(r, c), y.f(r, c)));
      else dst.set_i(r, c, op(x.i(r, c), y.i(r, c)));
}

// Integer-only version of map_pairs for bitwise ops.
template <typename X, typename Y, typename Op>
void map_int_pairs(const TileRef& dst, X x, Y y, Op op) {
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) dst.set_i(r, c, op(x.i(r, c), y.i(r, c)));
}

// Operand sources for map_pairs.
struct Elem {  // tile element (r, c)
  const TileRef& t;
  float f(int64_t r, int64_t c) const { return t.get_f(r, c); }
  int64_t i(int64_t r, int64_t c) const { return t.get_i(r, c); }
};
struct RowBcast {  // tile element (r, 0): a rows x 1 column broadcast across columns
  const TileRef& t;
  float f(int64_t r, int64_t) const { return t.get_f(r, 0); }
  int64_t i(int64_t r, int64_t) const { return t.get_i(r, 0); }
};
struct ColBcast {  // tile element (0, c): a 1 x cols row broadcast down rows
  const TileRef& t;
  float f(int64_t, int64_t c) const { return t.get_f(0, c); }
  int64_t i(int64_t, int64_t c) const { return t.get_i(0, c); }
};
// A scalar everywhere. The scalar of a float instruction has the instruction's element type
// (PTO's `typename Tile::DType scalar`): it is rounded once to that dtype, so that e.g. an
// fp16 TADDS computes round16(a + round16(s)), the correctly rounded sum of two fp16 values.
struct Splat {
  float fv;
  int64_t iv;
  Splat(ScalarValue s, DataType t) : fv(0.0f), iv(s.as_int()) {
    if (dtype_is_float(t)) {
      uint8_t bytes[8];
      write_double(bytes, t, s.as_double());
      fv = read_float(bytes, t);
    }
  }
  float f(int64_t, int64_t) const { return fv; }
  int64_t i(int64_t, int64_t) const { return iv; }
};

// Applies `update` (which rewrites an element's bytes in place) to the `size`-byte element at p
// as one atomic step: a compare-and-swap loop over its bytes. Concurrent adds into one tensor
// (pl.store(..., atomic=pl.AtomicType.Add), a pld window's atomic remote store) never lose one.
template <typename F>
void atomic_update(uint8_t* p, int64_t size, F&& update) {
  auto loop = [&](auto* word) {
    using W = std::remove_pointer_t<decltype(word)>;
    W old = __atomic_load_n(word, __ATOMIC_RELAXED);
    for (;;) {
      W next = old;
      update(reinterpret_cast<uint8_t*>(&next));
      if (__atomic_compare_exchange_n(word, &old, next, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) return;
    }
  };
  switch (size) {
    case 1: loop(reinterpret_cast<uint8_t*>(p)); break;
    case 2: loop(reinterpret_cast<uint16_t*>(p)); break;
    case 4: loop(reinterpret_cast<uint32_t*>(p)); break;
    default: loop(reinterpret_cast<uint64_t*>(p)); break;
  }
}

}  // namespace pypto::isa::element_ops

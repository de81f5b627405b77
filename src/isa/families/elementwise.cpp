// The elementwise instruction families: tile (op) tile, tile (op) scalar and unary
// functions over the destination's valid region. Each record holds the whole instruction:
// operands, dtypes, memories (Vec: the vector unit), cost, summary, its reference function
// (the ISA's arithmetic, run by the sim engine) and the native engine's fast path.
#include <cmath>

#include "families.h"
#include "pypto/isa/element_ops.h"

namespace pypto::isa::families {

namespace {
using namespace element_ops;

// dst = op(a, b) for tiles a, b; IntOnly ops (bitwise, shifts) see integer values.
template <bool IntOnly, typename Op>
ReferenceFn tile_tile_with(Op op) {
  return [op](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    call.require_covers(call.in_tile(0), dst.valid_rows, dst.valid_cols);
    call.require_covers(call.in_tile(1), dst.valid_rows, dst.valid_cols);
    if constexpr (IntOnly)
      map_int_pairs(dst, Elem{call.in_tile(0)}, Elem{call.in_tile(1)}, op);
    else
      map_pairs(dst, Elem{call.in_tile(0)}, Elem{call.in_tile(1)}, op);
  };
}
template <typename Op>
ReferenceFn tile_tile(Op op) { return tile_tile_with<false>(op); }
template <typename Op>
ReferenceFn tile_tile_int(Op op) { return tile_tile_with<true>(op); }

// Division-like ops need the call to report a zero integer divisor.
template <typename Op>
ReferenceFn tile_tile_checked() {
  return [](const TileCall& call) { tile_tile(Op{call})(call); };
}

// dst = op(a, s) for a tile a and a scalar s.
template <typename Op>
ReferenceFn tile_scalar(Op op) {
  return [op](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    call.require_covers(call.in_tile(0), dst.valid_rows, dst.valid_cols);
    map_pairs(dst, Elem{call.in_tile(0)}, Splat{call.ins.at(1).scalar, dst.dtype}, op);
  };
}

template <typename Op>
ReferenceFn tile_scalar_checked() {
  return [](const TileCall& call) { tile_scalar(Op{call})(call); };
}

// dst = f(a) for float dtypes: f computed in double, the result rounded once to dst's
// dtype. sqrt and 1/x are then correctly rounded (double has more than twice the bits of
// fp32 plus two); exp, log and 1/sqrt are within an ulp of the correctly rounded value
// and equal to it unless the exact result lies within 2^-29 ulp of a rounding boundary.
template <typename F>
ReferenceFn unary_float(F f) {
  return [f](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& a = call.in_tile(0);
    call.require_covers(a, dst.valid_rows, dst.valid_cols);
    for (int64_t r = 0; r < dst.valid_rows; ++r)
      for (int64_t c = 0; c < dst.valid_cols; ++c) dst.set_d(r, c, f(static_cast<double>(a.get_f(r, c))));
  };
}

// TPOW: dst = a ** b computed in double (std::pow), rounded once to dst's dtype.
void tpow(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& a = call.in_tile(0);
  const TileRef& b = call.in_tile(1);
  call.require_covers(a, dst.valid_rows, dst.valid_cols);
  call.require_covers(b, dst.valid_rows, dst.valid_cols);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c)
      dst.set_d(r, c, std::pow(static_cast<double>(a.get_f(r, c)), static_cast<double>(b.get_f(r, c))));
}

// dst = f(a) in float or int64 by dst's dtype (f is a generic lambda).
template <typename F>
ReferenceFn unary_any(F f) {
  return [f](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& a = call.in_tile(0);
    call.require_covers(a, dst.valid_rows, dst.valid_cols);
    for (int64_t r = 0; r < dst.valid_rows; ++r)
      for (int64_t c = 0; c < dst.valid_cols; ++c)
        if (dst.is_float()) dst.set_f(r, c, f(a.get_f(r, c)));
        else dst.set_i(r, c, f(a.get_i(r, c)));
  };
}

// TAXPY: dst = dst + s * src.
void taxpy(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  call.require_covers(src, dst.valid_rows, dst.valid_cols);
  const Splat s{call.ins.at(1).scalar, dst.dtype};
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c)
      if (dst.is_float()) dst.set_f(r, c, dst.get_f(r, c) + s.f(r, c) * src.get_f(r, c));
      else dst.set_i(r, c, dst.get_i(r, c) + s.i(r, c) * src.get_i(r, c));
}

// TADDC / TSUBC: dst = a (+|-) b + c; TMULADDDST: dst = a * b + dst.
template <typename Op>
ReferenceFn ternary(Op op) {
  return [op](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& a = call.in_tile(0);
    const TileRef& b = call.in_tile(1);
    const TileRef& c = call.ins.size() > 2 ? call.in_tile(2) : dst;
    for (const TileRef* t : {&a, &b, &c}) call.require_covers(*t, dst.valid_rows, dst.valid_cols);
    for (int64_t r = 0; r < dst.valid_rows; ++r)
      for (int64_t k = 0; k < dst.valid_cols; ++k)
        if (dst.is_float()) dst.set_f(r, k, Add{}(op(a.get_f(r, k), b.get_f(r, k)), c.get_f(r, k)));
        else dst.set_i(r, k, Add{}(op(a.get_i(r, k), b.get_i(r, k)), c.get_i(r, k)));
  };
}

// TPART*: over dst's valid region, op(a, b) where both a and b are valid, the valid one
// where only one is, and dst is left as is where neither is.
template <typename Op>
ReferenceFn partial(Op op) {
  return [op](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& a = call.in_tile(0);
    const TileRef& b = call.in_tile(1);
    for (int64_t r = 0; r < dst.valid_rows; ++r)
      for (int64_t c = 0; c < dst.valid_cols; ++c) {
        const bool in_a = r < a.valid_rows && c < a.valid_cols, in_b = r < b.valid_rows && c < b.valid_cols;
        if (in_a && in_b) {
          if (dst.is_float()) dst.set_f(r, c, op(a.get_f(r, c), b.get_f(r, c)));
          else dst.set_i(r, c, op(a.get_i(r, c), b.get_i(r, c)));
        } else if (in_a || in_b) {
          const TileRef& from = in_a ? a : b;
          convert_element(dst.at(r, c), dst.dtype, from.at(r, c), from.dtype);
        }
      }
  };
}

}  // namespace

void add_elementwise_family(std::vector<InstrDef>& t) {
  using F = InstrFamily;
  auto add = [&](const char* name, F fam, const char* ins, const std::vector<DataType>& dt, CostFigures cost,
                 const char* summary, ReferenceFn ref, FastPath fast = {}) {
    t.push_back(vector_instr(name, fam, "T", ins, dt, cost, summary, std::move(ref), std::move(fast)));
  };
  const auto binary = [](const char* f) { return FastPath{FastPath::kBinary, f}; };
  const auto with_scalar = [](const char* f) { return FastPath{FastPath::kWithScalar, f}; };
  const auto unary = [](const char* f) { return FastPath{FastPath::kUnary, f}; };

  // Tile-tile.
  add("TADD", F::kElementwise, "TT", kNumeric, fit(2.11, 24), "dst = a + b", tile_tile(Add{}), binary("Add"));
  add("TSUB", F::kElementwise, "TT", kNumeric, fit(2.11, 24), "dst = a - b", tile_tile(Sub{}), binary("Sub"));
  add("TMUL", F::kElementwise, "TT", kNumeric, fit(2.3, 25), "dst = a * b", tile_tile(Mul{}), binary("Mul"));
  add("TDIV", F::kElementwise, "TT", kNumeric, fit(4.03, 31), "dst = a / b (integers truncate toward zero)",
      tile_tile_checked<Div>(), binary("Div"));
  add("TMAX", F::kElementwise, "TT", kNumeric, fit(2.01, 23), "dst = max(a, b)", tile_tile(Max{}), binary("Max"));
  add("TMIN", F::kElementwise, "TT", kNumeric, vec(2.01, 23), "dst = min(a, b)", tile_tile(Min{}), binary("Min"));  // like TMAX
  add("TREM", F::kElementwise, "TT", kNumeric, vec(4.03, 31), "dst = a mod b, sign of b (numpy remainder)",
      tile_tile_checked<Rem>());  // like TDIV
  add("TFMOD", F::kElementwise, "TT", kNumeric, vec(4.03, 31), "dst = fmod(a, b), sign of a", tile_tile_checked<FMod>());
  add("TAND", F::kElementwise, "TT", kInt, fit(2.03, 20), "dst = a & b", tile_tile_int(And{}));
  add("TOR", F::kElementwise, "TT", kInt, fit(2.03, 20), "dst = a | b", tile_tile_int(Or{}));
  add("TXOR", F::kElementwise, "TT", kInt, vec(2.03, 20), "dst = a ^ b", tile_tile_int(Xor{}));  // like TAND
  add("TSHL", F::kElementwise, "TT", kInt, vec(2.03, 20), "dst = a << b", tile_tile_int(Shl{}));
  add("TSHR", F::kElementwise, "TT", kInt, vec(2.03, 20), "dst = a >> b (arithmetic for signed types)", tile_tile_int(Shr{}));
  add("TPRELU", F::kElementwise, "TT", kSigned, kBinaryDefault, "dst = a > 0 ? a : a * b", tile_tile(Leaky{}), binary("Leaky"));
  add("TPOW", F::kElementwise, "TT", kFloat, vec(2.0 + 2.0 + 2.3, 31 + 33 + 25), "dst = a ** b (exp(b * log a))", tpow);
  add("TADDC", F::kElementwise, "TTT", kNumeric, vec(2 * 2.11, 2 * 24), "dst = a + b + c", ternary(Add{}));
  add("TSUBC", F::kElementwise, "TTT", kNumeric, vec(2 * 2.11, 2 * 24), "dst = a - b + c", ternary(Sub{}));
  add("TMULADDDST", F::kElementwise, "TT", kNumeric, vec(2.3 + 2.11, 25 + 24), "dst = a * b + dst", ternary(Mul{}));
  add("TPARTADD", F::kElementwise, "TT", kNumeric, kBinaryDefault, "dst = a ADD b where both are valid, else whichever is valid", partial(Add{}));
  add("TPARTMUL", F::kElementwise, "TT", kNumeric, kBinaryDefault, "dst = a MUL b where both are valid, else whichever is valid", partial(Mul{}));
  add("TPARTMAX", F::kElementwise, "TT", kNumeric, kBinaryDefault, "dst = a MAX b where both are valid, else whichever is valid", partial(Max{}));
  add("TPARTMIN", F::kElementwise, "TT", kNumeric, kBinaryDefault, "dst = a MIN b where both are valid, else whichever is valid", partial(Min{}));

  // Tile-scalar.
  add("TADDS", F::kTileScalar, "TS", kNumeric, kScalarDefault, "dst = a + s", tile_scalar(Add{}), with_scalar("Add"));
  add("TSUBS", F::kTileScalar, "TS", kNumeric, kScalarDefault, "dst = a - s", tile_scalar(Sub{}), with_scalar("Sub"));
  add("TMULS", F::kTileScalar, "TS", kNumeric, fit(1.0, 24), "dst = a * s", tile_scalar(Mul{}), with_scalar("Mul"));
  add("TDIVS", F::kTileScalar, "TS", kNumeric, vec(4.03, 31), "dst = a / s", tile_scalar_checked<Div>(), with_scalar("Div"));  // like TDIV
  add("TMAXS", F::kTileScalar, "TS", kNumeric, fit(1.0, 24), "dst = max(a, s)", tile_scalar(Max{}), with_scalar("Max"));
  add("TMINS", F::kTileScalar, "TS", kNumeric, vec(1.0, 24), "dst = min(a, s)", tile_scalar(Min{}), with_scalar("Min"));  // like TMAXS
  add("TLRELU", F::kTileScalar, "TS", kSigned, kScalarDefault, "dst = a > 0 ? a : a * s", tile_scalar(Leaky{}), with_scalar("Leaky"));
  add("TAXPY", F::kTileScalar, "TS", kNumeric, kBinaryDefault, "dst = dst + s * a", taxpy);  // native: pto_opt::axpy
  add("TREMS", F::kTileScalar, "TS", kNumeric, vec(4.03, 31), "dst = a mod s, sign of s", tile_scalar_checked<Rem>());  // like TDIV
  add("TFMODS", F::kTileScalar, "TS", kNumeric, vec(4.03, 31), "dst = fmod(a, s), sign of a", tile_scalar_checked<FMod>());  // like TDIV
  add("TANDS", F::kTileScalar, "TS", kInt, vec(2.03, 20), "dst = a & s", tile_scalar(And{}));
  add("TORS", F::kTileScalar, "TS", kInt, vec(2.03, 20), "dst = a | s", tile_scalar(Or{}));
  add("TXORS", F::kTileScalar, "TS", kInt, vec(2.03, 20), "dst = a ^ s", tile_scalar(Xor{}));
  add("TSHLS", F::kTileScalar, "TS", kInt, vec(2.03, 20), "dst = a << s", tile_scalar(Shl{}));
  add("TSHRS", F::kTileScalar, "TS", kInt, vec(2.03, 20), "dst = a >> s", tile_scalar(Shr{}));

  // Unary.
  add("TABS", F::kUnary, "T", kSigned, kScalarDefault, "dst = |a|", unary_any([](auto a) {
        if constexpr (std::is_integral_v<decltype(a)>) return a < 0 ? -a : a;
        else return std::fabs(a);  // |-0| = +0
      }), unary("Abs"));
  add("TNEG", F::kUnary, "T", kSigned, kScalarDefault, "dst = -a", unary_any([](auto a) { return -a; }), unary("Neg"));
  add("TRELU", F::kUnary, "T", kSigned, fit(1.0, 24), "dst = max(a, 0)",
      unary_any([](auto a) { return Max{}(a, decltype(a){0}); }), unary("Relu"));  // NaN stays NaN, as in TMAX
  add("TNOT", F::kUnary, "T", kInt, vec(2.03, 20), "dst = ~a", unary_any([](auto a) {  // like TAND
        if constexpr (std::is_integral_v<decltype(a)>) return ~a;
        else return a;  // unreachable: TNOT is integer-only
      }));
  add("TEXP", F::kUnary, "T", kFloat, fit(2.0, 31), "dst = exp(a)", unary_float([](double a) { return std::exp(a); }), unary("Exp"));
  add("TLOG", F::kUnary, "T", kFloat, fit(2.0, 33), "dst = log(a)", unary_float([](double a) { return std::log(a); }), unary("Log"));
  add("TSQRT", F::kUnary, "T", kFloat, kMathDefault, "dst = sqrt(a)", unary_float([](double a) { return std::sqrt(a); }), unary("Sqrt"));
  add("TRSQRT", F::kUnary, "T", kFloat, fit(1.07, 24), "dst = 1 / sqrt(a)",
      unary_float([](double a) { return 1.0 / std::sqrt(a); }), unary("Rsqrt"));
  add("TRECIP", F::kUnary, "T", kFloat, kMathDefault, "dst = 1 / a", unary_float([](double a) { return 1.0 / a; }), unary("Recip"));
}

}  // namespace pypto::isa::families

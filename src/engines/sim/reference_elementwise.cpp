// Reference semantics of elementwise instructions: tile (op) tile, tile (op) scalar and
// unary functions, over the destination's valid region.
#include <cmath>

#include "element_ops.h"

namespace pypto::runtime {

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

void add_elementwise_instrs(ReferenceTable& t) {
  t["TADD"] = tile_tile(Add{});
  t["TSUB"] = tile_tile(Sub{});
  t["TMUL"] = tile_tile(Mul{});
  t["TDIV"] = tile_tile_checked<Div>();
  t["TMAX"] = tile_tile(Max{});
  t["TMIN"] = tile_tile(Min{});
  t["TREM"] = tile_tile_checked<Rem>();
  t["TFMOD"] = tile_tile_checked<FMod>();
  t["TPRELU"] = tile_tile(Leaky{});
  t["TAND"] = tile_tile_int(And{});
  t["TOR"] = tile_tile_int(Or{});
  t["TXOR"] = tile_tile_int(Xor{});
  t["TSHL"] = tile_tile_int(Shl{});
  t["TSHR"] = tile_tile_int(Shr{});

  t["TADDS"] = tile_scalar(Add{});
  t["TSUBS"] = tile_scalar(Sub{});
  t["TMULS"] = tile_scalar(Mul{});
  t["TDIVS"] = tile_scalar_checked<Div>();
  t["TMAXS"] = tile_scalar(Max{});
  t["TMINS"] = tile_scalar(Min{});
  t["TLRELU"] = tile_scalar(Leaky{});
  t["TAXPY"] = taxpy;
  t["TREMS"] = tile_scalar_checked<Rem>();
  t["TANDS"] = tile_scalar(And{});
  t["TORS"] = tile_scalar(Or{});
  t["TXORS"] = tile_scalar(Xor{});
  t["TSHLS"] = tile_scalar(Shl{});
  t["TSHRS"] = tile_scalar(Shr{});
  t["TPOW"] = tpow;
  t["TADDC"] = ternary(Add{});
  t["TSUBC"] = ternary(Sub{});
  t["TMULADDDST"] = ternary(Mul{});
  t["TPARTADD"] = partial(Add{});
  t["TPARTMUL"] = partial(Mul{});
  t["TPARTMAX"] = partial(Max{});
  t["TPARTMIN"] = partial(Min{});

  t["TABS"] = unary_any([](auto a) {
    if constexpr (std::is_integral_v<decltype(a)>) return a < 0 ? -a : a;
    else return std::fabs(a);  // |-0| = +0
  });
  t["TNEG"] = unary_any([](auto a) { return -a; });
  t["TRELU"] = unary_any([](auto a) { return Max{}(a, decltype(a){0}); });  // NaN stays NaN, as in TMAX
  t["TNOT"] = unary_any([](auto a) {
    if constexpr (std::is_integral_v<decltype(a)>) return ~a;
    else return a;  // unreachable: TNOT is integer-only in the instruction table
  });
  t["TEXP"] = unary_float([](double a) { return std::exp(a); });
  t["TLOG"] = unary_float([](double a) { return std::log(a); });
  t["TSQRT"] = unary_float([](double a) { return std::sqrt(a); });
  t["TRSQRT"] = unary_float([](double a) { return 1.0 / std::sqrt(a); });
  t["TRECIP"] = unary_float([](double a) { return 1.0 / a; });
}

}  // namespace pypto::runtime

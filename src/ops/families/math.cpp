// More elementwise vector ops on Vec tiles: bitwise and shifts (integer tiles only), the
// remainders rem (sign of the divisor) and fmod (sign of the dividend), the partial combines
// part_add/mul/max/min of tiles with different valid shapes, and sin/cos, which no PTO
// instruction computes: they expand (ExpandOps) into range reduction and a polynomial.
#include <cmath>

#include "../op_rules.h"
#include "pypto/isa/instructions.h"

namespace pypto::ops {


namespace {

TypePtr same_as(const TileType& t) { return TileType::make(t.shape, t.dtype, MemorySpace::Vec, t.valid_shape); }

// lhs (op) rhs: equal shapes and dtypes, a dtype the instruction accepts.
InferTypeFn binary(const std::string& pto) {
  return [pto](const CallSite& s) {
    const TileType& a = tile_arg(s, "lhs");
    const TileType& b = tile_arg(s, "rhs");
    require_vec(s, "lhs", a);
    require_vec(s, "rhs", b);
    require_same_shape_dtype(s, "lhs", a, "rhs", b);
    require_instr_dtype(s, "lhs", a, pto);
    return same_as(a);
  };
}

// tile (op) scalar; `int_scalar`: the scalar must be an integer (bitwise ops, shift counts).
InferTypeFn with_scalar(const std::string& pto, bool int_scalar) {
  return [pto, int_scalar](const CallSite& s) {
    const TileType& a = tile_arg(s, "tile");
    require_vec(s, "tile", a);
    tile_shape(s, "tile", a);
    require_instr_dtype(s, "tile", a, pto);
    if (int_scalar || !dtype_is_float(a.dtype)) {
      const ScalarType& st = scalar_arg(s, "scalar");
      if (!int_scalar && dtype_is_float(st.dtype))
        op_fail(s, ErrorKind::kType,
                std::string("argument 'scalar' is a ") + dtype_name(st.dtype) + " value but the tile is " +
                    dtype_name(a.dtype) + "; the remainder of integers needs an integer divisor",
                "pass an integer, or pl.cast the tile to pl.FP32 first");
      if (int_scalar) require_int_scalar(s, "scalar");
    } else {
      scalar_arg(s, "scalar");
    }
    return same_as(a);
  };
}

InferTypeFn unary(const std::string& pto) {
  return [pto](const CallSite& s) {
    const TileType& a = tile_arg(s, "tile");
    require_vec(s, "tile", a);
    tile_shape(s, "tile", a);
    require_instr_dtype(s, "tile", a, pto);
    return same_as(a);
  };
}

// The valid extent of a partial combine along one dimension: the larger of the two.
ExprPtr larger(const ExprPtr& a, const ExprPtr& b) {
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca && cb) return ConstInt::make(std::max(*ca, *cb), DataType::INDEX);
  if (a.get() == b.get()) return a;
  return BinaryExpr::make(BinaryOp::Max, a, b);
}

// part_*: equal shapes and dtypes; the result is valid over the larger valid region, which
// must be one operand's whole valid region (the other's lies inside it), so that every
// element of the result comes from an operand.
TypePtr infer_part(const CallSite& s, const std::string& pto) {
  const TileType& a = tile_arg(s, "lhs");
  const TileType& b = tile_arg(s, "rhs");
  require_vec(s, "lhs", a);
  require_vec(s, "rhs", b);
  require_same_shape_dtype(s, "lhs", a, "rhs", b);
  require_instr_dtype(s, "lhs", a, pto);
  auto va = static_valid(a), vb = static_valid(b);
  bool known = va[0] && va[1] && vb[0] && vb[1];
  if (known) {
    bool a_holds_b = *va[0] >= *vb[0] && *va[1] >= *vb[1];
    bool b_holds_a = *vb[0] >= *va[0] && *vb[1] >= *va[1];
    if (!a_holds_b && !b_holds_a)
      op_fail(s, ErrorKind::kValue,
              "the valid regions [" + std::to_string(*va[0]) + ", " + std::to_string(*va[1]) + "] of 'lhs' and [" +
                  std::to_string(*vb[0]) + ", " + std::to_string(*vb[1]) +
                  "] of 'rhs' overlap only partly; the result would hold elements that neither operand gives",
              "one operand's valid region must contain the other's (e.g. valid [8, 64] and [8, 32])");
  }
  std::vector<ExprPtr> valid;
  if (!a.valid_shape.empty() || !b.valid_shape.empty()) {
    auto fa = valid_or_full(a), fb = valid_or_full(b);
    valid = {larger(fa[0], fb[0]), larger(fa[1], fb[1])};
  }
  return TileType::make(a.shape, a.dtype, MemorySpace::Vec, valid);
}

// ---- composite ops (expanded by ExpandOps) ----

// Never reached: ExpandOps rewrote the call.
void not_lowered(const Call& c, const VarPtr&, KernelBuilder&) {
  PYPTO_CHECK(false, "pl." + c.op->name + " reached codegen without being expanded (ExpandOps)");
}

ExprPtr fconst(double v) { return ConstFloat::make(v, DataType::FP32); }
ExprPtr iconst(int64_t v) { return ConstInt::make(v, DataType::INT32); }

// sin(x) or cos(x) of a float tile, from TMULS/TADDS/TCVT/TSUB/TMUL/TANDS only:
//  1. k = nearest integer to x/pi (sin) or x/pi + 1/2 (cos), through an INT32 tile (TCVT rint);
//  2. r = x - kk*pi with kk = k (sin) or k - 1/2 (cos), pi split in three parts (Cody-Waite:
//     3.140625 has 8 significant bits, so kk*C1 is exact for |k| < 2^16), r in [-pi/2, pi/2];
//  3. sin(r) = r + r^3 * P(r^2), P the Taylor polynomial up to r^13 (truncation < 7e-10);
//  4. the result is (-1)^k * sin(r) (the sign from the low bit of k).
// FP16/BF16 tiles are computed in FP32 and rounded back. Absolute error about 1e-7 (a few FP32
// ulps of 1) for |x| < 1e4, about 1e-6 at 1e5; beyond that the reduction loses precision (and
// |x| >= 2^31 * pi overflows k).
ExprPtr expand_trig(const Call& c, OpExpander& x, bool cos) {
  const Span& sp = c.span;
  ExprPtr in = c.args[0];
  DataType dt = in->type->as<TileType>()->dtype;
  auto call = [&](const std::string& name, const std::string& op, std::vector<ExprPtr> args, Attrs attrs = {}) {
    return x.call(name, op, args, attrs, sp);
  };
  auto cast = [&](const std::string& name, const ExprPtr& t, DataType to) {
    return call(name, "tile.cast", {t}, {{"target_type", to}, {"mode", std::string("rint")}});
  };
  ExprPtr xf = dt == DataType::FP32 ? in : cast("trig_x", in, DataType::FP32);
  constexpr double kInvPi = 0.318309886183790671538;
  constexpr double kC1 = 3.140625, kC2 = 9.67502593994140625e-4, kC3 = 1.509957990978376432e-7;
  ExprPtr q = call("trig_q", "tile.muls", {xf, fconst(kInvPi)});
  if (cos) q = call("trig_q", "tile.adds", {q, fconst(0.5)});
  ExprPtr k = cast("trig_k", q, DataType::INT32);
  ExprPtr kk = cast("trig_kf", k, DataType::FP32);
  if (cos) kk = call("trig_kf", "tile.adds", {kk, fconst(-0.5)});
  ExprPtr r = xf;
  for (double part : {kC1, kC2, kC3}) {
    ExprPtr t = call("trig_t", "tile.muls", {kk, fconst(part)});
    r = call("trig_r", "tile.sub", {r, t});
  }
  ExprPtr r2 = call("trig_r2", "tile.mul", {r, r});
  // P(r^2) = -1/3! + r^2 (1/5! + r^2 (-1/7! + r^2 (1/9! + r^2 (-1/11! + r^2 / 13!)))).
  const double coeffs[] = {1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0,
                           -1.0 / 6.0};
  ExprPtr p = call("trig_p", "tile.muls", {r2, fconst(coeffs[0])});
  for (size_t i = 1; i < std::size(coeffs); ++i) {
    p = call("trig_p", "tile.adds", {p, fconst(coeffs[i])});
    p = call("trig_p", "tile.mul", {p, r2});
  }
  p = call("trig_p", "tile.mul", {p, r});
  ExprPtr sr = call("trig_sinr", "tile.add", {r, p});
  // (-1)^k = 1 - 2 * (k & 1).
  ExprPtr odd = call("trig_odd", "tile.ands", {k, iconst(1)});
  ExprPtr sign = cast("trig_sign", odd, DataType::FP32);
  sign = call("trig_sign", "tile.muls", {sign, fconst(-2.0)});
  sign = call("trig_sign", "tile.adds", {sign, fconst(1.0)});
  if (dt == DataType::FP32) return make_op_call("tile.mul", {sr, sign}, {}, {}, sp);
  ExprPtr out = call("trig_out", "tile.mul", {sr, sign});
  return make_op_call("tile.cast", {out}, {}, {{"target_type", dt}, {"mode", std::string("rint")}}, sp);
}

struct Entry {
  const char* name;
  const char* pto;
  const char* doc;
  const char* scalar_form;  // "" when none
  const char* torch;
};

}  // namespace

void register_math_ops(OpRegistry& r) {
  const Entry binaries[] = {
      {"and_", "TAND", "Bitwise lhs & rhs of integer tiles.", "tile.ands", "{lhs:r} & {rhs:r}"},
      {"or_", "TOR", "Bitwise lhs | rhs of integer tiles.", "tile.ors", "{lhs:r} | {rhs:r}"},
      {"xor", "TXOR", "Bitwise lhs ^ rhs of integer tiles.", "tile.xors", "{lhs:r} ^ {rhs:r}"},
      {"shl", "TSHL", "lhs << rhs (elementwise shift counts) of integer tiles; counts >= the bit width give 0.",
       "tile.shls", "_shl({lhs:r}, {rhs:r})"},
      {"shr", "TSHR",
       "lhs >> rhs (elementwise shift counts) of integer tiles: arithmetic for signed dtypes, logical for unsigned.",
       "tile.shrs", "_shr({lhs:r}, {rhs:r})"},
      {"rem", "TREM", "Elementwise remainder with the sign of rhs (numpy.remainder / Python %); integer division by "
                      "zero is a run-time error.",
       "tile.rems", "_rem({lhs:r}, {rhs:r})"},
      {"fmod", "TFMOD", "Elementwise remainder with the sign of lhs (C fmod / numpy.fmod); integer division by zero is "
                        "a run-time error.",
       "tile.fmods", "_fmod({lhs:r}, {rhs:r})"},
  };
  for (auto& e : binaries)
    r.add({.name = std::string("tile.") + e.name,
           .params = {expr_param("lhs"), expr_param("rhs"), hint(expr_param("tmp", true))},
           .infer_type = binary(e.pto),
           .pto = e.pto,
           .lower = {},
           .doc = e.doc,
           .aliases = {},
           .scalar_variant = e.scalar_form,
           .torch = e.torch,
           .tensor_form = TensorOpShape::kElementwise});
  const Entry scalars[] = {
      {"ands", "TANDS", "Bitwise tile & scalar (integer tile and scalar).", "", "({tile:r}.long() & {scalar}).to({dtype})"},
      {"ors", "TORS", "Bitwise tile | scalar (integer tile and scalar).", "", "({tile:r}.long() | {scalar}).to({dtype})"},
      {"xors", "TXORS", "Bitwise tile ^ scalar (integer tile and scalar).", "", "({tile:r}.long() ^ {scalar}).to({dtype})"},
      {"shls", "TSHLS", "tile << scalar (integer tile, integer shift count).", "", "_shl({tile:r}, {scalar})"},
      {"shrs", "TSHRS", "tile >> scalar (integer tile, integer shift count; arithmetic for signed dtypes).", "", "_shr({tile:r}, {scalar})"},
      {"rems", "TREMS", "Remainder of tile by a scalar, with the sign of the scalar (numpy.remainder).", "", "_rem({tile:r}, {scalar})"},
  };
  for (auto& e : scalars) {
    bool int_scalar = std::string(e.pto) != "TREMS";
    r.add({.name = std::string("tile.") + e.name,
           .params = {aka(expr_param("tile"), {"lhs", "tensor"}), aka(expr_param("scalar"), {"rhs"}), hint(expr_param("tmp", true))},
           .infer_type = with_scalar(e.pto, int_scalar),
           .pto = e.pto,
           .lower = {},
           .doc = e.doc,
           .aliases = {},
           .scalar_variant = "",
           .torch = e.torch,
           .tensor_form = TensorOpShape::kElementwise});
  }
  r.add({.name = "tile.fmods",
         .params = {aka(expr_param("tile"), {"lhs", "tensor"}), aka(expr_param("scalar"), {"rhs"})},
         .infer_type = with_scalar("TFMODS", false),
         .pto = "TFMODS",
         .lower = {},
         .doc = "Remainder of tile by a scalar with the sign of the tile's element (numpy.fmod).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_fmod({tile:r}, {scalar})",
         .tensor_form = TensorOpShape::kElementwise});
  r.add({.name = "tile.not_",
         .params = {aka(expr_param("tile"), {"input", "tensor"})},
         .infer_type = unary("TNOT"),
         .pto = "TNOT",
         .lower = {},
         .doc = "Bitwise ~x of an integer tile.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "~{tile:r}",
         .tensor_form = TensorOpShape::kElementwise});
  for (bool cos : {false, true}) {
    r.add({.name = cos ? "tile.cos" : "tile.sin",
           .params = {aka(expr_param("tile"), {"input", "tensor"})},
           .infer_type = unary("TEXP"),  // the float dtypes of the vector unit's math instructions
           .pto = "TMULS",               // the first instruction of the expansion (a vector-pipe op)
           .lower = not_lowered,
           .doc = std::string("Elementwise ") + (cos ? "cosine" : "sine") +
                  " of a float tile. No PTO instruction computes it: ExpandOps emits TMULS, TCVT, TSUB, TMUL, TADDS, "
                  "TANDS (range reduction by pi, a degree-13 polynomial, the sign from k's parity), in FP32 "
                  "(FP16/BF16 are converted); absolute error ~1e-7 for |x| < 1e4, ~1e-6 at 1e5.",
           .aliases = {},
           .scalar_variant = "",
           .writes = "",
           .view = false,
           .torch = cos ? "torch.cos({tile:r})" : "torch.sin({tile:r})",
           .expand = [cos](const Call& c, OpExpander& x) { return expand_trig(c, x, cos); },
           .tensor_form = TensorOpShape::kElementwise});
  }
  const std::pair<const char*, const char*> parts[] = {{"add", "+"}, {"mul", "*"}, {"max", "max"}, {"min", "min"}};
  const char* torch_fn[] = {"torch.add", "torch.mul", "torch.maximum", "torch.minimum"};
  for (size_t i = 0; i < std::size(parts); ++i) {
    auto& [op, meaning] = parts[i];
    std::string up = op;
    for (auto& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    std::string pto = "TPART" + up;
    r.add({.name = std::string("tile.part_") + op,
           .params = {aka(expr_param("lhs"), {"src0"}), aka(expr_param("rhs"), {"src1"})},
           .infer_type = [pto](const CallSite& s) { return infer_part(s, pto); },
           .pto = pto,
           .lower = {},
           .doc = std::string("Combine tiles of different valid shapes: lhs ") + meaning +
                  " rhs where both are valid, the valid one's element where only one is; the result is valid over "
                  "the larger region, which must contain the smaller.",
           .aliases = {},
           .scalar_variant = "",
           .torch = std::string("_part({lhs:v}, {rhs:v}, {R}, {C}, ") + torch_fn[i] + ")",
           .tensor_form = TensorOpShape::kElementwise});
  }
}

}  // namespace pypto::ops

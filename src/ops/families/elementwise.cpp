// Elementwise vector ops on Vec tiles: tile-tile (add ... minimum), tile-scalar (adds ...
// mins, maximums / minimums), unary (neg ... relu), lrelu / prelu, the ternary addc / subc and
// their scalar forms addsc / subsc (composites: TADDS or TSUBS, then TADD), and dtype conversion
// (cast). Results take the shape, dtype and valid shape of the first input.
#include <algorithm>

#include "../op_rules.h"
#include "pypto/isa/instructions.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

TypePtr same_as(const TileType& t) { return TileType::make(t.shape, t.dtype, MemorySpace::Vec, t.valid_shape); }

TypePtr infer_binary(const CallSite& s) {
  const TileType& a = tile_arg(s, "lhs");
  const TileType& b = tile_arg(s, "rhs");
  require_vec(s, "lhs", a);
  require_vec(s, "rhs", b);
  require_same_shape_dtype(s, "lhs", a, "rhs", b);
  if (!s.op.pto.empty()) require_instr_dtype(s, "lhs", a, s.op.pto);
  return same_as(a);
}

TypePtr infer_scalar(const CallSite& s) {
  const TileType& a = tile_arg(s, "tile");
  require_vec(s, "tile", a);
  tile_shape(s, "tile", a);
  if (!s.op.pto.empty()) require_instr_dtype(s, "tile", a, s.op.pto);
  scalar_arg(s, "scalar");
  return same_as(a);
}

TypePtr infer_unary(const CallSite& s) {
  const TileType& a = tile_arg(s, "tile");
  require_vec(s, "tile", a);
  tile_shape(s, "tile", a);
  if (!s.op.pto.empty()) require_instr_dtype(s, "tile", a, s.op.pto);
  return same_as(a);
}

TypePtr infer_unary_float(const CallSite& s) {
  const TileType& a = tile_arg(s, "tile");
  if (!dtype_is_float(a.dtype))
    op_fail(s, ErrorKind::kType, std::string("needs a floating-point tile, got ") + dtype_name(a.dtype),
            "convert first: pl.cast(tile, pl.FP32)");
  return infer_unary(s);
}

const char* kCastModes[] = {"none", "rint", "round", "floor", "ceil", "trunc", "odd"};

// pl.cast(x, pl.BF16) or pl.cast(x, target_type=pl.FP32) or pl.cast(x, dtype=pl.FP16): exactly
// one of target_type / dtype names the result dtype (the other keeps its "" default).
std::optional<DataType> cast_target(const Attrs& attrs) {
  for (const char* key : {"target_type", "dtype"}) {
    auto it = attrs.find(key);
    if (it != attrs.end())
      if (auto* d = std::get_if<DataType>(&it->second)) return *d;
  }
  return std::nullopt;
}

TypePtr infer_cast(const CallSite& s) {
  const TileType& a = tile_arg(s, "tile");
  require_vec(s, "tile", a);
  tile_shape(s, "tile", a);
  for (const char* key : {"target_type", "dtype"}) {
    const AttrValue& v = s.attr(key);
    auto* str = std::get_if<std::string>(&v);
    if (!std::get_if<DataType>(&v) && !(str && str->empty()))
      op_fail(s, ErrorKind::kType, std::string("argument '") + key + "' must be a dtype such as pl.BF16");
  }
  bool both = std::get_if<DataType>(&s.attr("target_type")) && std::get_if<DataType>(&s.attr("dtype"));
  if (both) op_fail(s, ErrorKind::kType, "give the result dtype once, as target_type or as dtype, not both");
  auto target = cast_target(s.attrs);
  if (!target)
    op_fail(s, ErrorKind::kType, "the result dtype is missing", "write pl.cast(x, pl.BF16) or pl.cast(x, target_type=pl.FP32)");
  std::string mode = string_attr(s, "mode");
  if (std::find(std::begin(kCastModes), std::end(kCastModes), mode) == std::end(kCastModes))
    op_fail(s, ErrorKind::kValue, "mode \"" + mode + "\" is not a rounding mode",
            "use one of none, rint, round, floor, ceil, trunc, odd");
  require_instr_dtype(s, "tile", a, "TCVT");
  if (const isa::InstrDef* tcvt = isa::find_instr("TCVT"); !tcvt->allows(*target)) {
    std::string list;
    for (DataType d : tcvt->dtypes) list += (list.empty() ? "" : ", ") + std::string(dtype_name(d));
    op_fail(s, ErrorKind::kType,
            std::string("the result dtype ") + dtype_name(*target) + " is not one a tile holds (TCVT converts to " +
                list + ")",
            *target == DataType::INDEX ? "convert to pl.INT64 (an INDEX is a scalar's dtype)" : "convert to one of those");
  }
  return TileType::make(a.shape, *target, MemorySpace::Vec, a.valid_shape);
}

void lower_cast(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int src = kb.tile(c.args[0]);
  int out = kb.define_tile(dst);
  Instr in;
  in.mnemonic = "TCVT";
  in.outs = {Operand::tile(out)};
  in.ins = {Operand::tile(src)};
  in.attrs = {{"mode", c.attrs.at("mode")}};
  kb.emit(in);
}

struct Entry {
  const char* name;
  const char* pto;
  const char* doc;
  const char* torch;
};

// PyPTO's spellings: the operand is `input` (bare pl.), `tile` (pl.tile.) or `tensor`
// (pl.tensor.); recip / rsqrt / log take `high_precision=` (our engines compute these in the
// element's own precision either way: docs/language.md, "Op keywords"); pl.tile.rsqrt takes a
// scratch `tmp` tile.
std::vector<ParamSpec> unary_params(const std::string& name) {
  std::vector<ParamSpec> p = {aka(expr_param("tile"), {"input", "tensor"})};
  if (name == "recip" || name == "rsqrt" || name == "log") p.push_back(hint(attr_param("high_precision", false)));
  if (name == "rsqrt") p.push_back(hint(expr_param("tmp", true)));
  return p;
}

std::vector<ParamSpec> binary_params(const std::string& name) {
  std::vector<ParamSpec> p = {expr_param("lhs"), expr_param("rhs")};
  if (name == "div") p.push_back(hint(attr_param("high_precision", false)));
  return p;
}


// ---- elementwise families -------------------------------------------------------------------

TypePtr infer_tile_scalar(const CallSite& s) {
  const TileType& a = tile_arg(s, "lhs");
  require_vec(s, "lhs", a);
  tile_shape(s, "lhs", a);
  scalar_arg(s, "rhs");
  return same_as(a);
}

TypePtr infer_lrelu(const CallSite& s) {
  const TileType& a = tile_arg(s, "tile");
  require_vec(s, "tile", a);
  tile_shape(s, "tile", a);
  require_instr_dtype(s, "tile", a, "TLRELU");
  scalar_arg(s, "slope");
  return same_as(a);
}

TypePtr infer_prelu(const CallSite& s) {
  const TileType& a = tile_arg(s, "tile");
  const TileType& b = tile_arg(s, "slope");
  require_vec(s, "tile", a);
  require_vec(s, "slope", b);
  require_same_shape_dtype(s, "tile", a, "slope", b);
  require_instr_dtype(s, "tile", a, "TPRELU");
  tile_arg(s, "tmp");
  return same_as(a);
}

TypePtr infer_ternary(const CallSite& s) {
  const TileType& a = tile_arg(s, "lhs");
  const TileType& b = tile_arg(s, "rhs");
  const TileType& c = tile_arg(s, "rhs2");
  for (auto [n, t] : {std::pair{"lhs", &a}, {"rhs", &b}, {"rhs2", &c}}) require_vec(s, n, *t);
  require_same_shape_dtype(s, "lhs", a, "rhs", b);
  require_same_shape_dtype(s, "lhs", a, "rhs2", c);
  return same_as(a);
}

TypePtr infer_ternary_scalar(const CallSite& s) {
  const TileType& a = tile_arg(s, "lhs");
  const TileType& c = tile_arg(s, "rhs2");
  require_vec(s, "lhs", a);
  require_vec(s, "rhs2", c);
  scalar_arg(s, "rhs");
  require_same_shape_dtype(s, "lhs", a, "rhs2", c);
  return same_as(a);
}

// addsc(a, s, c) = (a + s) + c; subsc(a, s, c) = (a - s) + c.
ExprPtr expand_ternary_scalar(const Call& c, OpExpander& x, const char* first) {
  ExprPtr t = x.call("t", first, {c.args[0], c.args[1]}, {}, c.span);
  return make_op_call("tile.add", {t, c.args[2]}, {}, {}, c.span);
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  const Entry binary[] = {
      {"add", "TADD", "Elementwise lhs + rhs.", "{lhs:r} + {rhs:r}"},
      {"sub", "TSUB", "Elementwise lhs - rhs.", "{lhs:r} - {rhs:r}"},
      {"mul", "TMUL", "Elementwise lhs * rhs.", "{lhs:r} * {rhs:r}"},
      {"div", "TDIV", "Elementwise lhs / rhs.", "_div({lhs:r}, {rhs:r})"},
      {"maximum", "TMAX", "Elementwise max(lhs, rhs).", "torch.maximum({lhs:r}, {rhs:r})"},
      {"minimum", "TMIN", "Elementwise min(lhs, rhs).", "torch.minimum({lhs:r}, {rhs:r})"},
  };
  const Entry scalar[] = {
      {"adds", "TADDS", "tile + scalar.", "{tile:r} + {scalar}"},
      {"subs", "TSUBS", "tile - scalar.", "{tile:r} - {scalar}"},
      {"muls", "TMULS", "tile * scalar.", "{tile:r} * {scalar}"},
      {"divs", "TDIVS", "tile / scalar.", "_div({tile:r}, {scalar})"},
      {"maxs", "TMAXS", "max(tile, scalar).", "torch.clamp_min({tile:r}, {scalar})"},
      {"mins", "TMINS", "min(tile, scalar).", "torch.clamp_max({tile:r}, {scalar})"},
  };
  const char* variant_of[] = {"tile.adds", "tile.subs", "tile.muls", "tile.divs", "tile.maxs", "tile.mins"};
  for (size_t i = 0; i < std::size(binary); ++i)
    r.add({.name = std::string("tile.") + binary[i].name,
           .params = binary_params(binary[i].name),
           .infer_type = infer_binary,
           .pto = binary[i].pto,
           .lower = {},
           .doc = binary[i].doc,
           .aliases = i == 4 ? std::vector<std::string>{"tile.max"}
                    : i == 5 ? std::vector<std::string>{"tile.min"}
                             : std::vector<std::string>{},  // PyPTO's pl.tile.max / pl.tile.min
           .scalar_variant = variant_of[i],
           .torch = binary[i].torch,
           .tensor_form = TensorOpShape::kElementwise});
  for (auto& e : scalar)
    r.add({.name = std::string("tile.") + e.name,
           .params = {aka(expr_param("tile"), {"lhs", "tensor"}), aka(expr_param("scalar"), {"rhs"})},
           .infer_type = infer_scalar,
           .pto = e.pto,
           .lower = {},
           .doc = e.doc,
           .aliases = {},
           .scalar_variant = "",
           .torch = e.torch,
           .tensor_form = TensorOpShape::kElementwise});
  const Entry unary[] = {
      {"neg", "TNEG", "Elementwise -x.", "-{tile:r}"},
      {"abs", "TABS", "Elementwise |x|.", "torch.abs({tile:r})"},
      {"relu", "TRELU", "Elementwise max(x, 0).", "torch.relu({tile:r})"},
      {"recip", "TRECIP", "Elementwise 1 / x.", "torch.reciprocal({tile:r})"},
      {"exp", "TEXP", "Elementwise e^x.", "torch.exp({tile:r})"},
      {"log", "TLOG", "Elementwise natural logarithm.", "torch.log({tile:r})"},
      {"sqrt", "TSQRT", "Elementwise square root.", "torch.sqrt({tile:r})"},
      {"rsqrt", "TRSQRT", "Elementwise 1 / sqrt(x).", "torch.rsqrt({tile:r})"},
  };
  // The type rule follows the instruction record's dtypes: an instruction on floats only
  // refuses other tiles with the fix (a cast), the others check the record's dtypes.
  auto floats_only = [](const char* pto) {
    const isa::InstrDef* d = isa::find_instr(pto);
    PYPTO_CHECK(d != nullptr, std::string("unary op of unknown instruction ") + pto);
    return std::all_of(d->dtypes.begin(), d->dtypes.end(), [](DataType t) { return dtype_is_float(t); });
  };
  for (size_t i = 0; i < std::size(unary); ++i)
    r.add({.name = std::string("tile.") + unary[i].name,
           .params = unary_params(unary[i].name),
           .infer_type = floats_only(unary[i].pto) ? InferTypeFn(infer_unary_float) : InferTypeFn(infer_unary),
           .pto = unary[i].pto,
           .lower = {},
           .doc = unary[i].doc,
           .aliases = {},
           .scalar_variant = "",
           .torch = unary[i].torch,
           .tensor_form = TensorOpShape::kElementwise});
  r.add({.name = "tile.cast",
         .params = {aka(expr_param("tile"), {"input", "tensor"}), attr_param("target_type", std::string()), attr_param("mode", std::string("round")),
                    attr_param("dtype", std::string())},
         .infer_type = infer_cast,
         .pto = "TCVT",
         .lower = lower_cast,
         .doc = "Convert to target_type (or dtype) with a rounding mode: none, rint, round, floor, ceil, trunc, odd. "
                "pl.cast of a scalar is a scalar conversion instead (mode 'round' only; docs/language.md).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_cast({tile:r}, {dtype}, {mode})",
         .tensor_form = TensorOpShape::kElementwise});
  struct TS {
    const char* name;
    const char* pto;
    const char* doc;
    const char* torch;
  };
  for (const TS& e : {TS{"maximums", "TMAXS", "max(lhs, scalar rhs), as pl.tile.maxs.", "torch.clamp_min({lhs:r}, {rhs})"},
                      TS{"minimums", "TMINS", "min(lhs, scalar rhs), as pl.tile.mins.", "torch.clamp_max({lhs:r}, {rhs})"}})
    r.add({.name = std::string("tile.") + e.name,
           .params = {expr_param("lhs"), expr_param("rhs")},
           .infer_type = infer_tile_scalar,
           .pto = e.pto,
           .lower = {},
           .doc = e.doc,
           .aliases = {},
           .scalar_variant = "",
           .torch = e.torch,
           .tensor_form = TensorOpShape::kElementwise});
  r.add({.name = "tile.lrelu",
         .params = {expr_param("tile"), expr_param("slope")},
         .infer_type = infer_lrelu,
         .pto = "TLRELU",
         .lower = {},
         .doc = "Leaky ReLU: x > 0 ? x : x * slope (slope a scalar).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "torch.where({tile:r} > 0, {tile:r}, {tile:r} * {slope})",
         .tensor_form = TensorOpShape::kElementwise});
  r.add({.name = "tile.prelu",
         .params = {expr_param("tile"), expr_param("slope"), hint(expr_param("tmp"))},
         .infer_type = infer_prelu,
         .pto = "TPRELU",
         .lower = {},  // the default lowering: TPRELU(tile, slope); tmp is a hint
         .doc = "Parametric ReLU: x > 0 ? x : x * slope elementwise (slope a tile like x); tmp (a scratch tile on "
                "the NPU) is accepted and unused.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "torch.where({tile:r} > 0, {tile:r}, {tile:r} * {slope:r})"});
  for (const TS& e : {TS{"addc", "TADDC", "lhs + rhs + rhs2 elementwise.", "{lhs:r} + {rhs:r} + {rhs2:r}"},
                      TS{"subc", "TSUBC", "lhs - rhs + rhs2 elementwise.", "{lhs:r} - {rhs:r} + {rhs2:r}"}})
    r.add({.name = std::string("tile.") + e.name,
           .params = {expr_param("lhs"), expr_param("rhs"), expr_param("rhs2")},
           .infer_type = infer_ternary,
           .pto = e.pto,
           .lower = {},
           .doc = e.doc,
           .aliases = {},
           .scalar_variant = "",
           .torch = e.torch,
           .tensor_form = TensorOpShape::kElementwise});
  r.add({.name = "tile.addsc",
         .params = {expr_param("lhs"), expr_param("rhs"), expr_param("rhs2")},
         .infer_type = infer_ternary_scalar,
         .pto = "TADDS",
         .lower = {},
         .doc = "lhs + scalar rhs + tile rhs2 elementwise. No PTO instruction computes it: ExpandOps emits TADDS, "
                "then TADD.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = false,
         .torch = "{lhs:r} + {rhs} + {rhs2:r}",
         .expand = [](const Call& c, OpExpander& x) { return expand_ternary_scalar(c, x, "tile.adds"); },
         .tensor_form = TensorOpShape::kElementwise});
  r.add({.name = "tile.subsc",
         .params = {expr_param("lhs"), expr_param("rhs"), expr_param("rhs2")},
         .infer_type = infer_ternary_scalar,
         .pto = "TSUBS",
         .lower = {},
         .doc = "lhs - scalar rhs + tile rhs2 elementwise. No PTO instruction computes it: ExpandOps emits TSUBS, "
                "then TADD.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = false,
         .torch = "{lhs:r} - {rhs} + {rhs2:r}",
         .expand = [](const Call& c, OpExpander& x) { return expand_ternary_scalar(c, x, "tile.subs"); },
         .tensor_form = TensorOpShape::kElementwise});
}

}  // namespace pypto::ops

// Compare and select: cmp / cmps produce a packed mask tile (UINT8, one bit per element:
// element (r, c) is bit c % 8 of byte (r, c / 8); layout in pypto/isa/instructions.h), and
// sel picks elementwise from two tiles by such a mask, sels between a tile and a scalar.
#include "../op_rules.h"
#include "pypto/isa/instructions.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

// ceil(n / 8): the bytes of a packed mask row of n elements, folded when n is a constant.
ExprPtr mask_bytes_expr(const ExprPtr& n) {
  if (auto* c = n->as<ConstInt>()) return ConstInt::make(isa::mask_row_bytes(c->value), DataType::INDEX);
  return BinaryExpr::make(BinaryOp::FloorDiv, BinaryExpr::make(BinaryOp::Add, n, ConstInt::make(7, DataType::INDEX)),
                          ConstInt::make(8, DataType::INDEX));
}

// The packed mask of a rows x cols tile: rows x mask_tile_cols(cols) bytes (whole 32-byte
// rows), valid over [valid rows, ceil(valid cols / 8)]: the bytes that hold bits.
TypePtr mask_for(const CallSite& s, const std::string& name, const TileType& t) {
  const std::vector<int64_t> shape = tile_shape(s, name, t);
  const std::vector<ExprPtr> v = valid_or_full(t);
  return TileType::make(const_shape({shape[0], isa::mask_tile_cols(shape[1])}), isa::kMaskDtype, MemorySpace::Vec,
                        {v[0], mask_bytes_expr(v[1])});
}

TypePtr infer_cmp(const CallSite& s) {
  const TileType& a = tile_arg(s, "lhs");
  const TileType& b = tile_arg(s, "rhs");
  require_vec(s, "lhs", a);
  require_vec(s, "rhs", b);
  require_same_shape_dtype(s, "lhs", a, "rhs", b);
  if (!s.op.pto.empty()) require_instr_dtype(s, "lhs", a, s.op.pto);
  cmp_mode(s, "cmp_type");
  return mask_for(s, "lhs", a);
}

TypePtr infer_cmps(const CallSite& s) {
  const TileType& a = tile_arg(s, "tile");
  require_vec(s, "tile", a);
  tile_shape(s, "tile", a);
  if (!s.op.pto.empty()) require_instr_dtype(s, "tile", a, s.op.pto);
  scalar_arg(s, "scalar");
  cmp_mode(s, "cmp_type");
  return mask_for(s, "tile", a);
}

// TCMP / TCMPS carry the mode as attrs {"cmp": "LT"}, normalised to upper case.
void lower_cmp(const Call& c, const VarPtr& dst, KernelBuilder& kb, const char* pto) {
  Instr in;
  in.mnemonic = pto;
  for (auto& a : c.args) in.ins.push_back(kb.operand(a));
  in.outs = {Operand::tile(kb.define_tile(dst))};
  in.attrs = {{"cmp", cmp_mode_of(c.attrs.at("cmp_type"))}};
  kb.emit(in);
}

TypePtr infer_sel(const CallSite& s) {
  const TileType& mask = tile_arg(s, "mask");
  const TileType& a = tile_arg(s, "lhs");
  const TileType& b = tile_arg(s, "rhs");
  require_vec(s, "mask", mask);
  require_vec(s, "lhs", a);
  require_vec(s, "rhs", b);
  require_same_shape_dtype(s, "lhs", a, "rhs", b);
  require_packed_mask(s, mask, "lhs", a);
  if (!s.op.pto.empty()) require_instr_dtype(s, "lhs", a, s.op.pto);
  return TileType::make(a.shape, a.dtype, MemorySpace::Vec, a.valid_shape);
}


TypePtr infer_sels(const CallSite& s) {
  const TileType& mask = tile_arg(s, "mask");
  const TileType& a = tile_arg(s, "src");
  require_vec(s, "mask", mask);
  require_vec(s, "src", a);
  require_packed_mask(s, mask, "src", a);
  tile_arg(s, "tmp");
  scalar_arg(s, "scalar");
  return TileType::make(a.shape, a.dtype, MemorySpace::Vec, a.valid_shape);
}

void lower_sels(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int mask = kb.tile(c.args[0]);
  int src = kb.tile(c.args[1]);
  isa::Scalar scalar = kb.scalar(c.args[3]);
  int out = kb.define_tile(dst);
  Instr in;
  in.mnemonic = "TSELS";
  in.outs = {Operand::tile(out)};
  in.ins = {Operand::tile(mask), Operand::tile(src), Operand::scalar_of(scalar)};
  kb.emit(in);
}

}  // namespace

void register_compare_ops(OpRegistry& r) {
  r.add({.name = "tile.cmp",
         .params = {expr_param("lhs"), expr_param("rhs"), attr_param("cmp_type", std::string("EQ"))},
         .infer_type = infer_cmp,
         .pto = "TCMP",
         .lower = [](const Call& c, const VarPtr& d, KernelBuilder& kb) { lower_cmp(c, d, kb, "TCMP"); },
         .doc = "Elementwise comparison lhs <cmp_type> rhs (EQ NE LT LE GT GE) as a packed mask: a UINT8 tile "
                "[rows, ceil(cols/8) rounded up to 32], element (r, c) in bit c%8 of byte (r, c/8).",
         .aliases = {},
         .scalar_variant = "tile.cmps",
         .torch = "_pack_mask(_cmp({lhs:v}, {rhs:v}, {cmp_type}))"});
  r.add({.name = "tile.cmps",
         .params = {aka(expr_param("tile"), {"lhs"}), aka(expr_param("scalar"), {"rhs"}), attr_param("cmp_type", std::string("EQ"))},
         .infer_type = infer_cmps,
         .pto = "TCMPS",
         .lower = [](const Call& c, const VarPtr& d, KernelBuilder& kb) { lower_cmp(c, d, kb, "TCMPS"); },
         .doc = "Elementwise comparison tile <cmp_type> scalar as a packed mask (UINT8, laid out like cmp's).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_pack_mask(_cmp({tile:v}, {scalar}, {cmp_type}))"});
  r.add({.name = "tile.sel",
         .params = {expr_param("mask"), expr_param("lhs"), expr_param("rhs"), hint(expr_param("tmp", true))},
         .infer_type = infer_sel,
         .pto = "TSEL",
         .lower = {},
         .doc = "Elementwise mask ? lhs : rhs, where mask is a packed mask as cmp/cmps make (one bit per element, "
                "UINT8).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "torch.where(_unpack_mask({mask}, {R}, {C}), {lhs:r}, {rhs:r})"});
  r.add({.name = "tile.sels",
         .params = {expr_param("mask"), expr_param("src"), expr_param("tmp"), expr_param("scalar")},
         .infer_type = infer_sels,
         .pto = "TSELS",
         .lower = lower_sels,
         .doc = "Elementwise mask ? src : scalar over a packed mask as cmp/cmps make; tmp (a scratch tile on the "
                "NPU) is accepted and unused.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "torch.where(_unpack_mask({mask}, {R}, {C}), {src:r}, torch.tensor({scalar}, dtype={dtype}))"});
}

}  // namespace pypto::ops

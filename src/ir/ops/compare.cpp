// Compare and select: cmp / cmps produce a BOOL mask tile (one byte per element, 0 or 1);
// sel picks elementwise from two tiles by a mask.
#include "op_rules.h"

namespace pypto::ir::ops {

using codegen::KernelBuilder;
using isa::Instr;
using isa::Operand;

namespace {

TypePtr mask_like(const TileType& t) { return TileType::make(t.shape, DataType::BOOL, MemorySpace::Vec, t.valid_shape); }

TypePtr infer_cmp(const CallSite& s) {
  const TileType& a = tile_arg(s, "lhs");
  const TileType& b = tile_arg(s, "rhs");
  require_vec(s, "lhs", a);
  require_vec(s, "rhs", b);
  require_same_shape_dtype(s, "lhs", a, "rhs", b);
  cmp_mode(s, "cmp_type");
  return mask_like(a);
}

TypePtr infer_cmps(const CallSite& s) {
  const TileType& a = tile_arg(s, "tile");
  require_vec(s, "tile", a);
  tile_shape(s, "tile", a);
  scalar_arg(s, "scalar");
  cmp_mode(s, "cmp_type");
  return mask_like(a);
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
  if (mask.dtype != DataType::BOOL)
    op_fail(s, ErrorKind::kType, std::string("'mask' must be a BOOL tile, got ") + dtype_name(mask.dtype),
            "build the mask with pl.cmp or pl.cmps");
  if (tile_shape(s, "mask", mask) != tile_shape(s, "lhs", a))
    op_fail(s, ErrorKind::kType, "'mask' has shape " + shape_str(tile_shape(s, "mask", mask)) + " but 'lhs' has " +
                                     shape_str(tile_shape(s, "lhs", a)));
  return TileType::make(a.shape, a.dtype, MemorySpace::Vec, a.valid_shape);
}

}  // namespace

void register_compare_ops(OpRegistry& r) {
  r.add({.name = "tile.cmp",
         .params = {expr_param("lhs"), expr_param("rhs"), attr_param("cmp_type", std::string("EQ"))},
         .infer_type = infer_cmp,
         .pto = "TCMP",
         .lower = [](const Call& c, const VarPtr& d, KernelBuilder& kb) { lower_cmp(c, d, kb, "TCMP"); },
         .doc = "Elementwise comparison lhs <cmp_type> rhs (EQ NE LT LE GT GE) as a BOOL mask tile.",
         .aliases = {},
         .scalar_variant = "tile.cmps",
         .torch = "_cmp({lhs:r}, {rhs:r}, {cmp_type})"});
  r.add({.name = "tile.cmps",
         .params = {expr_param("tile"), expr_param("scalar"), attr_param("cmp_type", std::string("EQ"))},
         .infer_type = infer_cmps,
         .pto = "TCMPS",
         .lower = [](const Call& c, const VarPtr& d, KernelBuilder& kb) { lower_cmp(c, d, kb, "TCMPS"); },
         .doc = "Elementwise comparison tile <cmp_type> scalar as a BOOL mask tile.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_cmp({tile:r}, {scalar}, {cmp_type})"});
  r.add({.name = "tile.sel",
         .params = {expr_param("mask"), expr_param("lhs"), expr_param("rhs")},
         .infer_type = infer_sel,
         .pto = "TSEL",
         .lower = {},
         .doc = "Elementwise mask ? lhs : rhs.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "torch.where({mask:r}.bool(), {lhs:r}, {rhs:r})"});
}

}  // namespace pypto::ir::ops

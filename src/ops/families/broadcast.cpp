// Broadcast ops: expand a [M, 1] column of row values (row_expand*) or a [1, N] row of
// column values (col_expand*) across a tile, alone or fused with an arithmetic op.
#include "../op_rules.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

// `vec` must be [M, 1] (rows) or [1, N] (columns) matching `tile`'s shape [M, N].
void check_vector(const CallSite& s, const std::string& tile_name, const TileType& tile, const std::string& vec_name,
                  const TileType& vec, bool rows) {
  require_vec(s, tile_name, tile);
  require_vec(s, vec_name, vec);
  auto ts = tile_shape(s, tile_name, tile), vs = tile_shape(s, vec_name, vec);
  std::vector<int64_t> want = rows ? std::vector<int64_t>{ts[0], 1} : std::vector<int64_t>{1, ts[1]};
  if (vs != want)
    op_fail(s, ErrorKind::kType,
            "argument '" + vec_name + "' has shape " + shape_str(vs) + "; for a " + shape_str(ts) + " tile it must be " +
                shape_str(want),
            rows ? "pass one value per row, e.g. the [M, 1] result of pl.row_max"
                 : "pass one value per column, e.g. the [1, N] result of pl.col_max");
  if (vec.dtype != tile.dtype)
    op_fail(s, ErrorKind::kType,
            "argument '" + vec_name + "' is " + dtype_name(vec.dtype) + " but '" + tile_name + "' is " + dtype_name(tile.dtype),
            std::string("convert with pl.cast(") + vec_name + ", pl." + dtype_name(tile.dtype) + ")");
}

TypePtr infer_expand(const CallSite& s, bool rows) {
  const TileType& target = tile_arg(s, "target");
  const TileType& src = tile_arg(s, "src");
  check_vector(s, "target", target, "src", src, rows);
  if (!s.op.pto.empty()) require_instr_dtype(s, "src", src, s.op.pto);
  return TileType::make(target.shape, src.dtype, MemorySpace::Vec, target.valid_shape);
}

TypePtr infer_expand_binary(const CallSite& s, bool rows, bool needs_float) {
  const TileType& tile = tile_arg(s, "tile");
  const char* vec_name = rows ? "row_vec" : "col_vec";
  const TileType& vec = tile_arg(s, vec_name);
  check_vector(s, "tile", tile, vec_name, vec, rows);
  if (!s.op.pto.empty()) require_instr_dtype(s, "tile", tile, s.op.pto);
  if (needs_float && !dtype_is_float(tile.dtype))
    op_fail(s, ErrorKind::kType, std::string("needs a floating-point tile, got ") + dtype_name(tile.dtype));
  return TileType::make(tile.shape, tile.dtype, MemorySpace::Vec, tile.valid_shape);
}

// row_expand(target, src): target only gives the shape; the instruction reads src alone.
void lower_expand(const Call& c, const VarPtr& dst, KernelBuilder& kb, const char* pto) {
  int src = kb.tile(c.args[1]);
  int out = kb.define_tile(dst);
  Instr in;
  in.mnemonic = pto;
  in.outs = {Operand::tile(out)};
  in.ins = {Operand::tile(src)};
  kb.emit(in);
}

}  // namespace

void register_broadcast_ops(OpRegistry& r) {
  for (bool rows : {true, false}) {
    std::string prefix = rows ? "row_expand" : "col_expand";
    std::string pto = rows ? "TROWEXPAND" : "TCOLEXPAND";
    const char* unit = rows ? "row" : "column";
    const char* vshape = rows ? "[M, 1]" : "[1, N]";
    r.add({.name = "tile." + prefix,
           .params = {aka(expr_param("target"), {"lhs", "tensor"}),
                      aka(expr_param("src"), {rows ? "row_vec" : "col_vec", "rhs"})},
           .infer_type = [rows](const CallSite& s) { return infer_expand(s, rows); },
           .pto = pto,
           .lower = [rows](const Call& c, const VarPtr& d, KernelBuilder& kb) {
             lower_expand(c, d, kb, rows ? "TROWEXPAND" : "TCOLEXPAND");
           },
           .doc = std::string("Broadcast src ") + vshape + " across every " + unit + " of a tile shaped like target.",
           .aliases = {},
           .scalar_variant = "",
           .torch = rows ? "{src}[:{R}, :1].expand({R}, {C})" : "{src}[:1, :{C}].expand({R}, {C})",
           .tensor_form = rows ? TensorOpShape::kRowExpand : TensorOpShape::kColExpand});
    // The vector cut to the rows (columns) of the result's valid region, broadcast by torch.
    const std::string v = rows ? "{row_vec}[:{R}, :1]" : "{col_vec}[:1, :{C}]";
    struct Form {
      const char* form;
      const char* meaning;
      std::string torch;
    };
    const Form forms[] = {{"add", "+", "{tile:r} + " + v},
                          {"sub", "-", "{tile:r} - " + v},
                          {"mul", "*", "{tile:r} * " + v},
                          {"div", "/", "_div({tile:r}, " + v + ")"},
                          {"max", "max", "torch.maximum({tile:r}, " + v + ")"},
                          {"min", "min", "torch.minimum({tile:r}, " + v + ")"},
                          {"expdif", "", "torch.exp({tile:r} - " + v + ")"}};
    for (auto& [form, meaning, torch] : forms) {
      bool needs_float = std::string(form) == "expdif";
      std::string up = form;
      for (auto& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      r.add({.name = "tile." + prefix + "_" + form,
             .params = {aka(expr_param("tile"), {"lhs", "tensor"}), aka(expr_param(rows ? "row_vec" : "col_vec"), {"rhs"}),
                        hint(expr_param("tmp", true))},
             .infer_type = [rows, needs_float](const CallSite& s) { return infer_expand_binary(s, rows, needs_float); },
             .pto = pto + up,
             .lower = {},
             .doc = (needs_float ? std::string("exp(tile - v)") : std::string("tile ") + meaning + " v") + ", v a " + vshape +
                    " vector broadcast along each " + unit + ".",
             .aliases = {},
             .scalar_variant = "",
             .torch = torch,
             .tensor_form = rows ? TensorOpShape::kRowExpand : TensorOpShape::kColExpand});
    }
  }
}

}  // namespace pypto::ops

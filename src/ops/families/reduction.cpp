// Row and column reductions of a Vec tile: rows reduce to [M, 1], columns to [1, N]. An
// optional scratch tile (`tmp`) is accepted as PyPTO programs pass one; it is ins[1].
#include "../op_rules.h"

namespace pypto::ops {

namespace {

TypePtr infer_reduce(const CallSite& s, bool rows) {
  const TileType& t = tile_arg(s, "tile");
  require_vec(s, "tile", t);
  auto shape = tile_shape(s, "tile", t);
  if (!s.op.pto.empty()) require_instr_dtype(s, "tile", t, s.op.pto);
  if (s.arg("tmp_tile")) {
    const TileType& tmp = tile_arg(s, "tmp_tile");
    require_vec(s, "tmp_tile", tmp);
    if (tmp.dtype != t.dtype)
      op_fail(s, ErrorKind::kType,
              std::string("scratch tile 'tmp' is ") + dtype_name(tmp.dtype) + " but 'tile' is " + dtype_name(t.dtype),
              "create the scratch tile with the input's dtype");
  }
  std::vector<int64_t> out = rows ? std::vector<int64_t>{shape[0], 1} : std::vector<int64_t>{1, shape[1]};
  std::vector<ExprPtr> valid;
  if (!t.valid_shape.empty())
    valid = rows ? std::vector<ExprPtr>{t.valid_shape[0], ConstInt::make(1)}
                 : std::vector<ExprPtr>{ConstInt::make(1), t.valid_shape[1]};
  return TileType::make(const_shape(out), t.dtype, MemorySpace::Vec, valid);
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  struct Entry {
    const char* name;
    const char* pto;
    bool rows;
    const char* doc;
    const char* torch;  // integer sums and products accumulate in int64 and wrap to the dtype
  };
  const Entry entries[] = {
      {"row_sum", "TROWSUM", true, "Sum of each row: [M, N] -> [M, 1].", "{tile:v}.sum(1, keepdim=True).to({dtype})"},
      {"row_max", "TROWMAX", true, "Maximum of each row: [M, N] -> [M, 1].", "{tile:v}.amax(1, keepdim=True)"},
      {"row_min", "TROWMIN", true, "Minimum of each row: [M, N] -> [M, 1].", "{tile:v}.amin(1, keepdim=True)"},
      {"row_prod", "TROWPROD", true, "Product of each row: [M, N] -> [M, 1].", "{tile:v}.prod(1, keepdim=True).to({dtype})"},
      {"col_sum", "TCOLSUM", false, "Sum of each column: [M, N] -> [1, N].", "{tile:v}.sum(0, keepdim=True).to({dtype})"},
      {"col_max", "TCOLMAX", false, "Maximum of each column: [M, N] -> [1, N].", "{tile:v}.amax(0, keepdim=True)"},
      {"col_min", "TCOLMIN", false, "Minimum of each column: [M, N] -> [1, N].", "{tile:v}.amin(0, keepdim=True)"},
      {"col_prod", "TCOLPROD", false, "Product of each column: [M, N] -> [1, N].", "{tile:v}.prod(0, keepdim=True).to({dtype})"},
  };
  for (auto& e : entries) {
    bool rows = e.rows;
    r.add({.name = std::string("tile.") + e.name,
           .params = {aka(expr_param("tile"), {"input", "tensor"}), aka(expr_param("tmp_tile", true), {"tmp"})},
           .infer_type = [rows](const CallSite& s) { return infer_reduce(s, rows); },
           .pto = e.pto,
           .lower = {},
           .doc = e.doc,
           .aliases = {},
           .scalar_variant = "",
           .torch = e.torch,
           .tensor_form = rows ? TensorOpShape::kRowReduce : TensorOpShape::kColReduce});
  }
}

}  // namespace pypto::ops

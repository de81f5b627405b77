// Shape ops on tiles: views of the same buffer (reshape, set_validshape), copies into a new
// layout (transpose, transpose_view, slice, concat), writes into part of a tile (assemble)
// and padding of the invalid region (fillpad; fillpad_expand into a larger tile: TFILLPAD_EXPAND,
// fillpad_inplace: TFILLPAD); extract copies a window at a row and column out (TEXTRACT).
#include <cmath>

#include "../op_rules.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

// A view shares the source's buffer: no instruction, a new TileDesc at the same address.
void lower_view(const Call& c, const VarPtr& dst, KernelBuilder& kb) { kb.define_view(dst, kb.tile(c.args[0])); }

TypePtr infer_reshape(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  auto from = tile_shape(s, "tile", t);
  auto to = shape_attr(s, "shape");
  if (to.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(to) + " is not 2-D; tiles are 2-D");
  if (from[0] * from[1] != to[0] * to[1])
    op_fail(s, ErrorKind::kValue,
            "cannot reshape " + shape_str(from) + " (" + std::to_string(from[0] * from[1]) + " elements) to " +
                shape_str(to) + " (" + std::to_string(to[0] * to[1]) + " elements)",
            "the element count must stay the same");
  std::vector<ExprPtr> valid;
  if (!t.valid_shape.empty() && from != to) {
    // A partly valid vector keeps its valid prefix when turned between [M, 1] and [1, M].
    bool column_to_row = from[1] == 1 && to[0] == 1, row_to_column = from[0] == 1 && to[1] == 1;
    if (column_to_row) valid = {ConstInt::make(1), t.valid_shape[0]};
    else if (row_to_column) valid = {t.valid_shape[1], ConstInt::make(1)};
    else
      op_fail(s, ErrorKind::kValue, "cannot reshape the partly valid tile " + type_str(s.arg("tile")->type),
              "make it fully valid first with pl.tile.fillpad(tile, pad_value=pl.PadValue.zero)");
  } else {
    valid = t.valid_shape;
  }
  return TileType::make(const_shape(to), t.dtype, t.memory, valid, t.pad);
}

// reinterpret_view(tile, dtype, shape=None): the tile's bytes read as another dtype. Without
// shape the columns scale by the byte ratio; with shape, any 2-D shape of the same bytes.
TypePtr infer_reinterpret_view(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  auto from = tile_shape(s, "tile", t);
  DataType to_dtype = dtype_attr(s, "dtype");
  if (to_dtype == t.dtype)
    op_fail(s, ErrorKind::kValue, "reinterpret_view to " + std::string(dtype_name(to_dtype)) + ", the tile's own dtype",
            "pass another dtype, or use the tile itself");
  const int64_t sa = dtype_bits(t.dtype), sb = dtype_bits(to_dtype);
  if (sa % 8 || sb % 8)
    op_fail(s, ErrorKind::kType, "reinterpret_view between " + std::string(dtype_name(t.dtype)) + " and " +
                                     dtype_name(to_dtype) + ": sub-byte dtypes are not supported",
            "reinterpret whole-byte dtypes (8, 16, 32 or 64 bits)");
  if (!t.valid_shape.empty())
    op_fail(s, ErrorKind::kValue, "reinterpret_view of the partly valid tile " + type_str(s.arg("tile")->type),
            "make it fully valid first with pl.tile.fillpad(tile, pad_value=pl.PadValue.zero)");
  const int64_t bytes = from[0] * from[1] * sa / 8;
  std::vector<int64_t> to = shape_attr(s, "shape");
  if (to.empty()) {
    if ((from[1] * sa) % sb)
      op_fail(s, ErrorKind::kValue,
              "a row of " + type_str(s.arg("tile")->type) + " (" + std::to_string(from[1] * sa / 8) +
                  " bytes) is not a whole number of " + dtype_name(to_dtype) + " elements",
              "pass shape= with the same byte count, or a tile whose row bytes divide by the new element size");
    to = {from[0], from[1] * sa / sb};
  }
  if (to.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(to) + " is not 2-D; tiles are 2-D");
  if (to[0] * to[1] * sb / 8 != bytes || (to[0] * to[1] * sb) % 8)
    op_fail(s, ErrorKind::kValue,
            "shape " + shape_str(to) + " of " + dtype_name(to_dtype) + " is " + std::to_string(to[0] * to[1] * sb / 8) +
                " bytes, but the tile is " + std::to_string(bytes),
            "keep the byte count: rows * cols * element size must stay the same");
  return TileType::make(const_shape(to), to_dtype, t.memory, {}, t.pad);
}

TypePtr infer_transpose(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  auto shape = tile_shape(s, "tile", t);
  int64_t a1 = int_attr(s, "axis1"), a2 = int_attr(s, "axis2");
  if (!((a1 == 0 && a2 == 1) || (a1 == 1 && a2 == 0)))
    op_fail(s, ErrorKind::kValue, "tiles are 2-D; axes must be 0 and 1, got " + std::to_string(a1) + " and " + std::to_string(a2));
  require_vec(s, "tile", t);
  std::vector<ExprPtr> valid;
  if (!t.valid_shape.empty()) valid = {t.valid_shape[1], t.valid_shape[0]};
  return TileType::make(const_shape({shape[1], shape[0]}), t.dtype, MemorySpace::Vec, valid);
}

TypePtr infer_transpose_view(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  auto shape = tile_shape(s, "tile", t);
  require_param_memory(s, "tile", t);  // Mat (the parameter record)
  std::vector<ExprPtr> valid;
  if (!t.valid_shape.empty()) valid = {t.valid_shape[1], t.valid_shape[0]};
  return TileType::make(const_shape({shape[1], shape[0]}), t.dtype, MemorySpace::Mat, valid);
}

// Static offsets plus extents must stay inside the outer tile.
void check_inside(const CallSite& s, const std::vector<int64_t>& outer, const std::vector<ExprPtr>& offsets,
                  const std::vector<int64_t>& inner, const char* what) {
  if (offsets.size() != 2)
    op_fail(s, ErrorKind::kType, "'offsets' must have 2 entries [row, col], got " + std::to_string(offsets.size()));
  for (int d = 0; d < 2; ++d) {
    auto off = as_const_int(offsets[d]);
    if (off && (*off < 0 || *off + inner[d] > outer[d]))
      op_fail(s, ErrorKind::kValue,
              std::string(what) + " " + shape_str(inner) + " at offset " + std::to_string(*off) + " of dimension " +
                  std::to_string(d) + " leaves the " + shape_str(outer) + " tile",
              "keep offset + extent within the tile");
  }
}

TypePtr infer_slice(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  auto outer = tile_shape(s, "tile", t);
  auto shape = shape_attr(s, "shape");
  if (shape.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(shape) + " is not 2-D; tiles are 2-D");
  auto offsets = list_arg(s, "offsets");
  check_inside(s, outer, offsets, shape, "the slice");
  auto valid = list_arg(s, "valid_shape");
  if (!valid.empty() && valid.size() != 2)
    op_fail(s, ErrorKind::kType, "'valid_shape' must have 2 entries [rows, cols]");
  if (bool_attr(s, "clamp"))
    op_fail(s, ErrorKind::kType, "clamp=True applies to tensor slices only; a tile slice must lie inside the tile",
            "drop clamp=True, or pass valid_shape=[rows, cols] for the part of the window that holds data");
  // drop_dims: the named axes must be static unit dims that stay fully valid. Tiles are 2-D
  // here, so the result keeps both axes (a dropped row axis leaves the [1, N] row that a
  // 1-D value is on this chip).
  for (int64_t d : std::get<std::vector<int64_t>>(s.attr("drop_dims"))) {
    if (d < -2 || d > 1)
      op_fail(s, ErrorKind::kValue, "drop_dims names axis " + std::to_string(d) + ", but a tile has axes 0 and 1");
    int64_t axis = d < 0 ? d + 2 : d;
    if (shape[axis] != 1)
      op_fail(s, ErrorKind::kValue,
              "drop_dims names axis " + std::to_string(axis) + " of extent " + std::to_string(shape[axis]) +
                  "; only a unit axis can be dropped",
              "make shape[" + std::to_string(axis) + "] = 1 or drop another axis");
    if (!valid.empty()) {
      auto v = as_const_int(valid[axis]);
      if (!v || *v != 1)
        op_fail(s, ErrorKind::kValue, "the dropped axis " + std::to_string(axis) + " must stay fully valid",
                "do not narrow a dropped axis with valid_shape");
    }
  }
  // Validity never widens: the source's valid region, shifted by the offset, cut to the
  // window, then narrowed by valid_shape.
  if (!t.valid_shape.empty()) {
    std::vector<ExprPtr> cut(2);
    for (int d = 0; d < 2; ++d) {
      ExprPtr left = BinaryExpr::make(BinaryOp::Sub, t.valid_shape[d], offsets[d], s.span);
      if (auto a = as_const_int(t.valid_shape[d]), b = as_const_int(offsets[d]); a && b)
        left = ConstInt::make(*a - *b, DataType::INDEX);
      ExprPtr want = valid.empty() ? ConstInt::make(shape[d], DataType::INDEX) : valid[d];
      cut[d] = clamp_extent(want, left);
    }
    bool full = true;
    for (int d = 0; d < 2; ++d) {
      auto v = as_const_int(cut[d]);
      full = full && v && *v == shape[d];
    }
    valid = full ? std::vector<ExprPtr>{} : cut;
  }
  // pad_value: PadValue.zero / max / min, or 0 / math.inf / -math.inf; unset keeps the source's.
  PadValue pad = t.pad;
  const AttrValue& pv = s.attr("pad_value");
  if (auto* p = std::get_if<PadValue>(&pv)) {
    pad = *p;
  } else if (auto* str = std::get_if<std::string>(&pv); str && !str->empty()) {
    op_fail(s, ErrorKind::kType, "pad_value must be a pl.PadValue, 0, math.inf or -math.inf, got '" + *str + "'");
  } else if (auto* f = std::get_if<double>(&pv)) {
    if (*f == 0) pad = PadValue::zero;
    else if (std::isinf(*f)) pad = *f > 0 ? PadValue::max : PadValue::min;
    else op_fail(s, ErrorKind::kValue, "pad_value " + std::to_string(*f) + " is not a pad mode", "use 0, math.inf or -math.inf");
  } else if (auto* i = std::get_if<int64_t>(&pv)) {
    if (*i != 0) op_fail(s, ErrorKind::kValue, "pad_value " + std::to_string(*i) + " is not a pad mode", "use 0, math.inf or -math.inf");
    pad = PadValue::zero;
  }
  return TileType::make(const_shape(shape), t.dtype, t.memory, valid, pad);
}

void lower_slice(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int src = kb.tile(c.args[0]);
  auto offsets = kb.scalars(c.args[1]);
  int out = kb.define_tile(dst);
  Instr in;
  in.mnemonic = "TEXTRACT";
  in.outs = {Operand::tile(out)};
  in.ins = {Operand::tile(src), Operand::list_of(offsets)};
  kb.emit(in);
}

TypePtr infer_concat(const CallSite& s) {
  const TileType& a = tile_arg(s, "lhs");
  const TileType& b = tile_arg(s, "rhs");
  require_vec(s, "lhs", a);
  require_vec(s, "rhs", b);
  auto sa = tile_shape(s, "lhs", a), sb = tile_shape(s, "rhs", b);
  if (sa[0] != sb[0])
    op_fail(s, ErrorKind::kType,
            "concat joins columns; 'lhs' has " + std::to_string(sa[0]) + " rows but 'rhs' has " + std::to_string(sb[0]),
            "concatenate tiles with the same number of rows");
  if (a.dtype != b.dtype)
    op_fail(s, ErrorKind::kType, std::string("'lhs' is ") + dtype_name(a.dtype) + " but 'rhs' is " + dtype_name(b.dtype));
  if (!a.valid_shape.empty() || !b.valid_shape.empty())
    op_fail(s, ErrorKind::kValue, "concat needs fully valid tiles",
            "make them fully valid first with pl.tile.fillpad(tile, pad_value=pl.PadValue.zero)");
  return TileType::make(const_shape({sa[0], sa[1] + sb[1]}), a.dtype, MemorySpace::Vec);
}

TypePtr infer_assemble(const CallSite& s) {
  const TileType& target = tile_arg(s, "target");
  const TileType& src = tile_arg(s, "src");
  auto outer = tile_shape(s, "target", target), inner = tile_shape(s, "src", src);
  // Acc -> Mat (the cube's TINSERT through the fixpipe): a matmul result written into an L1
  // tile, an FP32 result optionally narrowed to FP16 / BF16 on the way.
  const bool acc_to_mat = src.memory == MemorySpace::Acc && target.memory == MemorySpace::Mat;
  const bool narrows = acc_to_mat && src.dtype == DataType::FP32 &&
                       (target.dtype == DataType::FP16 || target.dtype == DataType::BF16);
  if (target.dtype != src.dtype && !narrows)
    op_fail(s, ErrorKind::kType,
            std::string("'src' is ") + dtype_name(src.dtype) + " but 'target' is " + dtype_name(target.dtype) +
                (acc_to_mat ? " (an Acc tile enters a Mat tile in its own dtype, or FP32 narrowed to FP16 / BF16)" : ""),
            std::string("convert with pl.cast(src, pl.") + dtype_name(target.dtype) + ")");
  if (target.memory != src.memory && !acc_to_mat)
    op_fail(s, ErrorKind::kType,
            std::string("'src' is in ") + memory_space_name(src.memory) + " but 'target' is in " +
                memory_space_name(target.memory),
            "move src to the target's memory first with pl.move (an Acc tile may also be assembled into a Mat tile)");
  check_inside(s, outer, list_arg(s, "offsets"), inner, "the source");
  return TileType::make(target.shape, target.dtype, target.memory, target.valid_shape, target.pad);
}

// The result is the target with src written in; when planning gave it another buffer the
// target is copied there first.
void lower_assemble(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int target = kb.tile(c.args[0]);
  int src = kb.tile(c.args[1]);
  auto offsets = kb.scalars(c.args[2]);
  int out = define_updated_tile(kb, dst, target);
  Instr in;
  in.mnemonic = "TINSERT";
  in.outs = {Operand::tile(out)};
  in.ins = {Operand::tile(src), Operand::list_of(offsets)};
  kb.emit(in);
}

TypePtr infer_fillpad(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  tile_shape(s, "tile", t);
  require_vec(s, "tile", t);
  PadValue pad = pad_attr(s, "pad_value");
  if (pad == PadValue::null)
    op_fail(s, ErrorKind::kValue, "pad_value must be zero, max or min", "write pad_value=pl.PadValue.zero");
  return TileType::make(t.shape, t.dtype, MemorySpace::Vec, {}, pad);
}

TypePtr infer_set_validshape(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  auto shape = tile_shape(s, "tile", t);
  // PyPTO's set_validshape(tile, valid_rows, valid_cols), or our valid_shape=[rows, cols].
  std::vector<ExprPtr> valid = list_arg(s, "valid_shape");
  ExprPtr rows = s.arg("valid_rows"), cols = s.arg("valid_cols");
  if (rows && rows->as<ListExpr>() && !cols && valid.empty()) {
    valid = rows->as<ListExpr>()->elems;
  } else if (rows || cols) {
    if (!rows || !cols || !valid.empty())
      op_fail(s, ErrorKind::kType, "give both valid_rows and valid_cols (or valid_shape=[rows, cols] alone)",
              "call it as pl.set_validshape(tile, valid_rows, valid_cols)");
    // A Python int next to a float tile arrives as a float constant: an integral one is an extent.
    auto extent = [&](const ExprPtr& e, const char* name) -> ExprPtr {
      if (auto* f = e->as<ConstFloat>(); f && f->value == std::floor(f->value))
        return ConstInt::make(static_cast<int64_t>(f->value), DataType::INDEX, e->span);
      require_int_scalar(s, name);
      return e;
    };
    valid = {extent(rows, "valid_rows"), extent(cols, "valid_cols")};
  }
  if (valid.size() != 2) op_fail(s, ErrorKind::kType, "'valid_shape' must have 2 entries [rows, cols]");
  for (int d = 0; d < 2; ++d) {
    auto v = as_const_int(valid[d]);
    if (v && (*v < 0 || *v > shape[d]))
      op_fail(s, ErrorKind::kValue,
              "valid_shape[" + std::to_string(d) + "] = " + std::to_string(*v) + " is outside 0.." + std::to_string(shape[d]),
              "the valid shape is a prefix of the tile shape " + shape_str(shape));
  }
  return TileType::make(t.shape, t.dtype, t.memory, valid, t.pad);
}


// ---- fillpad_expand / fillpad_inplace -------------------------------------------------------

PadValue checked_pad(const CallSite& s) {
  PadValue pad = pad_attr(s, "pad_value");
  if (pad == PadValue::null)
    op_fail(s, ErrorKind::kValue, "pad_value must be zero, max or min", "write pad_value=pl.PadValue.zero");
  return pad;
}

TypePtr infer_fillpad_expand(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  require_vec(s, "tile", t);
  auto src = tile_shape(s, "tile", t);
  auto shape = vec_shape_attr(s);
  for (int d = 0; d < 2; ++d)
    if (shape[d] < src[d])
      op_fail(s, ErrorKind::kValue,
              "'shape' = " + shape_str(shape) + " is smaller than the " + shape_str(src) + " tile in dimension " +
                  std::to_string(d),
              "fillpad_expand copies into a shape at least as large as the tile; use pl.tile.slice to cut one");
  return TileType::make(const_shape(shape), t.dtype, MemorySpace::Vec, {}, checked_pad(s));
}

TypePtr infer_fillpad_inplace(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  tile_shape(s, "tile", t);
  require_vec(s, "tile", t);
  return TileType::make(t.shape, t.dtype, MemorySpace::Vec, {}, checked_pad(s));
}

// ---- extract ----------------------------------------------------------------------------------

TypePtr infer_extract(const CallSite& s) {
  const TileType& t = tile_arg(s, "src");
  auto outer = tile_shape(s, "src", t);
  auto shape = shape_attr(s, "shape");
  if (shape.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(shape) + " is not 2-D; tiles are 2-D");
  require_int_scalar(s, "index_row");
  require_int_scalar(s, "index_col");
  const char* names[] = {"index_row", "index_col"};
  for (int d = 0; d < 2; ++d) {
    auto off = as_const_int(s.arg(names[d]));
    if (off && (*off < 0 || *off + shape[d] > outer[d]))
      op_fail(s, ErrorKind::kValue,
              "the " + shape_str(shape) + " window at " + names[d] + " = " + std::to_string(*off) + " leaves the " +
                  shape_str(outer) + " tile",
              "keep index + extent within the tile");
  }
  MemorySpace target = t.memory;
  const AttrValue& m = s.attr("target_memory");
  if (std::get_if<MemorySpace>(&m)) target = memory_attr(s, "target_memory");
  if (target != t.memory) {
    using M = MemorySpace;
    bool ok = (t.memory == M::Mat && (target == M::Left || target == M::Right || target == M::Bias)) ||
              (t.memory == M::Acc && (target == M::Vec || target == M::Mat)) || (t.memory == M::Vec && target == M::Mat);
    if (!ok)
      op_fail(s, ErrorKind::kType,
              std::string("cannot extract from a ") + memory_space_name(t.memory) + " tile into " +
                  memory_space_name(target),
              "extract within one memory, or Mat -> Left/Right/Bias, Acc -> Vec/Mat, Vec -> Mat");
  }
  return TileType::make(const_shape(shape), t.dtype, target);
}

ParamSpec index_param(const std::string& name) {
  ParamSpec p = expr_param(name);
  p.index = true;
  return p;
}

void lower_extract(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int src = kb.tile(c.args[0]);
  std::vector<isa::Scalar> offsets = {kb.scalar(c.args[1]), kb.scalar(c.args[2])};
  int out = kb.define_tile(dst);
  Instr in;
  in.mnemonic = "TEXTRACT";
  in.outs = {Operand::tile(out)};
  in.ins = {Operand::tile(src), Operand::list_of(offsets)};
  kb.emit(in);
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  r.add({.name = "tile.reinterpret_view",
         .params = {aka(expr_param("tile"), {"data"}), attr_param("dtype"),
                    quiet(attr_param("shape", std::vector<int64_t>{}))},
         .infer_type = infer_reinterpret_view,
         .pto = "",
         .lower = lower_view,
         .doc = "View the tile's bytes as another dtype (no copy): [R, C] -> [R, C * old size / new size], or "
                "`shape` of the same byte count.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "{tile}.contiguous().view({dtype}).reshape({R}, {C})"});
  r.add({.name = "tile.reshape",
         .params = {aka(expr_param("tile"), {"input", "tensor"}), attr_param("shape")},
         .infer_type = infer_reshape,
         .pto = "",
         .lower = lower_view,
         .doc = "View the tile's buffer with another shape of the same element count (e.g. [M, 1] <-> [1, M]).",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "{tile}.reshape({shape})"});
  r.add({.name = "tile.transpose",
         .params = {aka(expr_param("tile"), {"input", "tensor"}), attr_param("axis1", int64_t{0}), attr_param("axis2", int64_t{1}),
                    hint(expr_param("tmp_tile", true))},
         .infer_type = infer_transpose,
         .pto = "TTRANS",
         .lower = {},
         .doc = "Transpose a Vec tile: [M, N] -> [N, M].",
         .aliases = {},
         .scalar_variant = "",
         .torch = "{tile:v}.transpose(0, 1)"});
  r.add({.name = "tile.transpose_view",
         .params = {in_memory(expr_param("tile"), MemorySpace::Mat)},
         .infer_type = infer_transpose_view,
         .pto = "TTRANS",
         .lower = {},
         .doc = "A Mat tile seen transposed ([M, N] -> [N, M]), e.g. for A @ B^T through Right.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "{tile:v}.transpose(0, 1)"});
  r.add({.name = "tile.slice",
         .params = {aka(expr_param("tile"), {"input", "tensor"}), attr_param("shape"), aka(list_param("offsets"), {"offset"}),
                    list_param("valid_shape", true), quiet(attr_param("drop_dims", std::vector<int64_t>{})),
                    quiet(attr_param("pad_value", std::string())), quiet(attr_param("clamp", false))},
         .infer_type = infer_slice,
         .pto = "TEXTRACT",
         .lower = lower_slice,
         .doc = "Copy the [rows, cols] window at offsets out of a tile.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_window({tile}, {offsets}, {R}, {C})"});
  r.add({.name = "tile.concat",
         .params = {aka(expr_param("lhs"), {"src0"}), aka(expr_param("rhs"), {"src1"})},
         .infer_type = infer_concat,
         .pto = "TCONCAT",
         .lower = {},
         .doc = "Join two tiles with the same rows side by side: [M, A] ++ [M, B] -> [M, A + B].",
         .aliases = {},
         .scalar_variant = "",
         .torch = "torch.cat([{lhs}, {rhs}], dim=1)",
         .tensor_form = TensorOpShape::kConcat});
  r.add({.name = "tile.assemble",
         .params = {any_memory(expr_param("target")), any_memory(aka(expr_param("src"), {"source"})),
                    aka(list_param("offsets"), {"offset"})},
         .infer_type = infer_assemble,
         .pto = "TINSERT",
         .lower = lower_assemble,
         .doc = "Write src into target at offsets; returns the updated target. Both in one memory and dtype, or src an "
                "Acc tile (a matmul result) and target a Mat tile: the cube's TINSERT, which may narrow FP32 to FP16 / "
                "BF16 (rounding to nearest even).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_insert({target}, {src:v}, {offsets})"});
  r.add({.name = "tile.fillpad",
         .params = {aka(expr_param("tile"), {"value", "tensor"}), attr_param("pad_value", PadValue::zero)},
         .infer_type = infer_fillpad,
         .pto = "TFILLPAD",
         .lower = {},
         .doc = "A fully valid copy whose invalid region holds pad_value (zero, max or min).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "{tile:v}",
         .tensor_form = TensorOpShape::kIdentity});
  r.add({.name = "tile.set_validshape",
         .params = {aka(expr_param("tile"), {"input", "tensor"}), expr_param("valid_rows", true), expr_param("valid_cols", true),
                    list_param("valid_shape", true)},
         .infer_type = infer_set_validshape,
         .pto = "",
         .lower = lower_view,
         .doc = "View the tile with another valid shape [rows, cols] (values may be known only at run time).",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "{tile}"});
  r.add({.name = "tile.fillpad_expand",
         .params = {aka(expr_param("tile"), {"value", "tensor"}), attr_param("shape"), attr_param("pad_value", PadValue::zero)},
         .infer_type = infer_fillpad_expand,
         .pto = "TFILLPAD_EXPAND",
         .lower = {},
         .doc = "Copy the tile's valid region into a new fully valid tile of the larger `shape`; every other "
                "element holds pad_value (zero, max or min).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_fit({tile:v}, {R}, {C}, {pad_value})",
         .tensor_form = TensorOpShape::kWhole});
  r.add({.name = "tile.fillpad_inplace",
         .params = {expr_param("tile"), attr_param("pad_value", PadValue::zero)},
         .infer_type = infer_fillpad_inplace,
         .pto = "TFILLPAD",
         .lower = {},
         .doc = "The tile made fully valid, its invalid region set to pad_value (zero, max or min); the values "
                "are pl.tile.fillpad's (memory planning decides whether the result shares the tile's buffer).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "{tile:v}"});
  r.add({.name = "tile.extract",
         .params = {expr_param("src"), index_param("index_row"), index_param("index_col"), attr_param("shape"),
                    attr_param("target_memory", std::string())},
         .infer_type = infer_extract,
         .pto = "TEXTRACT",
         .lower = lower_extract,
         .doc = "Copy the [rows, cols] window at (index_row, index_col) out of a tile, into target_memory (default: "
                "the source's; Mat -> Left/Right/Bias, Acc -> Vec/Mat, Vec -> Mat).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_window({src}, [{index_row}, {index_col}], {R}, {C})"});
}

}  // namespace pypto::ops

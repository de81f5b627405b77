// Index ops on Vec tiles: arg-reductions (the column of each row's max/min, the row of each
// column's max/min, as INT32), gather and scatter along each row by an integer index tile
// (TGATHER / TSCATTER), gather from and scatter to global memory by flat element index
// (MGATHER / MSCATTER), and sorting: sort32 sorts each 32-element block of each row and
// mrgsort merges two sorted rows; both give (values, indices) pairs of tiles: INT32 columns,
// or the entries of sort32's idx= tile (UINT32 in PyPTO).
#include <tuple>

#include "../op_rules.h"
#include "pypto/isa/instructions.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

// The dtype of the index results of arg-reductions and sorts (instruction table summaries).
constexpr DataType kIndexDtype = DataType::INT32;

TypePtr infer_arg_reduce(const CallSite& s, bool rows, const std::string& pto) {
  const TileType& t = tile_arg(s, "tile");
  require_vec(s, "tile", t);
  auto shape = tile_shape(s, "tile", t);
  require_instr_dtype(s, "tile", t, pto);
  if (s.arg("tmp_tile")) {
    const TileType& tmp = tile_arg(s, "tmp_tile");
    require_vec(s, "tmp_tile", tmp);
    if (tmp.dtype != t.dtype)
      op_fail(s, ErrorKind::kType,
              std::string("scratch tile 'tmp' is ") + dtype_name(tmp.dtype) + " but 'tile' is " + dtype_name(t.dtype),
              "create the scratch tile with the input's dtype");
  }
  auto v = static_valid(t);
  if ((v[0] && *v[0] == 0) || (v[1] && *v[1] == 0))
    op_fail(s, ErrorKind::kValue, "the tile's valid region is empty; there is no max/min to locate");
  std::vector<int64_t> out = rows ? std::vector<int64_t>{shape[0], 1} : std::vector<int64_t>{1, shape[1]};
  std::vector<ExprPtr> valid;
  if (!t.valid_shape.empty())
    valid = rows ? std::vector<ExprPtr>{t.valid_shape[0], ConstInt::make(1, DataType::INDEX)}
                 : std::vector<ExprPtr>{ConstInt::make(1, DataType::INDEX), t.valid_shape[1]};
  return TileType::make(const_shape(out), kIndexDtype, MemorySpace::Vec, valid);
}

void require_index_tile(const CallSite& s, const std::string& name, const TileType& t) {
  require_vec(s, name, t);
  tile_shape(s, name, t);
  if (!dtype_is_int(t.dtype))
    op_fail(s, ErrorKind::kType, "argument '" + name + "' holds indices and must be an integer tile, got " +
                                     std::string(dtype_name(t.dtype)),
            "build it with pl.arange or an integer load, or pl.cast(" + name + ", pl.INT32)");
}

// gather(src, indices): result[r, c] = src[r, indices[r, c]], shaped like indices.
// PyPTO's gather/scatter keywords: `dim` is the last axis here (a row-wise gather, as
// torch.gather(input, -1, index)); the mask-pattern forms are not defined precisely enough
// by PyPTO's docs to implement, so each of their keywords fails with a not-supported error.
// dim=0 (or -2) works down the columns, as torch.gather(input, 0, index):
// result[r, c] = src[indices[r, c], c]; ExpandOps rewrites it into a row-wise TGATHER /
// TSCATTER over the tile seen as one row (element index indices[r, c] * cols + c).
bool along_columns(const CallSite& s) {
  int64_t dim = int_attr(s, "dim");
  if (dim < -2 || dim > 1)
    op_fail(s, ErrorKind::kValue, "dim=" + std::to_string(dim) + " is not an axis of a 2-D tile",
            "pass dim=-1 (along each row) or dim=0 (down each column)");
  return dim == 0 || dim == -2;
}

void check_pypto_form(const CallSite& s, const std::vector<const char*>& unsupported) {
  along_columns(s);
  for (const char* k : unsupported) {
    const AttrValue& v = s.attr(k);
    bool given = std::string(k) == "offset" ? std::get<int64_t>(v) != 0
                                             : !(std::holds_alternative<std::string>(v) && std::get<std::string>(v).empty());
    if (given)
      op_fail(s, ErrorKind::kType,
              std::string(k) + "= (the mask-pattern form of pl." + s.op.name.substr(s.op.name.find('.') + 1) +
                  ") is not supported",
              "gather/scatter along the last axis with index= (torch.gather semantics)");
  }
}

TypePtr infer_gather(const CallSite& s) {
  check_pypto_form(s, {"mask_pattern", "output_dtype", "kvalue", "cmp_mode", "out_cols", "offset", "count_dtype"});
  if (!s.arg("indices"))
    op_fail(s, ErrorKind::kType, "pl." + s.op.name + " needs index=", "call it as pl.gather(input, -1, index)");
  const TileType& src = tile_arg(s, "src");
  const TileType& idx = tile_arg(s, "indices");
  require_vec(s, "src", src);
  auto ss = tile_shape(s, "src", src);
  require_instr_dtype(s, "src", src, "TGATHER");
  require_index_tile(s, "indices", idx);
  auto is = tile_shape(s, "indices", idx);
  const bool cols = along_columns(s);
  if (cols && is[1] > ss[1])
    op_fail(s, ErrorKind::kType,
            "'indices' " + shape_str(is) + " has more columns than 'src' " + shape_str(ss) + "; with dim=0 column c of "
            "the result reads column c of src",
            "gather from a src with at least as many columns as the index tile");
  if (cols && (!src.valid_shape.empty() || !idx.valid_shape.empty()))
    op_fail(s, ErrorKind::kType, "a gather with dim=0 takes fully valid tiles",
            "make them fully valid first with pl.fillpad (or load them without valid_shape)");
  if (!cols && is[0] > ss[0])
    op_fail(s, ErrorKind::kType,
            "'indices' " + shape_str(is) + " has more rows than 'src' " + shape_str(ss) + "; row r of the result "
            "reads row r of src",
            "gather from a src with at least as many rows as the index tile");
  return TileType::make(idx.shape, src.dtype, MemorySpace::Vec, idx.valid_shape);
}

// scatter(target, indices, src): target with target[r, indices[r, c]] = src[r, c].
TypePtr infer_scatter(const CallSite& s) {
  check_pypto_form(s, {"mask_pattern"});
  if (s.op.name == "tensor.scatter" && s.arg("dst"))
    op_fail(s, ErrorKind::kType, "dst= (the mask-pattern form of pl.scatter) is not supported",
            "scatter along the last axis: pl.scatter(input, -1, index, src)");
  const TileType& target = tile_arg(s, "target");
  const TileType& idx = tile_arg(s, "indices");
  const TileType& src = tile_arg(s, "src");
  require_vec(s, "target", target);
  require_vec(s, "src", src);
  auto ts = tile_shape(s, "target", target);
  auto ss = tile_shape(s, "src", src);
  require_instr_dtype(s, "target", target, "TSCATTER");
  require_index_tile(s, "indices", idx);
  auto is = tile_shape(s, "indices", idx);
  if (is != ss)
    op_fail(s, ErrorKind::kType,
            "'indices' is " + shape_str(is) + " but 'src' is " + shape_str(ss) + "; each src element needs its index",
            "give one index per src element: an index tile of src's shape");
  const bool cols = along_columns(s);
  if (cols && ss[1] > ts[1])
    op_fail(s, ErrorKind::kType,
            "'src' " + shape_str(ss) + " has more columns than 'target' " + shape_str(ts) + "; with dim=0 column c of "
            "src writes column c of target",
            "scatter into a target with at least as many columns as src");
  if (cols && (!src.valid_shape.empty() || !idx.valid_shape.empty() || !target.valid_shape.empty()))
    op_fail(s, ErrorKind::kType, "a scatter with dim=0 takes fully valid tiles",
            "make them fully valid first with pl.fillpad (or load them without valid_shape)");
  if (!cols && ss[0] > ts[0])
    op_fail(s, ErrorKind::kType,
            "'src' " + shape_str(ss) + " has more rows than 'target' " + shape_str(ts) + "; row r of src writes row r "
            "of target",
            "scatter into a target with at least as many rows as src");
  if (src.dtype != target.dtype)
    op_fail(s, ErrorKind::kType,
            std::string("'src' is ") + dtype_name(src.dtype) + " but 'target' is " + dtype_name(target.dtype),
            std::string("convert with pl.cast(src, pl.") + dtype_name(target.dtype) + ")");
  return TileType::make(target.shape, target.dtype, MemorySpace::Vec, target.valid_shape, target.pad);
}

// The result is the target with src scattered in; when planning gave it another buffer the
// target is copied there first (as tile.assemble does).
void lower_scatter(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int target = kb.tile(c.args[0]);
  int idx = kb.tile(c.args[1]);
  int src = kb.tile(c.args[2]);
  int out = define_updated_tile(kb, dst, target);
  Instr in;
  in.mnemonic = "TSCATTER";
  in.outs = {Operand::tile(out)};
  in.ins = {Operand::tile(src), Operand::tile(idx)};
  kb.emit(in);
}

// scatter_update(input, dim, index, src): input with whole rows (dim 0 / -2) or whole columns
// (dim 1 / -1) replaced by src's, at the positions `index` lists (torch's
// input.index_copy(dim, index, src)): for dim 0, input[index[i], :] = src[i, :]. `index` holds
// one entry per src row (column), as an [N, 1] or [1, N] integer tile. No single
// instruction does this: ExpandOps rewrites it into TSCATTER over element indices.
int64_t scatter_update_dim(const CallSite& s) {
  int64_t dim = int_attr(s, "dim");
  if (dim < -2 || dim > 1)
    op_fail(s, ErrorKind::kValue, "dim=" + std::to_string(dim) + " is not an axis of a 2-D tile",
            "pass dim=0 (replace rows) or dim=1 (replace columns); -2 and -1 count from the end");
  return dim < 0 ? dim + 2 : dim;
}

TypePtr infer_scatter_update(const CallSite& s) {
  const int64_t d = scatter_update_dim(s);
  const TileType& in = tile_arg(s, "input");
  const TileType& idx = tile_arg(s, "index");
  const TileType& src = tile_arg(s, "src");
  require_vec(s, "input", in);
  require_vec(s, "src", src);
  require_index_tile(s, "index", idx);
  auto is = tile_shape(s, "input", in), ss = tile_shape(s, "src", src), xs = tile_shape(s, "index", idx);
  for (auto [name, t] : {std::pair{"input", &in}, {"src", &src}, {"index", &idx}})
    if (!t->valid_shape.empty())
      op_fail(s, ErrorKind::kType, std::string("'") + name + "' is " + type_str(s.arg(name)->type) +
                                       ", only partly valid; scatter_update replaces whole rows or columns",
              "make it fully valid first with pl.fillpad (or load it without valid_shape)");
  if (src.dtype != in.dtype)
    op_fail(s, ErrorKind::kType, std::string("'src' is ") + dtype_name(src.dtype) + " but 'input' is " + dtype_name(in.dtype),
            std::string("convert with pl.cast(src, pl.") + dtype_name(in.dtype) + ")");
  const int64_t keep = 1 - d;  // the axis src shares with input
  if (ss[keep] != is[keep])
    op_fail(s, ErrorKind::kType,
            "'src' is " + shape_str(ss) + " and 'input' " + shape_str(is) + "; replacing " + (d == 0 ? "rows" : "columns") +
                " needs the same number of " + (d == 0 ? "columns" : "rows"),
            d == 0 ? "give src input's columns: [N, " + std::to_string(is[1]) + "]"
                   : "give src input's rows: [" + std::to_string(is[0]) + ", N]");
  if (!(xs[0] == 1 || xs[1] == 1) || xs[0] * xs[1] != ss[d])
    op_fail(s, ErrorKind::kType,
            "'index' is " + shape_str(xs) + "; it lists one " + (d == 0 ? "row" : "column") + " of input for each of the " +
                std::to_string(ss[d]) + " " + (d == 0 ? "rows" : "columns") + " of src",
            "pass an index tile of shape [" + std::to_string(ss[d]) + ", 1] or [1, " + std::to_string(ss[d]) + "]");
  return s.arg("input")->type;
}

ExprPtr shape_of_list(const std::vector<int64_t>& v) {
  std::vector<ExprPtr> e;
  for (int64_t x : v) e.push_back(ConstInt::make(x, DataType::INDEX));
  return ListExpr::make(e);
}

ExprPtr expand_scatter_update(const Call& c, OpExpander& x) {
  int64_t d = std::get<int64_t>(c.attrs.at("dim"));
  if (d < 0) d += 2;
  const ExprPtr& input = c.args[0];
  const ExprPtr& index = c.args[1];
  const ExprPtr& src = c.args[2];
  auto is = *static_shape(input->type->as<TileType>()->shape);
  auto ss = *static_shape(src->type->as<TileType>()->shape);
  const int64_t n = ss[d];
  auto reshape = [&](const char* name, const ExprPtr& t, std::vector<int64_t> shape) {
    auto have = *static_shape(t->type->as<TileType>()->shape);
    if (have == shape) return t;
    return x.call(name, "tile.reshape", {t}, {{"shape", shape}}, c.span);
  };
  if (d == 1) {  // TSCATTER along each row with the column indices repeated down the rows
    ExprPtr row = reshape("index_row", index, {1, n});
    ExprPtr cols = x.emit("index_cols", make_op_call("tile.expand_clone", {row, shape_of_list({is[0], n})}, {}, {}, c.span));
    return make_op_call("tile.scatter", {input, cols, src}, {}, {}, c.span);
  }
  // Rows: element (i, j) of src goes to element index[i] * C + j of input seen as one row.
  const int64_t cols = is[1];
  DataType it = index->type->as<TileType>()->dtype;
  ExprPtr col = reshape("index_col", index, {n, 1});
  ExprPtr base = x.call("row_base", "tile.muls", {col, ConstInt::make(cols, it)}, {}, c.span);
  ExprPtr bases = x.emit("row_bases", make_op_call("tile.expand_clone", {base, shape_of_list({n, cols})}, {}, {}, c.span));
  ExprPtr iota = x.emit("col_iota", make_op_call("tile.ci", {ConstInt::make(0, it)}, {},
                                                  {{"shape", std::vector<int64_t>{1, cols}}, {"dtype", it}}, c.span));
  ExprPtr iotas = x.emit("col_iotas", make_op_call("tile.expand_clone", {iota, shape_of_list({n, cols})}, {}, {}, c.span));
  ExprPtr flat = x.call("flat_index", "tile.add", {bases, iotas}, {}, c.span);
  ExprPtr flat_row = reshape("flat_index_row", flat, {1, n * cols});
  ExprPtr src_row = reshape("src_row", src, {1, n * cols});
  ExprPtr in_row = reshape("input_row", input, {1, is[0] * cols});
  ExprPtr done = x.call("updated_row", "tile.scatter", {in_row, flat_row, src_row}, {}, c.span);
  return make_op_call("tile.reshape", {done}, {}, {{"shape", is}}, c.span);
}

// Element indices into `cols`-wide rows: indices[r, c] * cols + c, seen as one row.
ExprPtr flat_indices(const Call& c, OpExpander& x, const ExprPtr& indices, int64_t cols) {
  auto is = *static_shape(indices->type->as<TileType>()->shape);
  DataType it = indices->type->as<TileType>()->dtype;
  ExprPtr base = x.call("row_base", "tile.muls", {indices, ConstInt::make(cols, it)}, {}, c.span);
  ExprPtr iota = x.emit("col_iota", make_op_call("tile.ci", {ConstInt::make(0, it)}, {},
                                                  {{"shape", std::vector<int64_t>{1, is[1]}}, {"dtype", it}}, c.span));
  if (is[0] > 1)
    iota = x.emit("col_iotas", make_op_call("tile.expand_clone", {iota, shape_of_list(is)}, {}, {}, c.span));
  ExprPtr flat = x.call("flat_index", "tile.add", {base, iota}, {}, c.span);
  return is[0] == 1 ? flat : x.call("flat_index_row", "tile.reshape", {flat}, {{"shape", std::vector<int64_t>{1, is[0] * is[1]}}}, c.span);
}

ExprPtr as_row(const Call& c, OpExpander& x, const char* name, const ExprPtr& t) {
  auto sh = *static_shape(t->type->as<TileType>()->shape);
  if (sh[0] == 1) return t;
  return x.call(name, "tile.reshape", {t}, {{"shape", std::vector<int64_t>{1, sh[0] * sh[1]}}}, c.span);
}

ExprPtr expand_gather(const Call& c, OpExpander& x) {
  int64_t dim = std::get<int64_t>(c.attrs.at("dim"));
  if (dim != 0 && dim != -2) return nullptr;
  auto ss = *static_shape(c.args[0]->type->as<TileType>()->shape);
  auto is = *static_shape(c.args[1]->type->as<TileType>()->shape);
  ExprPtr flat = flat_indices(c, x, c.args[1], ss[1]);
  ExprPtr src_row = as_row(c, x, "src_row", c.args[0]);
  ExprPtr got = x.call("gathered_row", "tile.gather", {src_row, flat}, {}, c.span);
  return is[0] == 1 ? got : make_op_call("tile.reshape", {got}, {}, {{"shape", is}}, c.span);
}

ExprPtr expand_scatter(const Call& c, OpExpander& x) {
  int64_t dim = std::get<int64_t>(c.attrs.at("dim"));
  if (dim != 0 && dim != -2) return nullptr;
  auto ts = *static_shape(c.args[0]->type->as<TileType>()->shape);
  ExprPtr flat = flat_indices(c, x, c.args[1], ts[1]);
  ExprPtr target_row = as_row(c, x, "target_row", c.args[0]);
  ExprPtr src_row = as_row(c, x, "src_row", c.args[2]);
  ExprPtr done = x.call("scattered_row", "tile.scatter", {target_row, flat, src_row}, {}, c.span);
  return ts[0] == 1 ? done : make_op_call("tile.reshape", {done}, {}, {{"shape", ts}}, c.span);
}

// paged_gather(src, indices, block_table, block_size, size, max_indices): rows of a paged
// cache. `src` holds pages of `block_size` rows (its rows: every dimension but the last, in
// row-major order); `block_table` (read flat) lists the page of each run of block_size
// logical rows; `indices` the logical rows wanted. Row i of the result is
//   src row block_table[t // block_size] * block_size + t % block_size, t = indices[i],
// columns col_off .. col_off + size - 1, for i < max_indices: a [max_indices, size] tile in
// `space` (Vec or Mat), [size, max_indices] with is_trans (e.g. K^T for Q @ K^T). is_b_matrix
// (the tile is a matmul's right operand) has no effect on the values here. ExpandOps rewrites
// it into integer tile ops and an MGATHER from the cache.
int64_t positive_attr(const CallSite& s, const std::string& name, const std::string& fix) {
  const int64_t v = int_attr(s, name);
  if (v <= 0) op_fail(s, ErrorKind::kValue, "'" + name + "' = " + std::to_string(v) + " must be positive", fix);
  return v;
}

TypePtr infer_paged_gather(const CallSite& s) {
  const TensorType& src = tensor_arg(s, "src");
  const int64_t bs = positive_attr(s, "block_size", "pass block_size=N: the rows of one page of src");
  (void)bs;
  const int64_t size = positive_attr(s, "size", "pass size=N: the columns of each row to gather");
  const int64_t m = positive_attr(s, "max_indices", "pass max_indices=N: the rows of the result");
  const int64_t col_off = int_attr(s, "col_off");
  if (src.shape.size() < 2)
    op_fail(s, ErrorKind::kType, "'src' is " + type_str(s.arg("src")->type) + "; a paged cache has rows and columns",
            "pass the cache as a tensor of at least 2 dimensions [..., rows, cols]");
  auto d = as_const_int(src.shape.back());
  if (!d)
    op_fail(s, ErrorKind::kType, "the row length of 'src' (" + type_str(s.arg("src")->type) + ") is known only at run time",
            "give the cache a static last dimension");
  if (col_off < 0 || col_off + size > *d)
    op_fail(s, ErrorKind::kValue,
            "columns " + std::to_string(col_off) + " .. " + std::to_string(col_off + size - 1) + " lie outside the " +
                std::to_string(*d) + " columns of 'src'",
            "pass col_off >= 0 and col_off + size <= " + std::to_string(*d));
  const TensorType& table = tensor_arg(s, "block_table");
  if (!dtype_is_int(table.dtype))
    op_fail(s, ErrorKind::kType, std::string("'block_table' holds page numbers and must be an integer tensor, got ") +
                                     dtype_name(table.dtype),
            "pass an INT32 tensor of page numbers");
  const ExprPtr idx = s.arg("indices");
  DataType it;
  if (idx->type && idx->type->as<TensorType>()) {
    const TensorType& t = *idx->type->as<TensorType>();
    it = t.dtype;
    int64_t n = 1;
    bool known = true;
    for (auto& e : t.shape)
      if (auto v = as_const_int(e)) n *= *v; else known = false;
    bool row = t.shape.size() == 1 || (t.shape.size() == 2 && as_const_int(t.shape[0]) == 1);
    if (!row || (known && n < m))
      op_fail(s, ErrorKind::kType,
              "'indices' is " + type_str(idx->type) + "; it lists the " + std::to_string(m) + " logical rows to gather",
              "pass a [" + std::to_string(m) + "] or [1, " + std::to_string(m) + "] integer tensor (or more entries)");
  } else {
    const TileType& t = tile_arg(s, "indices");
    require_index_tile(s, "indices", t);
    it = t.dtype;
    auto sh = tile_shape(s, "indices", t);
    if (sh[0] != 1 || sh[1] != m)
      op_fail(s, ErrorKind::kType, "'indices' is a " + shape_str(sh) + " tile; it lists the " + std::to_string(m) +
                                       " logical rows to gather",
              "pass a [1, " + std::to_string(m) + "] integer tile");
  }
  if (!dtype_is_int(it))
    op_fail(s, ErrorKind::kType, std::string("'indices' holds row numbers and must be integers, got ") + dtype_name(it),
            "pass an INT32 tensor or tile");
  const MemorySpace space = memory_attr(s, "space");
  if (space != MemorySpace::Vec && space != MemorySpace::Mat)
    op_fail(s, ErrorKind::kType, std::string("the gathered rows land in Vec or Mat, not ") + memory_space_name(space),
            "pass space=pl.MemorySpace.Mat (a matmul operand) or pl.MemorySpace.Vec; pl.move it on from there");
  const bool trans = bool_attr(s, "is_trans");
  bool_attr(s, "is_b_matrix");
  std::vector<int64_t> shape = trans ? std::vector<int64_t>{size, m} : std::vector<int64_t>{m, size};
  if (shape[1] * dtype_bytes(src.dtype) % 32 != 0 || size * dtype_bytes(src.dtype) % 32 != 0)
    op_fail(s, ErrorKind::kValue,
            "the gathered " + shape_str(shape) + " " + dtype_name(src.dtype) + " tile needs rows of a multiple of 32 bytes",
            "gather a multiple of " + std::to_string(32 / dtype_bytes(src.dtype)) + " columns (and rows, with is_trans)");
  return TileType::make(const_shape(shape), src.dtype, space);
}

ExprPtr expand_paged_gather(const Call& c, OpExpander& x) {
  const int64_t bs = std::get<int64_t>(c.attrs.at("block_size")), size = std::get<int64_t>(c.attrs.at("size"));
  const int64_t m = std::get<int64_t>(c.attrs.at("max_indices")), col_off = std::get<int64_t>(c.attrs.at("col_off"));
  const ExprPtr& src = c.args[0];
  const ExprPtr& indices = c.args[1];
  const ExprPtr& table = c.args[2];
  const int64_t cols = *as_const_int(src->type->as<TensorType>()->shape.back());
  ExprPtr idx = indices;
  if (auto* t = indices->type->as<TensorType>()) {
    std::vector<ExprPtr> zero(t->shape.size(), ConstInt::make(0, DataType::INDEX));
    idx = x.call("indices_tile", "tile.load", {indices, ListExpr::make(zero)}, {{"shape", std::vector<int64_t>{1, m}}}, c.span);
  }
  const DataType it = idx->type->as<TileType>()->dtype;
  auto k = [&](int64_t v) { return ConstInt::make(v, it); };
  ExprPtr slot = x.call("page_slot", "tile.divs", {idx, k(bs)}, {}, c.span);
  ExprPtr within = x.call("page_row", "tile.rems", {idx, k(bs)}, {}, c.span);
  ExprPtr page = x.call("page", "tile.mgather", {table, slot}, {}, c.span);
  ExprPtr first = x.call("page_start", "tile.muls", {page, k(bs)}, {}, c.span);
  ExprPtr row = x.call("cache_row", "tile.add", {first, within}, {}, c.span);
  ExprPtr start = x.call("row_start", "tile.muls", {row, k(cols)}, {}, c.span);
  if (col_off != 0) start = x.call("row_start_col", "tile.adds", {start, k(col_off)}, {}, c.span);
  ExprPtr starts = x.call("row_starts", "tile.reshape", {start}, {{"shape", std::vector<int64_t>{m, 1}}}, c.span);
  ExprPtr wide = x.emit("row_starts_wide", make_op_call("tile.expand_clone", {starts, shape_of_list({m, size})}, {}, {}, c.span));
  ExprPtr iota = x.emit("col_iota", make_op_call("tile.ci", {k(0)}, {}, {{"shape", std::vector<int64_t>{1, size}}, {"dtype", it}}, c.span));
  ExprPtr iotas = x.emit("col_iotas", make_op_call("tile.expand_clone", {iota, shape_of_list({m, size})}, {}, {}, c.span));
  ExprPtr flat = x.call("cache_index", "tile.add", {wide, iotas}, {}, c.span);
  const bool trans = std::get<bool>(c.attrs.at("is_trans"));
  const MemorySpace space = std::get<MemorySpace>(c.attrs.at("space"));
  ExprPtr got = make_op_call("tile.mgather", {src, flat}, {}, {}, c.span);
  if (!trans && space == MemorySpace::Vec) return got;
  got = x.emit("gathered", got);
  if (trans) {
    ExprPtr t = make_op_call("tile.transpose", {got}, {}, {}, c.span);
    if (space == MemorySpace::Vec) return t;
    got = x.emit("gathered_t", t);
  }
  return make_op_call("tile.move", {got}, {}, {{"target_memory", MemorySpace::Mat}}, c.span);
}

void lower_kernel_only(const Call& c, const VarPtr&, KernelBuilder&) {
  fail(ErrorKind::kType, c.span, "pl." + c.op->name + " gathers into an on-chip tile, but it is called in the orchestration",
       "call it inside a kernel: a `with pl.at(level=pl.Level.CORE_GROUP):` block or an InCore function");
}

// mgather(tensor, indices): result[r, c] = tensor.flat[indices[r, c]] (row-major order).
TypePtr infer_mgather(const CallSite& s) {
  if (string_attr(s, "coalesce") != "row")
    op_fail(s, ErrorKind::kType, "coalesce='" + string_attr(s, "coalesce") + "' is not supported: elements are gathered one by one",
            "drop coalesce= (or pass 'row')");
  if (string_attr(s, "gather_oob") != "undefined")
    op_fail(s, ErrorKind::kType,
            "gather_oob='" + string_attr(s, "gather_oob") + "' is not supported: an index outside the tensor is a run-time error",
            "drop gather_oob=");
  if (memory_attr(s, "target_memory") != MemorySpace::Vec)
    op_fail(s, ErrorKind::kType, "mgather lands in Vec only", "drop target_memory= (or pass pl.MemorySpace.Vec)");
  const TensorType& t = tensor_arg(s, "tensor");
  const TileType& idx = tile_arg(s, "indices");
  require_index_tile(s, "indices", idx);
  if (idx.memory != MemorySpace::Vec)
    op_fail(s, ErrorKind::kType,
            std::string("'indices' is a ") + memory_space_name(idx.memory) + " tile; the gather reads indices from Vec",
            "pl.move(indices, target_memory=pl.MemorySpace.Vec)");
  const isa::InstrDef* def = isa::find_instr("MGATHER");
  if (!def->allows(t.dtype))
    op_fail(s, ErrorKind::kType, std::string("MGATHER does not move ") + dtype_name(t.dtype) + " elements");
  auto is = tile_shape(s, "indices", idx);
  if (is[1] * dtype_bytes(t.dtype) % 32 != 0)
    op_fail(s, ErrorKind::kValue,
            "the result, a " + shape_str(is) + " " + dtype_name(t.dtype) + " Vec tile, needs rows of a multiple of 32 "
            "bytes",
            "pad the index tile's columns and pass its valid_shape");
  auto valid = list_arg(s, "valid_shape");  // PyPTO's valid_shape=: the part of the result gathered
  if (!valid.empty() && valid.size() != 2) op_fail(s, ErrorKind::kType, "'valid_shape' must have 2 entries [rows, cols]");
  return TileType::make(idx.shape, t.dtype, MemorySpace::Vec, valid.empty() ? idx.valid_shape : valid);
}

// mscatter(tile, indices, tensor): tensor.flat[indices[r, c]] = tile[r, c]; returns the tensor.
TypePtr infer_mscatter(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  const TileType& idx = tile_arg(s, "indices");
  const TensorType& out = tensor_arg(s, "output_tensor");
  for (auto [name, tile] : {std::pair<const char*, const TileType*>{"tile", &t}, {"indices", &idx}})
    if (tile->memory != MemorySpace::Vec)
      op_fail(s, ErrorKind::kType,
              std::string("'") + name + "' is a " + memory_space_name(tile->memory) + " tile; the scatter reads Vec",
              std::string("pl.move(") + name + ", target_memory=pl.MemorySpace.Vec)");
  require_index_tile(s, "indices", idx);
  if (tile_shape(s, "indices", idx) != tile_shape(s, "tile", t))
    op_fail(s, ErrorKind::kType, "'indices' must have the shape of 'tile': one flat index per element");
  if (t.dtype != out.dtype)
    op_fail(s, ErrorKind::kType, std::string("the tile is ") + dtype_name(t.dtype) + " but the tensor is " +
                                     dtype_name(out.dtype),
            std::string("convert first: pl.cast(tile, pl.") + dtype_name(out.dtype) + ")");
  return s.arg("output_tensor")->type;
}

void lower_mscatter(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int tile = kb.tile(c.args[0]);
  int idx = kb.tile(c.args[1]);
  int tensor = kb.tensor(c.args[2]);
  Instr in;
  in.mnemonic = "MSCATTER";
  in.outs = {Operand::tensor(tensor)};
  in.ins = {Operand::tile(tile), Operand::tile(idx)};
  kb.emit(in);
  if (dst) kb.bind_tensor(dst.get(), tensor);
}

// sort32(tile): (values, indices), each shaped like the tile: every block of 32 columns of
// each row (the last may be shorter) sorted descending, with the INT32 column each value
// came from, or with its entry of the index tile idx (PyPTO's sort32(src, idx)). Stable:
// equal values keep their order.
TypePtr infer_sort32(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  require_vec(s, "tile", t);
  auto shape = tile_shape(s, "tile", t);
  require_instr_dtype(s, "tile", t, "TSORT32");
  DataType index_dtype = kIndexDtype;
  if (s.arg("idx")) {
    // PyPTO's index tile (a UINT32 iota from pl.tile.ci, usually offset by the block's first
    // column): each value's entry of it is carried along with the value.
    const TileType& idx = tile_arg(s, "idx");
    require_vec(s, "idx", idx);
    if ((idx.dtype != DataType::UINT32 && idx.dtype != DataType::INT32) || tile_shape(s, "idx", idx) != shape)
      op_fail(s, ErrorKind::kType,
              "'idx' must be a UINT32 or INT32 index tile of the values' shape " + shape_str(shape) + ", got " +
                  type_str(s.arg("idx")->type),
              "build it with pl.tile.ci(0, " + shape_str(shape) + ", dtype=pl.UINT32) (plus the block's first column)");
    index_dtype = idx.dtype;
  }
  return TupleType::make({TileType::make(t.shape, t.dtype, MemorySpace::Vec, t.valid_shape),
                          TileType::make(t.shape, index_dtype, MemorySpace::Vec, t.valid_shape)});
}

// mrgsort(a_values, a_indices, b_values, b_indices): the two descending rows of each row
// merged into one descending row of a's valid columns + b's (ties take a first), with the
// indices carried along.
TypePtr infer_mrgsort(const CallSite& s) {
  // PyPTO's mrgsort(src0, src1, src2, src3, tmp, exhausted, block_len) merges packed sorted
  // lists; its docs do not define the packing, so that form is accepted and not supported.
  for (const char* k : {"src0", "src1", "src2", "src3", "tmp"})
    if (s.arg(k))
      op_fail(s, ErrorKind::kType,
              std::string(k) + "= (PyPTO's packed-list form of mrgsort) is not supported",
              "merge (values, indices) pairs: vals, idx = pl.mrgsort(a_values, a_indices, b_values, b_indices)");
  if (bool_attr(s, "exhausted") || int_attr(s, "block_len") != 0)
    op_fail(s, ErrorKind::kType,
            std::string(bool_attr(s, "exhausted") ? "exhausted=" : "block_len=") +
                " (PyPTO's packed-list form of mrgsort) is not supported",
            "merge (values, indices) pairs: vals, idx = pl.mrgsort(a_values, a_indices, b_values, b_indices)");
  for (const char* k : {"a_values", "a_indices", "b_values", "b_indices"})
    if (!s.arg(k)) op_fail(s, ErrorKind::kType, std::string("pl.mrgsort is missing argument '") + k + "'",
                           "call it as pl.mrgsort(a_values, a_indices, b_values, b_indices)");
  const TileType& av = tile_arg(s, "a_values");
  const TileType& ai = tile_arg(s, "a_indices");
  const TileType& bv = tile_arg(s, "b_values");
  const TileType& bi = tile_arg(s, "b_indices");
  for (auto [name, t] : {std::pair<const char*, const TileType*>{"a_values", &av}, {"a_indices", &ai},
                         {"b_values", &bv}, {"b_indices", &bi}})
    require_vec(s, name, *t);
  auto as = tile_shape(s, "a_values", av), bs = tile_shape(s, "b_values", bv);
  require_instr_dtype(s, "a_values", av, "TMRGSORT");
  if (bv.dtype != av.dtype)
    op_fail(s, ErrorKind::kType,
            std::string("'b_values' is ") + dtype_name(bv.dtype) + " but 'a_values' is " + dtype_name(av.dtype),
            std::string("convert with pl.cast(b_values, pl.") + dtype_name(av.dtype) + ")");
  // Indices are INT32 (sort32's own column indices) or UINT32 (PyPTO's index tiles), the
  // same dtype on both sides; the result carries it.
  const DataType index_dtype = ai.dtype == DataType::UINT32 ? DataType::UINT32 : kIndexDtype;
  for (auto [name, idx, vals, vshape] :
       {std::tuple<const char*, const TileType*, const char*, std::vector<int64_t>>{"a_indices", &ai, "a_values", as},
        {"b_indices", &bi, "b_values", bs}}) {
    if (idx->dtype != index_dtype || tile_shape(s, name, *idx) != vshape)
      op_fail(s, ErrorKind::kType,
              std::string("'") + name + "' must be the " + dtype_name(index_dtype) + " indices of '" + vals + "' (" +
                  shape_str(vshape) + "), got " + type_str(s.arg(name)->type),
              "pass the (values, indices) pair that pl.sort32 or pl.mrgsort gave (INT32 or UINT32 indices on both "
              "sides)");
  }
  if (as[0] != bs[0])
    op_fail(s, ErrorKind::kType,
            "'a_values' has " + std::to_string(as[0]) + " rows but 'b_values' has " + std::to_string(bs[0]) +
                "; row r of a merges with row r of b",
            "merge tiles with the same number of rows");
  std::vector<int64_t> out = {as[0], as[1] + bs[1]};
  std::vector<ExprPtr> valid;
  if (!av.valid_shape.empty() || !bv.valid_shape.empty()) {
    auto va = valid_or_full(av), vb = valid_or_full(bv);
    auto ca = as_const_int(va[1]), cb = as_const_int(vb[1]);
    ExprPtr cols = ca && cb ? ConstInt::make(*ca + *cb, DataType::INDEX) : BinaryExpr::make(BinaryOp::Add, va[1], vb[1]);
    valid = {va[0], cols};
  }
  return TupleType::make({TileType::make(const_shape(out), av.dtype, MemorySpace::Vec, valid),
                          TileType::make(const_shape(out), index_dtype, MemorySpace::Vec, valid)});
}

// One instruction writing both tiles of the result tuple.
void lower_pair(const Call& c, const VarPtr& dst, KernelBuilder& kb, const char* pto) {
  std::vector<int> ins;
  for (auto& a : c.args)
    if (a) ins.push_back(kb.tile(a));
  PYPTO_CHECK(dst, std::string("pl.") + c.op->name + " without a result");
  std::vector<int> outs = kb.define_tiles(dst);
  Instr in;
  in.mnemonic = pto;
  for (int o : outs) in.outs.push_back(Operand::tile(o));
  for (int i : ins) in.ins.push_back(Operand::tile(i));
  kb.emit(in);
}

}  // namespace

void register_index_ops(OpRegistry& r) {
  struct Arg {
    const char* name;
    const char* pto;
    bool rows;
    const char* doc;
  };
  const Arg args[] = {
      {"row_argmax", "TROWARGMAX", true, "Column index (INT32) of each row's maximum: [M, N] -> [M, 1]; ties give the first."},
      {"row_argmin", "TROWARGMIN", true, "Column index (INT32) of each row's minimum: [M, N] -> [M, 1]; ties give the first."},
      {"col_argmax", "TCOLARGMAX", false, "Row index (INT32) of each column's maximum: [M, N] -> [1, N]; ties give the first."},
      {"col_argmin", "TCOLARGMIN", false, "Row index (INT32) of each column's minimum: [M, N] -> [1, N]; ties give the first."},
  };
  for (auto& a : args) {
    bool rows = a.rows;
    std::string pto = a.pto;
    r.add({.name = std::string("tile.") + a.name,
           .params = {aka(expr_param("tile"), {"input", "tensor"}), aka(expr_param("tmp_tile", true), {"tmp"})},
           .infer_type = [rows, pto](const CallSite& s) { return infer_arg_reduce(s, rows, pto); },
           .pto = a.pto,
           .lower = {},
           .doc = a.doc,
           .aliases = {},
           .scalar_variant = "",
           .torch = std::string("_arg_reduce({tile:v}, ") + (a.rows ? "True" : "False") + ", " +
                    (pto.find("MAX") != std::string::npos ? "True" : "False") + ")",
           .tensor_form = rows ? TensorOpShape::kRowReduce : TensorOpShape::kColReduce});
  }
  r.add({.name = "tile.gather",
         .params = {aka(expr_param("src"), {"input"}), aka(expr_param("indices", true), {"index"}), hint(expr_param("tmp", true)),
                    quiet(attr_param("dim", int64_t{-1})), quiet(attr_param("mask_pattern", std::string())),
                    quiet(attr_param("output_dtype", std::string())), quiet(attr_param("kvalue", std::string())),
                    quiet(attr_param("cmp_mode", std::string())), quiet(attr_param("out_cols", std::string())),
                    quiet(attr_param("offset", int64_t{0})), quiet(attr_param("count_dtype", std::string()))},
         .infer_type = infer_gather,
         .pto = "TGATHER",
         .lower = {},
         .doc = "Gather along each row: result[r, c] = src[r, indices[r, c]] (numpy.take_along_axis(src, indices, "
                "1)), shaped like the integer index tile; an index outside src's valid columns is a run-time error. "
                "dim=0: down each column, result[r, c] = src[indices[r, c], c] (torch.gather(src, 0, indices)).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "(torch.gather({src:v}, 0, {indices:v}.long()) if {dim} in (0, -2) else _gather({src:v}, {indices}, {R}, {C}))",
         .expand = expand_gather,
         .tensor_form = TensorOpShape::kGather});
  r.add({.name = "tile.scatter",
         .params = {aka(expr_param("target"), {"dst", "input"}), aka(expr_param("indices"), {"indexes", "index"}), expr_param("src"),
                    quiet(attr_param("dim", int64_t{-1})), quiet(attr_param("mask_pattern", std::string()))},
         .infer_type = infer_scatter,
         .pto = "TSCATTER",
         .lower = lower_scatter,
         .doc = "Scatter along each row: target with target[r, indices[r, c]] = src[r, c] (torch scatter on dim 1; "
                "for repeated indices the last in row-major order wins); returns the updated target. dim=0: down each "
                "column, target[indices[r, c], c] = src[r, c].",
         .aliases = {},
         .scalar_variant = "",
         .torch = "(_scatter({target:v}.reshape(1, -1), ({indices:v}.long() * {target:v}.shape[1] + torch.arange({indices:v}"
                  ".shape[1])).reshape(1, -1), {src:v}.reshape(1, -1)).reshape({target:v}.shape) if {dim} in (0, -2) else "
                  "_scatter({target:v}, {indices}, {src:v}))",
         .expand = expand_scatter,
         .tensor_form = TensorOpShape::kScatter});
  r.add({.name = "tile.scatter_update",
         .params = {expr_param("input"), attr_param("dim", int64_t{0}), aka(expr_param("index"), {"indices"}), expr_param("src")},
         .infer_type = infer_scatter_update,
         .pto = "TSCATTER",
         .lower = {},
         .doc = "input with whole rows (dim=0 / -2: input[index[i], :] = src[i, :]) or whole columns (dim=1 / -1) "
                "replaced by src's, at the positions the [N, 1] or [1, N] integer tile `index` lists (torch's "
                "index_copy; for a repeated index the last wins); a new tile (TSCATTER over element indices).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "{input:v}.index_copy({dim}, {index:v}.flatten().long(), {src:v})",
         .expand = expand_scatter_update,
         .tensor_form = TensorOpShape::kWhole});
  r.add({.name = "tensor.paged_gather",
         .params = {expr_param("src"), expr_param("indices"), expr_param("block_table"), attr_param("block_size", int64_t{0}),
                    attr_param("size", int64_t{0}), attr_param("max_indices", int64_t{0}),
                    attr_param("space", MemorySpace::Mat), attr_param("col_off", int64_t{0}),
                    attr_param("is_trans", false), hint(attr_param("is_b_matrix", false))},
         .infer_type = infer_paged_gather,
         .pto = "MGATHER",
         .lower = lower_kernel_only,
         .doc = "Rows of a paged cache: row i is src row block_table[t // block_size] * block_size + t % block_size "
                "(t = indices[i]; src's rows are all its dimensions but the last; block_table read flat), columns "
                "col_off .. col_off + size - 1, for i < max_indices: a [max_indices, size] tile in `space` (Vec or Mat), "
                "transposed with is_trans; is_b_matrix is a layout hint (MGATHER of computed element indices).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_paged_gather({src}, {indices}, {block_table}, {block_size}, {size}, {max_indices}, {col_off}, "
                  "{is_trans})",
         .expand = expand_paged_gather});
  r.add({.name = "tile.sort32",
         .params = {aka(expr_param("tile"), {"src"}), expr_param("idx", true)},
         .infer_type = infer_sort32,
         .pto = "TSORT32",
         .lower = [](const Call& c, const VarPtr& d, KernelBuilder& kb) { lower_pair(c, d, kb, "TSORT32"); },
         .doc = "Sort each block of 32 columns of each row descending (stable); returns (values, indices), both "
                "shaped like the tile, indices INT32 columns within the row: `vals, idx = pl.sort32(t)`; with PyPTO's "
                "idx= (a UINT32 or INT32 index tile of the tile's shape) each value's idx entry is carried instead.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_sort32({tile:v}, {idx})"});
  r.add({.name = "tile.mrgsort",
         .params = {expr_param("a_values", true), expr_param("a_indices", true), expr_param("b_values", true),
                    expr_param("b_indices", true), expr_param("src0", true), expr_param("src1", true),
                    expr_param("src2", true), expr_param("src3", true), expr_param("tmp", true),
                    quiet(attr_param("exhausted", false)), quiet(attr_param("block_len", int64_t{0}))},
         .infer_type = infer_mrgsort,
         .pto = "TMRGSORT",
         .lower = [](const Call& c, const VarPtr& d, KernelBuilder& kb) { lower_pair(c, d, kb, "TMRGSORT"); },
         .doc = "Merge two descending (values, indices) rows per row into one of a's + b's valid columns (ties take "
                "a); returns (values, indices), e.g. the halves of a sort32 result sliced apart.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_mrgsort({a_values:v}, {a_indices}, {b_values:v}, {b_indices})"});
  r.add({.name = "tile.mgather",
         .params = {aka(in_memory(expr_param("tensor"), MemorySpace::DDR), {"mem"}), aka(expr_param("indices"), {"idx"}),
                    hint(attr_param("coalesce", std::string("row"))), hint(attr_param("gather_oob", std::string("undefined"))),
                    hint(attr_param("target_memory", MemorySpace::Vec)), hint(expr_param("scratch", true)),
                    hint(list_param("valid_shape", true))},
         .infer_type = infer_mgather,
         .pto = "MGATHER",
         .lower = {},
         .doc = "Gather from global memory: result[r, c] = tensor.flat[indices[r, c]] (row-major element index), a "
                "Vec tile shaped like the integer index tile.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_mgather({tensor}, {indices}, {R}, {C})"});
  r.add({.name = "tile.mscatter",
         .params = {aka(expr_param("tile"), {"src"}), aka(expr_param("indices"), {"idx"}), in_memory(expr_param("output_tensor"), MemorySpace::DDR)},
         .infer_type = infer_mscatter,
         .pto = "MSCATTER",
         .lower = lower_mscatter,
         .doc = "Scatter to global memory: tensor.flat[indices[r, c]] = tile[r, c]; returns the updated tensor.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "output_tensor",
         .view = false,
         .torch = "_mscatter({tile:v}, {indices}, {output_tensor})"});
}

}  // namespace pypto::ops

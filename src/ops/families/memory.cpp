// Data movement ops: global memory <-> tiles (load, store), tile <-> tile across on-chip
// memories (move), and tiles that start empty or filled (create_tile, full).
#include <map>

#include "../op_rules.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

// Offsets must index every dimension of the tensor; a tile covers the last two dims.
// With `dims` ([row_dim, col_dim], the attribute dims=) the tile's rows and columns step those
// two dims (a strided box) instead of the last two.
void check_window(const CallSite& s, const TensorType& tensor, const std::vector<ExprPtr>& offsets,
                  const std::vector<int64_t>& extent, const char* verb, const std::vector<int64_t>& dims = {}) {
  size_t rank = tensor.shape.size();
  if (offsets.size() != rank)
    op_fail(s, ErrorKind::kType,
            "'offsets' has " + std::to_string(offsets.size()) + " entries but the tensor has rank " + std::to_string(rank),
            "give one offset per tensor dimension, e.g. " + std::string(rank == 2 ? "[0, 0]" : "[0, 0, 0]"));
  if (rank == 1 && extent[0] != 1)
    op_fail(s, ErrorKind::kValue, "a 1-D tensor holds one row; the tile has " + std::to_string(extent[0]) + " rows",
            "use a tile shape of [1, N] for a 1-D tensor");
  for (size_t d = 0; d < rank; ++d) {
    auto dim = as_const_int(tensor.shape[d]);
    auto off = as_const_int(offsets[d]);
    if (!dim || !off) continue;
    if (*off < 0)
      op_fail(s, ErrorKind::kValue, "offset " + std::to_string(*off) + " of dimension " + std::to_string(d) + " is negative");
    int64_t ext = 1;
    if (dims.size() == 2) ext = static_cast<int64_t>(d) == dims[0] ? extent[0] : static_cast<int64_t>(d) == dims[1] ? extent[1] : 1;
    else if (d + 2 >= rank) ext = extent[extent.size() - (rank - d)];
    if (*off + ext > *dim)
      op_fail(s, ErrorKind::kValue,
              std::string("the tile would ") + verb + " elements " + std::to_string(*off) + ".." +
                  std::to_string(*off + ext - 1) + " of dimension " + std::to_string(d) + ", but the tensor has only " +
                  std::to_string(*dim),
              "shrink the tile, change the offset, or pass valid_shape=[rows, cols] for a partial tile at the edge");
  }
}

// The extents a load or store touches: the static valid shape when known, else the shape.
std::vector<int64_t> touched_extent(const std::vector<int64_t>& shape, const std::vector<ExprPtr>& valid) {
  std::vector<int64_t> out = shape;
  for (size_t i = 0; i < valid.size() && i < out.size(); ++i) {
    auto v = as_const_int(valid[i]);
    out[i] = v ? *v : 0;  // a run-time extent is checked by the engine
  }
  return out;
}

// N-D tiles (PyPTO's FlattenTileNdTo2D, docs/language.md "N-D tiles"): a tile of rank >= 3
// is the 2-D tile of its merged leading axes, [e0 * .. * e(k-2), e(k-1)], from the moment it
// is made. Its rows are then consecutive rows of the tensor's leading axes merged row-major,
// which holds only when every leading axis inside an outer one of extent > 1 is covered
// whole (extent = the tensor's, offset 0): the window is one contiguous band of rows.
std::vector<int64_t> merged_shape(const std::vector<int64_t>& nd) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < nd.size(); ++d) rows *= nd[d];
  return {rows, nd.back()};
}

void check_contiguous_band(const CallSite& s, const TensorType& tensor, const std::vector<ExprPtr>& offsets,
                           const std::vector<int64_t>& nd, const char* what) {
  bool outer = false;
  for (size_t d = 0; d + 1 < nd.size(); ++d) {
    if (outer && d < tensor.shape.size()) {
      auto dim = as_const_int(tensor.shape[d]);
      auto off = d < offsets.size() ? as_const_int(offsets[d]) : std::nullopt;
      if (!dim || *dim != nd[d] || !off || *off != 0)
        op_fail(s, ErrorKind::kValue,
                std::string("the N-D ") + what + " " + shape_str(nd) + " merges its leading axes into the rows of a 2-D tile, " +
                    "which needs one contiguous band of rows: axis " + std::to_string(d) + " lies inside an outer axis of " +
                    "extent > 1, so it must cover the tensor's whole axis " + std::to_string(d) + " (" +
                    (dim ? std::to_string(*dim) : std::string("a run-time extent")) + ", offset 0), got extent " +
                    std::to_string(nd[d]) + (off ? " at offset " + std::to_string(*off) : std::string(" at a run-time offset")),
                "cover the whole axis " + std::to_string(d) + " (static shape), or make the outer extents 1 and loop over them");
    }
    outer = outer || nd[d] > 1;
  }
}

// The N-D window a 2-D tile of shape[0] rows is stored through into a rank >= 3 tensor: the
// store's shapes= when it names one, else the rows folded row-major over the tensor's static
// leading axes from the last one outwards. Empty when the tile covers the last two axes;
// `bad_axis` is the axis whose extent does not divide the rows left to fold (else -1).
struct StoreFold {
  std::vector<int64_t> nd;
  int bad_axis = -1;
  int64_t left = 0;
};
StoreFold store_fold(const TensorType& tensor, const std::vector<int64_t>& shape, const std::vector<int64_t>& window) {
  const size_t rank = tensor.shape.size();
  StoreFold f;
  if (rank < 3) return f;
  if (!window.empty()) {
    if (window.size() != rank || window.back() != shape[1] || merged_shape(window)[0] != shape[0]) return f;
    f.nd = window;
  } else {
    auto inner = as_const_int(tensor.shape[rank - 2]);
    if (!inner || shape[0] <= *inner) return f;
    f.nd.assign(rank, 1);
    f.nd.back() = shape[1];
    int64_t left = shape[0];
    for (size_t d = rank - 1; d-- > 0;) {
      auto dim = as_const_int(tensor.shape[d]);
      if (d == 0 || !dim || left <= *dim) {
        f.nd[d] = left;
        break;
      }
      if (left % *dim != 0) {
        f.bad_axis = static_cast<int>(d);
        f.left = left;
        return f;
      }
      f.nd[d] = *dim;
      left /= *dim;
    }
  }
  bool folds = false;
  for (size_t d = 0; d + 2 < f.nd.size(); ++d) folds = folds || f.nd[d] > 1;
  if (!folds) f.nd.clear();
  return f;
}

std::vector<int64_t> store_window(const CallSite& s, const TensorType& tensor, const std::vector<ExprPtr>& offsets,
                                  const std::vector<int64_t>& shape, const std::vector<int64_t>& window) {
  StoreFold f = store_fold(tensor, shape, window);
  if (f.bad_axis >= 0) {
    const std::string dim = std::to_string(*as_const_int(tensor.shape[f.bad_axis]));
    op_fail(s, ErrorKind::kValue,
            "the " + shape_str(shape) + " tile has more rows than axis " + std::to_string(f.bad_axis) + " of the rank-" +
                std::to_string(tensor.shape.size()) + " tensor (" + dim + "), and " + std::to_string(f.left) +
                " rows are not a whole number of its rows to fold over the leading axes",
            "store an N-D tile whose leading axes merge into the rows (rows a multiple of " + dim + "), or a tile of at most " +
                dim + " rows");
  }
  if (!f.nd.empty()) check_contiguous_band(s, tensor, offsets, f.nd, "tile stored");
  return f.nd;
}

// dims=[row_dim, col_dim]: the two tensor dims a 2-D tile's rows and columns step (a
// strided box of any two dims; LowerTensorOps writes it for a kernel view such as
// key_cache[blk, :, kvh, :]). Empty: the last two.
std::vector<int64_t> box_dims_attr(const CallSite& s, const TensorType& tensor, size_t tile_rank) {
  auto dims = std::get<std::vector<int64_t>>(s.attr("dims"));
  if (dims.empty()) return dims;
  const int64_t rank = static_cast<int64_t>(tensor.shape.size());
  if (dims.size() != 2 || dims[0] < 0 || dims[1] < 0 || dims[0] >= rank || dims[1] >= rank || dims[0] == dims[1])
    op_fail(s, ErrorKind::kValue,
            "dims=" + shape_str(dims) + " must name two different dimensions of the rank-" + std::to_string(rank) +
                " tensor (the dims the tile's rows and columns step)",
            "give dims=[row_dim, col_dim] with 0 <= dim < " + std::to_string(rank) + ", or omit it for the last two");
  if (tile_rank != 2)
    op_fail(s, ErrorKind::kValue, "dims=" + shape_str(dims) + " places a 2-D tile; an N-D tile covers its own box",
            "give a 2-D [rows, cols] shape with dims=, or drop dims=");
  return dims;
}

TypePtr infer_load(const CallSite& s) {
  const TensorType& tensor = tensor_arg(s, "tensor");
  auto offsets = list_arg(s, "offsets");
  auto shape = shape_attr(s, "shape");
  MemorySpace mem = memory_attr(s, "target_memory");
  auto valid = list_arg(s, "valid_shape");
  auto dims = box_dims_attr(s, tensor, shape.size());
  if (shape.size() >= 3) {  // an N-D tile: the 2-D tile of its merged leading axes
    if (shape.size() != tensor.shape.size())
      op_fail(s, ErrorKind::kType,
              "an N-D tile " + shape_str(shape) + " needs one extent per tensor dimension; the tensor has rank " +
                  std::to_string(tensor.shape.size()),
              "give the tile the tensor's rank, or a 2-D [rows, cols] tile of the last two dimensions");
    if (bool_attr(s, "clamp"))
      op_fail(s, ErrorKind::kValue, "clamp=True is for 2-D tiles; an N-D tile " + shape_str(shape) + " has a static window",
              "drop clamp=True, or load 2-D tiles of the last two dimensions");
    if (!valid.empty()) {
      if (valid.size() != shape.size())
        op_fail(s, ErrorKind::kType, "'valid_shape' must have " + std::to_string(shape.size()) + " entries, got " +
                                         std::to_string(valid.size()));
      for (size_t d = 0; d + 1 < shape.size(); ++d) {
        auto v = as_const_int(valid[d]);
        if (!v || *v != shape[d])
          op_fail(s, ErrorKind::kValue,
                  "an N-D tile's valid shape may cut only its last axis; valid_shape[" + std::to_string(d) + "] is not " +
                      std::to_string(shape[d]),
                  "make the leading valid extents the tile's (static), or load 2-D tiles of the last two dimensions");
      }
    }
    check_contiguous_band(s, tensor, offsets, shape, "tile");
    check_window(s, tensor, offsets, touched_extent(shape, valid), "read");
    std::vector<ExprPtr> valid2;
    if (!valid.empty()) valid2 = {ConstInt::make(merged_shape(shape)[0], DataType::INDEX), valid.back()};
    shape = merged_shape(shape);
    valid = valid2;
    if (mem == MemorySpace::Vec && shape[1] * dtype_bytes(tensor.dtype) % 32 != 0)
      op_fail(s, ErrorKind::kValue,
              "a Vec tile row must be a multiple of 32 bytes; the N-D tile's last axis of " + std::to_string(shape[1]) +
                  " " + dtype_name(tensor.dtype) + " has rows of " + std::to_string(shape[1] * dtype_bytes(tensor.dtype)) +
                  " bytes",
              "pad the last axis to a multiple of " + std::to_string(32 / dtype_bytes(tensor.dtype)) +
                  " and pass valid_shape for the real extent");
    if (mem != MemorySpace::Vec && mem != MemorySpace::Mat)
      op_fail(s, ErrorKind::kType, std::string("a load lands only in Vec or Mat, not ") + memory_space_name(mem),
              "load into Vec or Mat");
    return TileType::make(const_shape(shape), tensor.dtype, mem, valid);
  }
  if (shape.size() != 2)
    op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(shape) + " is not 2-D; tiles are 2-D",
            "load a [rows, cols] tile; the tile covers the tensor's last two dimensions");
  if (mem != MemorySpace::Vec && mem != MemorySpace::Mat)
    op_fail(s, ErrorKind::kType,
            std::string("a load lands only in Vec or Mat, not ") + memory_space_name(mem),
            mem == MemorySpace::Acc
                ? std::string("Acc is written by the cube: load the operands into Mat, move them to Left/Right and "
                              "use pl.matmul")
                : "load into Mat, then pl.move(t, target_memory=pl.MemorySpace." + std::string(memory_space_name(mem)) + ")");
  if (!valid.empty() && valid.size() != 2)
    op_fail(s, ErrorKind::kType, "'valid_shape' must have 2 entries [rows, cols], got " + std::to_string(valid.size()));
  for (size_t i = 0; i < valid.size(); ++i) {
    auto v = as_const_int(valid[i]);
    if (v && (*v < 0 || *v > shape[i]))
      op_fail(s, ErrorKind::kValue,
              "valid_shape[" + std::to_string(i) + "] = " + std::to_string(*v) + " is outside 0.." + std::to_string(shape[i]),
              "the valid shape is a prefix of the tile shape " + shape_str(shape));
  }
  if (bool_attr(s, "clamp")) {
    // clamp=True: the valid region stops at the tensor's edge (PyPTO's load(..., clamp=True)).
    size_t rank = tensor.shape.size();
    if (!dims.empty())
      op_fail(s, ErrorKind::kValue, "clamp=True with dims=: a strided box has no clamped form",
              "pass valid_shape= for the part of the window inside the tensor");
    if (offsets.size() == rank && rank >= 1) {
      std::vector<ExprPtr> cut(2);
      for (size_t i = 0; i < 2; ++i) {
        ExprPtr want = i < valid.size() ? valid[i] : ConstInt::make(shape[i], DataType::INDEX);
        if (rank == 1 && i == 0) {
          cut[i] = want;
          continue;
        }
        size_t d = rank - 2 + i + (rank == 1 ? -1 : 0);
        ExprPtr left = BinaryExpr::make(BinaryOp::Sub, tensor.shape[d], offsets[d], s.span);
        if (auto a = as_const_int(tensor.shape[d]), b = as_const_int(offsets[d]); a && b)
          left = ConstInt::make(*a - *b, DataType::INDEX);
        cut[i] = clamp_extent(want, left);
      }
      bool full = true;
      for (size_t i = 0; i < 2; ++i) {
        auto v = as_const_int(cut[i]);
        full = full && v && *v == shape[i];
      }
      valid = full ? std::vector<ExprPtr>{} : cut;
    }
  }
  // A Vec row of any width: the allocation pads it to whole 32-byte units
  // (isa::vec_row_pitch_bytes), so [32, 1] FP32 loads a tensor column.
  check_window(s, tensor, offsets, touched_extent(shape, valid), "read", dims);
  return TileType::make(const_shape(shape), tensor.dtype, mem, valid);
}

void lower_load(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int tensor = kb.tensor(c.args[0]);
  auto offsets = kb.scalars(c.args[1]);
  int tile = kb.define_tile(dst);
  Instr in;
  in.mnemonic = "TLOAD";
  in.outs = {Operand::tile(tile)};
  in.ins = {Operand::tensor(tensor), Operand::list_of(offsets)};
  if (std::get<std::vector<int64_t>>(c.attrs.at("shape")).size() >= 3) in.attrs = {{"fold_rows", true}};  // N-D tile
  if (auto& dims = std::get<std::vector<int64_t>>(c.attrs.at("dims")); !dims.empty()) in.attrs["dims"] = dims;
  kb.emit(in);
}

TypePtr infer_store(const CallSite& s) {
  const TileType& tile = tile_arg(s, "tile");
  auto offsets = list_arg(s, "offsets");
  const TensorType& tensor = tensor_arg(s, "output_tensor");
  auto shape = tile_shape(s, "tile", tile);
  if (tile.memory != MemorySpace::Vec && tile.memory != MemorySpace::Mat && tile.memory != MemorySpace::Acc)
    op_fail(s, ErrorKind::kType,
            std::string("a ") + memory_space_name(tile.memory) + " tile cannot be stored; stores go from Vec, Mat or Acc",
            "store the matmul result (an Acc tile) or a Vec tile instead");
  bool acc_convert = tile.memory == MemorySpace::Acc && tile.dtype == DataType::FP32 &&
                     (tensor.dtype == DataType::FP16 || tensor.dtype == DataType::BF16);
  if (tile.dtype != tensor.dtype && !acc_convert)
    op_fail(s, ErrorKind::kType,
            std::string("the tile is ") + dtype_name(tile.dtype) + " but the tensor is " + dtype_name(tensor.dtype),
            std::string("convert first: pl.cast(tile, pl.") + dtype_name(tensor.dtype) + ")");
  std::string atomic = string_attr(s, "atomic");
  if (atomic != "none" && atomic != "add")
    op_fail(s, ErrorKind::kValue, "atomic must be pl.AtomicType.None_ or pl.AtomicType.Add, got \"" + atomic + "\"");
  if (atomic == "add") {
    DataType dt = tensor.dtype;
    bool ok = dt == DataType::FP32 || dt == DataType::FP16 || dt == DataType::BF16 || dt == DataType::INT32 ||
              dt == DataType::INT16 || dt == DataType::INT8;
    if (!ok)
      op_fail(s, ErrorKind::kType, std::string("atomic add into a ") + dtype_name(dt) + " tensor is not supported",
              "atomic add works on FP32, FP16, BF16, INT32, INT16 and INT8 tensors");
  }
  // shapes=: the window of the tensor the tile covers (PyPTO's store(..., shapes)); its last
  // two extents are the tile's, any leading ones are 1 (the tile covers the last two dims).
  auto window = std::get<std::vector<int64_t>>(s.attr("shape"));
  if (auto dims = box_dims_attr(s, tensor, 2); !dims.empty()) {  // a strided box of two dims
    if (!window.empty())
      op_fail(s, ErrorKind::kValue, "shapes= with dims=: the box is the tile's [rows, cols] along dims " + shape_str(dims),
              "drop shapes=");
    check_window(s, tensor, offsets, touched_extent(shape, tile.valid_shape), "write", dims);
    return s.arg("output_tensor")->type;
  }
  if (auto nd = store_window(s, tensor, offsets, shape, window); !nd.empty()) {  // an N-D tile's rows
    std::vector<ExprPtr> valid = tile.valid_shape;
    std::vector<int64_t> touched = nd;
    if (!valid.empty()) {
      auto vr = as_const_int(valid[0]);
      if (!vr || *vr != shape[0])
        op_fail(s, ErrorKind::kValue,
                "the tile's rows fold over the tensor's leading axes " + shape_str(nd) + ", which needs all " +
                    std::to_string(shape[0]) + " rows valid",
                "store a tile whose rows are all valid, or store 2-D tiles of the last two dimensions");
      auto vc = as_const_int(valid[1]);
      touched.back() = vc ? *vc : 0;
    }
    check_window(s, tensor, offsets, touched, "write");
    return s.arg("output_tensor")->type;
  }
  if (!window.empty()) {
    bool ok = window.size() == tensor.shape.size() && window.size() >= 2 &&
              window[window.size() - 2] == shape[0] && window.back() == shape[1];
    for (size_t d = 0; ok && d + 2 < window.size(); ++d) ok = window[d] == 1;
    if (window.size() == 1 && tensor.shape.size() == 1) ok = shape[0] == 1 && window[0] == shape[1];
    if (!ok)
      op_fail(s, ErrorKind::kValue,
              "shapes=" + shape_str(window) + " does not match the " + shape_str(shape) + " tile stored into a rank-" +
                  std::to_string(tensor.shape.size()) + " tensor",
              "give one extent per tensor dimension: 1 for the leading ones, then the tile's [rows, cols]; or omit shapes");
  }
  check_window(s, tensor, offsets, touched_extent(shape, tile.valid_shape), "write");
  return s.arg("output_tensor")->type;
}

void lower_store(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int tile = kb.tile(c.args[0]);
  auto offsets = kb.scalars(c.args[1]);
  int tensor = kb.tensor(c.args[2]);
  Instr in;
  in.mnemonic = "TSTORE";
  in.outs = {Operand::tensor(tensor)};
  in.ins = {Operand::tile(tile), Operand::list_of(offsets)};
  if (std::get<std::string>(c.attrs.at("atomic")) == "add") in.attrs = {{"atomic", std::string("add")}};
  if (auto& dims = std::get<std::vector<int64_t>>(c.attrs.at("dims")); !dims.empty()) {
    in.attrs["dims"] = dims;  // a strided box (infer_store checked it)
    kb.emit(in);
    if (dst) kb.bind_tensor(dst.get(), tensor);
    return;
  }
  std::vector<int64_t> rc;
  for (auto& e : c.args[0]->type->as<TileType>()->shape) rc.push_back(as_const_int(e).value_or(0));
  if (!store_fold(*c.args[2]->type->as<TensorType>(), rc, std::get<std::vector<int64_t>>(c.attrs.at("shape"))).nd.empty())
    in.attrs["fold_rows"] = true;  // the rows of an N-D tile (infer_store checked the band)
  kb.emit(in);
  if (dst) kb.bind_tensor(dst.get(), tensor);
}

// The legal on-chip moves and the pipe that performs each (chip-model.md).
std::vector<MemorySpace> legal_targets(MemorySpace from) {
  switch (from) {
    case MemorySpace::Mat: return {MemorySpace::Left, MemorySpace::Right, MemorySpace::Bias};
    case MemorySpace::Acc: return {MemorySpace::Vec, MemorySpace::Mat};
    case MemorySpace::Vec: return {MemorySpace::Vec, MemorySpace::Mat};
    default: return {};
  }
}

TypePtr infer_move(const CallSite& s) {
  const TileType& tile = tile_arg(s, "tile");
  MemorySpace to = memory_attr(s, "target_memory");
  tile_shape(s, "tile", tile);
  auto legal = legal_targets(tile.memory);
  if (std::find(legal.begin(), legal.end(), to) == legal.end()) {
    std::string list;
    for (auto m : legal) list += std::string(list.empty() ? "" : ", ") + "pl.MemorySpace." + memory_space_name(m);
    op_fail(s, ErrorKind::kType,
            std::string("cannot move a ") + memory_space_name(tile.memory) + " tile to " + memory_space_name(to),
            list.empty() ? std::string("a ") + memory_space_name(tile.memory) + " tile is only an operand; it cannot be moved"
                         : std::string("from ") + memory_space_name(tile.memory) + " a tile can move to " + list);
  }
  return TileType::make(tile.shape, tile.dtype, to, tile.valid_shape, tile.pad);
}

TypePtr infer_create(const CallSite& s) {
  auto shape = shape_attr(s, "shape");
  if (shape.size() >= 3) shape = merged_shape(shape);  // an N-D tile: its merged leading axes
  if (shape.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(shape) + " is not 2-D; tiles are 2-D");
  MemorySpace mem = memory_attr(s, "target_memory");
  if (mem == MemorySpace::DDR)
    op_fail(s, ErrorKind::kType, "a tile lives on chip, not in DDR", "use pl.create_tensor for a global-memory array");
  return TileType::make(const_shape(shape), dtype_attr(s, "dtype"), mem);
}

void lower_create(const Call& c, const VarPtr& dst, KernelBuilder& kb) { kb.define_tile(dst); }

TypePtr infer_full(const CallSite& s) {
  auto shape = shape_attr(s, "shape");
  if (shape.size() >= 3) shape = merged_shape(shape);  // an N-D tile: its merged leading axes
  if (shape.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(shape) + " is not 2-D; tiles are 2-D");
  if (s.arg("value")) scalar_arg(s, "value");
  return TileType::make(const_shape(shape), dtype_attr(s, "dtype"), MemorySpace::Vec);
}

void lower_full(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  bool is_float = dtype_is_float(std::get<DataType>(c.attrs.at("dtype")));
  isa::Scalar value = c.args[0] ? kb.scalar(c.args[0]) : (is_float ? isa::Scalar::immf(0.0) : isa::Scalar::imm(0));
  int tile = kb.define_tile(dst);
  Instr in;
  in.mnemonic = "TEXPANDS";
  in.outs = {Operand::tile(tile)};
  in.ins = {Operand::scalar_of(value)};
  kb.emit(in);
}

}  // namespace


std::optional<std::vector<MemorySpace>> move_path(MemorySpace from, MemorySpace to) {
  // Breadth-first over the legal moves: the shortest chain.
  std::map<MemorySpace, MemorySpace> parent;
  std::vector<MemorySpace> frontier{from};
  parent[from] = from;
  for (size_t i = 0; i < frontier.size(); ++i) {
    if (frontier[i] == to) break;
    for (MemorySpace next : ops::legal_targets(frontier[i]))
      if (parent.emplace(next, frontier[i]).second) frontier.push_back(next);
  }
  if (!parent.count(to)) return std::nullopt;
  std::vector<MemorySpace> path;
  for (MemorySpace m = to; m != from; m = parent[m]) path.insert(path.begin(), m);
  return path;
}


void register_memory_ops(OpRegistry& r) {
  r.add({.name = "tile.load",
         .params = {in_memory(expr_param("tensor"), MemorySpace::DDR), list_param("offsets"), aka(attr_param("shape"), {"shapes"}),
                    list_param("valid_shape", true), attr_param("target_memory", MemorySpace::Vec),
                    quiet(attr_param("clamp", false)), quiet(attr_param("dims", std::vector<int64_t>{}))},
         .infer_type = infer_load,
         .pto = "TLOAD",
         .lower = lower_load,
         .doc = "Load a [rows, cols] window of a tensor at offsets into a Vec or Mat tile (valid_shape: partial tile); "
                "an N-D shape [.., rows, cols] gives the 2-D tile of its merged leading axes; dims=[r, c]: the rows and columns "
                "step tensor dims r and c (a strided box of any two dims, e.g. a kernel view x[i, :, j, :]).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_window({tensor}, {offsets}, {R}, {C}, {dims})"});
  r.add({.name = "tile.store",
         .params = {expr_param("tile"), list_param("offsets"), in_memory(expr_param("output_tensor"), MemorySpace::DDR),
                    quiet(aka(attr_param("shape", std::vector<int64_t>{}), {"shapes"})),
                    quiet(attr_param("atomic", std::string("none"))), quiet(attr_param("dims", std::vector<int64_t>{}))},
         .infer_type = infer_store,
         .pto = "TSTORE",
         .lower = lower_store,
         .doc = "Write the tile's valid region into the tensor at offsets (dims=[r, c]: rows and columns step tensor dims r "
                "and c); returns the updated tensor.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "output_tensor",
         .torch = "_store({output_tensor}, {offsets}, {tile:v}, {atomic}, {dims})"});
  r.add({.name = "tile.move",
         .params = {expr_param("tile"), attr_param("target_memory"), hint(attr_param("blayout", std::string())),
                    hint(attr_param("slayout", std::string()))},
         .infer_type = infer_move,
         .pto = "TMOV",
         .lower = {},
         .doc = "Copy a tile to another on-chip memory (Mat->Left/Right/Bias, Acc->Vec/Mat, Vec->Vec/Mat).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "{tile:v}"});
  r.add({.name = "tile.create",
         .params = {attr_param("shape"), attr_param("dtype", DataType::FP32), attr_param("target_memory", MemorySpace::Vec),
                    hint(attr_param("transpose", false)), hint(attr_param("flat_layout", false))},
         .infer_type = infer_create,
         .pto = "",
         .lower = lower_create,
         .doc = "An uninitialised tile of the given shape, dtype and memory.",
         .aliases = {"create_tile", "tile.create_tile"},
         .scalar_variant = "",
         .torch = "torch.zeros({shape}, dtype={dtype})"});
  // PyPTO's create_l1(shape, dtype, transpose=False): an uninitialised L1 (Mat) tile, i.e.
  // pl.create_tile(shape, dtype, target_memory=pl.MemorySpace.Mat); transpose is create's hint.
  r.add({.name = "tile.create_l1",
         .params = {attr_param("shape"), attr_param("dtype", DataType::FP32), hint(attr_param("transpose", false))},
         .infer_type =
             [](const CallSite& s) {
               Attrs attrs = s.attrs;
               attrs["target_memory"] = MemorySpace::Mat;
               return infer_create(CallSite{s.op, s.args, attrs, s.span});
             },
         .pto = "",
         .lower = lower_create,
         .doc = "An uninitialised L1 (Mat) tile of the given shape and dtype: pl.create_tile(shape, dtype, "
                "target_memory=pl.MemorySpace.Mat).",
         .aliases = {"create_l1", "tensor.create_l1"},
         .scalar_variant = "",
         .torch = "torch.zeros({shape}, dtype={dtype})"});
  r.add({.name = "tile.full",
         .params = {attr_param("shape"), attr_param("dtype", DataType::FP32), expr_param("value", true)},
         .infer_type = infer_full,
         .pto = "TEXPANDS",
         .lower = lower_full,
         .doc = "A Vec tile with every element set to value (0 when omitted).",
         .aliases = {"full"},
         .scalar_variant = "",
         .torch = "torch.full({shape}, {value=0}, dtype={dtype})",
         .tensor_form = TensorOpShape::kGenerate});
}

}  // namespace pypto::ops

// Tiles made from scalars and shapes: expands (a tile shaped like another, every element a
// scalar: TEXPANDS), expand_clone (a row, column or single element broadcast to a shape, as
// a new tile: TROWEXPAND / TCOLEXPAND / TMOV), tri (a triangular 0/1 mask: TTRI) and arange
// (consecutive values in row-major order: TCI), PyPTO's ci (TCI, counting up or down) and
// random (the Philox generator: TRANDOM).
#include "../op_rules.h"
#include "pypto/isa/instructions.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

// A 2-D shape attribute of a generated tile (Vec rows of any width: the allocation pads them
// to whole 32-byte units, isa::vec_row_pitch_bytes).
std::vector<int64_t> vec_shape(const CallSite& s, DataType dtype) {
  auto shape = shape_attr(s, "shape");
  if (shape.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(shape) + " is not 2-D; tiles are 2-D");
  (void)dtype;  // any row width: Vec rows are padded to 32 bytes in the allocation
  return shape;
}

// The optional valid_shape list of a generated tile: two entries inside the shape.
std::vector<ExprPtr> valid_arg(const CallSite& s, const std::vector<int64_t>& shape) {
  auto valid = list_arg(s, "valid_shape");
  if (valid.empty()) return valid;
  if (valid.size() != 2)
    op_fail(s, ErrorKind::kType, "'valid_shape' must have 2 entries [rows, cols], got " + std::to_string(valid.size()));
  for (size_t i = 0; i < 2; ++i) {
    auto v = as_const_int(valid[i]);
    if (v && (*v < 0 || *v > shape[i]))
      op_fail(s, ErrorKind::kValue,
              "valid_shape[" + std::to_string(i) + "] = " + std::to_string(*v) + " is outside 0.." + std::to_string(shape[i]),
              "the valid shape is a prefix of the tile shape " + shape_str(shape));
  }
  return valid;
}

void require_dtype(const CallSite& s, DataType dt, const std::string& pto) {
  const isa::InstrDef* def = isa::find_instr(pto);
  if (def->allows(dt)) return;
  std::string list;
  for (DataType d : def->dtypes) list += (list.empty() ? "" : ", ") + std::string(dtype_name(d));
  op_fail(s, ErrorKind::kType, std::string("dtype ") + dtype_name(dt) + " is not one " + pto + " writes (" + list + ")",
          "pick one of those dtypes and pl.cast the result if needed");
}

// One instruction writing the result tile from scalar inputs.
void emit_from_scalars(const Call& c, const VarPtr& dst, KernelBuilder& kb, const char* pto,
                       const std::vector<isa::Scalar>& ins, Attrs attrs = {}) {
  int out = kb.define_tile(dst);
  Instr in;
  in.mnemonic = pto;
  in.outs = {Operand::tile(out)};
  for (auto& s : ins) in.ins.push_back(Operand::scalar_of(s));
  in.attrs = std::move(attrs);
  kb.emit(in);
}

TypePtr infer_expands(const CallSite& s) {
  const TileType& t = tile_arg(s, "target");
  require_vec(s, "target", t);
  tile_shape(s, "target", t);
  scalar_arg(s, "scalar");
  return TileType::make(t.shape, t.dtype, MemorySpace::Vec, t.valid_shape);
}

void lower_expands(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  emit_from_scalars(c, dst, kb, "TEXPANDS", {kb.scalar(c.args[1])});
}

// expand_clone(src, target): src is [M, N] (a copy), [M, 1] (each row's value across the row),
// [1, N] (the row down every row) or [1, 1] (one value everywhere), broadcast to the shape
// [M, N] of `target`. PyPTO's `target` is the tile (or tensor) whose shape the clone takes;
// its values are not read. A list (pl.expand_clone(t, [16, 64]), or shape=[16, 64]) gives the
// shape directly. The result is a new tile of src's dtype.
std::vector<int64_t> expand_clone_shape(const CallSite& s) {
  const ExprPtr target = s.arg("target");
  std::vector<int64_t> shape;
  if (auto* l = target->as<ListExpr>()) {
    for (auto& e : l->elems) {
      auto v = as_const_int(e);
      if (!v || *v <= 0)
        op_fail(s, ErrorKind::kType, "the shape list is not a list of positive compile-time extents",
                "pass the tile to clone into, or a shape of positive integer literals");
      shape.push_back(*v);
    }
  } else if (target->type && (target->type->as<TileType>() || target->type->as<TensorType>())) {
    const auto& dims = target->type->as<TileType>() ? target->type->as<TileType>()->shape : target->type->as<TensorType>()->shape;
    for (auto& e : dims) {
      auto v = as_const_int(e);
      if (!v)
        op_fail(s, ErrorKind::kType, "'target' is " + type_str(target->type) + ", whose shape is known only at run time",
                "clone into a tile of static shape");
      shape.push_back(*v);
    }
  } else {
    op_fail(s, ErrorKind::kType, "'target' must be the tile to clone into (or a shape list), got " + type_str(target->type),
            "pass a tile: pl.expand_clone(src, target)");
  }
  if (shape.size() != 2) op_fail(s, ErrorKind::kType, "the result shape " + shape_str(shape) + " is not 2-D; tiles are 2-D");
  return shape;
}

TypePtr infer_expand_clone(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  require_vec(s, "tile", t);
  auto src = tile_shape(s, "tile", t);
  auto shape = expand_clone_shape(s);
  if ((shape[1] * dtype_bytes(t.dtype)) % 32 != 0)
    op_fail(s, ErrorKind::kValue,
            "a Vec tile row must be a multiple of 32 bytes; " + shape_str(shape) + " " + dtype_name(t.dtype) +
                " has rows of " + std::to_string(shape[1] * dtype_bytes(t.dtype)) + " bytes",
            "round the columns up to a multiple of " + std::to_string(32 / dtype_bytes(t.dtype)));
  for (int d = 0; d < 2; ++d)
    if (src[d] != shape[d] && src[d] != 1)
      op_fail(s, ErrorKind::kType,
              "cannot broadcast a " + shape_str(src) + " tile to " + shape_str(shape) + ": dimension " +
                  std::to_string(d) + " is " + std::to_string(src[d]) + ", neither 1 nor " + std::to_string(shape[d]),
              "broadcast a [M, 1] column, a [1, N] row or a [1, 1] element, or slice the tile first");
  // A broadcast dimension is valid everywhere; a copied one keeps the source's valid extent.
  std::vector<ExprPtr> valid;
  if (!t.valid_shape.empty()) {
    for (int d = 0; d < 2; ++d)
      valid.push_back(src[d] == 1 && shape[d] != 1 ? ConstInt::make(shape[d], DataType::INDEX) : t.valid_shape[d]);
  }
  return TileType::make(const_shape(shape), t.dtype, MemorySpace::Vec, valid);
}

ExprPtr shape_list(const std::vector<int64_t>& shape) {
  std::vector<ExprPtr> e;
  for (int64_t v : shape) e.push_back(ConstInt::make(v, DataType::INDEX));
  return ListExpr::make(e);
}

// [1, 1] -> [M, N] with M, N > 1 takes two broadcasts: first to a [1, N] row.
ExprPtr expand_expand_clone(const Call& c, OpExpander& x) {
  auto src = *static_shape(c.args[0]->type->as<TileType>()->shape);
  auto shape = *static_shape(c.type->as<TileType>()->shape);
  if (!(src[0] == 1 && src[1] == 1 && shape[0] > 1 && shape[1] > 1)) return nullptr;
  ExprPtr row = x.emit("row", make_op_call("tile.expand_clone", {c.args[0], shape_list({1, shape[1]})}, {}, {}, c.span));
  return make_op_call("tile.expand_clone", {row, shape_list(shape)}, {}, {}, c.span);
}

void lower_expand_clone(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  auto src_shape = *static_shape(c.args[0]->type->as<TileType>()->shape);
  auto shape = *static_shape(c.type->as<TileType>()->shape);
  int src = kb.tile(c.args[0]);
  int out = kb.define_tile(dst);
  Instr in;
  in.mnemonic = src_shape == shape ? "TMOV" : (src_shape[1] == 1 && shape[1] != 1 ? "TROWEXPAND" : "TCOLEXPAND");
  PYPTO_CHECK(!(src_shape[0] == 1 && src_shape[1] == 1 && shape[0] > 1 && shape[1] > 1),
              "expand_clone of a single element was not expanded");
  in.outs = {Operand::tile(out)};
  in.ins = {Operand::tile(src)};
  kb.emit(in);
}

TypePtr infer_tri(const CallSite& s) {
  DataType dt = dtype_attr(s, "dtype");
  require_dtype(s, dt, "TTRI");
  auto shape = vec_shape(s, dt);
  if (s.arg("diagonal")) require_int_scalar(s, "diagonal");
  bool_attr(s, "upper");
  return TileType::make(const_shape(shape), dt, MemorySpace::Vec, valid_arg(s, shape));
}

void lower_tri(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  isa::Scalar diagonal = c.args[0] ? kb.scalar(c.args[0]) : isa::Scalar::imm(0);
  const AttrValue& upper = c.attrs.at("upper");
  bool up = std::holds_alternative<bool>(upper) ? std::get<bool>(upper) : std::get<int64_t>(upper) != 0;
  emit_from_scalars(c, dst, kb, "TTRI", {diagonal}, {{"upper", up}});
}

TypePtr infer_arange(const CallSite& s) {
  DataType dt = dtype_attr(s, "dtype");
  require_dtype(s, dt, "TCI");
  auto shape = vec_shape(s, dt);
  if (s.arg("start")) {
    const ScalarType& st = scalar_arg(s, "start");
    if (dtype_is_float(st.dtype) && !dtype_is_float(dt))
      op_fail(s, ErrorKind::kType,
              std::string("'start' is a ") + dtype_name(st.dtype) + " scalar but the tile is " + dtype_name(dt),
              "pass an integer start, or dtype=pl.FP32 for float values");
  }
  if (bool_attr(s, "descending") && !dtype_is_float(dt) && !dtype_is_signed(dt))
    op_fail(s, ErrorKind::kType, std::string("descending=True counts down, which an unsigned ") + dtype_name(dt) + " tile cannot hold",
            "use a signed integer or float dtype");
  return TileType::make(const_shape(shape), dt, MemorySpace::Vec, valid_arg(s, shape));
}

// descending=True: start - k = -((-start) + k), an ascending TCI from -start negated by TMULS.
ExprPtr expand_arange(const Call& c, OpExpander& x) {
  if (!std::get<bool>(c.attrs.at("descending"))) return nullptr;
  DataType dt = std::get<DataType>(c.attrs.at("dtype"));
  bool is_float = dtype_is_float(dt);
  ExprPtr start = c.args[0] ? c.args[0] : (is_float ? ConstFloat::make(0.0) : ConstInt::make(0));
  Attrs attrs = c.attrs;
  attrs["descending"] = false;
  ExprPtr neg = UnaryExpr::make(UnaryOp::Neg, start, c.span);
  if (auto* i = start->as<ConstInt>()) neg = ConstInt::make(-i->value, i->type->as<ScalarType>()->dtype, c.span);
  if (auto* f = start->as<ConstFloat>()) neg = ConstFloat::make(-f->value, f->type->as<ScalarType>()->dtype, c.span);
  std::vector<std::pair<std::string, ExprPtr>> kwargs = {{"start", neg}};
  if (c.args[1]) kwargs.push_back({"valid_shape", c.args[1]});
  ExprPtr up = x.emit("ascending", make_op_call("tile.arange", {}, kwargs, attrs, c.span));
  ExprPtr minus_one = is_float ? ConstFloat::make(-1.0) : ConstInt::make(-1, DataType::INT32);
  return make_op_call("tile.muls", {up, minus_one}, {}, {}, c.span);
}

void lower_arange(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  bool is_float = dtype_is_float(std::get<DataType>(c.attrs.at("dtype")));
  isa::Scalar start = c.args[0] ? kb.scalar(c.args[0]) : (is_float ? isa::Scalar::immf(0.0) : isa::Scalar::imm(0));
  emit_from_scalars(c, dst, kb, "TCI", {start});
}


void require_dtype_of(const CallSite& s, DataType dt, const std::string& pto) {
  const isa::InstrDef* def = isa::find_instr(pto);
  if (def->allows(dt)) return;
  std::string list;
  for (DataType d : def->dtypes) list += (list.empty() ? "" : ", ") + std::string(dtype_name(d));
  op_fail(s, ErrorKind::kType, std::string("dtype ") + dtype_name(dt) + " is not one " + pto + " writes (" + list + ")",
          "pick one of those dtypes and pl.cast the result if needed");
}

// ---- random: Philox4x32 ------------------------------------------------------------------

const char* kRandomWords[] = {"key0", "key1", "counter0", "counter1", "counter2", "counter3"};

TypePtr infer_random(const CallSite& s) {
  DataType dt = dtype_attr(s, "dtype");
  require_dtype_of(s, dt, "TRANDOM");
  auto shape = vec_shape_attr(s);
  for (const char* w : kRandomWords) require_int_scalar(s, w);
  int64_t rounds = int_attr(s, "rounds");
  if (rounds < 1 || rounds > 64)
    op_fail(s, ErrorKind::kValue, "rounds = " + std::to_string(rounds) + " is outside 1..64",
            "use Philox's usual 10 rounds (the default) or 7 for the faster variant");
  auto valid = list_arg(s, "valid_shape");
  if (!valid.empty()) {
    if (valid.size() != 2)
      op_fail(s, ErrorKind::kType, "'valid_shape' must have 2 entries [rows, cols], got " + std::to_string(valid.size()));
    for (size_t i = 0; i < 2; ++i) {
      auto v = as_const_int(valid[i]);
      if (v && (*v < 0 || *v > shape[i]))
        op_fail(s, ErrorKind::kValue,
                "valid_shape[" + std::to_string(i) + "] = " + std::to_string(*v) + " is outside 0.." +
                    std::to_string(shape[i]),
                "the valid shape is a prefix of the tile shape " + shape_str(shape));
    }
  }
  return TileType::make(const_shape(shape), dt, MemorySpace::Vec, valid);
}

void lower_random(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  std::vector<isa::Scalar> words;
  for (size_t k = 0; k < 6; ++k) words.push_back(kb.scalar(c.args[k]));
  int out = kb.define_tile(dst);
  Instr in;
  in.mnemonic = "TRANDOM";
  in.outs = {Operand::tile(out)};
  for (auto& w : words) in.ins.push_back(Operand::scalar_of(w));
  in.attrs = {{"rounds", c.attrs.at("rounds")}};
  kb.emit(in);
}

// ---- ci: iota, counting up or down ----------------------------------------------------------

TypePtr infer_ci(const CallSite& s) {
  DataType dt = dtype_attr(s, "dtype");
  require_dtype_of(s, dt, "TCI");
  auto shape = vec_shape_attr(s);
  const ScalarType& st = scalar_arg(s, "start");
  if (dtype_is_float(st.dtype) && !dtype_is_float(dt))
    op_fail(s, ErrorKind::kType,
            std::string("'start' is a ") + dtype_name(st.dtype) + " scalar but the tile is " + dtype_name(dt),
            "pass an integer start, or dtype=pl.FP32 for float values");
  bool_attr(s, "descending");
  return TileType::make(const_shape(shape), dt, MemorySpace::Vec);
}

void lower_ci(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  isa::Scalar start = kb.scalar(c.args[0]);
  int out = kb.define_tile(dst);
  Instr in;
  in.mnemonic = "TCI";
  in.outs = {Operand::tile(out)};
  in.ins = {Operand::scalar_of(start)};
  const AttrValue& d = c.attrs.at("descending");
  bool down = std::holds_alternative<bool>(d) ? std::get<bool>(d) : std::get<int64_t>(d) != 0;
  in.attrs = {{"descending", down}};
  kb.emit(in);
}

}  // namespace

void register_generate_ops(OpRegistry& r) {
  r.add({.name = "tile.expands",
         .params = {aka(expr_param("target"), {"tensor"}), aka(expr_param("scalar"), {"rhs"})},
         .infer_type = infer_expands,
         .pto = "TEXPANDS",
         .lower = lower_expands,
         .doc = "A Vec tile of target's shape, dtype and valid shape with every element set to scalar (target "
                "gives only the type; pl.full makes one from a shape).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "torch.full(({R}, {C}), {scalar}, dtype={dtype})",
         .tensor_form = TensorOpShape::kElementwise});
  r.add({.name = "tile.expand_clone",
         .params = {aka(expr_param("tile"), {"src"}), aka(expr_param("target"), {"shape"})},
         .infer_type = infer_expand_clone,
         .pto = "TROWEXPAND",
         .lower = lower_expand_clone,
         .doc = "Broadcast tile to the shape [M, N] of `target` (a tile, or a shape list) as a new tile; target's "
                "values are not read: an [M, 1] column across each row (TROWEXPAND), a "
                "[1, N] row down each row (TCOLEXPAND), a [1, 1] element everywhere (both), an [M, N] tile copied "
                "(TMOV).",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = false,
         .torch = "{tile:v}.expand({R}, {C}).clone()",
         .expand = expand_expand_clone,
         .tensor_form = TensorOpShape::kWhole});
  r.add({.name = "tile.tri",
         .params = {expr_param("diagonal", true), attr_param("shape"), list_param("valid_shape", true),
                    attr_param("dtype", DataType::INT32), attr_param("upper", false)},
         .infer_type = infer_tri,
         .pto = "TTRI",
         .lower = lower_tri,
         .doc = "Triangular 0/1 mask: element (r, c) is 1 where c - r <= diagonal (numpy.tril of ones), or "
                "c - r >= diagonal with upper=True (numpy.triu); over the valid shape.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_tri({R}, {C}, {diagonal=0}, {upper}, {dtype})"});
  r.add({.name = "tile.arange",
         .params = {expr_param("start", true), attr_param("shape"), attr_param("dtype", DataType::INT32),
                    quiet(attr_param("descending", false)), list_param("valid_shape", true)},
         .infer_type = infer_arange,
         .pto = "TCI",
         .lower = lower_arange,
         .doc = "Consecutive values in row-major order over the valid shape: element (r, c) is start + r * "
                "valid_cols + c (numpy.arange(start, start + rows * cols).reshape(rows, cols)).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_arange({R}, {C}, {start=0}, {dtype}, {descending})",
         .expand = expand_arange});
  r.add({.name = "tile.random",
         .params = {expr_param("key0"), expr_param("key1"), expr_param("counter0"), expr_param("counter1"),
                    expr_param("counter2"), expr_param("counter3"), attr_param("shape"), list_param("valid_shape", true),
                    attr_param("dtype", DataType::UINT32), attr_param("rounds", int64_t{10})},
         .infer_type = infer_random,
         .pto = "TRANDOM",
         .lower = lower_random,
         .doc = "Counter-based random numbers, Philox4x32 with `rounds` rounds (Random123's philox4x32_R): key "
                "(key0, key1), 128-bit counter (counter0 lowest word); element i of the valid region in row-major "
                "order is word i % 4 of the block for counter + i / 4. UINT32/INT32 take the word; floats its top "
                "significand bits as k / 2^p in [0, 1).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_philox({R}, {C}, {key0}, {key1}, {counter0}, {counter1}, {counter2}, {counter3}, {rounds}, "
                  "{dtype})",
         .tensor_form = TensorOpShape::kGenerate});
  r.add({.name = "tile.ci",
         .params = {expr_param("start"), attr_param("shape"), attr_param("dtype", DataType::INT32),
                    attr_param("descending", false)},
         .infer_type = infer_ci,
         .pto = "TCI",
         .lower = lower_ci,
         .doc = "Consecutive integers in row-major order: element (r, c) is start + (r * cols + c), or start - "
                "(r * cols + c) with descending=True (PyPTO's ci; pl.tile.arange takes the shape first).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_arange({R}, {C}, {start}, {dtype}, {descending})",
         .tensor_form = TensorOpShape::kGenerate,
         .tensor_aliases = {"tensor.arange"}});
}

}  // namespace pypto::ops

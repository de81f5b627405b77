// Ops PyPTO spells that map onto existing PTO instructions: the Philox generator random
// (TRANDOM), ci (TCI, counting up or down), fillpad_expand / fillpad_inplace (TFILLPAD_EXPAND /
// TFILLPAD), extract (TEXTRACT at a row and column), sels (TSELS), the tile-scalar
// maximums / minimums (TMAXS / TMINS) and lrelu (TLRELU), prelu (TPRELU), the ternary addc /
// subc (TADDC / TSUBC) and their scalar forms addsc / subsc (composites: TADDS or TSUBS, then
// TADD), and one-element access: tensor.write, tile.read, tile.write (the scalar unit's
// kScalarRead / kScalarWrite). Tensor forms of the elementwise ones are in tensor_compute.cpp.
#include "../op_rules.h"
#include "pypto/isa/instructions.h"

namespace pypto::ir::ops {

using codegen::KernelBuilder;
using isa::Instr;
using isa::Operand;

namespace {

TypePtr same_as(const TileType& t) { return TileType::make(t.shape, t.dtype, MemorySpace::Vec, t.valid_shape); }

void require_dtype_of(const CallSite& s, DataType dt, const std::string& pto) {
  const isa::InstrDef* def = isa::find_instr(pto);
  if (def->allows(dt)) return;
  std::string list;
  for (DataType d : def->dtypes) list += (list.empty() ? "" : ", ") + std::string(dtype_name(d));
  op_fail(s, ErrorKind::kType, std::string("dtype ") + dtype_name(dt) + " is not one " + pto + " writes (" + list + ")",
          "pick one of those dtypes and pl.cast the result if needed");
}

// A 2-D shape attribute (Vec rows of any width: padded to 32 bytes in the allocation).
std::vector<int64_t> vec_shape_attr(const CallSite& s, DataType dtype) {
  auto shape = shape_attr(s, "shape");
  if (shape.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(shape) + " is not 2-D; tiles are 2-D");
  (void)dtype;  // any row width: Vec rows are padded to 32 bytes in the allocation
  return shape;
}

// ---- random: Philox4x32 ------------------------------------------------------------------

const char* kRandomWords[] = {"key0", "key1", "counter0", "counter1", "counter2", "counter3"};

TypePtr infer_random(const CallSite& s) {
  DataType dt = dtype_attr(s, "dtype");
  require_dtype_of(s, dt, "TRANDOM");
  auto shape = vec_shape_attr(s, dt);
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
  auto shape = vec_shape_attr(s, dt);
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
  auto shape = vec_shape_attr(s, t.dtype);
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

TypePtr infer_sels(const CallSite& s) {
  const TileType& mask = tile_arg(s, "mask");
  const TileType& a = tile_arg(s, "src");
  require_vec(s, "mask", mask);
  require_vec(s, "src", a);
  require_packed_mask(s, mask, "src", a);
  tile_arg(s, "tmp");
  scalar_arg(s, "scalar");
  return same_as(a);
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

// ---- tensor.write: one element ------------------------------------------------------------------

// pl.write's `value`: a float value needs a float container (an int one would truncate it
// silently); `what` is "tensor" or "tile".
void check_written_value(const CallSite& s, DataType container, const char* what) {
  const ScalarType& v = scalar_arg(s, "value");
  if (dtype_is_float(v.dtype) && !dtype_is_float(container))
    op_fail(s, ErrorKind::kType,
            std::string("'value' is a ") + dtype_name(v.dtype) + " scalar but the " + what + " is " + dtype_name(container),
            std::string("convert it first: pl.cast(value, pl.") + dtype_name(container) + ")");
}

TypePtr infer_write(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "tensor");
  auto idx = list_arg(s, "indices");
  require_scalar_list(s, "indices", idx);
  if (flat_index_ok(s, idx, t.shape)) {  // pl.write(t, flat, v)
    check_written_value(s, t.dtype, "tensor");
    return s.arg("tensor")->type;
  }
  if (idx.size() != t.shape.size())
    op_fail(s, ErrorKind::kType,
            "'indices' has " + std::to_string(idx.size()) + " entries but the tensor has rank " + std::to_string(t.shape.size()),
            "give one index per tensor dimension, or one flat row-major index");
  for (size_t d = 0; d < idx.size(); ++d) {
    auto i = as_const_int(idx[d]);
    auto n = as_const_int(t.shape[d]);
    if (i && (*i < 0 || (n && *i >= *n)))
      op_fail(s, ErrorKind::kValue, "index " + std::to_string(*i) + " of dimension " + std::to_string(d) + " is out of range" +
                                        (n ? " 0.." + std::to_string(*n - 1) : std::string()),
              "keep the index inside the tensor's shape");
  }
  check_written_value(s, t.dtype, "tensor");
  return s.arg("tensor")->type;
}

void lower_write(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int tensor = kb.tensor(c.args[0]);
  auto idx = kb.scalars(unravel_flat_index(c.args[1], c.args[0]->type->as<TensorType>()->shape, c.span));
  isa::Scalar value = kb.scalar(c.args[2]);
  Instr in;
  in.kind = isa::InstrKind::kScalarWrite;
  in.ins = {Operand::tensor(tensor), Operand::list_of(idx), Operand::scalar_of(value)};
  kb.emit(in);
  if (dst) kb.bind_tensor(dst.get(), tensor);
}

// ---- tile.read / tile.write: one element of a tile ------------------------------------------------

void check_tile_indices(const CallSite& s, const TileType& t) {
  auto shape = tile_shape(s, "tile", t);
  auto idx = list_arg(s, "indices");
  require_scalar_list(s, "indices", idx);
  if (flat_index_ok(s, idx, const_shape(shape))) return;  // pl.read(t, flat): row-major over the allocated shape
  if (idx.size() != 2)
    op_fail(s, ErrorKind::kType, "'indices' has " + std::to_string(idx.size()) + " entries; a tile element is [row, col]",
            "write pl.tile.read(t, [r, c]), or pass one flat row-major index");
  for (size_t d = 0; d < 2; ++d) {
    auto i = as_const_int(idx[d]);
    if (i && (*i < 0 || *i >= shape[d]))
      op_fail(s, ErrorKind::kValue,
              "index " + std::to_string(*i) + " of dimension " + std::to_string(d) + " is outside the " + shape_str(shape) +
                  " tile (0.." + std::to_string(shape[d] - 1) + ")",
              "keep the index inside the tile's shape");
  }
}

TypePtr infer_tile_read(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  check_tile_indices(s, t);
  return ScalarType::make(t.dtype);
}

// The tile's index list, a flat index unravelled over its allocated [rows, cols].
std::vector<isa::Scalar> tile_indices(const Call& c, KernelBuilder& kb) {
  return kb.scalars(unravel_flat_index(c.args[1], c.args[0]->type->as<TileType>()->shape, c.span));
}

void lower_tile_read(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int tile = kb.tile(c.args[0]);
  auto idx = tile_indices(c, kb);
  Instr in;
  in.kind = isa::InstrKind::kScalarRead;
  in.dst_reg = kb.define_scalar(dst);
  in.ins = {Operand::tile(tile), Operand::list_of(idx)};
  kb.emit(in);
}

TypePtr infer_tile_write(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  check_tile_indices(s, t);
  check_written_value(s, t.dtype, "tile");
  return s.arg("tile")->type;
}

// Writes the element in the tile's own buffer; the result is a view of that buffer, so
// `pl.tile.write(t, [r, c], v)` as a statement updates t.
void lower_tile_write(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int tile = kb.tile(c.args[0]);
  auto idx = tile_indices(c, kb);
  isa::Scalar value = kb.scalar(c.args[2]);
  Instr in;
  in.kind = isa::InstrKind::kScalarWrite;
  in.ins = {Operand::tile(tile), Operand::list_of(idx), Operand::scalar_of(value)};
  kb.emit(in);
  if (dst) kb.define_view(dst, tile);
}

// pl.get_subblock_idx(): the kernel's hidden __subblock_idx parameter (lower_kernel.cpp adds
// it to kernels that read it; a mixed task's part passes its lane, any other launch 0).
void lower_subblock_idx(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  if (!kb.subblock_idx)
    fail(ErrorKind::kType, c.span, "pl.get_subblock_idx() is read outside kernel code (the orchestration has no lane)",
         "read it inside an InCore, AIV or AIC function or a pl.at body");
  if (dst) kb.bind_scalar(dst.get(), kb.scalar(kb.subblock_idx));
}

}  // namespace

void register_added_ops(OpRegistry& r) {
  r.add({.name = "tile.get_subblock_idx",
         .params = {},
         .infer_type = [](const CallSite&) { return ScalarType::make(DataType::INDEX); },
         .pto = "",
         .lower = lower_subblock_idx,
         .doc = "The AIV lane (0 or 1) of the vector function running as a part of a Group (mixed) task, as an "
                "INDEX scalar; 0 on the AIC part and in every kernel that is not a part of a mixed task.",
         .aliases = {"get_subblock_idx", "tensor.get_subblock_idx"},
         .scalar_variant = "",
         .torch = "_subblock_idx()"});
  r.add({.name = "tile.read",
         .params = {expr_param("tile"), list_param("indices")},
         .infer_type = infer_tile_read,
         .pto = "",
         .lower = lower_tile_read,
         .doc = "One element of the tile at [row, col] (of its allocated shape), as a scalar of the tile's dtype.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_read({tile}, {indices})"});
  r.add({.name = "tile.write",  // PyPTO's pl.write(dst, offset, value) by keyword
         .params = {aka(expr_param("tile"), {"dst"}), aka(list_param("indices"), {"offset"}), expr_param("value")},
         .infer_type = infer_tile_write,
         .pto = "",
         .lower = lower_tile_write,
         .doc = "Set the tile's element at [row, col] to value (converted to the tile's dtype), in the tile's own "
                "buffer; returns the tile.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "_write({tile}, {indices}, {value})",
         .expand = {},
         .effects = true});
  r.add({.name = "tensor.write",
         .params = {aka(expr_param("tensor"), {"dst"}), aka(list_param("indices"), {"offset"}), expr_param("value")},
         .infer_type = infer_write,
         .pto = "",
         .lower = lower_write,
         .doc = "Set one element of the tensor at indices to value (converted to the tensor's dtype); returns the "
                "updated tensor. In orchestration the host writes it once earlier tasks are done.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "tensor",
         .view = false,
         .torch = "_write({tensor}, {indices}, {value})"});
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
                  "{dtype})"});
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
         .torch = "_arange({R}, {C}, {start}, {dtype}, {descending})"});
  r.add({.name = "tile.fillpad_expand",
         .params = {aka(expr_param("tile"), {"value", "tensor"}), attr_param("shape"), attr_param("pad_value", PadValue::zero)},
         .infer_type = infer_fillpad_expand,
         .pto = "TFILLPAD_EXPAND",
         .lower = {},
         .doc = "Copy the tile's valid region into a new fully valid tile of the larger `shape`; every other "
                "element holds pad_value (zero, max or min).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_fit({tile:v}, {R}, {C}, {pad_value})"});
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
           .torch = e.torch});
  r.add({.name = "tile.lrelu",
         .params = {expr_param("tile"), expr_param("slope")},
         .infer_type = infer_lrelu,
         .pto = "TLRELU",
         .lower = {},
         .doc = "Leaky ReLU: x > 0 ? x : x * slope (slope a scalar).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "torch.where({tile:r} > 0, {tile:r}, {tile:r} * {slope})"});
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
           .torch = e.torch});
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
         .expand = [](const Call& c, OpExpander& x) { return expand_ternary_scalar(c, x, "tile.adds"); }});
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
         .expand = [](const Call& c, OpExpander& x) { return expand_ternary_scalar(c, x, "tile.subs"); }});
}

}  // namespace pypto::ir::ops

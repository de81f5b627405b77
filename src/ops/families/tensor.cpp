// Tensor-level ops: global-memory arrays made by the orchestration (create_tensor), their
// extents (dim), single elements read as scalars (read), and tiles written into them
// (assemble, the target of `out[a:b, c:d] = tile`); one-element access: tensor.write, tile.read,
// tile.write (the scalar unit's kScalarRead / kScalarWrite).
#include <algorithm>
#include <cmath>
#include <set>

#include "../op_rules.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

// The extents of pl.create_tensor: constants (each > 0) or run-time integer scalars (a
// dimension read from a tensor, a pl.dynamic dim, a scalar parameter: the orchestration
// allocates the tensor when it runs). An integer that is not INDEX is converted (pl.cast).
std::vector<ExprPtr> create_extents(const CallSite& s) {
  std::vector<ExprPtr> dims = list_arg(s, "shape");
  if (dims.empty()) op_fail(s, ErrorKind::kValue, "argument 'shape' is empty", "give one extent per dimension, e.g. [64, 64]");
  for (size_t d = 0; d < dims.size(); ++d) {
    if (auto v = as_const_int(dims[d])) {
      if (*v <= 0)
        op_fail(s, ErrorKind::kValue, "argument 'shape' has extent " + std::to_string(*v) + " at dimension " + std::to_string(d),
                "every extent of a shape must be a positive integer");
      if (dims[d]->type->as<ScalarType>()->dtype != DataType::INDEX) dims[d] = ConstInt::make(*v, DataType::INDEX, dims[d]->span);
    } else if (dims[d]->type->as<ScalarType>()->dtype != DataType::INDEX) {
      dims[d] = CastExpr::make(dims[d], DataType::INDEX, "round", dims[d]->span.line ? dims[d]->span : s.span);
    }
  }
  return dims;
}

TypePtr infer_create(const CallSite& s) {
  auto shape = create_extents(s);
  DataType dt = dtype_attr(s, "dtype");
  std::string layout = string_attr(s, "layout");
  if (layout != "ND" && layout != "DN" && layout != "NZ")
    op_fail(s, ErrorKind::kValue, "layout must be pl.TensorLayout.ND, DN or NZ, got '" + layout + "'");
  // init_value: the buffer is filled before any kernel runs; 0 for every dtype, another
  // value only for integer and 32/64-bit float dtypes (as PyPTO's codegen).
  const AttrValue& init = s.attr("init_value");
  if (!std::holds_alternative<std::string>(init)) {
    double v = std::holds_alternative<double>(init) ? std::get<double>(init)
               : std::holds_alternative<bool>(init) ? (std::get<bool>(init) ? 1.0 : 0.0)
               : std::holds_alternative<int64_t>(init) ? static_cast<double>(std::get<int64_t>(init))
                                                         : std::nan("");
    if (std::isnan(v) && !std::holds_alternative<double>(init))
      op_fail(s, ErrorKind::kType, "init_value must be a number");
    if (v != 0 && (dt == DataType::FP16 || dt == DataType::BF16))
      op_fail(s, ErrorKind::kValue,
              std::string("a non-zero init_value cannot pre-fill a ") + dtype_name(dt) + " tensor",
              "use init_value=0, or fill it in a kernel with pl.full(...) and pl.store");
    if (std::holds_alternative<double>(init) && !dtype_is_float(dt) && v != std::floor(v))
      op_fail(s, ErrorKind::kValue, "init_value " + std::to_string(v) + " is not an integer, but the tensor is " + dtype_name(dt));
  }
  bool_attr(s, "manual_dep");
  return TensorType::make(shape, dt);
}

void lower_create(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  if (!kb.is_host())
    fail(ErrorKind::kType, c.span, "pl.create_tensor: a kernel cannot allocate global memory",
         "create the tensor in the orchestration (@pl.jit entry) and pass it to the kernel as pl.Out");
  isa::ParamDesc desc;
  desc.name = dst ? dst->name : "tmp";
  desc.dtype = std::get<DataType>(c.attrs.at("dtype"));
  // Static extents in the "shape" attr; a run-time one is -1 there and the instruction takes
  // every extent as a scalar operand (evaluated when the allocation runs).
  const auto& dims = c.type->as<TensorType>()->shape;
  bool dynamic = false;
  for (auto& d : dims) {
    auto v = as_const_int(d);
    desc.shape.push_back(v ? *v : -1);
    dynamic = dynamic || !v;
  }
  desc.dir = ParamDirection::InOut;
  Instr in;
  if (dynamic) in.ins = {Operand::list_of(kb.scalars(ListExpr::make(dims, c.span)))};
  int slot = kb.add_tensor(desc);
  in.kind = isa::InstrKind::kAllocTensor;
  in.outs = {Operand::tensor(slot)};
  in.attrs = {{"dtype", desc.dtype}, {"shape", desc.shape}};
  const AttrValue& init = c.attrs.at("init_value");
  if (!std::holds_alternative<std::string>(init)) in.attrs["init_value"] = init;
  kb.emit(in);
  if (dst) kb.bind_tensor(dst.get(), slot);
  if (std::get<bool>(c.attrs.at("manual_dep"))) kb.manual_dep_slots.insert(slot);
}

TypePtr infer_dim(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "tensor");
  int64_t axis = int_attr(s, "axis");
  int64_t rank = static_cast<int64_t>(t.shape.size());
  if (axis < -rank || axis >= rank)
    op_fail(s, ErrorKind::kValue, "axis " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank),
            "use an axis in 0.." + std::to_string(rank - 1));
  return ScalarType::make(DataType::INDEX);
}

void lower_dim(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  auto* t = c.args[0]->type->as<TensorType>();
  int64_t axis = std::get<int64_t>(c.attrs.at("axis"));
  if (axis < 0) axis += static_cast<int64_t>(t->shape.size());
  isa::Scalar extent = kb.scalar(t->shape[axis]);
  if (dst) kb.bind_scalar(dst.get(), extent);
}

TypePtr infer_read(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "tensor");
  auto idx = list_arg(s, "indices");
  if (idx.size() == 1 && t.shape.size() > 1) {  // PyPTO's pl.read(t, flat): one row-major element index
    auto i = as_const_int(idx[0]);
    int64_t n = 1;
    bool known = true;
    for (auto& d : t.shape) {
      auto v = as_const_int(d);
      known = known && v;
      if (v) n *= *v;
    }
    if (i && (*i < 0 || (known && *i >= n)))
      op_fail(s, ErrorKind::kValue, "flat index " + std::to_string(*i) + " is out of range" +
                                        (known ? " 0.." + std::to_string(n - 1) : std::string()));
    return ScalarType::make(t.dtype);
  }
  if (idx.size() != t.shape.size())
    op_fail(s, ErrorKind::kType,
            "'indices' has " + std::to_string(idx.size()) + " entries but the tensor has rank " + std::to_string(t.shape.size()),
            "give one index per tensor dimension");
  for (size_t d = 0; d < idx.size(); ++d) {
    auto i = as_const_int(idx[d]);
    auto n = as_const_int(t.shape[d]);
    if (i && (*i < 0 || (n && *i >= *n)))
      op_fail(s, ErrorKind::kValue, "index " + std::to_string(*i) + " of dimension " + std::to_string(d) + " is out of range" +
                                        (n ? " 0.." + std::to_string(*n - 1) : std::string()));
  }
  return ScalarType::make(t.dtype);
}

void lower_read(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  int tensor = kb.tensor(c.args[0]);
  auto& shape = c.args[0]->type->as<TensorType>()->shape;
  ExprPtr list = unravel_flat_index(c.args[1], shape, c.span);  // pl.read(t, flat)
  auto idx = kb.scalars(list);
  Instr in;
  in.kind = isa::InstrKind::kScalarRead;
  in.dst_reg = kb.define_scalar(dst);
  in.ins = {Operand::tensor(tensor), Operand::list_of(idx)};
  kb.emit(in);
}

TypePtr infer_assemble(const CallSite& s) {
  const TensorType& target = tensor_arg(s, "target");
  ExprPtr src = s.arg("src");
  auto offsets = list_arg(s, "offsets");
  if (offsets.size() != target.shape.size())
    op_fail(s, ErrorKind::kType,
            "'offsets' has " + std::to_string(offsets.size()) + " entries but the target has rank " +
                std::to_string(target.shape.size()),
            "give one offset per target dimension");
  auto src_dtype = src && src->type ? element_dtype(src->type) : std::nullopt;
  bool ok_kind = src && src->type && (src->type->as<TileType>() || src->type->as<TensorType>());
  if (!ok_kind) op_fail(s, ErrorKind::kType, "argument 'src' must be a tile or a tensor, got " + type_str(src ? src->type : nullptr));
  auto* tile = src->type->as<TileType>();
  bool acc_convert = tile && tile->memory == MemorySpace::Acc && tile->dtype == DataType::FP32 &&
                     (target.dtype == DataType::FP16 || target.dtype == DataType::BF16);
  if (*src_dtype != target.dtype && !acc_convert)
    op_fail(s, ErrorKind::kType,
            std::string("'src' is ") + dtype_name(*src_dtype) + " but the target is " + dtype_name(target.dtype),
            std::string("convert first: pl.cast(src, pl.") + dtype_name(target.dtype) + ")");
  std::string atomic = string_attr(s, "atomic");
  if (atomic != "none" && atomic != "add")
    op_fail(s, ErrorKind::kValue, "atomic must be \"none\" or \"add\", got \"" + atomic + "\"");
  const auto& drop = std::get<std::vector<int64_t>>(s.attr("drop_dims"));
  if (!drop.empty()) {
    const size_t src_rank = tile ? 2 : src->type->as<TensorType>()->shape.size();
    bool ok = drop.size() + src_rank == target.shape.size();
    for (size_t i = 0; ok && i < drop.size(); ++i)
      ok = drop[i] >= 0 && drop[i] < static_cast<int64_t>(target.shape.size()) && (i == 0 || drop[i] > drop[i - 1]);
    if (!ok)
      op_fail(s, ErrorKind::kValue,
              "drop_dims=" + shape_str(drop) + " must name, in increasing order, the " +
                  std::to_string(target.shape.size() - std::min(target.shape.size(), src_rank)) +
                  " target axes the rank-" + std::to_string(src_rank) + " source does not fill",
              "index exactly those axes with an integer (out[b, :, h, :] = v)");
  }
  return s.arg("target")->type;
}

bool is_control(isa::InstrKind k) {
  using K = isa::InstrKind;
  return k == K::kLoopBegin || k == K::kLoopEnd || k == K::kIf || k == K::kElse || k == K::kEndIf || k == K::kWhileBegin ||
         k == K::kWhileCond || k == K::kWhileEnd;
}

// The registers an instruction of the host code writes.
std::vector<int> written_regs(const Instr& in) {
  std::vector<int> regs;
  if (in.dst_reg >= 0) regs.push_back(in.dst_reg);
  if (auto it = in.attrs.find("launch_reg"); it != in.attrs.end())
    if (auto* v = std::get_if<std::vector<int64_t>>(&it->second))
      for (int64_t r : *v) regs.push_back(static_cast<int>(r));
  return regs;
}

// Orchestration `y[off] = t` as PyPTO's name alias: when t is a pl.create_tensor of the same
// block (no loop or branch boundary since, no fill value, automatic dependencies), y holds its
// tensor from before t's creation and the window's offsets and extents can be computed there,
// the creation becomes the window of y itself (a kTensorView at the kAllocTensor's place) and
// the kernels that produced t wrote the window directly. `view` is the window (outs unset),
// emitted by the caller at [p0, p1) with the scalar code that computes its operands.
bool alias_created_tensor(KernelBuilder& kb, int target, int src, Instr view, int p0) {
  std::vector<Instr>& code = kb.code();
  const int p1 = static_cast<int>(code.size());
  int alloc = -1;
  for (int pc = p0 - 1; pc >= 0 && alloc < 0; --pc) {
    const Instr& in = code[pc];
    if (is_control(in.kind)) return false;
    const bool defines = (in.kind == isa::InstrKind::kAllocTensor || in.kind == isa::InstrKind::kTensorView) &&
                         !in.outs.empty();
    if (defines && in.outs[0].index == target) return false;  // y is (re)made after t
    if (defines && in.outs[0].index == src) {
      if (in.kind != isa::InstrKind::kAllocTensor || in.attrs.count("init_value")) return false;
      alloc = pc;
    }
  }
  if (alloc < 0 || kb.manual_dep_slots.count(src)) return false;
  // The window's scalar code [p0, p1) moves to the creation: it must be pure, read only
  // registers that nothing between the creation and here writes, and write registers that
  // nothing there uses.
  std::set<int> late, used;  // written / written or read in (alloc, p0)
  for (int pc = alloc + 1; pc < p0; ++pc) {
    const Instr& in = code[pc];
    for (int r : written_regs(in)) late.insert(r);
    for (const isa::Scalar* x : {&in.a, &in.b, &in.step})
      if (x->kind == isa::Scalar::kReg) used.insert(x->reg);
    for (const Operand& o : in.ins) {
      if (o.kind == Operand::kScalar && o.scalar.kind == isa::Scalar::kReg) used.insert(o.scalar.reg);
      for (const isa::Scalar& x : o.list)
        if (x.kind == isa::Scalar::kReg) used.insert(x.reg);
    }
    for (const auto& [key, value] : in.attrs)  // dep_regs, predicate, block_num_reg, ...
      if (auto* v = std::get_if<std::vector<int64_t>>(&value); v && key != "deps" && key != "no_dep_args" && key != "dump_args")
        for (int64_t r : *v) used.insert(static_cast<int>(r));
  }
  used.insert(late.begin(), late.end());
  std::set<int> own;
  auto reads_ok = [&](const isa::Scalar& s) { return s.kind != isa::Scalar::kReg || own.count(s.reg) || !late.count(s.reg); };
  for (int pc = p0; pc < p1; ++pc) {
    const Instr& in = code[pc];
    if (in.kind != isa::InstrKind::kScalarBin && in.kind != isa::InstrKind::kScalarMov) return false;
    if (!reads_ok(in.a) || (in.kind == isa::InstrKind::kScalarBin && !reads_ok(in.b)) || used.count(in.dst_reg)) return false;
    own.insert(in.dst_reg);
  }
  for (size_t i = 1; i < view.ins.size(); ++i)
    for (const isa::Scalar& s : view.ins[i].list)
      if (!reads_ok(s)) return false;
  view.outs = {Operand::tensor(src)};
  std::vector<Instr> moved(code.begin() + p0, code.end());
  moved.push_back(std::move(view));
  code.resize(p0);
  code.erase(code.begin() + alloc);
  code.insert(code.begin() + alloc, std::make_move_iterator(moved.begin()), std::make_move_iterator(moved.end()));
  return true;
}

// A tile written into a tensor inside a kernel is a store (atomic add from Acc on FIX).
void lower_assemble(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  if (kb.is_host()) {
    // Orchestration `y[a:b, :] = t` of a tensor t: PyPTO's name alias where t's creation can
    // become the window of y; otherwise the window (a kTensorView) gets a copy of t once the
    // tasks before it have finished (kTensorCopy; docs/runtime.md "Orchestration views").
    auto* src = c.args[1]->type->as<TensorType>();
    auto* target = c.args[0]->type->as<TensorType>();
    PYPTO_CHECK(src && target, "tensor.assemble in the orchestration needs tensors");
    if (std::get<std::string>(c.attrs.at("atomic")) != "none")
      fail(ErrorKind::kValue, c.span, "pl.assemble(..., atomic=add) in the orchestration: atomic accumulation is a store of a tile",
           "accumulate inside a kernel: pl.store(tile, offsets, out, atomic=pl.AtomicType.Add)");
    const int target_slot = kb.tensor(c.args[0]), src_slot = kb.tensor(c.args[1]);
    const size_t rank = target->shape.size(), lead = rank - std::min(rank, src->shape.size());
    const int p0 = kb.pc();
    std::vector<isa::Scalar> extents;
    std::vector<int64_t> drop = std::get<std::vector<int64_t>>(c.attrs.at("drop_dims"));  // x[b, :, h, :] = t
    if (drop.empty())
      for (size_t d = 0; d < lead; ++d) drop.push_back(static_cast<int64_t>(d));
    for (size_t d = 0, k = 0; d < rank; ++d)
      extents.push_back(std::count(drop.begin(), drop.end(), static_cast<int64_t>(d)) ? isa::Scalar::imm(1)
                                                                                       : kb.scalar(src->shape.at(k++)));
    Instr view;
    view.kind = isa::InstrKind::kTensorView;
    view.ins = {Operand::tensor(target_slot), Operand::list_of(kb.scalars(c.args[2])), Operand::list_of(extents)};
    view.attrs = {{"view", std::string("slice")}, {"drop_dims", drop}};
    view.span = c.span;
    if (target_slot != src_slot && alias_created_tensor(kb, target_slot, src_slot, view, p0)) {
      if (dst) kb.bind_tensor(dst.get(), target_slot);
      return;
    }
    isa::ParamDesc desc;
    desc.name = c.args[0]->as<Var>() ? c.args[0]->as<Var>()->name + "_window" : "window";
    desc.dtype = target->dtype;
    for (auto& e : src->shape) desc.shape.push_back(as_const_int(e).value_or(-1));
    desc.dir = ParamDirection::InOut;
    const int window = kb.add_tensor(desc);
    view.outs = {Operand::tensor(window)};
    kb.emit(view);
    Instr copy;
    copy.kind = isa::InstrKind::kTensorCopy;
    copy.outs = {Operand::tensor(window)};
    copy.ins = {Operand::tensor(src_slot)};
    kb.emit(copy);
    if (dst) kb.bind_tensor(dst.get(), target_slot);
    return;
  }
  PYPTO_CHECK(c.args[1]->type->as<TileType>(), "tensor.assemble of a tensor must be lowered to tiles before codegen");
  PYPTO_CHECK(std::get<std::vector<int64_t>>(c.attrs.at("drop_dims")).empty(),
              "tensor.assemble with drop_dims in a kernel must become a tile.store with dims= (LowerTensorOps)");
  int tensor = kb.tensor(c.args[0]);
  int tile = kb.tile(c.args[1]);
  Instr in;
  in.mnemonic = "TSTORE";
  in.outs = {Operand::tensor(tensor)};
  in.ins = {Operand::tile(tile), Operand::list_of(kb.scalars(c.args[2]))};
  if (std::get<std::string>(c.attrs.at("atomic")) == "add") in.attrs = {{"atomic", std::string("add")}};
  kb.emit(in);
  if (dst) kb.bind_tensor(dst.get(), tensor);
}

TypePtr infer_dump_tag(const CallSite& s) {
  tensor_arg(s, "tensor");
  return NoneType::make();
}

// pl.dump_tag(t): later kernel calls that pass t dump it (RunConfig(enable_dump_args=1)).
void lower_dump_tag(const Call& c, const VarPtr&, KernelBuilder& kb) {
  if (!kb.is_host())
    fail(ErrorKind::kType, c.span, "pl.dump_tag marks a tensor of the orchestration; a kernel has no task arguments to dump",
         "call pl.dump_tag(t) in the orchestration, before the launches that pass t");
  kb.dump_slots.insert(kb.tensor(c.args[0]));
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

}  // namespace

void register_tensor_ops(OpRegistry& r) {
  r.add({.name = "tensor.dump_tag",
         .params = {expr_param("tensor")},
         .infer_type = infer_dump_tag,
         .pto = "",
         .lower = lower_dump_tag,
         .doc = "Marks an orchestration tensor for the partial args dump: with RunConfig(enable_dump_args=1) every later "
                "launch passing it writes it to dfx_outputs/args_dump/ before and after the task runs (a statement).",
         .aliases = {"dump_tag"},
         .scalar_variant = "",
         .torch = "None",
         .effects = true});
  r.add({.name = "tensor.create",
         .params = {list_param("shape"), attr_param("dtype", DataType::FP32), quiet(attr_param("layout", std::string("ND"))),
                    quiet(attr_param("manual_dep", false)), quiet(attr_param("init_value", std::string()))},
         .infer_type = infer_create,
         .pto = "",
         .lower = lower_create,
         .doc = "A new global-memory tensor (orchestration only), e.g. an intermediate passed to kernels as pl.Out; "
                "extents may be run-time scalars (allocated when the orchestration reaches it).",
         .aliases = {"create_tensor", "tensor.create_tensor"},
         .scalar_variant = "",
         .torch = "torch.full({shape}, {init_value} or 0, dtype={dtype})"});
  r.add({.name = "tensor.dim",
         .params = {expr_param("tensor"), attr_param("axis")},
         .infer_type = infer_dim,
         .pto = "",
         .lower = lower_dim,
         .doc = "The extent of the tensor along axis, as an INDEX scalar.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "{tensor}.shape[{axis}]"});
  r.add({.name = "tensor.read",
         .params = {aka(expr_param("tensor"), {"src"}), aka(list_param("indices"), {"offset"})},
         .infer_type = infer_read,
         .pto = "",
         .lower = lower_read,
         .doc = "One element of the tensor at indices, as a scalar of the tensor's dtype.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_read({tensor}, {indices})"});
  r.add({.name = "tensor.assemble",
         .params = {expr_param("target"), aka(expr_param("src"), {"source"}), aka(list_param("offsets"), {"offset"}),
                    attr_param("atomic", std::string("none")), quiet(attr_param("drop_dims", std::vector<int64_t>{}))},
         .infer_type = infer_assemble,
         .pto = "TSTORE",
         .lower = lower_assemble,
         .doc = "Write src (a tile or tensor) into the target tensor at offsets; returns the updated target. drop_dims: "
                "the target axes of extent 1 the window drops (`out[b, :, h, :] = v`; default: src fills the trailing "
                "axes).",
         .aliases = {},
         .scalar_variant = "",
         .writes = "target",
         .torch = "_store({target}, {offsets}, {src:v}, {atomic})"});
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
}

}  // namespace pypto::ops

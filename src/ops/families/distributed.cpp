// pld (import pypto.language.distributed as pld): the kernel operations on the window tensors
// of a distributed domain (docs/distributed.md). The parser reaches them as pl.dist.* (what the
// printer writes) and as PyPTO's pld spellings (python/pypto/language/distributed.py):
//   pld.tile.remote_load(target, peer, offsets, shape)      REMOTE_LOAD: a tile of peer's window
//   pld.tile.remote_store(tile, target, peer, offsets, atomic=)   REMOTE_STORE into peer's window
//   pld.system.notify(target, peer, offsets, value, op=)    SIGNAL_NOTIFY: add / set peer's cell
//   pld.system.wait(signal, offsets, expected, cmp=)        SIGNAL_WAIT on this rank's own cell
// A window tensor is a plain tensor here (pld.DistributedTensor is pl.Tensor): pl.load / store
// act on the local window; the instructions shift to a peer's window at run time
// (include/pypto/engines/comm.h).
#include "../op_rules.h"
#include "pypto/ops/kernel_builder.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

void require_kernel(const Call& c, const KernelBuilder& kb) {
  if (!kb.is_host()) return;
  fail(ErrorKind::kType, c.span, "pl." + c.op->name + " reaches a peer's window from a kernel, but it is called in the orchestration",
       "call it inside a @pl.jit.incore kernel (or a `with pl.at(level=pl.Level.CORE_GROUP):` block)");
}

void require_offsets(const CallSite& s, const std::string& tensor, const std::string& name) {
  const TensorType& t = tensor_arg(s, tensor);
  auto offs = list_arg(s, name);
  require_scalar_list(s, name, offs);
  if (offs.size() != t.shape.size())
    op_fail(s, ErrorKind::kType,
            "'" + name + "' has " + std::to_string(offs.size()) + " entries but '" + tensor + "' has rank " +
                std::to_string(t.shape.size()),
            "give one offset per dimension of the window tensor");
}

void require_signal(const CallSite& s, const std::string& name) {
  const TensorType& t = tensor_arg(s, name);
  if (t.dtype != DataType::INT32)
    op_fail(s, ErrorKind::kType, std::string("signal '") + name + "' is " + dtype_name(t.dtype) + "; signal cells are INT32",
            "make the signal pld.window(buf, shape, dtype=pl.INT32)");
}

std::string choice(const CallSite& s, const std::string& name, std::initializer_list<const char*> ok) {
  std::string v = string_attr(s, name);
  for (const char* k : ok)
    if (v == k) return v;
  std::string list;
  for (const char* k : ok) list += std::string(list.empty() ? "" : ", ") + k;
  op_fail(s, ErrorKind::kValue, "'" + name + "' = '" + v + "' is not one of " + list, "pass one of " + list);
}

TypePtr infer_remote_load(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "target");
  require_offsets(s, "target", "offsets");
  scalar_arg(s, "peer");
  require_int_scalar(s, "peer");
  auto shape = shape_attr(s, "shape");
  if (shape.size() == 1) shape.insert(shape.begin(), 1);  // a row of a 1-D window
  if (shape.size() != 2)
    op_fail(s, ErrorKind::kType, "a remote tile is 2-D ([rows, cols] or [cols]), got shape " + shape_str(shape),
            "load 2-D tiles of the last two dimensions");
  auto valid = list_arg(s, "valid_shape");
  if (!valid.empty() && valid.size() != 2)
    op_fail(s, ErrorKind::kType, "'valid_shape' must have 2 entries, got " + std::to_string(valid.size()));
  return TileType::make(const_shape(shape), t.dtype, MemorySpace::Vec, valid);
}

void lower_remote_load(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  require_kernel(c, kb);
  Instr in;
  in.mnemonic = "REMOTE_LOAD";
  int tensor = kb.tensor(c.args[0]);
  isa::Scalar peer = kb.scalar(c.args[1]);
  auto offsets = kb.scalars(c.args[2]);
  in.outs = {Operand::tile(kb.define_tile(dst))};
  in.ins = {Operand::tensor(tensor), Operand::list_of(offsets), Operand::scalar_of(peer)};
  kb.emit(in);
}

TypePtr infer_remote_store(const CallSite& s) {
  const TileType& tile = tile_arg(s, "src_tile");
  const TensorType& t = tensor_arg(s, "target");
  require_offsets(s, "target", "offsets");
  scalar_arg(s, "peer");
  require_int_scalar(s, "peer");
  if (tile.dtype != t.dtype)
    op_fail(s, ErrorKind::kType, std::string("the tile is ") + dtype_name(tile.dtype) + " but the window is " + dtype_name(t.dtype),
            std::string("convert first: pl.cast(tile, pl.") + dtype_name(t.dtype) + ")");
  choice(s, "atomic", {"None_", "Add", "none", "add"});
  return NoneType::make();
}

void lower_remote_store(const Call& c, const VarPtr&, KernelBuilder& kb) {
  require_kernel(c, kb);
  Instr in;
  in.mnemonic = "REMOTE_STORE";
  int tile = kb.tile(c.args[0]);
  int tensor = kb.tensor(c.args[1]);
  isa::Scalar peer = kb.scalar(c.args[2]);
  auto offsets = kb.scalars(c.args[3]);
  in.outs = {Operand::tensor(tensor)};
  in.ins = {Operand::tile(tile), Operand::list_of(offsets), Operand::scalar_of(peer)};
  std::string atomic = std::get<std::string>(c.attrs.at("atomic"));
  if (atomic == "Add" || atomic == "add") in.attrs = {{"atomic", std::string("add")}};
  kb.emit(in);
}

TypePtr infer_notify(const CallSite& s) {
  require_signal(s, "target");
  require_offsets(s, "target", "offsets");
  scalar_arg(s, "peer");
  require_int_scalar(s, "peer");
  scalar_arg(s, "value");
  require_int_scalar(s, "value");
  choice(s, "op", {"AtomicAdd", "Set"});
  return NoneType::make();
}

void lower_notify(const Call& c, const VarPtr&, KernelBuilder& kb) {
  require_kernel(c, kb);
  Instr in;
  in.mnemonic = "SIGNAL_NOTIFY";
  int tensor = kb.tensor(c.args[0]);
  isa::Scalar peer = kb.scalar(c.args[1]);
  auto offsets = kb.scalars(c.args[2]);
  isa::Scalar value = kb.scalar(c.args[3]);
  in.outs = {Operand::tensor(tensor)};
  in.ins = {Operand::list_of(offsets), Operand::scalar_of(peer), Operand::scalar_of(value)};
  in.attrs = {{"op", std::get<std::string>(c.attrs.at("op"))}};
  kb.emit(in);
}

TypePtr infer_wait(const CallSite& s) {
  require_signal(s, "signal");
  require_offsets(s, "signal", "offsets");
  scalar_arg(s, "expected");
  require_int_scalar(s, "expected");
  choice(s, "cmp", {"Eq", "Ge"});
  return NoneType::make();
}

void lower_wait(const Call& c, const VarPtr&, KernelBuilder& kb) {
  require_kernel(c, kb);
  Instr in;
  in.mnemonic = "SIGNAL_WAIT";
  int tensor = kb.tensor(c.args[0]);
  auto offsets = kb.scalars(c.args[1]);
  isa::Scalar expected = kb.scalar(c.args[2]);
  in.ins = {Operand::tensor(tensor), Operand::list_of(offsets), Operand::scalar_of(expected)};
  in.attrs = {{"cmp", std::get<std::string>(c.attrs.at("cmp"))}};
  if (c.op->name == "dist.defer_wait") in.attrs["defer"] = std::string("1");
  kb.emit(in);
}

ParamSpec window(const std::string& name) { return in_memory(expr_param(name), MemorySpace::DDR); }

ParamSpec integer(const std::string& name) {  // a Python int stays an integer, not the window's dtype
  ParamSpec p = expr_param(name);
  p.index = true;
  return p;
}

}  // namespace

void register_distributed_ops(OpRegistry& r) {
  r.add({.name = "dist.remote_load",
         .params = {window("target"), integer("peer"), list_param("offsets"), attr_param("shape"),
                    list_param("valid_shape", true)},
         .infer_type = infer_remote_load,
         .pto = "REMOTE_LOAD",
         .lower = lower_remote_load,
         .doc = "pld.tile.remote_load: a Vec tile of `shape` read from rank `peer`'s copy of window tensor `target` at "
                "`offsets` (kernels only).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_window({target}, {offsets}, {shape})",
         .effects = true});
  r.add({.name = "dist.remote_store",
         .params = {aka(expr_param("src_tile"), {"src", "tile"}), window("target"), integer("peer"), list_param("offsets"),
                    attr_param("atomic", std::string("None_"))},
         .infer_type = infer_remote_store,
         .pto = "REMOTE_STORE",
         .lower = lower_remote_store,
         .doc = "pld.tile.remote_store: writes the tile into rank `peer`'s copy of window tensor `target` at `offsets` "
                "(atomic=pld.AtomicType.Add adds; kernels only).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "None",
         .effects = true});
  r.add({.name = "dist.notify",
         .params = {window("target"), integer("peer"), list_param("offsets"), integer("value"),
                    attr_param("op", std::string("AtomicAdd"))},
         .infer_type = infer_notify,
         .pto = "SIGNAL_NOTIFY",
         .lower = lower_notify,
         .doc = "pld.system.notify: adds `value` to (op=pld.NotifyOp.AtomicAdd) or sets (Set) INT32 signal cell "
                "`offsets` of rank `peer`'s copy of `target`, after this core's earlier writes (release).",
         .aliases = {},
         .scalar_variant = "",
         .torch = "None",
         .effects = true});
  r.add({.name = "dist.wait",
         .params = {window("signal"), list_param("offsets"), integer("expected"), attr_param("cmp", std::string("Eq"))},
         .infer_type = infer_wait,
         .pto = "SIGNAL_WAIT",
         .lower = lower_wait,
         .doc = "pld.system.wait: blocks (sleeping) until this rank's INT32 signal cell `offsets` == `expected` "
                "(cmp=pld.WaitCmp.Eq) or >= (Ge); later reads see what the notifier wrote (acquire). A deadlock or a "
                "failed peer stops it with a report.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "None",
         .effects = true});
  r.add({.name = "dist.defer_wait",
         .params = {window("signal"), list_param("offsets"), integer("expected"), attr_param("cmp", std::string("Ge"))},
         .infer_type = infer_wait,
         .pto = "SIGNAL_WAIT",
         .lower = lower_wait,
         .doc = "pld.system.defer_wait: the condition of pld.system.wait (default cmp=pld.WaitCmp.Ge), without holding "
                "the core: the kernel goes on, and its task completes (its dependents start) once the cell satisfies "
                "it; at most 64 per task. A deadlock or a failed peer stops it with a report.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "None",
         .effects = true});
}

}  // namespace pypto::ops

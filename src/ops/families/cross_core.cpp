// Cross-core tile FIFOs of a cluster (mixed tasks): the cube core (AIC) and its two vector
// cores (AIV 0, AIV 1) exchange tiles with TPUSH / TPOP / TFREE. In an AIC function:
// pl.tpush_to_aiv(tile, aiv=0) (an Acc or Mat tile), t = pl.tpop_from_aiv(shape, dtype, aiv=0)
// (lands in Mat), pl.tfree_to_aiv(t, aiv=0). In an AIV function: pl.tpush_to_aic(tile) (a Vec
// tile), t = pl.tpop_from_aic(shape, dtype) (lands in Vec), pl.tfree_to_aic(t). Which kind
// of function an op may appear in is checked when the kernel is lowered (the op does not
// know its function); the runtime checks that pushes and pops agree (docs/language.md).
// get_subblock_idx: the AIV lane of a mixed task's vector part.
#include "../op_rules.h"
#include "pypto/isa/instructions.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

// Which side of the cluster an op runs on, and the DSL spelling of the mirror op.
struct Side {
  FunctionType core;       // the kind of function the op belongs in
  const char* mirror;      // the same op for the other kind of function
};

Side side_of(const std::string& op) {
  if (op == "tile.tpush_to_aiv") return {FunctionType::AIC, "pl.tpush_to_aic(tile)"};
  if (op == "tile.tpop_from_aiv") return {FunctionType::AIC, "pl.tpop_from_aic(shape, dtype)"};
  if (op == "tile.tfree_to_aiv") return {FunctionType::AIC, "pl.tfree_to_aic(tile)"};
  if (op == "tile.aic_initialize_pipe") return {FunctionType::AIC, "pl.aiv_initialize_pipe(...)"};
  if (op == "tile.aiv_initialize_pipe") return {FunctionType::AIV, "pl.aic_initialize_pipe(...)"};
  if (op == "tile.tpush_to_aic") return {FunctionType::AIV, "pl.tpush_to_aiv(tile, aiv=0)"};
  if (op == "tile.tpop_from_aic") return {FunctionType::AIV, "pl.tpop_from_aiv(shape, dtype, aiv=0)"};
  return {FunctionType::AIV, "pl.tfree_to_aiv(tile, aiv=0)"};
}

int64_t aiv_index(const CallSite& s) {
  const int64_t aiv = int_attr(s, "aiv");
  if (aiv != 0 && aiv != 1)
    op_fail(s, ErrorKind::kValue, "aiv=" + std::to_string(aiv) + " names no vector core of the cluster",
            "a cluster has AIV 0 and AIV 1: pass aiv=0 or aiv=1");
  return aiv;
}

void require_memory(const CallSite& s, const std::string& name, const TileType& t, std::vector<MemorySpace> allowed,
                    const std::string& fix) {
  for (MemorySpace m : allowed)
    if (t.memory == m) return;
  std::string list;
  for (MemorySpace m : allowed) list += std::string(list.empty() ? "" : " or ") + memory_space_name(m);
  auto article = [](MemorySpace m) { return m == MemorySpace::Acc ? "an " : "a "; };
  op_fail(s, ErrorKind::kType,
          "argument '" + name + "' is " + article(t.memory) + memory_space_name(t.memory) + " tile; this op takes " +
              article(allowed[0]) + list + " tile",
          fix);
}

TypePtr popped_type(const CallSite& s, MemorySpace landing) {
  auto shape = shape_attr(s, "shape");
  if (shape.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(shape) + " is not 2-D; tiles are 2-D");
  const DataType dt = dtype_attr(s, "dtype");
  if (landing == MemorySpace::Vec && shape[1] * dtype_bytes(dt) % 32 != 0)
    op_fail(s, ErrorKind::kValue,
            "a Vec tile row must be a multiple of 32 bytes; " + shape_str(shape) + " " + dtype_name(dt) + " has rows of " +
                std::to_string(shape[1] * dtype_bytes(dt)) + " bytes",
            "pop (and push) tiles whose columns are a multiple of " + std::to_string(32 / dtype_bytes(dt)));
  auto valid = list_arg(s, "valid_shape");
  if (!valid.empty() && valid.size() != 2)
    op_fail(s, ErrorKind::kType, "'valid_shape' must have 2 entries [rows, cols], got " + std::to_string(valid.size()));
  for (size_t i = 0; i < valid.size(); ++i) {
    auto v = as_const_int(valid[i]);
    if (v && (*v < 0 || *v > shape[i]))
      op_fail(s, ErrorKind::kValue,
              "valid_shape[" + std::to_string(i) + "] = " + std::to_string(*v) + " is outside 0.." + std::to_string(shape[i]),
              "the valid shape is a prefix of the tile shape " + shape_str(shape));
  }
  return TileType::make(const_shape(shape), dt, landing, valid);
}

// split= of a cross-core op: 0 none, 1 UP_DOWN (rows halved between the two AIVs), 2
// LEFT_RIGHT (columns halved). `whole`: the shape of the un-split tile (the AIC's side), whose
// split extent must be even.
int64_t split_mode(const CallSite& s, const std::vector<int64_t>* whole) {
  const int64_t split = int_attr(s, "split");
  if (split < 0 || split > 2)
    op_fail(s, ErrorKind::kValue, "split=" + std::to_string(split) + " names no split mode",
            "pass split=0 (none), 1 (UP_DOWN: rows between the two AIVs) or 2 (LEFT_RIGHT: columns)");
  if (split != 0 && whole && (*whole)[split - 1] % 2 != 0)
    op_fail(s, ErrorKind::kValue,
            std::string("split=") + std::to_string(split) + " halves the tile's " + (split == 1 ? "rows" : "columns") +
                " between the two vector cores, but " + shape_str(*whole) + " has an odd number of them",
            "split a tile with an even number of " + std::string(split == 1 ? "rows" : "columns"));
  const int64_t id = int_attr(s, "id");
  if (id < 0 || id > 15)
    op_fail(s, ErrorKind::kValue, "id=" + std::to_string(id) + " names no pipe of the cluster",
            "pass id=0..15 (the pipe set up by pl.aic_initialize_pipe / pl.aiv_initialize_pipe(id=...))");
  if (s.attrs.count("lane_stride")) {
    const int64_t ls = int_attr(s, "lane_stride");
    if (ls == 0 || ls < -1)
      op_fail(s, ErrorKind::kValue, "lane_stride=" + std::to_string(ls) + " is not a positive stride",
              "pass a positive lane_stride, or leave it out");
  }
  return split;
}

TypePtr infer_push_to_aiv(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  const auto shape = tile_shape(s, "tile", t);
  split_mode(s, &shape);
  aiv_index(s);
  require_memory(s, "tile", t, {MemorySpace::Acc, MemorySpace::Mat},
                 "push the matmul result (Acc) or a Mat tile (pl.load(..., target_memory=pl.MemorySpace.Mat)); the "
                 "cube core has no Vec buffer");
  return NoneType::make();
}

TypePtr infer_push_to_aic(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  tile_shape(s, "tile", t);
  split_mode(s, nullptr);
  require_memory(s, "tile", t, {MemorySpace::Vec}, "push a Vec tile (a pl.load or a vector op's result)");
  return NoneType::make();
}

TypePtr infer_pop_from_aiv(const CallSite& s) {
  aiv_index(s);
  const auto shape = shape_attr(s, "shape");
  split_mode(s, &shape);
  return popped_type(s, MemorySpace::Mat);
}

TypePtr infer_pop_from_aic(const CallSite& s) {
  split_mode(s, nullptr);
  return popped_type(s, MemorySpace::Vec);
}

TypePtr infer_free(const CallSite& s, MemorySpace landing) {
  const TileType& t = tile_arg(s, "tile");
  tile_shape(s, "tile", t);
  require_memory(s, "tile", t, {landing},
                 std::string("free the tile this core popped (") +
                     (landing == MemorySpace::Mat ? "t = pl.tpop_from_aiv(...)" : "t = pl.tpop_from_aic(...)") + ")");
  return NoneType::make();
}

TypePtr infer_free_to_aiv(const CallSite& s) {
  aiv_index(s);
  split_mode(s, nullptr);
  return infer_free(s, MemorySpace::Mat);
}

TypePtr infer_free_to_aic(const CallSite& s) {
  split_mode(s, nullptr);
  return infer_free(s, MemorySpace::Vec);
}

// pl.aiv_shard(x) / pl.aic_gather(x) inside a `pl.split_aiv` region (the parser passes the
// region's mode as split=): the value a vector lane sees of a cube tile (its half under
// UP_DOWN / LEFT_RIGHT) and the cube tile the lanes' results join into. SplitAiv replaces both
// by FIFO pushes and pops.
TypePtr infer_crossing(const CallSite& s, bool to_vector) {
  const TileType& t = tile_arg(s, "x");
  auto shape = tile_shape(s, "x", t);
  const int64_t split = int_attr(s, "split");
  if (split < 0 || split > 2) op_fail(s, ErrorKind::kValue, "split=" + std::to_string(split) + " names no split mode");
  if (split && to_vector && shape[split - 1] % 2 != 0)
    op_fail(s, ErrorKind::kValue,
            std::string("pl.aiv_shard halves the tile's ") + (split == 1 ? "rows" : "columns") +
                " between the two vector lanes, but " + shape_str(shape) + " has an odd number of them",
            "shard a tile with an even number of " + std::string(split == 1 ? "rows" : "columns"));
  if (to_vector) {
    require_memory(s, "x", t, {MemorySpace::Acc, MemorySpace::Mat},
                   "shard a cube tile (a matmul result or a Mat tile) at the top of the region");
    if (split) shape[split - 1] /= 2;
    if (shape[1] * dtype_bytes(t.dtype) % 32 != 0)
      op_fail(s, ErrorKind::kValue,
              "a Vec tile row must be a multiple of 32 bytes; the shard " + shape_str(shape) + " " + dtype_name(t.dtype) +
                  " has rows of " + std::to_string(shape[1] * dtype_bytes(t.dtype)) + " bytes",
              "shard tiles whose (per-lane) columns are a multiple of " + std::to_string(32 / dtype_bytes(t.dtype)));
    return TileType::make(const_shape(shape), t.dtype, MemorySpace::Vec);
  }
  require_memory(s, "x", t, {MemorySpace::Vec}, "gather a Vec tile (a pl.load or a vector op's result)");
  if (split) shape[split - 1] *= 2;
  return TileType::make(const_shape(shape), t.dtype, MemorySpace::Mat);
}

std::string with_article(FunctionType f) {
  const std::string name = function_type_name(f);
  return (std::string("AEIOU").find(name[0]) != std::string::npos ? "an " : "a ") + name;
}

// The op must sit in a function of its side's kind (AIC or AIV) that a Group function calls.
void check_function_kind(const Call& c, const KernelBuilder& kb) {
  const Side side = side_of(c.op->name);
  if (kb.func_type == side.core) return;
  const char* want = side.core == FunctionType::AIC ? "AIC" : "AIV";
  std::string have = kb.func_name.empty() ? std::string("this function")
                                          : "'" + kb.func_name + "' is " + with_article(kb.func_type) + " function";
  if (kb.func_type == FunctionType::AIC || kb.func_type == FunctionType::AIV)
    fail(ErrorKind::kType, c.span,
         "pl." + c.op->name.substr(5) + " runs on the " + (side.core == FunctionType::AIC ? "cube" : "vector") +
             " core (" + want + ") but " + have,
         "in " + with_article(kb.func_type) + " function use " + side.mirror +
             ", or move this call into the group's @pl.function(type=pl.FunctionType." + want + ") function");
  fail(ErrorKind::kType, c.span,
       "pl." + c.op->name.substr(5) + " exchanges tiles between the cores of a cluster, but " + have +
           "; cross-core FIFO ops belong in the " + want + " function of a mixed task",
       std::string("declare the function @pl.function(type=pl.FunctionType.") + want +
           ") and call it from a @pl.function(type=pl.FunctionType.Group) function together with its peer");
}

std::string peer_of(const Call& c) {
  const std::string& op = c.op->name;
  if (op == "tile.tpush_to_aic" || op == "tile.tpop_from_aic" || op == "tile.tfree_to_aic") return "AIC";
  return "AIV" + std::to_string(std::get<int64_t>(c.attrs.at("aiv")));
}

// split= and id= travel on the instruction when they are not the defaults (the FIFOs read them).
void fifo_attrs(const Call& c, Instr& in) {
  for (const char* k : {"split", "id"}) {
    auto it = c.attrs.find(k);
    if (it != c.attrs.end() && std::get<int64_t>(it->second) != 0) in.attrs[k] = it->second;
  }
}

void lower_push(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  check_function_kind(c, kb);
  Instr in;
  in.mnemonic = "TPUSH";
  in.ins = {Operand::tile(kb.tile(c.args[0]))};
  in.attrs[isa::kPeerAttr] = peer_of(c);
  fifo_attrs(c, in);
  kb.emit(in);
}

void lower_pop(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  check_function_kind(c, kb);
  if (!dst)
    fail(ErrorKind::kType, c.span, "the tile of pl." + c.op->name.substr(5) + " is not kept",
         "assign it (t = pl." + c.op->name.substr(5) + "(...)) and release it with pl." +
             (peer_of(c) == "AIC" ? std::string("tfree_to_aic(t)") : "tfree_to_aiv(t, aiv=...)") + " after its last use");
  Instr in;
  in.mnemonic = "TPOP";
  in.outs = {Operand::tile(kb.define_tile(dst))};
  in.attrs[isa::kPeerAttr] = peer_of(c);
  fifo_attrs(c, in);
  kb.emit(in);
}

void lower_free(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  check_function_kind(c, kb);
  Instr in;
  in.mnemonic = "TFREE";
  in.outs = {Operand::tile(kb.tile(c.args[0]))};  // a write: every read of the tile comes first
  in.attrs[isa::kPeerAttr] = peer_of(c);
  fifo_attrs(c, in);
  kb.emit(in);
}

// pl.aic_initialize_pipe / pl.aiv_initialize_pipe: the FIFO setup of pipe `id`. slot_num is
// the FIFO depth the runtime gives that pipe (mixed_task.cpp reads PIPE_INIT); the buffer
// addresses and slot_size are the device's business (the model keeps slots of its own).
TypePtr infer_initialize_pipe(const CallSite& s) {
  for (const char* b : {"c2v_consumer_buf", "v2c_consumer_buf"})
    if (ExprPtr e = s.arg(b); e && (!e->type || !e->type->as<ScalarType>() || !dtype_is_int(e->type->as<ScalarType>()->dtype)))
      op_fail(s, ErrorKind::kType, std::string("'") + b + "' is " + type_str(e->type) + "; it is a buffer address",
              "pass the result of pl.reserve_buffer(...) / pl.import_peer_buffer(...), or an integer");
  const int64_t mask = int_attr(s, "dir_mask");
  if (mask < 1 || mask > 3)
    op_fail(s, ErrorKind::kValue, "dir_mask=" + std::to_string(mask) + " names no direction",
            "pass dir_mask=1 (cube -> vector), 2 (vector -> cube) or 3 (both)");
  const int64_t size = int_attr(s, "slot_size");
  if (size <= 0)
    op_fail(s, ErrorKind::kValue, "slot_size=" + std::to_string(size) + " is not a positive byte count",
            "pass the bytes of one FIFO slot (the pushed tile's rows * cols * element size)");
  for (const char* k : {"slot_num", "local_slot_num"}) {
    const int64_t n = int_attr(s, k);
    if (n == 0 || n < -1)
      op_fail(s, ErrorKind::kValue, std::string(k) + "=" + std::to_string(n) + " is not a positive slot count",
              std::string("pass ") + k + "=2 (double buffering) or more, or leave it out");
  }
  const int64_t id = int_attr(s, "id");
  if (id < 0 || id > 15) op_fail(s, ErrorKind::kValue, "id=" + std::to_string(id) + " names no pipe", "pass id=0..15");
  return NoneType::make();
}

void lower_initialize_pipe(const Call& c, const VarPtr&, KernelBuilder& kb) {
  check_function_kind(c, kb);
  Instr in;
  in.mnemonic = "PIPE_INIT";
  for (const char* k : {"dir_mask", "slot_size", "slot_num", "id"}) in.attrs[k] = c.attrs.at(k);
  kb.emit(in);
}

TypePtr infer_buffer(const CallSite& s) {
  if (string_attr(s, "name").empty())
    op_fail(s, ErrorKind::kValue, "the buffer needs a name", "pass name=\"c2v_buf\" (the peer imports it by that name)");
  if (s.op.name == "tile.reserve_buffer" && int_attr(s, "size") <= 0)
    op_fail(s, ErrorKind::kValue, "size=" + std::to_string(int_attr(s, "size")) + " is not a positive byte count",
            "pass the bytes of the FIFO buffer (slot_size * slot_num)");
  if (s.op.name == "tile.import_peer_buffer" && string_attr(s, "peer_func").empty())
    op_fail(s, ErrorKind::kValue, "peer_func names no function", "pass peer_func=self.<the peer AIC/AIV function>");
  return ScalarType::make(DataType::INDEX);
}

// The buffer's base address in the model: the given base, else 0 (the FIFO slots are the
// runtime's own; the address only has to be a value the peer can be handed).
void lower_buffer(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  if (kb.func_type != FunctionType::AIC && kb.func_type != FunctionType::AIV)
    fail(ErrorKind::kType, c.span, "pl." + c.op->name.substr(5) + " sets up a cross-core FIFO buffer outside an AIC or AIV function",
         "call it in the AIC / AIV function of a mixed task (a Group function's parts)");
  auto it = c.attrs.find("base");
  const int64_t base = it != c.attrs.end() ? std::max<int64_t>(std::get<int64_t>(it->second), 0) : 0;
  Instr in;
  in.kind = isa::InstrKind::kScalarMov;
  in.a = isa::Scalar::imm(base);
  in.dst_reg = dst ? kb.define_scalar(dst) : kb.new_reg(false);
  kb.emit(in);
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

void register_cross_core_ops(OpRegistry& r) {
  for (const char* side : {"aic", "aiv"}) {
    const std::string n = std::string("tile.") + side + "_initialize_pipe";
    r.add({.name = n,
           .params = {expr_param("c2v_consumer_buf", true), expr_param("v2c_consumer_buf", true), attr_param("dir_mask", int64_t{0}),
                      attr_param("slot_size", int64_t{0}), quiet(attr_param("slot_num", int64_t{-1})),
                      quiet(attr_param("local_slot_num", int64_t{-1})), quiet(attr_param("id", int64_t{0}))},
           .infer_type = infer_initialize_pipe,
           .pto = "PIPE_INIT",
           .lower = lower_initialize_pipe,
           .doc = std::string(side == std::string("aic") ? "AIC" : "AIV") +
                  " function of a mixed task: sets up cross-core pipe `id` (dir_mask 1 cube->vector, 2 vector->cube, "
                  "3 both); its FIFOs get `slot_num` slots (default: the chip's FIFO depth).",
           .aliases = {"system." + n.substr(5)},
           .torch = "None",
           .effects = true});
  }
  r.add({.name = "tile.reserve_buffer",
         .params = {attr_param("name", std::string()), attr_param("size", int64_t{0}), quiet(attr_param("base", int64_t{-1}))},
         .infer_type = infer_buffer,
         .pto = "",
         .lower = lower_buffer,
         .doc = "AIC/AIV function: reserves the named consumer buffer of a cross-core pipe (`base` -1 = AUTO) and "
                "returns its address, for pl.*_initialize_pipe.",
         .aliases = {"system.reserve_buffer"},
         .torch = "max({base}, 0)",
         .effects = true});
  r.add({.name = "tile.import_peer_buffer",
         .params = {attr_param("name", std::string()), attr_param("peer_func", std::string())},
         .infer_type = infer_buffer,
         .pto = "",
         .lower = lower_buffer,
         .doc = "AIC/AIV function: the address of the buffer `name` that the peer function reserved, for "
                "pl.*_initialize_pipe.",
         .aliases = {"system.import_peer_buffer"},
         .torch = "0",
         .effects = true});
  r.add({.name = "tile.tpush_to_aiv",
         .params = {expr_param("tile"), attr_param("aiv", int64_t{0}), quiet(attr_param("split", int64_t{0})),
                    quiet(attr_param("lane_stride", int64_t{-1})), quiet(attr_param("id", int64_t{0}))},
         .infer_type = infer_push_to_aiv,
         .pto = "TPUSH",
         .lower = lower_push,
         .doc = "AIC function of a mixed task: push an Acc or Mat tile to vector core `aiv` (0 or 1) of the cluster; "
                "blocks while its FIFO is full.",
         .aliases = {"system.tpush_to_aiv"},
         .torch = "_tpush(\"AIC->AIV\", {aiv=0}, {tile:v})",
         .effects = true});
  r.add({.name = "tile.tpop_from_aiv",
         .params = {attr_param("shape"), attr_param("dtype", DataType::FP32), attr_param("aiv", int64_t{0}),
                    list_param("valid_shape", true), quiet(attr_param("split", int64_t{0})), quiet(attr_param("id", int64_t{0}))},
         .infer_type = infer_pop_from_aiv,
         .pto = "TPOP",
         .lower = lower_pop,
         .doc = "AIC function: the next tile vector core `aiv` pushed, as a Mat tile (waits for it); release it with "
                "pl.tfree_to_aiv.",
         .aliases = {"system.tpop_from_aiv"},
         .torch = "_tpop(\"AIV->AIC\", {aiv=0}, {R}, {C}, {dtype})",
         .effects = true});
  r.add({.name = "tile.tfree_to_aiv",
         .params = {expr_param("tile"), attr_param("aiv", int64_t{0}), quiet(attr_param("split", int64_t{0})),
                    quiet(attr_param("id", int64_t{0}))},
         .infer_type = infer_free_to_aiv,
         .pto = "TFREE",
         .lower = lower_free,
         .doc = "AIC function: release the oldest tile popped from vector core `aiv`, so that it may push again.",
         .aliases = {"system.tfree_to_aiv"},
         .torch = "_tfree(\"AIV->AIC\", {aiv=0}, {tile})",
         .effects = true});
  r.add({.name = "tile.tpush_to_aic",
         .params = {expr_param("tile"), quiet(attr_param("split", int64_t{0})), quiet(attr_param("id", int64_t{0}))},
         .infer_type = infer_push_to_aic,
         .pto = "TPUSH",
         .lower = lower_push,
         .doc = "AIV function of a mixed task: push a Vec tile to the cluster's cube core; blocks while the FIFO is full.",
         .aliases = {"system.tpush_to_aic"},
         .torch = "_tpush(\"AIV->AIC\", None, {tile:v})",
         .effects = true});
  r.add({.name = "tile.tpop_from_aic",
         .params = {attr_param("shape"), attr_param("dtype", DataType::FP32), list_param("valid_shape", true),
                    quiet(attr_param("split", int64_t{0})), quiet(attr_param("lane_stride", int64_t{-1})), quiet(attr_param("id", int64_t{0}))},
         .infer_type = infer_pop_from_aic,
         .pto = "TPOP",
         .lower = lower_pop,
         .doc = "AIV function: the next tile the cube core pushed to this vector core, as a Vec tile (waits for it); "
                "release it with pl.tfree_to_aic.",
         .aliases = {"system.tpop_from_aic"},
         .torch = "_tpop(\"AIC->AIV\", None, {R}, {C}, {dtype})",
         .effects = true});
  r.add({.name = "tile.aiv_shard",
         .params = {expr_param("x"), quiet(attr_param("split", int64_t{0}))},
         .infer_type = [](const CallSite& s) { return infer_crossing(s, true); },
         .pto = "",
         .doc = "At the top of a `for aiv_id in pl.split_aiv(2, mode=...)` region: the cube tile `x` as each vector lane "
                "receives it (its half of the rows / columns under UP_DOWN / LEFT_RIGHT, the whole under NONE), a Vec "
                "tile. Pass SplitAiv turns it into a FIFO push on the cube and a pop on each lane.",
         .torch = "None"});
  r.add({.name = "tile.aic_gather",
         .params = {expr_param("x"), quiet(attr_param("split", int64_t{0}))},
         .infer_type = [](const CallSite& s) { return infer_crossing(s, false); },
         .pto = "",
         .doc = "At the bottom of a `pl.split_aiv` region: the lanes' Vec tiles `x` joined into one Mat tile of the cube "
                "(AIV 0's half first under UP_DOWN / LEFT_RIGHT; lane 0's tile under NONE). Pass SplitAiv turns it into "
                "a FIFO push on each lane and a pop on the cube.",
         .torch = "None"});
  r.add({.name = "tile.tfree_to_aic",
         .params = {expr_param("tile"), quiet(attr_param("split", int64_t{0})), quiet(attr_param("id", int64_t{0}))},
         .infer_type = infer_free_to_aic,
         .pto = "TFREE",
         .lower = lower_free,
         .doc = "AIV function: release the oldest tile popped from the cube core, so that it may push again.",
         .aliases = {"system.tfree_to_aic"},
         .torch = "_tfree(\"AIC->AIV\", None, {tile})",
         .effects = true});
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
}

}  // namespace pypto::ops

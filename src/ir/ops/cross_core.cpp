// Cross-core tile FIFOs of a cluster (mixed tasks): the cube core (AIC) and its two vector
// cores (AIV 0, AIV 1) exchange tiles with TPUSH / TPOP / TFREE. In an AIC function:
// pl.tpush_to_aiv(tile, aiv=0) (an Acc or Mat tile), t = pl.tpop_from_aiv(shape, dtype, aiv=0)
// (lands in Mat), pl.tfree_to_aiv(t, aiv=0). In an AIV function: pl.tpush_to_aic(tile) (a Vec
// tile), t = pl.tpop_from_aic(shape, dtype) (lands in Vec), pl.tfree_to_aic(t). Which kind
// of function an op may appear in is checked when the kernel is lowered (the op does not
// know its function); the runtime checks that pushes and pops agree (docs/language.md).
#include "op_rules.h"
#include "pypto/isa/instructions.h"

namespace pypto::ir::ops {

using codegen::KernelBuilder;
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

TypePtr infer_push_to_aiv(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  tile_shape(s, "tile", t);
  aiv_index(s);
  require_memory(s, "tile", t, {MemorySpace::Acc, MemorySpace::Mat},
                 "push the matmul result (Acc) or a Mat tile (pl.load(..., target_memory=pl.MemorySpace.Mat)); the "
                 "cube core has no Vec buffer");
  return NoneType::make();
}

TypePtr infer_push_to_aic(const CallSite& s) {
  const TileType& t = tile_arg(s, "tile");
  tile_shape(s, "tile", t);
  require_memory(s, "tile", t, {MemorySpace::Vec}, "push a Vec tile (a pl.load or a vector op's result)");
  return NoneType::make();
}

TypePtr infer_pop_from_aiv(const CallSite& s) {
  aiv_index(s);
  return popped_type(s, MemorySpace::Mat);
}

TypePtr infer_pop_from_aic(const CallSite& s) { return popped_type(s, MemorySpace::Vec); }

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
  return infer_free(s, MemorySpace::Mat);
}

TypePtr infer_free_to_aic(const CallSite& s) { return infer_free(s, MemorySpace::Vec); }

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

void lower_push(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  check_function_kind(c, kb);
  Instr in;
  in.mnemonic = "TPUSH";
  in.ins = {Operand::tile(kb.tile(c.args[0]))};
  in.attrs[isa::kPeerAttr] = peer_of(c);
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
  kb.emit(in);
}

void lower_free(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  check_function_kind(c, kb);
  Instr in;
  in.mnemonic = "TFREE";
  in.outs = {Operand::tile(kb.tile(c.args[0]))};  // a write: every read of the tile comes first
  in.attrs[isa::kPeerAttr] = peer_of(c);
  kb.emit(in);
}

}  // namespace

void register_cross_core_ops(OpRegistry& r) {
  r.add({.name = "tile.tpush_to_aiv",
         .params = {expr_param("tile"), attr_param("aiv", int64_t{0})},
         .infer_type = infer_push_to_aiv,
         .pto = "TPUSH",
         .lower = lower_push,
         .doc = "AIC function of a mixed task: push an Acc or Mat tile to vector core `aiv` (0 or 1) of the cluster; "
                "blocks while its FIFO is full.",
         .torch = "_tpush(\"AIC->AIV\", {aiv=0}, {tile:v})",
         .effects = true});
  r.add({.name = "tile.tpop_from_aiv",
         .params = {attr_param("shape"), attr_param("dtype", DataType::FP32), attr_param("aiv", int64_t{0}),
                    list_param("valid_shape", true)},
         .infer_type = infer_pop_from_aiv,
         .pto = "TPOP",
         .lower = lower_pop,
         .doc = "AIC function: the next tile vector core `aiv` pushed, as a Mat tile (waits for it); release it with "
                "pl.tfree_to_aiv.",
         .torch = "_tpop(\"AIV->AIC\", {aiv=0}, {R}, {C}, {dtype})",
         .effects = true});
  r.add({.name = "tile.tfree_to_aiv",
         .params = {expr_param("tile"), attr_param("aiv", int64_t{0})},
         .infer_type = infer_free_to_aiv,
         .pto = "TFREE",
         .lower = lower_free,
         .doc = "AIC function: release the oldest tile popped from vector core `aiv`, so that it may push again.",
         .torch = "_tfree(\"AIV->AIC\", {aiv=0}, {tile})",
         .effects = true});
  r.add({.name = "tile.tpush_to_aic",
         .params = {expr_param("tile")},
         .infer_type = infer_push_to_aic,
         .pto = "TPUSH",
         .lower = lower_push,
         .doc = "AIV function of a mixed task: push a Vec tile to the cluster's cube core; blocks while the FIFO is full.",
         .torch = "_tpush(\"AIV->AIC\", None, {tile:v})",
         .effects = true});
  r.add({.name = "tile.tpop_from_aic",
         .params = {attr_param("shape"), attr_param("dtype", DataType::FP32), list_param("valid_shape", true)},
         .infer_type = infer_pop_from_aic,
         .pto = "TPOP",
         .lower = lower_pop,
         .doc = "AIV function: the next tile the cube core pushed to this vector core, as a Vec tile (waits for it); "
                "release it with pl.tfree_to_aic.",
         .torch = "_tpop(\"AIC->AIV\", None, {R}, {C}, {dtype})",
         .effects = true});
  r.add({.name = "tile.tfree_to_aic",
         .params = {expr_param("tile")},
         .infer_type = infer_free_to_aic,
         .pto = "TFREE",
         .lower = lower_free,
         .doc = "AIV function: release the oldest tile popped from the cube core, so that it may push again.",
         .torch = "_tfree(\"AIC->AIV\", None, {tile})",
         .effects = true});
}

}  // namespace pypto::ir::ops

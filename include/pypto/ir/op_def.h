// An op's definition (OpDef): its parameters, type inference and verification (user-facing
// messages) and its lowering to PTO instructions. A Call names its OpDef; the printer and
// structural equality read it. Every op is defined exactly once, in the ops layer, and
// registered in the op registry (pypto/ops/op_registry.h). Parser, printer, passes, codegen
// and engines read these definitions; nothing else switches on op names.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ops {
class KernelBuilder;  // the ops layer's instruction emitter (pypto/ops/kernel_builder.h)
}

namespace pypto::ir {

enum class ParamKind : uint8_t {
  kExpr,      // an IR value: tile, tensor or scalar
  kExprList,  // a list of scalar expressions: offsets, valid_shape (a ListExpr)
  kAttr,      // a compile-time value: shape, dtype, memory space, mode string, ...
};

struct ParamSpec {
  std::string name;
  ParamKind kind;
  bool optional = false;               // kExpr/kExprList: may be absent (nullptr in Call::args)
  std::optional<AttrValue> default_value;  // kAttr: used when the caller omits it
  // Other keyword spellings of this parameter (PyPTO's name where ours differs, or our older
  // name): make_op_call and the parser accept any of them; `name` is what the printer writes.
  std::vector<std::string> aliases = {};
  // A hint PyPTO accepts that has no effect on our chip (pl.move's blayout, a scratch `tmp`
  // tile): kept in the IR (printed, parsed back), never passed to the instruction.
  bool hint = false;
  // Not printed at its default value: the keywords added for PyPTO keep printed programs as
  // they were (the parser fills the default back in).
  bool quiet = false;
  bool index = false;                  // kExpr: an integer scalar (a Python int stays INDEX, not the tile's dtype)
  // kExpr tile operands: the memory the operand must be in when the op runs. The type rules
  // accept a tile that moves reach it from (move_path) and the InferMemory pass inserts those
  // moves. OpRegistry::add fills Vec for the operands of an op whose instruction (`pto`) runs
  // on the vector unit, unless the family states another memory (the cube's Left / Right /
  // Bias) or `any_memory` (the operand is used where it is: tile.assemble).
  std::optional<MemorySpace> memory = std::nullopt;
  bool any_memory = false;
  bool accepts(const std::string& keyword) const {
    if (keyword == name) return true;
    for (auto& a : aliases)
      if (a == keyword) return true;
    return false;
  }
};

// What type inference sees: the call's arguments (aligned with the kExpr/kExprList params,
// absent optional ones are nullptr), its attributes (defaults filled in) and the call site.
struct CallSite {
  const struct OpDef& op;
  const std::vector<ExprPtr>& args;
  const Attrs& attrs;
  const Span& span;
  // Argument by parameter name (nullptr when absent); attribute by name (must exist).
  ExprPtr arg(const std::string& name) const;
  const AttrValue& attr(const std::string& name) const;
};

using InferTypeFn = std::function<TypePtr(const CallSite&)>;

// Composite ops (no one instruction computes them: pl.sin, pl.cos, ...) are rewritten by the
// ExpandOps pass into calls of single-instruction ops on fresh tiles, before memory planning
// places those tiles. An expansion calls `emit` for each intermediate value (it appends
// `name = value` before the call and returns the new Var) and returns the value (usually a
// call) that the composite call is replaced by, or null to keep this call as it is (lowered
// by the op's `lower`).
class OpExpander {
 public:
  virtual ~OpExpander() = default;
  virtual ExprPtr emit(const std::string& name, const ExprPtr& value) = 0;
  // emit(name, make_op_call(op, args, {}, attrs, span)): the expander (the ExpandOps pass)
  // builds the call through the op registry, a layer above this one.
  virtual ExprPtr call(const std::string& name, const std::string& op, const std::vector<ExprPtr>& args,
                       const Attrs& attrs, const Span& span) = 0;
};
using ExpandFn = std::function<ExprPtr(const Call& call, OpExpander& x)>;
// Emits the PTO instructions of one call; `dst` is the value the call defines (may be null).
using LowerFn = std::function<void(const Call& call, const VarPtr& dst, ops::KernelBuilder& kb)>;

// How the whole-tensor form of a tile op (pl.tensor.<name>) maps onto tiles; LowerTensorOps
// tiles it by this shape.
enum class TensorOpShape : uint8_t {
  kNone,         // the tile op has no whole-tensor form
  kElementwise,  // result block (r, c) needs each operand's block (r, c)
  kRowReduce,    // [M, N] -> [M, 1]
  kColReduce,    // [M, N] -> [1, N]
  kRowExpand,    // (a [M, N], v [M, 1]) -> [M, N]
  kColExpand,    // (a [M, N], v [1, N]) -> [M, N]
  kMatmul,       // [M, K] @ [K, N] -> [M, N]
  kGather,       // (src [M, N], indices [M, K]) -> [M, K]: block (r, c) needs whole rows of src
  kScatter,      // (target [M, N], indices [M, K], src [M, K]) -> [M, N]: blocks of whole rows
  kBatchMatmul,  // [B, M, K] @ [B, K, N] (or [K, N]) -> [B, M, N]: one matmul per batch
  kGenerate,     // no tensor operands (full, ci): block (r, c) made from the shape attribute cut to the block
  kIdentity,     // the operand's values (fillpad: every tensor element is valid, nothing to fill)
  kConcat,       // (src0 [M, A], src1 [M, B]) -> [M, A + B]: blocks of whole rows
  kMatmulAcc,    // (acc [M, N], lhs [M, K], rhs [K, N]) -> acc + lhs @ rhs: kMatmul's blocks plus acc's block
  kWhole,        // no blocking (PyPTO's one tensor, one tile): the tile op on every operand loaded whole
};

struct OpDef {
  std::string name;                 // registry key and printed spelling: "tile.add" prints as pl.tile.add
  std::vector<ParamSpec> params;    // in Python positional order
  InferTypeFn infer_type;           // validates and returns the result type; throws PyptoError
  std::string pto;                  // PTO mnemonic of the default lowering ("TADD"); empty if none
  LowerFn lower;                    // custom lowering; when empty the default one-instruction lowering is used
  std::string doc;                  // one line for the generated reference
  std::vector<std::string> aliases; // other DSL spellings: tile.create is also pl.create_tile
  std::string scalar_variant;       // op used when argument 1 is a scalar: tile.add -> tile.adds
  std::string writes;               // param the op writes in place and returns (tile.store: "tensor")
  bool view = false;                // result aliases argument 0's buffer (reshape, set_validshape)
  // The op as a PyTorch expression (pypto.debug.torch_codegen), a template over the call:
  //   {p}     argument or attribute p as a Python value (a tile/tensor name, a scalar
  //           expression, a list, a torch dtype, a string); {p=v}: v when p is absent
  //   {p:r}   tile argument p cut to the result's valid region; {p:v}: to its own
  //   {p:vr}  / {p:vc}: the valid rows / columns of tile argument p
  //   {R} {C} the valid rows / columns of the result; {dtype}: the result's torch dtype
  // Tile results are torch tensors of their valid region; codegen places them in the
  // allocated shape (padding with the result's pad value); a tuple of tiles (sort32) each.
  // Helpers (`_window`, `_cast`, ...) come with the script: the prelude in
  // src/codegen/torch_codegen.cpp defines them (Group functions run their parts as threads).
  std::string torch;
  ExpandFn expand;                  // composite op: rewritten by ExpandOps (then `lower` is never reached)
  bool effects = false;             // has an effect beyond its result (cross-core FIFOs): never removed
  // A tile op's whole-tensor form: with a shape other than kNone the registry also defines
  // tensor.<name> (same parameters and doc, type by this op's rule on stand-in tiles; tiled by
  // LowerTensorOps), spelt also as `tensor_aliases` (src/ops/families/tensor_compute.cpp).
  TensorOpShape tensor_form = TensorOpShape::kNone;
  std::vector<std::string> tensor_aliases = {};
};

}  // namespace pypto::ir

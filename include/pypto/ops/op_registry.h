// The op registry: every op of the language is defined exactly once (src/ops/), with its
// parameters, type inference and verification and its lowering (OpDef, pypto/ir/op_def.h),
// and registered here.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pypto/ir/op_def.h"

namespace pypto::ops {

// The ops layer is written in the IR's vocabulary (an op's record is an ir::OpDef).
using namespace ir;

class OpRegistry {
 public:
  static OpRegistry& instance();
  // Registers `def`; a second definition of the same name is a compiler bug.
  const OpDef& add(OpDef def);
  // The op called `name`, or null.
  const OpDef* find(const std::string& name) const;
  std::vector<const OpDef*> all() const;

 private:
  std::vector<std::unique_ptr<OpDef>> ops_;
};

// Builds a checked call: maps positional `args` and keyword `kwargs` onto the op's
// parameters, fills attribute defaults, runs type inference. Unknown ops, unknown keywords,
// missing or surplus arguments raise user errors at `span`.
// Keyword values that are IR expressions go in `kwargs`; compile-time values in `attr_kwargs`.
ExprPtr make_op_call(const std::string& op_name, const std::vector<ExprPtr>& args,
                     const std::vector<std::pair<std::string, ExprPtr>>& kwargs, const Attrs& attr_kwargs,
                     const Span& span);

// Binds a call's arguments to the op's parameters, the one place that knows positional order
// and keyword aliases (make_op_call and the parser use it): the parameter index of each of the
// `positional` arguments, then of each keyword. Surplus arguments, an unknown keyword (with the
// closest spelling) or one given twice raise user errors naming `shown` (what the user wrote:
// "load" for pl.load) at `span`.
std::vector<size_t> bind_op_arguments(const OpDef& op, size_t positional, const std::vector<std::string>& keywords,
                                      const std::string& shown, const Span& span);

// The op's signature as the errors show it: "pl.tile.load(tensor, offsets, shape, valid_shape=...)".
std::string op_signature(const OpDef& op);

// Resolves a DSL spelling to an op: `pl.tile.add` / `pl.tensor.dim` name ops exactly
// ("tile.add"); bare `pl.add` resolves through aliases, then "tensor.<name>" when the first
// argument is a Tensor, else "tile.<name>" (then the other prefix); finally the op's scalar_variant is chosen when
// the argument at position 1 is a scalar. Returns null when nothing matches.
const OpDef* resolve_op(const std::string& dsl_name, const std::vector<TypePtr>& arg_types);

// The memories a tile passes through, in order, to get from `from` to `to` with pl.tile.move
// over the chip's legal on-chip moves (empty when from == to); nullopt when no chain exists.
// Type inference accepts an operand that such a chain reaches; the InferMemory pass inserts
// the moves. (src/ops/families/memory.cpp)
std::optional<std::vector<MemorySpace>> move_path(MemorySpace from, MemorySpace to);

// Defined in src/ops/all_ops.cpp: registers every op family; called once by OpRegistry::instance().
void register_all_ops(OpRegistry& registry);

// The markdown reference of every registered op: signature, PTO mnemonic, aliases, doc.
std::string ops_reference_markdown();

}  // namespace pypto::ops

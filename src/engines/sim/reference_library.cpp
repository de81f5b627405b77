// Assembles the reference library from the instruction records (src/isa/families/) and the
// reference functions that need engine structures (src/engines/sim/reference_memory.cpp:
// global tensors; reference_cross_core.cpp: the cluster of a mixed task), and checks every call
// against the instruction table (operand kinds, counts, dtypes) before computing.
#include <algorithm>
#include <variant>

#include "pypto/isa/instructions.h"
#include "pypto/engines/reference.h"

namespace pypto::engines {

const ReferenceTable& reference_library() {
  static const ReferenceTable table = [] {
    ReferenceTable t;
    // The families of src/isa/families/ carry their reference functions in their records.
    for (const isa::InstrDef* d : isa::all_instrs())
      if (d->reference) t[d->name] = d->reference;
    add_memory_instrs(t);
    add_cross_core_instrs(t);
    return t;
  }();
  return table;
}

namespace {

isa::Operand::Kind kind_of_letter(char c) {
  switch (c) {
    case 'T': case 't': return isa::Operand::kTile;
    case 'G': case 'g': return isa::Operand::kTensor;
    case 'L': case 'l': return isa::Operand::kScalarList;
    default: return isa::Operand::kScalar;
  }
}

const char* kind_name(isa::Operand::Kind k) {
  switch (k) {
    case isa::Operand::kTile: return "a tile";
    case isa::Operand::kTensor: return "a global tensor";
    case isa::Operand::kScalarList: return "an offset list";
    default: return "a scalar";
  }
}

void check_operands(const TileCall& call, const std::string& sig, const std::vector<OperandValue>& ops,
                    const char* role) {
  const size_t required = std::count_if(sig.begin(), sig.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  if (ops.size() < required || ops.size() > sig.size()) {
    std::string count = std::to_string(required);
    if (required != sig.size()) count.append(" to ").append(std::to_string(sig.size()));
    call.fail_runtime("takes " + count + " " + role + " operands, got " + std::to_string(ops.size()));
  }
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind != kind_of_letter(sig[i]))
      call.fail_runtime(std::string(role) + " operand " + std::to_string(i) + " must be " +
                        kind_name(kind_of_letter(sig[i])) + ", got " + kind_name(ops[i].kind));
}

// The operand whose element type the instruction computes in.
// The operand whose element type the instruction computes in: its record says (InstrDef::typed).
const OperandValue& computing_operand(const isa::InstrDef& def, const TileCall& call) {
  switch (def.typed) {
    case isa::TypedOperand::kIn0: return call.ins.at(0);
    case isa::TypedOperand::kIn1: return call.ins.at(1);
    case isa::TypedOperand::kOut0: break;
  }
  return call.outs.at(0);
}

}  // namespace

void execute_reference(const TileCall& call) {
  const isa::InstrDef* def = isa::find_instr(call.instr.mnemonic);
  auto fn = reference_library().find(call.instr.mnemonic);
  if (def == nullptr || fn == reference_library().end())
    fail(ErrorKind::kRuntime, call.instr.span, "unknown PTO instruction '" + call.instr.mnemonic + "'",
         "use a mnemonic of the instruction table (pypto._core.instruction_names())");
  check_operands(call, def->outs_sig, call.outs, "output");
  check_operands(call, def->ins_sig, call.ins, "input");
  if (def->family == isa::InstrFamily::kSync) {
    fn->second(call);
    return;
  }
  const OperandValue& typed = computing_operand(*def, call);
  const DataType dt = typed.kind == isa::Operand::kTile ? typed.tile.dtype : typed.tensor->dtype;
  if (!def->allows(dt)) {
    std::string allowed;
    for (DataType d : def->dtypes) allowed += std::string(allowed.empty() ? "" : ", ") + dtype_name(d);
    call.fail_runtime(std::string("does not support dtype ") + dtype_name(dt) + " (operand '" +
                          (typed.kind == isa::Operand::kTile ? typed.tile.name : typed.tensor->name) + "')",
                      "use one of: " + allowed);
  }
  if (def->mask != isa::MaskUse::kNone) {
    const bool writes = def->mask == isa::MaskUse::kWritesOut0;
    const TileRef& mask = writes ? call.out_tile() : call.in_tile(0);
    if (mask.dtype != isa::kMaskDtype)
      call.fail_runtime(std::string(writes ? "destination" : "input 0") + " '" + mask.name +
                            "' is the packed mask and must be " + dtype_name(isa::kMaskDtype) +
                            " (one bit per element, ceil(cols / 8) bytes a row), got " + dtype_name(mask.dtype),
                        "make masks with TCMP / TCMPS (pl.cmp / pl.cmps), or pack booleans with "
                        "np.packbits(m, axis=1, bitorder=\"little\")");
  }
  fn->second(call);
}

}  // namespace pypto::engines

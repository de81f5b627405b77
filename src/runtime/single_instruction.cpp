// One instruction on host arrays through a scratch core (see single_instruction.h): places
// each tile operand in its memory of the core, runs the reference library, copies back.
#include "pypto/runtime/single_instruction.h"

#include <cctype>
#include <cstring>
#include <map>

#include "pypto/isa/instructions.h"
#include "pypto/engines/reference.h"
#include "pypto/engines/sim_engine.h"

namespace pypto::runtime {

using namespace engines;  // the runtime drives the engines: their types unqualified

std::pair<int64_t, int64_t> array_tile_shape(const TensorView& a, const std::string& mnemonic) {
  if (a.shape.size() == 2) return {a.shape[0], a.shape[1]};
  if (a.shape.size() == 1) return {1, a.shape[0]};
  fail(ErrorKind::kValue, {}, mnemonic + ": tile operand '" + a.name + "' must be 1-D or 2-D, got " + a.describe(),
       "pass a 2-D array for each tile");
}

namespace {

struct Scratch {
  SimEngine core;
  std::map<MemorySpace, int64_t> next_addr;

  TileRef place(const LooseOperand& op, const std::string& mnemonic) {
    auto [rows, cols] = array_tile_shape(op.array, mnemonic);
    TileRef t;
    t.dtype = op.array.dtype;
    t.rows = rows;
    t.cols = cols;
    t.valid_rows = op.valid_rows < 0 ? rows : std::min(op.valid_rows, rows);
    t.valid_cols = op.valid_cols < 0 ? cols : std::min(op.valid_cols, cols);
    t.pad = op.pad;
    t.name = op.array.name;
    std::vector<uint8_t>& buf = core.buffer(op.memory);
    int64_t& addr = next_addr[op.memory];
    if (addr + t.bytes() > static_cast<int64_t>(buf.size()))
      fail(ErrorKind::kCapacity, {},
           mnemonic + ": tile '" + t.name + "' (" + std::to_string(t.bytes()) + " B) does not fit in what is left of " +
               memory_space_name(op.memory) + " (" + std::to_string(buf.size()) + " B)",
           "use smaller tiles");
    t.data = buf.data() + addr;
    addr += (t.bytes() + 31) / 32 * 32;  // keep 32-byte alignment
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) std::memcpy(t.at(r, c), element(op.array, r, c), dtype_bytes(t.dtype));
    return t;
  }

  static uint8_t* element(const TensorView& a, int64_t r, int64_t c) {
    return a.shape.size() == 2 ? a.element({r, c}) : a.element({c});
  }
};

OperandValue bind(Scratch& scratch, const LooseOperand& op, char letter, const std::string& mnemonic, size_t i) {
  OperandValue v;
  const char want = static_cast<char>(std::toupper(letter));
  auto mismatch = [&](const char* expected) {
    fail(ErrorKind::kValue, {}, mnemonic + ": operand " + std::to_string(i) + " must be " + expected,
         "order the operands as in the instruction table");
  };
  if (want == 'T' || want == 'G') {
    if (op.kind != LooseOperand::kArray) mismatch(want == 'T' ? "a tile (an array)" : "a global tensor (an array)");
    v.kind = want == 'T' ? isa::Operand::kTile : isa::Operand::kTensor;
    if (want == 'T') v.tile = scratch.place(op, mnemonic);
    else v.tensor = &op.array;
  } else if (want == 'S') {
    if (op.kind != LooseOperand::kScalar) mismatch("a scalar");
    v.kind = isa::Operand::kScalar;
    v.scalar = op.scalar;
  } else {
    if (op.kind != LooseOperand::kList) mismatch("a list of offsets");
    v.kind = isa::Operand::kScalarList;
    v.list = op.list;
  }
  return v;
}

}  // namespace

void execute_instruction(const std::string& mnemonic, const std::vector<LooseOperand>& outs,
                         const std::vector<LooseOperand>& ins, const Attrs& attrs, const std::string& platform) {
  const isa::InstrDef* def = isa::find_instr(mnemonic);
  if (def == nullptr)
    fail(ErrorKind::kValue, {}, "unknown PTO instruction '" + mnemonic + "'",
         "use a mnemonic of the instruction table (pypto._core.instruction_names())");
  auto chip = isa::chip_for_platform(platform);
  if (!chip) fail(ErrorKind::kPlatform, {}, "unknown platform '" + platform + "'", "use a2a3sim or a5sim");
  if (outs.size() > def->outs_sig.size() || ins.size() > def->ins_sig.size())
    fail(ErrorKind::kValue, {},
         mnemonic + " takes " + std::to_string(def->num_outs()) + " outputs and at most " +
             std::to_string(def->max_ins()) + " inputs",
         "operands: outs " + def->outs_sig + ", ins " + def->ins_sig + " (T tile, G tensor, S scalar, L offsets)");
  Scratch scratch{SimEngine(*chip), {}};
  isa::Instr instr;
  instr.mnemonic = mnemonic;
  instr.attrs = attrs;
  TileCall call{instr, {}, {}};
  for (size_t i = 0; i < outs.size(); ++i) call.outs.push_back(bind(scratch, outs[i], def->outs_sig[i], mnemonic, i));
  for (size_t i = 0; i < ins.size(); ++i) call.ins.push_back(bind(scratch, ins[i], def->ins_sig[i], mnemonic, i));
  execute_reference(call);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (call.outs[i].kind != isa::Operand::kTile) continue;
    const TileRef& t = call.outs[i].tile;
    for (int64_t r = 0; r < t.rows; ++r)
      for (int64_t c = 0; c < t.cols; ++c)
        std::memcpy(Scratch::element(outs[i].array, r, c), t.at(r, c), dtype_bytes(t.dtype));
  }
}

}  // namespace pypto::runtime

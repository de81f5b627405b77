// One tile instruction on host arrays through the native engine: the operands become a
// small kernel (TLOAD each tile from its array, the instruction, TSTORE each output tile
// back), compiled and run on a native core. The differential test of the optimised
// library against the reference runs every instruction this way.
#include <cctype>
#include <map>

#include "pypto/isa/instructions.h"
#include "pypto/engines/native_engine.h"
#include "pypto/runtime/runtime.h"
#include "pypto/runtime/single_instruction.h"

namespace pypto::runtime {

using namespace engines;  // the runtime drives the engines: their types unqualified

namespace {

isa::Scalar scalar_of(const ScalarValue& v) { return v.is_float ? isa::Scalar::immf(v.f) : isa::Scalar::imm(v.i); }

}  // namespace

void execute_instruction_native(const std::string& mnemonic, const std::vector<LooseOperand>& outs,
                                const std::vector<LooseOperand>& ins, const Attrs& attrs, const std::string& platform) {
  const isa::InstrDef* def = isa::find_instr(mnemonic);
  auto chip = isa::chip_for_platform(platform);
  if (def == nullptr || !chip || outs.size() > def->outs_sig.size() || ins.size() > def->ins_sig.size()) {
    execute_instruction(mnemonic, outs, ins, attrs, platform);  // reports the error in the reference's words
    return;
  }
  isa::Kernel k;
  k.name = "isa_" + mnemonic;
  k.core = def->family == isa::InstrFamily::kMatmul ? FunctionType::AIC : FunctionType::AIV;
  std::vector<HostArg> args;
  std::vector<isa::Instr> loads, stores;
  std::map<MemorySpace, int64_t> next_addr;
  isa::Instr instr;
  instr.mnemonic = mnemonic;
  instr.attrs = attrs;
  auto zero = isa::Operand::list_of({isa::Scalar::imm(0), isa::Scalar::imm(0)});
  auto bind = [&](const LooseOperand& op, char letter, bool is_out) -> isa::Operand {
    const char want = static_cast<char>(std::toupper(letter));
    if (op.kind == LooseOperand::kScalar) return isa::Operand::scalar_of(scalar_of(op.scalar));
    if (op.kind == LooseOperand::kList) {
      std::vector<isa::Scalar> l;
      for (int64_t v : op.list) l.push_back(isa::Scalar::imm(v));
      return isa::Operand::list_of(l);
    }
    const int param = static_cast<int>(k.params.size());
    isa::ParamDesc p;
    p.name = op.array.name;
    p.dtype = op.array.dtype;
    p.shape = op.array.shape;
    p.dir = ParamDirection::InOut;
    k.params.push_back(p);
    args.push_back(HostArg::of_tensor(op.array));
    if (want == 'G') return isa::Operand::tensor(param);
    // A tile: its array seen as rows x cols (a 1-D array is one row), loaded whole through
    // an alias with the full valid shape, then used with the requested valid shape and pad.
    auto [rows, cols] = array_tile_shape(op.array, mnemonic);
    isa::TileDesc whole;
    whole.name = op.array.name + "_whole";
    whole.dtype = op.array.dtype;
    whole.memory = op.memory;
    whole.rows = rows, whole.cols = cols;
    int64_t& addr = next_addr[op.memory];
    whole.addr = addr;
    addr += (rows * cols * dtype_bytes(whole.dtype) + 63) / 64 * 64;
    whole.valid_rows = isa::Scalar::imm(rows), whole.valid_cols = isa::Scalar::imm(cols);
    isa::TileDesc used = whole;
    used.name = op.array.name;
    used.valid_rows = isa::Scalar::imm(op.valid_rows < 0 ? rows : std::min(op.valid_rows, rows));
    used.valid_cols = isa::Scalar::imm(op.valid_cols < 0 ? cols : std::min(op.valid_cols, cols));
    used.pad = op.pad;
    const int wi = static_cast<int>(k.tiles.size());
    k.tiles.push_back(whole);
    k.tiles.push_back(used);
    std::vector<isa::Scalar> offs(op.array.shape.size(), isa::Scalar::imm(0));
    isa::Instr ld;
    ld.mnemonic = "TLOAD";
    ld.outs = {isa::Operand::tile(wi)};
    ld.ins = {isa::Operand::tensor(param), isa::Operand::list_of(offs)};
    loads.push_back(ld);
    if (is_out) {
      isa::Instr stt;
      stt.mnemonic = "TSTORE";
      stt.outs = {isa::Operand::tensor(param)};
      stt.ins = {isa::Operand::tile(wi), isa::Operand::list_of(offs)};
      stores.push_back(stt);
    }
    return isa::Operand::tile(wi + 1);
  };
  for (size_t i = 0; i < outs.size(); ++i) instr.outs.push_back(bind(outs[i], def->outs_sig[i], true));
  for (size_t i = 0; i < ins.size(); ++i) instr.ins.push_back(bind(ins[i], def->ins_sig[i], false));
  k.code = loads;
  k.code.push_back(instr);
  k.code.insert(k.code.end(), stores.begin(), stores.end());
  RunOptions options;
  options.platform = platform;
  options.engine = "native";
  run_kernel(k, args, options);
}

}  // namespace pypto::runtime

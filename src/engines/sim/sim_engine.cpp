// The sim engine's interpreter loop: resolves operands (tiles to buffer addresses, tensors
// to parameters, scalars to registers) and runs each instruction through the reference
// library or the scalar machine, timing each one with the cycle model.
#include "pypto/engines/sim_engine.h"

#include "pypto/engines/cluster.h"

namespace pypto::engines {

namespace {

bool is_fifo(const isa::Instr& in) {
  return in.mnemonic.size() >= 4 && in.mnemonic[0] == 'T' &&
         (in.mnemonic == "TPUSH" || in.mnemonic == "TPOP" || in.mnemonic == "TFREE");
}

// Instructions that meet another part of a mixed task: the FIFOs and the cross-core events.
bool meets_a_peer(const isa::Instr& in) {
  return is_fifo(in) || in.mnemonic == "SYNC_SET" || in.mnemonic == "SYNC_WAIT";
}

std::string kib(int64_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KiB" : std::to_string(bytes) + " B";
}

// Tile `index` of `kernel` as memory of this core, with its valid shape evaluated now.
TileRef resolve_tile(SimEngine& core, const isa::Kernel& kernel, int index, const ScalarMachine& regs,
                     const isa::Instr& instr) {
  if (index < 0 || static_cast<size_t>(index) >= kernel.tiles.size())
    fail(ErrorKind::kRuntime, instr.span,
         instr.mnemonic + " names tile #" + std::to_string(index) + " but kernel '" + kernel.name + "' has " +
             std::to_string(kernel.tiles.size()) + " tiles",
         "this is a code generation bug; please report it");
  const isa::TileDesc& d = kernel.tiles[index];
  std::vector<uint8_t>& buf = core.buffer(d.memory);
  TileRef t{nullptr, d.dtype, d.rows, d.cols, regs.get(d.valid_rows).as_int(), regs.get(d.valid_cols).as_int(), d.pad, d.name};
  if (d.memory == MemorySpace::DDR)
    fail(ErrorKind::kRuntime, instr.span, "tile '" + d.name + "' is placed in DDR; tiles live in on-chip memory",
         "place the tile in Vec, Mat, Left, Right, Acc or Bias");
  if (d.addr < 0 || d.rows < 0 || d.cols < 0 || d.addr + t.bytes() > static_cast<int64_t>(buf.size()))
    fail(ErrorKind::kRuntime, instr.span,
         "tile '" + d.name + "' (" + std::to_string(d.rows) + "x" + std::to_string(d.cols) + " " + dtype_name(d.dtype) +
             ", " + std::to_string(t.bytes()) + " B at byte offset " + std::to_string(d.addr) + ") lies outside " +
             memory_space_name(d.memory) + " (" + kib(static_cast<int64_t>(buf.size())) + " on " + core.chip().platform + ")",
         "make the tile smaller or place it inside the buffer");
  if (t.valid_rows < 0 || t.valid_rows > d.rows || t.valid_cols < 0 || t.valid_cols > d.cols)
    fail(ErrorKind::kRuntime, instr.span,
         "tile '" + d.name + "' has valid shape " + std::to_string(t.valid_rows) + "x" + std::to_string(t.valid_cols) +
             " outside its " + std::to_string(d.rows) + "x" + std::to_string(d.cols) + " shape",
         "keep the valid shape within the tile's shape");
  t.data = buf.data() + d.addr;
  return t;
}

const TensorView& tensor_param(const isa::Kernel& kernel, const std::vector<HostArg>& args, int index,
                               const isa::Instr& instr) {
  if (index < 0 || static_cast<size_t>(index) >= args.size() || args[index].kind != HostArg::kTensor)
    fail(ErrorKind::kRuntime, instr.span,
         instr.mnemonic + " names tensor parameter #" + std::to_string(index) + " of kernel '" + kernel.name +
             "', which is not a tensor parameter",
         "this is a code generation bug; please report it");
  return args[index].tensor;
}

OperandValue resolve(SimEngine& core, const isa::Kernel& kernel, const std::vector<HostArg>& args,
                     const ScalarMachine& regs, const isa::Instr& instr, const isa::Operand& op) {
  OperandValue v;
  v.kind = op.kind;
  switch (op.kind) {
    case isa::Operand::kTile: v.tile = resolve_tile(core, kernel, op.index, regs, instr); break;
    case isa::Operand::kTensor: v.tensor = &tensor_param(kernel, args, op.index, instr); break;
    case isa::Operand::kScalar: v.scalar = regs.get(op.scalar); break;
    case isa::Operand::kScalarList:
      for (const isa::Scalar& s : op.list) v.list.push_back(regs.get(s).as_int());
      break;
  }
  return v;
}

}  // namespace

SimEngine::SimEngine(const isa::ChipSpec& chip) : chip_(chip) {
  for (MemorySpace m : {MemorySpace::Vec, MemorySpace::Mat, MemorySpace::Left, MemorySpace::Right, MemorySpace::Acc,
                        MemorySpace::Bias})
    buffer(m).assign(static_cast<size_t>(chip.capacity(m)), 0);
}

void check_args(const std::string& callee, const std::vector<isa::ParamDesc>& params, const std::vector<HostArg>& args) {
  if (args.size() != params.size())
    fail(ErrorKind::kValue, {},
         "'" + callee + "' takes " + std::to_string(params.size()) + " arguments, got " +
             std::to_string(args.size()),
         "pass one argument per parameter");
  for (size_t i = 0; i < args.size(); ++i) {
    const isa::ParamDesc& p = params[i];
    const HostArg& a = args[i];
    const std::string who = "argument '" + p.name + "' of '" + callee + "'";
    if (p.is_tensor != (a.kind == HostArg::kTensor))
      fail(ErrorKind::kType, {}, who + (p.is_tensor ? " must be a tensor" : " must be a scalar"),
           "pass arguments in the parameter order");
    if (!p.is_tensor) continue;
    if (a.tensor.dtype != p.dtype)
      fail(ErrorKind::kType, {}, who + " is " + a.tensor.describe() + ", expected dtype " + dtype_name(p.dtype),
           "convert the tensor to the declared dtype");
    bool shape_ok = p.shape.empty() || p.shape.size() == a.tensor.shape.size();
    for (size_t d = 0; shape_ok && d < p.shape.size(); ++d) shape_ok = p.shape[d] < 0 || p.shape[d] == a.tensor.shape[d];
    if (!shape_ok) {
      std::string want;
      for (size_t d = 0; d < p.shape.size(); ++d) want += (d ? ", " : "") + (p.shape[d] < 0 ? std::string("?") : std::to_string(p.shape[d]));
      fail(ErrorKind::kValue, {}, who + " is " + a.tensor.describe() + ", expected shape [" + want + "]",
           "pass a tensor of the declared shape");
    }
  }
}

void SimEngine::run(const isa::Kernel& kernel, const std::vector<HostArg>& args) {
  check_args(kernel.name, kernel.params, args);
  ScalarMachine regs(kernel.num_regs, kernel.reg_is_float);
  int next_reg = 0;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind != HostArg::kTensor) regs.set(next_reg++, args[i].scalar());

  CycleModel model(kernel, record_events_);
  const int n = static_cast<int>(kernel.code.size());
  for (int pc = 0; pc < n;) {
    const isa::Instr& instr = kernel.code[pc];
    const int next = regs.step(kernel.code, pc);
    if (next >= 0) {
      model.scalar();
      pc = next;
      continue;
    }
    if (instr.kind != isa::InstrKind::kTile) model.scalar();
    switch (instr.kind) {
      case isa::InstrKind::kTile: {
        TileCall call{instr, {}, {}};
        for (const isa::Operand& o : instr.outs) call.outs.push_back(resolve(*this, kernel, args, regs, instr, o));
        for (const isa::Operand& o : instr.ins) call.ins.push_back(resolve(*this, kernel, args, regs, instr, o));
        ClusterPart* part = meets_a_peer(instr) ? current_cluster_part() : nullptr;
        if (part != nullptr && part->fifos == nullptr) part = nullptr;
        if (part != nullptr) {
          // A cross-core FIFO instruction starts once its slot allows (the peer's TPUSH or
          // TFREE): the FIFO calls back with that cycle after it waited for the slot.
          struct Reset {
            ClusterPart* p;
            ~Reset() { p->timing = nullptr; }
          } reset{part};
          part->timing = [&](double not_before) { return model.issue(pc, instr, call, not_before); };
          execute_reference(call);
        } else {
          model.issue(pc, instr, call);
          execute_reference(call);
        }
        break;
      }
      case isa::InstrKind::kScalarRead:
      case isa::InstrKind::kScalarWrite: {
        std::vector<int64_t> index;
        for (const isa::Scalar& s : instr.ins.at(1).list) index.push_back(regs.get(s).as_int());
        const bool read = instr.kind == isa::InstrKind::kScalarRead;
        if (instr.ins.at(0).kind == isa::Operand::kTile) {  // pl.tile.read / pl.tile.write
          TileRef t = resolve_tile(*this, kernel, instr.ins.at(0).index, regs, instr);
          if (read) regs.set(instr.dst_reg, read_tile_element(t, index, instr.span));
          else write_tile_element(t, index, regs.get(instr.ins.at(2).scalar), instr.span);
          break;
        }
        const TensorView& t = tensor_param(kernel, args, instr.ins.at(0).index, instr);
        if (read) regs.set(instr.dst_reg, read_tensor_element(t, index, instr.span));
        else write_tensor_element(t, index, regs.get(instr.ins.at(2).scalar), instr.span);
        break;
      }
      default:
        fail(ErrorKind::kRuntime, instr.span, "instruction kind " + std::to_string(static_cast<int>(instr.kind)) +
                                                  " cannot appear in a kernel (kernel '" + kernel.name + "')",
             "this is a code generation bug; please report it");
    }
    ++pc;
  }
  timeline_ = model.finish();
}

}  // namespace pypto::engines

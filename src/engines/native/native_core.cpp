// A worker's virtual core for the native engine: 64-byte aligned on-chip buffers and a
// scratch area, the frame handed to the compiled kernel, and the reference path the
// compiled code calls for instructions without a fast path (same operand resolution and
// the same error messages as the sim engine).
#include <cstdlib>
#include <cstring>

#include "pypto/engines/cancel.h"
#include "pypto/engines/native_engine.h"
#include "pypto/engines/reference.h"
#include "pypto/engines/scalar_machine.h"
#include "pypto/engines/sim_engine.h"

namespace pypto::engines {

namespace {

constexpr long long kScratchBytes = 8LL << 20;

unsigned char* aligned_buffer(long long bytes, bool zero = true) {
  const size_t n = static_cast<size_t>((std::max<long long>(bytes, 64) + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, n);
  if (!p) throw std::bad_alloc();
  if (zero) std::memset(p, 0, n);
  return static_cast<unsigned char*>(p);
}

class SimRunner : public CoreRunner {
 public:
  explicit SimRunner(const isa::ChipSpec& chip) : core_(chip) {}
  void run(const isa::Kernel& kernel, const std::vector<HostArg>& args) override { core_.run(kernel, args); }

 private:
  SimEngine core_;
};

void fallback_entry(void* host, int pc, long long* ri, double* rf) {
  static_cast<NativeCore*>(host)->run_reference(pc, ri, rf);
}

}  // namespace

NativeCore::NativeCore(const isa::ChipSpec& chip, std::shared_ptr<NativeModule> module,
                       std::vector<const isa::Kernel*> kernels)
    : chip_(chip), module_(std::move(module)), kernels_(std::move(kernels)) {
  for (MemorySpace m : {MemorySpace::Vec, MemorySpace::Mat, MemorySpace::Left, MemorySpace::Right, MemorySpace::Acc,
                        MemorySpace::Bias})
    buffers_[static_cast<int>(m)] = aligned_buffer(chip.capacity(m));
  scratch_bytes_ = kScratchBytes;
  scratch_ = aligned_buffer(scratch_bytes_, false);
}

NativeCore::~NativeCore() {
  for (unsigned char* b : buffers_) std::free(b);
  std::free(scratch_);
}

namespace {
// The checks of check_args without building any message (it runs once per task).
bool args_match(const std::vector<isa::ParamDesc>& params, const std::vector<HostArg>& args) {
  if (args.size() != params.size()) return false;
  for (size_t i = 0; i < args.size(); ++i) {
    const isa::ParamDesc& p = params[i];
    const HostArg& a = args[i];
    if (p.is_tensor != (a.kind == HostArg::kTensor)) return false;
    if (!p.is_tensor) continue;
    if (a.tensor.dtype != p.dtype) return false;
    if (!p.shape.empty() && p.shape.size() != a.tensor.shape.size()) return false;
    for (size_t d = 0; d < p.shape.size(); ++d)
      if (p.shape[d] >= 0 && p.shape[d] != a.tensor.shape[d]) return false;
  }
  return true;
}
}  // namespace

void NativeCore::run(const isa::Kernel& kernel, const std::vector<HostArg>& args) {
  pto_kernel_fn fn = nullptr;
  for (size_t i = 0; i < kernels_.size(); ++i)
    if (kernels_[i] == &kernel) {
      fn = module_ && i < module_->entries.size() ? module_->entries[i] : nullptr;
      break;
    }
  if (!fn) {  // a kernel the generator could not express: run it on a sim core
    if (!sim_) sim_ = std::make_unique<SimRunner>(chip_);
    sim_->run(kernel, args);
    return;
  }
  if (!args_match(kernel.params, args)) check_args(kernel.name, kernel.params, args);  // builds the message
  constexpr size_t kSmall = 16;
  pto_tensor tensors_small[kSmall];
  long long ints_small[kSmall];
  double floats_small[kSmall];
  std::vector<pto_tensor> tensors_big;
  std::vector<long long> ints_big;
  std::vector<double> floats_big;
  pto_tensor* tensors = tensors_small;
  long long* ints = ints_small;
  double* floats = floats_small;
  if (args.size() > kSmall) {
    tensors_big.resize(args.size()), ints_big.resize(args.size()), floats_big.resize(args.size());
    tensors = tensors_big.data(), ints = ints_big.data(), floats = floats_big.data();
  }
  size_t scalars = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const HostArg& a = args[i];
    if (a.kind == HostArg::kTensor) {
      const TensorView& t = a.tensor;
      tensors[i] = {static_cast<unsigned char*>(t.data), reinterpret_cast<const long long*>(t.shape.data()),
                    reinterpret_cast<const long long*>(t.strides.data()), static_cast<int>(t.shape.size()),
                    dtype_bytes(t.dtype)};
    } else {
      tensors[i] = {};
      const ScalarValue v = a.scalar();
      ints[scalars] = v.as_int();
      floats[scalars] = v.as_double();
      ++scalars;
    }
  }
  pto_frame frame{};
  frame.tensors = tensors;
  frame.int_args = ints;
  frame.float_args = floats;
  for (int m = 0; m < 7; ++m) frame.buffers[m] = buffers_[m];
  frame.scratch = scratch_;
  frame.scratch_bytes = scratch_bytes_;
  frame.host = this;
  frame.fallback = &fallback_entry;
  frame.support = module_->support;
  static const std::atomic<bool> never{false};
  const std::atomic<bool>* flag = current_cancel_flag();
  frame.cancel = reinterpret_cast<const bool*>(flag != nullptr ? flag : &never);
  current_ = &kernel;
  current_args_ = &args;
  fn(&frame);
}

namespace {

std::string kib(int64_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KiB" : std::to_string(bytes) + " B";
}

}  // namespace

void NativeCore::run_reference(int pc, long long* ri, double* rf) {
  if (pc == -1) {  // the generated code saw the run's interrupt flag set
    check_cancelled();
    return;
  }
  const isa::Kernel& kernel = *current_;
  const std::vector<HostArg>& args = *current_args_;
  const isa::Instr& instr = kernel.code.at(pc);
  ScalarMachine regs(kernel.num_regs, kernel.reg_is_float);
  auto is_float = [&](int r) { return static_cast<size_t>(r) < kernel.reg_is_float.size() && kernel.reg_is_float[r]; };
  for (int r = 0; r < kernel.num_regs; ++r)
    regs.set(r, is_float(r) ? ScalarValue::of_float(rf[r]) : ScalarValue::of_int(ri[r]));
  auto write_back = [&](int r) {
    if (r < 0 || r >= kernel.num_regs) return;
    const ScalarValue v = regs.get(isa::Scalar::r(r));
    if (is_float(r)) rf[r] = v.as_double();
    else ri[r] = v.as_int();
  };
  auto tensor_param = [&](int index) -> const TensorView& {
    if (index < 0 || static_cast<size_t>(index) >= args.size() || args[index].kind != HostArg::kTensor)
      fail(ErrorKind::kRuntime, instr.span,
           instr.mnemonic + " names tensor parameter #" + std::to_string(index) + " of kernel '" + kernel.name +
               "', which is not a tensor parameter",
           "this is a code generation bug; please report it");
    return args[index].tensor;
  };
  switch (instr.kind) {
    case isa::InstrKind::kScalarRead:
    case isa::InstrKind::kScalarWrite: {
      if (instr.ins.at(0).kind == isa::Operand::kTile) break;  // a tile element: below, once tiles resolve
      const TensorView& t = tensor_param(instr.ins.at(0).index);
      std::vector<int64_t> index;
      for (const isa::Scalar& s : instr.ins.at(1).list) index.push_back(regs.get(s).as_int());
      if (instr.kind == isa::InstrKind::kScalarWrite) {
        write_tensor_element(t, index, regs.get(instr.ins.at(2).scalar), instr.span);
        return;
      }
      regs.set(instr.dst_reg, read_tensor_element(t, index, instr.span));
      write_back(instr.dst_reg);
      return;
    }
    case isa::InstrKind::kTile: break;
    case isa::InstrKind::kWhileEnd: fail_endless_while(instr);  // compiled code calls here only past the limit
    default:
      regs.step(kernel.code, pc);  // scalar instructions come here only to report their errors
      write_back(instr.dst_reg);
      return;
  }
  auto resolve_tile = [&](int index) {
    if (index < 0 || static_cast<size_t>(index) >= kernel.tiles.size())
      fail(ErrorKind::kRuntime, instr.span,
           instr.mnemonic + " names tile #" + std::to_string(index) + " but kernel '" + kernel.name + "' has " +
               std::to_string(kernel.tiles.size()) + " tiles",
           "this is a code generation bug; please report it");
    const isa::TileDesc& d = kernel.tiles[index];
    TileRef t{nullptr, d.dtype, d.rows, d.cols, regs.get(d.valid_rows).as_int(), regs.get(d.valid_cols).as_int(), d.pad, d.name};
    const int64_t cap = chip_.capacity(d.memory);
    if (d.memory == MemorySpace::DDR)
      fail(ErrorKind::kRuntime, instr.span, "tile '" + d.name + "' is placed in DDR; tiles live in on-chip memory",
           "place the tile in Vec, Mat, Left, Right, Acc or Bias");
    if (d.addr < 0 || d.rows < 0 || d.cols < 0 || d.addr + t.bytes() > cap)
      fail(ErrorKind::kRuntime, instr.span,
           "tile '" + d.name + "' (" + std::to_string(d.rows) + "x" + std::to_string(d.cols) + " " + dtype_name(d.dtype) +
               ", " + std::to_string(t.bytes()) + " B at byte offset " + std::to_string(d.addr) + ") lies outside " +
               memory_space_name(d.memory) + " (" + kib(cap) + " on " + chip_.platform + ")",
           "make the tile smaller or place it inside the buffer");
    if (t.valid_rows < 0 || t.valid_rows > d.rows || t.valid_cols < 0 || t.valid_cols > d.cols)
      fail(ErrorKind::kRuntime, instr.span,
           "tile '" + d.name + "' has valid shape " + std::to_string(t.valid_rows) + "x" + std::to_string(t.valid_cols) +
               " outside its " + std::to_string(d.rows) + "x" + std::to_string(d.cols) + " shape",
           "keep the valid shape within the tile's shape");
    t.data = buffers_[static_cast<int>(d.memory)] + d.addr;
    return t;
  };
  if (instr.kind == isa::InstrKind::kScalarRead || instr.kind == isa::InstrKind::kScalarWrite) {  // a tile element
    TileRef t = resolve_tile(instr.ins.at(0).index);
    std::vector<int64_t> index;
    for (const isa::Scalar& s : instr.ins.at(1).list) index.push_back(regs.get(s).as_int());
    if (instr.kind == isa::InstrKind::kScalarWrite) {
      write_tile_element(t, index, regs.get(instr.ins.at(2).scalar), instr.span);
      return;
    }
    regs.set(instr.dst_reg, read_tile_element(t, index, instr.span));
    write_back(instr.dst_reg);
    return;
  }
  auto resolve = [&](const isa::Operand& op) {
    OperandValue v;
    v.kind = op.kind;
    switch (op.kind) {
      case isa::Operand::kTile: v.tile = resolve_tile(op.index); break;
      case isa::Operand::kTensor: v.tensor = &tensor_param(op.index); break;
      case isa::Operand::kScalar: v.scalar = regs.get(op.scalar); break;
      case isa::Operand::kScalarList:
        for (const isa::Scalar& s : op.list) v.list.push_back(regs.get(s).as_int());
        break;
    }
    return v;
  };
  TileCall call{instr, {}, {}};
  for (const isa::Operand& o : instr.outs) call.outs.push_back(resolve(o));
  for (const isa::Operand& o : instr.ins) call.ins.push_back(resolve(o));
  execute_reference(call);
}

}  // namespace pypto::engines

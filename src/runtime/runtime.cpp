// The host side of a run: validates platform and engine, binds arguments to tensor slots,
// interprets the orchestration's host code and hands kernel calls to the task pool.
#include "pypto/runtime/runtime.h"
#include "pypto/isa/validate.h"

#include <deque>
#include <variant>

#include "pypto/runtime/native_engine.h"
#include "pypto/runtime/scalar_machine.h"
#include "pypto/runtime/sim_engine.h"
#include "pypto/runtime/task_pool.h"
#include "pypto/runtime/trace.h"

namespace pypto::runtime {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Bound tensor slots of a run; slots created by kAllocTensor own their zeroed memory.
struct TensorSlots {
  std::vector<TensorView> views;
  std::deque<std::vector<uint8_t>> owned;
};

DataType alloc_dtype(const isa::Instr& in, const isa::ParamDesc* declared) {
  auto it = in.attrs.find("dtype");
  if (it != in.attrs.end()) {
    if (auto* d = std::get_if<DataType>(&it->second)) return *d;
    if (auto* s = std::get_if<std::string>(&it->second))
      if (auto d = dtype_from_name(*s)) return *d;
  }
  if (declared) return declared->dtype;
  fail(ErrorKind::kRuntime, in.span, "tensor allocation without a dtype", "this is a code generation bug; please report it");
}

std::vector<int64_t> alloc_shape(const isa::Instr& in, const isa::ParamDesc* declared) {
  auto it = in.attrs.find("shape");
  std::vector<int64_t> shape;
  if (it != in.attrs.end() && std::holds_alternative<std::vector<int64_t>>(it->second))
    shape = std::get<std::vector<int64_t>>(it->second);
  else if (declared)
    shape = declared->shape;
  for (int64_t d : shape)
    if (d < 0)
      fail(ErrorKind::kRuntime, in.span, "pl.create_tensor needs a static shape here (a dimension is " + std::to_string(d) + ")",
           "give the tensor a shape known at compile time");
  return shape;
}

void allocate(TensorSlots& slots, const isa::HostProgram& program, const isa::Instr& in) {
  const int slot = in.outs.at(0).index;
  if (slot < 0) fail(ErrorKind::kRuntime, in.span, "tensor allocation into slot " + std::to_string(slot), "report this bug");
  if (static_cast<size_t>(slot) >= slots.views.size()) slots.views.resize(slot + 1);
  const isa::ParamDesc* declared = static_cast<size_t>(slot) < program.tensors.size() ? &program.tensors[slot] : nullptr;
  TensorView v;
  v.dtype = alloc_dtype(in, declared);
  v.shape = alloc_shape(in, declared);
  v.strides = row_major_strides(v.shape);
  v.name = declared ? declared->name : "tensor" + std::to_string(slot);
  slots.owned.emplace_back(static_cast<size_t>(v.numel() * dtype_bytes(v.dtype)), 0);
  v.data = slots.owned.back().data();
  slots.views[slot] = std::move(v);
}

const TensorView& slot_tensor(const TensorSlots& slots, int slot, const isa::Instr& in) {
  if (slot < 0 || static_cast<size_t>(slot) >= slots.views.size() || slots.views[slot].data == nullptr)
    fail(ErrorKind::kRuntime, in.span, "tensor slot " + std::to_string(slot) + " is used before it holds a tensor",
         "create the tensor (pl.create_tensor) before passing it to a kernel");
  return slots.views[slot];
}

// The arguments of a kCall, in the callee's parameter order.
std::vector<HostArg> call_args(const isa::Kernel& kernel, const isa::Instr& in, const TensorSlots& slots,
                               const ScalarMachine& regs) {
  if (in.ins.size() != kernel.params.size())
    fail(ErrorKind::kRuntime, in.span,
         "call of kernel '" + kernel.name + "' passes " + std::to_string(in.ins.size()) + " operands for " +
             std::to_string(kernel.params.size()) + " parameters",
         "pass one argument per parameter");
  std::vector<HostArg> args;
  for (size_t i = 0; i < in.ins.size(); ++i) {
    const isa::Operand& op = in.ins[i];
    if (op.kind == isa::Operand::kTensor) {
      args.push_back(HostArg::of_tensor(slot_tensor(slots, op.index, in)));
    } else if (op.kind == isa::Operand::kScalar) {
      const ScalarValue v = regs.get(op.scalar);
      args.push_back(dtype_is_float(kernel.params[i].dtype) ? HostArg::of_float(v.as_double()) : HostArg::of_int(v.as_int()));
    } else {
      fail(ErrorKind::kRuntime, in.span, "kernel call operand " + std::to_string(i) + " must be a tensor or a scalar",
           "report this bug");
    }
  }
  return args;
}

}  // namespace

std::vector<std::string> engine_names() { return {"native", "sim"}; }

isa::ChipSpec resolve_run_target(const RunOptions& options) {
  if (options.engine != "sim" && options.engine != "native")
    fail(ErrorKind::kPlatform, {}, "unknown engine '" + options.engine + "'; available engines: " + join(engine_names()),
         "use engine=\"sim\"");
  if (auto chip = isa::chip_for_platform(options.platform)) return *chip;
  if (isa::is_hardware_platform(options.platform))
    fail(ErrorKind::kPlatform, {}, "platform '" + options.platform + "' is a real Ascend NPU, which this build cannot drive",
         "use a simulated platform: " + join(isa::simulated_platforms()));
  fail(ErrorKind::kPlatform, {}, "unknown platform '" + options.platform + "'",
       "use one of: " + join(isa::simulated_platforms()));
}

void run_kernel(const isa::Kernel& kernel, const std::vector<HostArg>& args, const RunOptions& options) {
  const isa::ChipSpec chip = resolve_run_target(options);
  isa::validate_kernel(kernel, chip);
  // The modelled timeline comes from the sim engine: a trace request runs there.
  if (options.engine == "native" && options.trace_path.empty()) {
    std::vector<const isa::Kernel*> kernels{&kernel};
    NativeCore core(chip, native_module_for(kernels, chip), kernels);
    core.run(kernel, args);
    return;
  }
  SimEngine core(chip);
  core.set_record_events(!options.trace_path.empty());
  core.run(kernel, args);
  TraceRecorder trace;
  trace.add(0, core.timeline());
  if (!options.trace_path.empty()) trace.write_chrome_json(options.trace_path);
  if (options.stats) options.stats->modelled_cycles = trace.makespan();
}

void run_host_program(const isa::HostProgram& program, const std::vector<HostArg>& args, const RunOptions& options) {
  const isa::ChipSpec chip = resolve_run_target(options);
  isa::validate_host_program(program, chip);
  check_args(program.name, program.params, args);

  TensorSlots slots;  // declared before the pool: tasks may use owned tensors until it joins
  slots.views.resize(std::max(program.tensors.size(), program.params.size()));
  ScalarMachine regs(program.num_regs, program.reg_is_float);
  int next_reg = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind == HostArg::kTensor) slots.views[i] = args[i].tensor;
    else regs.set(next_reg++, args[i].scalar());
  }

  CoreFactory factory;
  // The modelled timeline comes from the sim engine: a trace request runs there.
  if (options.engine == "native" && options.trace_path.empty()) {
    std::vector<const isa::Kernel*> kernels;
    for (const isa::Kernel& k : program.kernels) kernels.push_back(&k);
    auto module = native_module_for(kernels, chip);
    factory = [chip, module, kernels] { return std::make_unique<NativeCore>(chip, module, kernels); };
  }
  TraceRecorder trace;  // declared before the pool: workers record into it until it joins
  TaskPool pool(chip, options.num_workers, factory);
  pool.set_trace(&trace, !options.trace_path.empty());
  const int n = static_cast<int>(program.code.size());
  for (int pc = 0; pc < n;) {
    const isa::Instr& in = program.code[pc];
    const int next = regs.step(program.code, pc);
    if (next >= 0) {
      pc = next;
      continue;
    }
    switch (in.kind) {
      case isa::InstrKind::kAllocTensor: allocate(slots, program, in); break;
      case isa::InstrKind::kCall: {
        if (in.callee < 0 || static_cast<size_t>(in.callee) >= program.kernels.size())
          fail(ErrorKind::kRuntime, in.span, "call of kernel #" + std::to_string(in.callee) + ", which does not exist",
               "report this bug");
        if (pool.failed()) break;  // stop submitting; wait_all rethrows the error
        const isa::Kernel& kernel = program.kernels[in.callee];
        pool.submit(kernel, call_args(kernel, in, slots, regs));
        break;
      }
      case isa::InstrKind::kScalarRead: {
        pool.wait_all();  // the host reads memory that tasks may still be writing
        std::vector<int64_t> index;
        for (const isa::Scalar& s : in.ins.at(1).list) index.push_back(regs.get(s).as_int());
        regs.set(in.dst_reg, read_tensor_element(slot_tensor(slots, in.ins.at(0).index, in), index, in.span));
        break;
      }
      default:
        fail(ErrorKind::kRuntime, in.span, "tile instruction '" + in.mnemonic + "' in host program '" + program.name + "'",
             "tile instructions belong in InCore kernels");
    }
    ++pc;
  }
  pool.wait_all();
  if (!options.trace_path.empty()) trace.write_chrome_json(options.trace_path);
  if (options.stats) options.stats->modelled_cycles = trace.makespan();
}

}  // namespace pypto::runtime

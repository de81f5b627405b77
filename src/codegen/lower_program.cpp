// Program -> isa::HostProgram: the orchestration's statements run on the host; each call
// of an InCore function becomes a task submission (kCall) whose operands follow the
// callee's parameter order, and whose result is the tensor passed for the Out parameter.
#include "pypto/codegen/lower_program.h"

#include <algorithm>
#include <map>

#include "pypto/codegen/kernel_builder.h"
#include "pypto/codegen/lower_kernel.h"
#include "stmt_lowering.h"

namespace pypto::codegen {

namespace {

bool is_kernel(FunctionType t) { return t == FunctionType::InCore || t == FunctionType::AIC || t == FunctionType::AIV; }

struct ProgramLowering {
  const ir::Program& program;
  isa::HostProgram& host;
  KernelBuilder& kb;
  std::map<std::string, int> kernel_index;
  std::vector<std::vector<int>> returned_params;  // per kernel
  std::map<int64_t, int64_t> task_ordinal;        // task id -> ordinal of its (latest) kCall

  int kernel_of(const ir::FuncCall& call) {
    auto it = kernel_index.find(call.callee);
    if (it != kernel_index.end()) return it->second;
    ir::FunctionPtr fn = program.find(call.callee);
    if (!fn) fail(ErrorKind::kValue, call.span, "the program has no function '" + call.callee + "'");
    if (!is_kernel(fn->func_type))
      fail(ErrorKind::kType, call.span,
           "'" + call.callee + "' is a " + function_type_name(fn->func_type) +
               " function; the orchestration submits only InCore kernels",
           "mark it @pl.function(type=pl.FunctionType.InCore) or @pl.jit.incore, or inline it with @pl.jit.inline");
    LoweredKernel lk = lower_kernel(*fn);
    host.kernels.push_back(std::move(lk.kernel));
    returned_params.push_back(std::move(lk.returned_params));
    int index = static_cast<int>(host.kernels.size()) - 1;
    kernel_index[call.callee] = index;
    return index;
  }

  void call(const ir::FuncCall& call, const ir::VarPtr& dst) {
    int callee = kernel_of(call);
    const isa::Kernel& k = host.kernels[callee];
    if (call.args.size() != k.params.size())
      fail(ErrorKind::kType, call.span,
           "kernel '" + k.name + "' takes " + std::to_string(k.params.size()) + " arguments, got " +
               std::to_string(call.args.size()),
           "pass one argument per kernel parameter");
    isa::Instr in;
    in.kind = isa::InstrKind::kCall;
    in.callee = callee;
    std::vector<int> arg_slot(call.args.size(), -1);
    for (size_t i = 0; i < call.args.size(); ++i) {
      const ir::ExprPtr& a = call.args[i];
      if (k.params[i].is_tensor) {
        if (!a->type->as<ir::TensorType>())
          fail(ErrorKind::kType, call.span, "argument " + std::to_string(i) + " of kernel '" + k.name +
                                                "' (parameter '" + k.params[i].name + "') must be a tensor");
        arg_slot[i] = kb.tensor(a);
        in.ins.push_back(isa::Operand::tensor(arg_slot[i]));
      } else {
        if (!a->type->as<ir::ScalarType>())
          fail(ErrorKind::kType, call.span, "argument " + std::to_string(i) + " of kernel '" + k.name +
                                                "' (parameter '" + k.params[i].name + "') must be a scalar");
        in.ins.push_back(isa::Operand::scalar_of(kb.scalar(a)));
      }
    }
    in.span = call.span;
    // Explicit edges: deps name earlier launches by task id; the runtime wants the ordinal
    // of their kCall among the host program's kCalls.
    if (!call.task.deps.empty()) {
      std::vector<int64_t> ordinals;
      for (int64_t t : call.task.deps) {
        auto it = task_ordinal.find(t);
        if (it == task_ordinal.end())
          fail(ErrorKind::kValue, call.span, "kernel launch '" + k.name + "' depends on task id " + std::to_string(t) +
                                                 ", which no earlier launch binds",
               "bind the id with `with pl.at(...) as tid:` before the launch that lists it in deps=[...]");
        ordinals.push_back(it->second);
      }
      in.attrs["deps"] = ordinals;
    }
    if (call.task.block_num > 0) in.attrs["block_num"] = std::vector<int64_t>{call.task.block_num};
    if (call.task.manual) in.attrs["manual"] = true;
    if (call.task.task_id >= 0)
      task_ordinal[call.task.task_id] = std::count_if(host.code.begin(), host.code.end(), [](const isa::Instr& i) {
        return i.kind == isa::InstrKind::kCall;
      });
    kb.emit(in);
    if (!dst) return;
    // The call's result is the tensor passed for the parameter the kernel returns.
    std::vector<int> result_slots;
    for (int p : returned_params[callee])
      if (p >= 0) result_slots.push_back(arg_slot[p]);
    if (result_slots.empty()) {
      for (size_t i = 0; i < k.params.size(); ++i)
        if (k.params[i].is_tensor && k.params[i].dir != ParamDirection::In) result_slots.push_back(arg_slot[i]);
      if (result_slots.size() > 1) result_slots.clear();
    }
    if (dst->type->as<ir::TupleType>()) {
      kb.bind_tensor_tuple(dst.get(), result_slots);
    } else if (dst->type->as<ir::TensorType>()) {
      if (result_slots.size() != 1)
        fail(ErrorKind::kType, call.span, "kernel '" + k.name + "' does not return exactly one tensor parameter",
             "return the pl.Out tensor the kernel writes (return out)");
      kb.bind_tensor(dst.get(), result_slots[0]);
    }
  }
};

}  // namespace

isa::HostProgram lower_program(const ir::Program& program, const std::string& entry) {
  ir::FunctionPtr fn = program.find(entry);
  if (!fn) fail(ErrorKind::kValue, {}, "the program has no function '" + entry + "'", "name its orchestration function");
  isa::HostProgram host;
  host.name = fn->name;
  KernelBuilder kb(host.code, host.num_regs, host.reg_is_float, nullptr, &host.tensors);
  kb.set_span(fn->span);
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const ir::VarPtr& p = fn->params[i];
    isa::ParamDesc d;
    d.name = p->name;
    d.dir = fn->directions[i];
    if (auto* t = p->type->as<ir::TensorType>()) {
      d.dtype = t->dtype;
      for (auto& e : t->shape) d.shape.push_back(ir::as_const_int(e).value_or(-1));
      kb.bind_tensor(p.get(), static_cast<int>(i));
    } else if (auto* s = p->type->as<ir::ScalarType>()) {
      d.is_tensor = false;
      d.dtype = s->dtype;
    } else {
      fail(ErrorKind::kType, p->span, "parameter '" + p->name + "' of '" + fn->name + "' must be a tensor or a scalar");
    }
    host.params.push_back(d);
  }
  host.tensors = host.params;
  for (auto& p : fn->params)
    if (p->type->as<ir::ScalarType>()) kb.define_scalar(p);

  ProgramLowering pl{program, host, kb, {}, {}, {}};
  kb.on_func_call = [&pl](const ir::FuncCall& c, const ir::VarPtr& dst) { pl.call(c, dst); };
  StmtLowering body(kb);
  body.lower(fn->body);
  for (auto& v : body.returned()) {
    if (v->type->as<ir::TensorType>()) host.returns.push_back(kb.tensor(v));
    else if (auto* t = v->type->as<ir::TupleType>(); t && v->as<ir::Var>())
      for (size_t i = 0; i < t->elems.size(); ++i) host.returns.push_back(kb.tensor(ir::TupleGetItem::make(v, static_cast<int>(i))));
  }
  return host;
}

}  // namespace pypto::codegen

// InCore function -> isa::Kernel: parameters become ParamDescs (scalar parameters in
// registers 0..k-1), the body goes through the statement lowering, and the core type
// follows from the memories the kernel's tiles use.
#include "pypto/codegen/lower_kernel.h"

#include "pypto/ops/kernel_builder.h"
#include "pypto/passes/insert_sync.h"
#include "pypto/codegen/pto_text.h"
#include "pypto/ops/op_registry.h"
#include "pypto/ir/visitor.h"
#include "stmt_lowering.h"

namespace pypto::codegen {

static isa::ParamDesc describe_param(const ir::VarPtr& p, ParamDirection dir) {
  isa::ParamDesc d;
  d.name = p->name;
  d.dir = dir;
  if (auto* t = p->type->as<ir::TensorType>()) {
    d.is_tensor = true;
    d.dtype = t->dtype;
    for (auto& e : t->shape) d.shape.push_back(ir::as_const_int(e).value_or(-1));
    d.stride = t->stride;
    d.dn = t->dn;
  } else if (auto* s = p->type->as<ir::ScalarType>()) {
    d.is_tensor = false;
    d.dtype = s->dtype;
  } else {
    fail(ErrorKind::kType, p->span, "parameter '" + p->name + "' must be a pl.Tensor or a pl.Scalar",
         "pass tiles between kernels through global tensors (pl.store / pl.load)");
  }
  return d;
}

static bool is_cube_memory(MemorySpace m) {
  return m == MemorySpace::Mat || m == MemorySpace::Left || m == MemorySpace::Right || m == MemorySpace::Acc ||
         m == MemorySpace::Bias;
}

namespace {
// Whether the function reads pl.get_subblock_idx().
struct ReadsSubblock : ir::IRVisitor {
  bool found = false;
  void visit_call(const ir::Call& c) override {
    found = found || c.op->name == "tile.get_subblock_idx";
    ir::IRVisitor::visit_call(c);
  }
};
}  // namespace

LoweredKernel lower_kernel(const ir::Function& fn, const passes::KernelPassHook& after_kernel_pass) {
  LoweredKernel out;
  isa::Kernel& k = out.kernel;
  k.name = fn.name;
  ops::KernelBuilder kb(k.code, k.num_regs, k.reg_is_float, &k.tiles);
  kb.set_span(fn.span);
  kb.func_type = fn.func_type;
  kb.func_name = fn.name;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    k.params.push_back(describe_param(fn.params[i], fn.directions[i]));
    if (k.params.back().is_tensor) kb.bind_tensor(fn.params[i].get(), static_cast<int>(i));
  }
  // Scalar parameters take registers 0..k-1 in order, before any other register.
  for (auto& p : fn.params)
    if (p->type->as<ir::ScalarType>()) kb.define_scalar(p);
  // pl.get_subblock_idx(): one more scalar parameter, last (so its register follows the
  // others'). A mixed task's part passes its AIV lane, every other launch 0 (both added by
  // lower_program.cpp: the IR call does not pass it).
  ReadsSubblock reads;
  reads.visit_function(fn);
  if (reads.found) {
    kb.subblock_idx = ir::Var::make("__subblock_idx", ir::ScalarType::make(DataType::INDEX), fn.span);
    k.params.push_back(describe_param(kb.subblock_idx, ParamDirection::In));
    kb.define_scalar(kb.subblock_idx);
  }

  StmtLowering body(kb);
  body.lower(fn.body);
  for (auto& v : body.returned()) {
    bool tensor = v->type && v->type->as<ir::TensorType>();
    out.returned_params.push_back(tensor ? kb.tensor(v) : -1);
  }

  k.core = FunctionType::AIV;
  for (auto& t : k.tiles)
    if (is_cube_memory(t.memory)) k.core = FunctionType::AIC;
  passes::run_kernel_pipeline(k, after_kernel_pass);  // InsertSync: flags depend on pipes, known only now
  k.pto_text = emit_pto(k);
  return out;
}

isa::Kernel lower_incore_function(const ir::Function& fn) { return lower_kernel(fn).kernel; }

}  // namespace pypto::codegen

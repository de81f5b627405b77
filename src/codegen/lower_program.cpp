// Program -> isa::HostProgram: the orchestration's statements run on the host; each call
// of an InCore function becomes a task submission (kCall) whose operands follow the
// callee's parameter order, and whose result is the tensor passed for the Out parameter.
#include "pypto/codegen/lower_program.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "pypto/ops/kernel_builder.h"
#include "pypto/codegen/lower_kernel.h"
#include "pypto/codegen/pto_text.h"
#include "pypto/ops/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/isa/instructions.h"
#include "stmt_lowering.h"

namespace pypto::codegen {

namespace {

bool is_kernel(FunctionType t) { return t == FunctionType::InCore || t == FunctionType::AIC || t == FunctionType::AIV; }

bool is_cube_memory(MemorySpace m) {
  return m == MemorySpace::Mat || m == MemorySpace::Left || m == MemorySpace::Right || m == MemorySpace::Acc ||
         m == MemorySpace::Bias;
}

// The first cross-core FIFO instruction of a kernel, or null.
const isa::Instr* first_fifo_instr(const isa::Kernel& k) {
  for (const isa::Instr& in : k.code) {
    const isa::InstrDef* def = in.kind == isa::InstrKind::kTile ? isa::find_instr(in.mnemonic) : nullptr;
    if (def && def->family == isa::InstrFamily::kCrossCore) return &in;
  }
  return nullptr;
}

std::string with_article(FunctionType f) {
  const std::string name = function_type_name(f);
  return (std::string("AEIOU").find(name[0]) != std::string::npos ? "an " : "a ") + name;
}

const char* group_shape_fix =
    "write the Group function as calls of one @pl.function(type=pl.FunctionType.AIC) function and one or two "
    "AIV functions (the first AIV call runs on AIV 0, the second on AIV 1), passing the group's own parameters or "
    "constants, then `return` its Out tensors";

struct ProgramLowering {
  const ir::Program& program;
  isa::HostProgram& host;
  ops::KernelBuilder& kb;
  std::map<std::string, int> kernel_index;
  std::vector<std::vector<int>> returned_params;  // per kernel
  std::map<int64_t, int64_t> task_ordinal;        // task id -> ordinal of its (latest) kCall
  const passes::KernelPassHook* after_kernel_pass = nullptr;

  // The kernel of a call from the orchestration: an InCore/AIC/AIV kernel (a task on one
  // core) or a Group function (a mixed task on one cluster).
  int kernel_of(const ir::FuncCall& call) {
    ir::FunctionPtr fn = program.find(call.callee);
    if (!fn) fail(ErrorKind::kValue, call.span, "the program has no function '" + call.callee + "'");
    if (fn->func_type == FunctionType::Group) return group_of(*fn);
    if (!is_kernel(fn->func_type))
      fail(ErrorKind::kType, call.span,
           "'" + call.callee + "' is a " + function_type_name(fn->func_type) +
               " function; the orchestration submits only InCore kernels and Group functions",
           "mark it @pl.function(type=pl.FunctionType.InCore) or @pl.jit.incore, or inline it with @pl.jit.inline");
    const int index = lowered(*fn);
    if (const isa::Instr* fifo = first_fifo_instr(host.kernels[index]))
      fail(ErrorKind::kType, call.span,
           "kernel '" + fn->name + "' exchanges tiles with another core (" + fifo->mnemonic +
               (fifo->span.line > 0 ? " at " + fifo->span.str() : std::string()) +
               ") and so runs only as part of a mixed task, but the orchestration calls it on its own",
           "call a @pl.function(type=pl.FunctionType.Group) function that calls '" + fn->name + "' and its peer");
    return index;
  }

  // Lowers a kernel function once.
  int lowered(const ir::Function& fn) {
    auto it = kernel_index.find(fn.name);
    if (it != kernel_index.end()) return it->second;
    LoweredKernel lk = lower_kernel(fn, *after_kernel_pass);
    host.kernels.push_back(std::move(lk.kernel));
    returned_params.push_back(std::move(lk.returned_params));
    int index = static_cast<int>(host.kernels.size()) - 1;
    kernel_index[fn.name] = index;
    return index;
  }

  // A Group function -> a Group kernel: no code of its own, one part per AIC/AIV call of its
  // body, each part's arguments mapped to the group's parameters or constants.
  int group_of(const ir::Function& g) {
    auto it = kernel_index.find(g.name);
    if (it != kernel_index.end()) return it->second;
    isa::Kernel k;
    k.name = g.name;
    k.core = FunctionType::Group;
    std::map<const ir::Var*, int> param_of;  // group parameters and names bound to them
    for (size_t i = 0; i < g.params.size(); ++i) {
      const ir::VarPtr& p = g.params[i];
      isa::ParamDesc d;
      d.name = p->name;
      d.dir = g.directions[i];
      if (auto* t = p->type->as<ir::TensorType>()) {
        d.dtype = t->dtype;
        for (auto& e : t->shape) d.shape.push_back(ir::as_const_int(e).value_or(-1));
      } else if (auto* sc = p->type->as<ir::ScalarType>()) {
        d.is_tensor = false;
        d.dtype = sc->dtype;
      } else {
        fail(ErrorKind::kType, p->span, "parameter '" + p->name + "' of Group function '" + g.name + "' must be a tensor or a scalar");
      }
      k.params.push_back(d);
      param_of[p.get()] = static_cast<int>(i);
    }
    std::vector<int> returned;
    int aivs = 0;
    bool has_aic = false;
    std::vector<ir::StmtPtr> stmts;
    std::function<void(const ir::StmtPtr&)> flatten = [&](const ir::StmtPtr& st) {
      if (!st) return;
      if (auto* seq = st->as<ir::SeqStmts>())
        for (auto& x : seq->stmts) flatten(x);
      else stmts.push_back(st);
    };
    flatten(g.body);
    auto group_param = [&](const ir::ExprPtr& e, const Span& at) -> int {
      auto* v = e->as<ir::Var>();
      auto found = v ? param_of.find(v) : param_of.end();
      if (found == param_of.end())
        fail(ErrorKind::kType, e->span.line ? e->span : at,
             "Group function '" + g.name + "' passes a value that is not one of its parameters or a constant",
             group_shape_fix);
      return found->second;
    };
    for (const ir::StmtPtr& st : stmts) {
      const ir::FuncCall* call = nullptr;
      const ir::Var* bound = nullptr;
      if (auto* e = st->as<ir::EvalStmt>()) call = e->expr->as<ir::FuncCall>();
      else if (auto* a = st->as<ir::AssignStmt>()) {
        if (auto* v = a->value->as<ir::Var>(); v && param_of.count(v)) {  // an alias of a parameter
          param_of[a->var.get()] = param_of[v];
          continue;
        }
        call = a->value->as<ir::FuncCall>();
        bound = a->var.get();
      } else if (auto* r = st->as<ir::ReturnStmt>()) {
        for (auto& v : r->values) {
          if (!v->type->as<ir::TensorType>())
            fail(ErrorKind::kType, r->span, "Group function '" + g.name + "' returns a value that is not a tensor", group_shape_fix);
          returned.push_back(group_param(v, r->span));
        }
        continue;
      }
      if (!call)
        fail(ErrorKind::kType, st->span,
             "a Group function's body only calls its AIC and AIV functions, but '" + g.name + "' has another statement here",
             group_shape_fix);
      ir::FunctionPtr fn = program.find(call->callee);
      if (!fn) fail(ErrorKind::kValue, call->span, "the program has no function '" + call->callee + "'");
      if (fn->func_type != FunctionType::AIC && fn->func_type != FunctionType::AIV)
        fail(ErrorKind::kType, call->span,
             "Group function '" + g.name + "' calls '" + fn->name + "', " + with_article(fn->func_type) +
                 " function; the parts of a mixed task are AIC and AIV functions",
             "declare '" + fn->name + "' @pl.function(type=pl.FunctionType.AIC) for cube work or "
             "@pl.function(type=pl.FunctionType.AIV) for vector work");
      isa::KernelPart part;
      if (fn->func_type == FunctionType::AIC) {
        if (has_aic)
          fail(ErrorKind::kType, call->span, "Group function '" + g.name + "' calls a second AIC function ('" + fn->name +
                                                 "'); a cluster has one cube core",
               "do the cube work of the group in one AIC function");
        has_aic = true;
        part.role = isa::PartRole::AIC;
      } else {
        if (aivs == 2)
          fail(ErrorKind::kType, call->span, "Group function '" + g.name + "' calls a third AIV function ('" + fn->name +
                                                 "'); a cluster has two vector cores",
               "call at most two AIV functions (the first runs on AIV 0, the second on AIV 1)");
        part.role = aivs++ == 0 ? isa::PartRole::AIV0 : isa::PartRole::AIV1;
      }
      part.kernel = lowered(*fn);
      for (const ir::ExprPtr& a : call->args) {
        isa::PartArg pa;
        if (auto* c = a->as<ir::ConstInt>()) pa.constant = isa::Scalar::imm(c->value);
        else if (auto* f = a->as<ir::ConstFloat>()) pa.constant = isa::Scalar::immf(f->value);
        else if (auto* b = a->as<ir::ConstBool>()) pa.constant = isa::Scalar::imm(b->value ? 1 : 0);
        else pa.param = group_param(a, call->span);
        part.args.push_back(pa);
      }
      const isa::Kernel& pk = host.kernels[part.kernel];
      if (pk.params.size() == part.args.size() + 1 && pk.params.back().name == "__subblock_idx") {
        isa::PartArg lane;  // pl.get_subblock_idx() of this part: its AIV lane (0 on the AIC)
        lane.constant = isa::Scalar::imm(part.role == isa::PartRole::AIV1 ? 1 : 0);
        part.args.push_back(lane);
      }
      check_part(g, *call, part, k.params);
      if (bound) {  // `out = self.aiv(..., out)`: the tensor the part returns
        const std::vector<int>& rp = returned_params[part.kernel];
        if (rp.size() == 1 && rp[0] >= 0 && part.args[rp[0]].param >= 0) param_of[bound] = part.args[rp[0]].param;
      }
      k.parts.push_back(std::move(part));
    }
    if (!has_aic || aivs == 0)
      fail(ErrorKind::kType, g.span,
           "Group function '" + g.name + "' calls " + (has_aic ? "no AIV function" : "no AIC function") +
               "; a mixed task runs one AIC function and one or two AIV functions on a cluster",
           group_shape_fix);
    // A parameter is read / written by the group when some part reads / writes it.
    for (size_t i = 0; i < k.params.size(); ++i) {
      bool reads = false, writes = false, used = false;
      for (const isa::KernelPart& part : k.parts)
        for (size_t a = 0; a < part.args.size(); ++a)
          if (part.args[a].param == static_cast<int>(i)) {
            const ParamDirection d = host.kernels[part.kernel].params[a].dir;
            used = true;
            reads = reads || d != ParamDirection::Out;
            writes = writes || d != ParamDirection::In;
          }
      if (used && k.params[i].is_tensor)
        k.params[i].dir = writes ? (reads ? ParamDirection::InOut : ParamDirection::Out) : ParamDirection::In;
    }
    check_peers(k, host.kernels);
    k.pto_text = emit_group_pto(k, host.kernels);
    host.kernels.push_back(std::move(k));
    returned_params.push_back(returned);
    const int index = static_cast<int>(host.kernels.size()) - 1;
    kernel_index[g.name] = index;
    return index;
  }

  // pl.system.syncall is the barrier of every core of a launch. A launch of one block (one
  // core) passes it at once; the blocks of a multi-block pl.spmd launch and the parts of a
  // mixed task are not held at a barrier on this runtime, so such a launch is refused rather
  // than run as if the blocks had met (they may run one after another: a device barrier
  // there would wait forever).
  void check_syncall(const ir::FuncCall& call, const isa::Kernel& k) {
    std::vector<const isa::Kernel*> kernels{&k};
    for (const isa::KernelPart& p : k.parts) kernels.push_back(&host.kernels[p.kernel]);
    for (const isa::Kernel* kk : kernels)
      for (const isa::Instr& in : kk->code) {
        if (in.mnemonic != "SYNCALL") continue;
        const bool parts = !k.parts.empty();
        if (call.task.block_num <= 1 && !parts) continue;
        fail(ErrorKind::kValue, in.span,
             "pl.system.syncall in kernel '" + kk->name + "' is a barrier of every core of the launch, but " +
                 (parts ? "'" + k.name + "' is a mixed task whose parts"
                        : "the launch at " + call.span.str() + " runs " + std::to_string(call.task.block_num) + " blocks that") +
                 " are not held at a barrier on this runtime (they may run one after another, where the barrier would "
                 "wait forever)",
             parts ? "exchange the data through the cross-core FIFOs (pl.tpush_to_aiv / pl.tpop_from_aic) instead"
                   : "split the kernel at the barrier into two launches: the second pl.spmd block runs after the first "
                     "(it reads what the first wrote)");
      }
  }

  // A part's kernel fits its core (no Vec tile on the AIC, no cube tile on an AIV), takes
  // the arguments given, and talks only to peers the group has.
  void check_part(const ir::Function& g, const ir::FuncCall& call, const isa::KernelPart& part,
                  const std::vector<isa::ParamDesc>& group_params) {
    isa::Kernel& pk = host.kernels[part.kernel];
    const bool aic = part.role == isa::PartRole::AIC;
    for (const isa::TileDesc& t : pk.tiles)
      if (aic ? t.memory == MemorySpace::Vec : is_cube_memory(t.memory))
        fail(ErrorKind::kType, call.span,
             std::string(aic ? "AIC" : "AIV") + " function '" + pk.name + "' of Group '" + g.name + "' uses tile '" +
                 t.name + "' in " + memory_space_name(t.memory) + ", which its core does not have (" +
                 (aic ? "the cube core has L1/L0 buffers, no UB" : "a vector core has UB, no L1/L0 buffers") + ")",
             aic ? "do the vector work in the AIV function: push the cube result there with pl.tpush_to_aiv"
                 : "do the cube work in the AIC function: push the vector result there with pl.tpush_to_aic");
    pk.core = aic ? FunctionType::AIC : FunctionType::AIV;
    pk.pto_text = emit_pto(pk);
    if (part.args.size() != pk.params.size())
      fail(ErrorKind::kType, call.span,
           "'" + pk.name + "' takes " + std::to_string(pk.params.size()) + " arguments, got " + std::to_string(part.args.size()),
           "pass one argument per parameter");
    for (size_t a = 0; a < part.args.size(); ++a) {
      const bool tensor_param = pk.params[a].is_tensor;
      const bool tensor_arg = part.args[a].param >= 0 && group_params[part.args[a].param].is_tensor;
      if (tensor_param != tensor_arg)
        fail(ErrorKind::kType, call.span,
             "argument " + std::to_string(a) + " of '" + pk.name + "' (parameter '" + pk.params[a].name + "') must be " +
                 (tensor_param ? "a tensor parameter of the group" : "a scalar (a parameter of the group or a constant)"),
             group_shape_fix);
    }
  }

  // Every FIFO instruction of the parts names a peer the group has (checked once all parts are known).
  static void check_peers(const isa::Kernel& group, const std::vector<isa::Kernel>& kernels) {
    int aivs = 0;
    for (const isa::KernelPart& p : group.parts) aivs += p.role != isa::PartRole::AIC;
    for (const isa::KernelPart& p : group.parts)
      for (const isa::Instr& in : kernels[p.kernel].code) {
        const isa::InstrDef* def = in.kind == isa::InstrKind::kTile ? isa::find_instr(in.mnemonic) : nullptr;
        if (!def || def->family != isa::InstrFamily::kCrossCore) continue;
        const std::string peer = isa::fifo_peer(in);
        if (peer == "AIV1" && aivs < 2)
          fail(ErrorKind::kValue, in.span,
               in.mnemonic + " in '" + kernels[p.kernel].name + "' talks to AIV 1, but Group '" + group.name +
                   "' runs only one AIV function (AIV 0)",
               "use aiv=0, or call a second AIV function in the Group function");
      }
  }

  // Adds to the position list `attr` of the kCall `in` of `call` each tensor argument whose
  // slot is in `slots`: the tensors pl.dump_tag'ged before this call to "dump_args" (the
  // partial args dump, RunConfig(enable_dump_args=1); it already holds the positions of the
  // launch's dumps=[...]), and the tensors created with manual_dep=True to "no_dep_args".
  void mark_slots(isa::Instr& in, const ir::FuncCall& call, const std::set<int>& slots, const char* attr) {
    std::vector<int64_t> which;
    if (in.attrs.count(attr))
      if (auto* v = std::get_if<std::vector<int64_t>>(&in.attrs[attr])) which = *v;
    size_t operand = 0;
    for (size_t i = 0; i < call.args.size() && operand < in.ins.size(); ++i, ++operand) {
      if (in.ins[operand].kind != isa::Operand::kTensor) continue;
      const bool marked = slots.count(in.ins[operand].index) > 0;
      if (marked && std::find(which.begin(), which.end(), static_cast<int64_t>(i)) == which.end())
        which.push_back(static_cast<int64_t>(i));
    }
    if (!which.empty()) in.attrs[attr] = which;
  }

  void call(const ir::FuncCall& call, const ir::VarPtr& dst) {
    int callee = kernel_of(call);
    const isa::Kernel& k = host.kernels[callee];
    check_syncall(call, k);
    // pl.get_subblock_idx()'s hidden last parameter: 0 in a launch that is not a mixed task's part.
    const bool lane = call.args.size() + 1 == k.params.size() && !k.params.back().is_tensor &&
                      k.params.back().name == "__subblock_idx";
    if (call.args.size() != k.params.size() && !lane)
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
    if (lane) in.ins.push_back(isa::Operand::scalar_of(isa::Scalar::imm(0)));
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
    // A scalar of the orchestration in a register (a constant gets one).
    auto reg_of = [&](const ir::ExprPtr& e) -> int64_t {
      isa::Scalar s = kb.scalar(e);
      if (s.kind != isa::Scalar::kReg) {
        isa::Instr mov;
        mov.kind = isa::InstrKind::kScalarMov;
        mov.dst_reg = kb.new_reg(false);
        mov.a = s;
        mov.span = call.span;
        kb.emit(mov);
        s = isa::Scalar::r(mov.dst_reg);
      }
      return s.reg;
    };
    // Run-time edges (deps=[arr[j]]): registers holding task ids, read at submission.
    if (!call.task.dyn_deps.empty()) {
      std::vector<int64_t> regs;
      for (const ir::ExprPtr& e : call.task.dyn_deps) regs.push_back(reg_of(e));
      in.attrs["dep_regs"] = regs;
    }
    // pl.spmd(n) with a run-time n: the register holding the block count.
    if (call.task.core_num) in.attrs["block_num_reg"] = std::vector<int64_t>{reg_of(call.task.core_num)};
    if (call.task.sync_start) in.attrs["sync_start"] = true;
    // no_dep_args=[t] / dumps=[t]: the argument positions of those tensors ("no_dep_args" is
    // read by the runtime's dependency tracking; "dump_args" is kept for a dump hook).
    auto arg_positions = [&](const std::vector<ir::ExprPtr>& xs, const char* what) {
      std::vector<int64_t> pos;
      for (const ir::ExprPtr& x : xs) {
        bool found = false;
        for (size_t i = 0; i < call.args.size(); ++i)
          if (call.args[i].get() == x.get() && k.params[i].is_tensor) {
            pos.push_back(static_cast<int64_t>(i));
            found = true;
          }
        if (!found)
          fail(ErrorKind::kValue, call.span,
               std::string(what) + " names '" + ir::print_expr(x) + "', which is not a tensor argument of kernel '" + k.name + "'",
               std::string("list only tensors the launch reads or writes in ") + what);
      }
      return pos;
    };
    if (!call.task.no_dep_args.empty()) in.attrs["no_dep_args"] = arg_positions(call.task.no_dep_args, "no_dep_args=");
    if (!call.task.dumps.empty()) in.attrs["dump_args"] = arg_positions(call.task.dumps, "dumps=");
    // predicate=(t[idx] OP v): [tensor slot, BinaryOp, register of v, registers of idx...],
    // evaluated when the task is dispatched.
    if (call.task.predicate) {
      auto* cmp = call.task.predicate->as<ir::BinaryExpr>();
      auto* rd = cmp ? cmp->a->as<ir::Call>() : nullptr;
      if (!rd || rd->op->name != "tensor.read" || rd->args.size() != 2 || !rd->args[1]->as<ir::ListExpr>())
        fail(ErrorKind::kValue, call.span, "predicate= must compare one tensor element with a value",
             "write predicate=(t[i] > 0)");
      std::vector<int64_t> pred = {kb.tensor(rd->args[0]), static_cast<int64_t>(cmp->op), reg_of(cmp->b)};
      for (const ir::ExprPtr& e : rd->args[1]->as<ir::ListExpr>()->elems) pred.push_back(reg_of(e));
      in.attrs["predicate"] = pred;
      in.attrs["predicate_text"] = ir::print_expr(call.task.predicate);
    }
    // A launch that binds a task id records its launch number where task.latest reads it.
    if (call.task.task_id >= 0) in.attrs["launch_reg"] = std::vector<int64_t>{kb.task_reg(call.task.task_id)};
    if (call.task.block_num > 0) in.attrs["block_num"] = std::vector<int64_t>{call.task.block_num};
    if (call.task.manual) in.attrs["manual"] = true;
    mark_slots(in, call, kb.dump_slots, "dump_args");
    mark_slots(in, call, kb.manual_dep_slots, "no_dep_args");
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

isa::HostProgram lower_program(const ir::Program& program, const std::string& entry,
                               const passes::KernelPassHook& after_kernel_pass) {
  ir::FunctionPtr fn = program.find(entry);
  if (!fn) fail(ErrorKind::kValue, {}, "the program has no function '" + entry + "'", "name its orchestration function");
  isa::HostProgram host;
  host.name = fn->name;
  ops::KernelBuilder kb(host.code, host.num_regs, host.reg_is_float, nullptr, &host.tensors);
  kb.host_arrays = &host.arrays;
  kb.set_span(fn->span);
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const ir::VarPtr& p = fn->params[i];
    isa::ParamDesc d;
    d.name = p->name;
    d.dir = fn->directions[i];
    if (auto* t = p->type->as<ir::TensorType>()) {
      d.dtype = t->dtype;
      for (auto& e : t->shape) d.shape.push_back(ir::as_const_int(e).value_or(-1));
      d.stride = t->stride;
      d.dn = t->dn;
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

  ProgramLowering pl{program, host, kb, {}, {}, {}, &after_kernel_pass};
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

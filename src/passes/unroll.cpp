// Unroll: a `for i in pl.unroll(n)` loop with compile-time bounds becomes n copies of its
// body, the loop variable replaced by each constant and the loop-carried values threaded
// from one copy's yield to the next copy's uses.
#include "pypto/passes/pass.h"
#include "pypto/ir/visitor.h"
#include "body_copy.h"

namespace pypto::passes {
namespace {
using namespace ir;

constexpr int64_t kMaxUnrolledIterations = 1024;

class Unroller : public SplicingMutator {
 protected:
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s0) override {
    auto r = IRMutator::mutate_for(s0);  // inner loops first
    auto* s = r->as<ForStmt>();
    if (!s || s->for_kind != ForKind::Unroll) return r;
    auto start = as_const_int(s->start), stop = as_const_int(s->stop), step = as_const_int(s->step);
    if (!start || !stop || !step)
      fail(ErrorKind::kValue, s->span, "pl.unroll needs bounds known at compile time",
           "use constants (or closure ints) for start, stop and step, or use pl.range for a run-time bound");
    if (*step == 0) fail(ErrorKind::kValue, s->span, "pl.unroll step is 0", "use a non-zero step");
    int64_t count = *step > 0 ? std::max<int64_t>(0, (*stop - *start + *step - 1) / *step)
                              : std::max<int64_t>(0, (*start - *stop - *step - 1) / -*step);
    if (count > kMaxUnrolledIterations)
      fail(ErrorKind::kCapacity, s->span,
           "pl.unroll of " + std::to_string(count) + " iterations exceeds the limit of " +
               std::to_string(kMaxUnrolledIterations),
           "unroll a smaller inner loop and keep the outer one as pl.range");
    auto dtype = s->loop_var->type->as<ScalarType>() ? s->loop_var->type->as<ScalarType>()->dtype : DataType::INDEX;
    std::vector<ExprPtr> carried = s->init_values;
    std::vector<StmtPtr> out;
    for (int64_t k = 0; k < count; ++k) {
      BodyCopy copy;
      copy.values[s->loop_var.get()] = ConstInt::make(*start + k * *step, dtype, s->span);
      for (size_t j = 0; j < s->iter_args.size(); ++j) copy.values[s->iter_args[j].get()] = carried[j];
      std::vector<StmtPtr> body;
      splice(copy.mutate(s->body), body);
      if (!body.empty() && body.back()->as<YieldStmt>()) {
        carried = body.back()->as<YieldStmt>()->values;
        body.pop_back();
      }
      for (auto& b : body) out.push_back(b);
    }
    for (size_t j = 0; j < s->return_vars.size(); ++j) {
      if (carried[j]->as<Var>())
        replaced_[s->return_vars[j].get()] = std::static_pointer_cast<const Var>(carried[j]);
      else
        out.push_back(AssignStmt::make(s->return_vars[j], carried[j], s->span));
    }
    return SeqStmts::make(out, s->span);
  }
};

}  // namespace

ProgramPtr unroll(const ProgramPtr& program, const PassContext&) {
  std::vector<FunctionPtr> functions;
  bool changed = false;
  for (auto& f : program->functions) {
    functions.push_back(Unroller().mutate_function(f));
    changed |= functions.back() != f;
  }
  return changed ? Program::make(program->name, functions) : program;
}

}  // namespace pypto::passes

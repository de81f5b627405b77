// The verifier run between passes: structural invariants every pass must keep. A failure is
// a compiler bug and names the pass after which the invariant broke.
#include <unordered_set>

#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;

class DefBeforeUse : public IRVisitor {
 public:
  DefBeforeUse(const Program& program, const Function& fn, const std::string& pass)
      : program_(program), fn_(fn), pass_(pass) {}

 protected:
  void visit_def(const VarPtr& v) override { defined_.insert(v.get()); }
  void visit_var(const VarPtr& v) override {
    if (!defined_.count(v.get())) broken("'" + v->name + "' is used before it is defined");
  }
  void visit_func_call(const FuncCall& c) override {
    FunctionPtr callee = program_.find(c.callee);
    if (!callee) broken("call of unknown function '" + c.callee + "'");
    if (callee->params.size() != c.args.size())
      broken("call of '" + c.callee + "' passes " + std::to_string(c.args.size()) + " arguments for " +
             std::to_string(callee->params.size()) + " parameters");
    IRVisitor::visit_func_call(c);
  }
  void visit_scope(const ScopeStmt& s) override {
    if (outlined_) broken("a pl.at scope is left after OutlineIncore");
    for (auto& b : s.block_vars) defined_.insert(b.get());  // filled per block by the runtime
    IRVisitor::visit_scope(s);
  }

 public:
  bool outlined_ = false;

 private:
  [[noreturn]] void broken(const std::string& what) {
    throw PyptoError(ErrorKind::kInternal, fn_.span,
                     "internal compiler error: after " + pass_ + ", function '" + fn_.name + "': " + what +
                         "; please report it with the program");
  }
  const Program& program_;
  const Function& fn_;
  const std::string& pass_;
  std::unordered_set<const Var*> defined_;
};

}  // namespace

void verify_program(const ir::ProgramPtr& program, const std::string& after_pass) {
  // OutlineIncore runs first, so only the freshly parsed program may still hold scopes.
  bool outlined = after_pass != "parsing";
  for (auto& f : program->functions) {
    DefBeforeUse check(*program, *f, after_pass);
    check.outlined_ = outlined;
    check.visit_function(*f);
  }
}

}  // namespace pypto::passes

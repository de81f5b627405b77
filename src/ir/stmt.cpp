// Construction of statements, functions and programs, with their structural invariants.
#include "pypto/ir/stmt.h"

namespace pypto::ir {

const char* stmt_kind_name(StmtKind k) {
  static const char* names[] = {
#define PYPTO_X(Kind, Class, hook) #Kind,
      PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
  };
  return names[static_cast<int>(k)];
}

const char* for_kind_name(ForKind k) {
  static const char* names[] = {"range", "parallel", "unroll", "pipeline"};
  return names[static_cast<int>(k)];
}

StmtPtr ForStmt::make(VarPtr lv, ExprPtr b, ExprPtr e, ExprPtr st, std::vector<VarPtr> ia, std::vector<ExprPtr> iv,
                      StmtPtr bd, std::vector<VarPtr> rv, ForKind fk, int64_t stg, Span s, Attrs attrs) {
  PYPTO_CHECK(ia.size() == iv.size(), "for: iter_args and init_values differ in number");
  PYPTO_CHECK(ia.size() == rv.size(), "for: iter_args and return_vars differ in number");
  PYPTO_CHECK(lv && b && e && st && bd, "for: missing loop variable, bounds or body");
  return std::make_shared<ForStmt>(Key{}, std::move(lv), std::move(b), std::move(e), std::move(st), std::move(ia), std::move(iv),
                                   std::move(bd), std::move(rv), fk, stg, std::move(s), std::move(attrs));
}

StmtPtr WhileStmt::make(std::vector<VarPtr> ia, std::vector<ExprPtr> iv, ExprPtr c, StmtPtr bd, std::vector<VarPtr> rv,
                        Span s) {
  PYPTO_CHECK(ia.size() == iv.size(), "while: iter_args and init_values differ in number");
  PYPTO_CHECK(ia.size() == rv.size(), "while: iter_args and return_vars differ in number");
  PYPTO_CHECK(c && bd, "while: missing condition or body");
  auto* ct = c->type ? c->type->as<ScalarType>() : nullptr;
  if (!ct)
    fail(ErrorKind::kType, c->span.line ? c->span : s, "the condition of a while loop must be a scalar",
         "compare scalars, e.g. `while i < n:`");
  return std::make_shared<WhileStmt>(Key{}, std::move(ia), std::move(iv), std::move(c), std::move(bd), std::move(rv),
                                     std::move(s));
}

StmtPtr IfStmt::make(ExprPtr c, StmtPtr t, StmtPtr e, std::vector<VarPtr> rv, Span s) {
  PYPTO_CHECK(c && t, "if: missing condition or then-body");
  PYPTO_CHECK(rv.empty() || e, "if: an if that yields values needs an else arm");
  return std::make_shared<IfStmt>(Key{}, std::move(c), std::move(t), std::move(e), std::move(rv), std::move(s));
}

std::shared_ptr<const Function> Function::make(std::string name, std::vector<VarPtr> params, std::vector<ParamDirection> dirs,
                                               std::vector<TypePtr> rets, StmtPtr body, FunctionType ft, Span s,
                                               std::optional<Level> level, std::optional<Role> role, Attrs attrs) {
  PYPTO_CHECK(params.size() == dirs.size(), "function: params and directions differ in number");
  auto f = std::make_shared<Function>();
  f->name = std::move(name);
  f->params = std::move(params);
  f->directions = std::move(dirs);
  f->return_types = std::move(rets);
  f->body = std::move(body);
  f->func_type = ft;
  f->span = std::move(s);
  f->level = level;
  f->role = role;
  f->attrs = std::move(attrs);
  return f;
}

FunctionPtr Program::find(const std::string& fname) const {
  for (auto& f : functions)
    if (f->name == fname) return f;
  return nullptr;
}

std::shared_ptr<const Program> Program::make(std::string name, std::vector<FunctionPtr> fns) {
  auto p = std::make_shared<Program>();
  p->name = std::move(name);
  p->functions = std::move(fns);
  return p;
}

}  // namespace pypto::ir

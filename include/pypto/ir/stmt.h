// Statements, functions and programs.
#pragma once
#include "pypto/ir/expr.h"

namespace pypto::ir {

// The kinds of statement nodes, from the node list (nodes.def).
enum class StmtKind : uint8_t {
#define PYPTO_X(Kind, Class, hook) Kind,
  PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
};
const char* stmt_kind_name(StmtKind k);  // "Assign", "For", ...

// Statements are immutable like expressions: const fields, set by make().
struct Stmt {
  const StmtKind kind;
  const Span span;
  Stmt(StmtKind k, Span s) : kind(k), span(std::move(s)) {}
  virtual ~Stmt() = default;
  template <typename T>
  const T* as() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
 protected:
  // Only a node's make() builds it: every node constructor takes this key.
  struct Key {
    explicit Key() = default;
  };
};
using StmtPtr = std::shared_ptr<const Stmt>;

// `var = value`: defines a new SSA value.
struct AssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assign;
  const VarPtr var;
  const ExprPtr value;
  AssignStmt(Key, VarPtr v, ExprPtr e, Span s) : Stmt(kKind, std::move(s)), var(std::move(v)), value(std::move(e)) {}
  static StmtPtr make(VarPtr v, ExprPtr e, Span s = {}) { return std::make_shared<AssignStmt>(Key{}, std::move(v), std::move(e), std::move(s)); }
};

// An expression evaluated for its effect (a store whose result is unused, a kernel call).
struct EvalStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Eval;
  const ExprPtr expr;
  EvalStmt(Key, ExprPtr e, Span s) : Stmt(kKind, std::move(s)), expr(std::move(e)) {}
  static StmtPtr make(ExprPtr e, Span s = {}) { return std::make_shared<EvalStmt>(Key{}, std::move(e), std::move(s)); }
};

enum class ForKind : uint8_t { Range, Parallel, Unroll, Pipeline };
const char* for_kind_name(ForKind k);  // "range", "parallel", ...

// `for loop_var, (iter_args...) in pl.range(start, stop, step, init_values=(init...))`.
// The body ends with a YieldStmt giving the next values of iter_args; after the loop,
// return_vars hold the final values.
struct ForStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::For;
  const VarPtr loop_var;
  const ExprPtr start, stop, step;
  const std::vector<VarPtr> iter_args;
  const std::vector<ExprPtr> init_values;
  const StmtPtr body;
  const std::vector<VarPtr> return_vars;
  const ForKind for_kind = ForKind::Range;
  const int64_t stages = 0;  // pl.pipeline(n, stage=k)
  const Attrs attrs;         // pl.range(..., attrs={...}): hints kept from the parser (passes drop them)
  ForStmt(Key, VarPtr lv, ExprPtr b, ExprPtr e, ExprPtr st, std::vector<VarPtr> ia, std::vector<ExprPtr> iv, StmtPtr bd,
          std::vector<VarPtr> rv, ForKind fk, int64_t stg, Span s, Attrs at = {})
      : Stmt(kKind, std::move(s)), loop_var(std::move(lv)), start(std::move(b)), stop(std::move(e)), step(std::move(st)),
        iter_args(std::move(ia)), init_values(std::move(iv)), body(std::move(bd)), return_vars(std::move(rv)),
        for_kind(fk), stages(stg), attrs(std::move(at)) {}
  static StmtPtr make(VarPtr lv, ExprPtr b, ExprPtr e, ExprPtr st, std::vector<VarPtr> ia, std::vector<ExprPtr> iv,
                      StmtPtr bd, std::vector<VarPtr> rv, ForKind fk = ForKind::Range, int64_t stg = 0, Span s = {},
                      Attrs attrs = {});
};

// `for (iter_args...) in pl.while_(init_values=(init...)): pl.cond(cond)` (like scf.while):
// before every iteration `cond`, over the current iter_args, decides whether the body runs;
// the body ends with a YieldStmt giving the next values of iter_args, and after the loop
// return_vars hold the values for which `cond` was false.
struct WhileStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::While;
  const std::vector<VarPtr> iter_args;
  const std::vector<ExprPtr> init_values;
  const ExprPtr cond;
  const StmtPtr body;
  const std::vector<VarPtr> return_vars;
  WhileStmt(Key, std::vector<VarPtr> ia, std::vector<ExprPtr> iv, ExprPtr c, StmtPtr bd, std::vector<VarPtr> rv, Span s)
      : Stmt(kKind, std::move(s)), iter_args(std::move(ia)), init_values(std::move(iv)), cond(std::move(c)),
        body(std::move(bd)), return_vars(std::move(rv)) {}
  static StmtPtr make(std::vector<VarPtr> ia, std::vector<ExprPtr> iv, ExprPtr c, StmtPtr bd, std::vector<VarPtr> rv,
                      Span s = {});
};

// Structured branch; when return_vars is non-empty both arms end with a YieldStmt.
struct IfStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::If;
  const ExprPtr cond;
  const StmtPtr then_body;
  const StmtPtr else_body;  // may be null
  const std::vector<VarPtr> return_vars;
  IfStmt(Key, ExprPtr c, StmtPtr t, StmtPtr e, std::vector<VarPtr> rv, Span s)
      : Stmt(kKind, std::move(s)), cond(std::move(c)), then_body(std::move(t)), else_body(std::move(e)), return_vars(std::move(rv)) {}
  static StmtPtr make(ExprPtr c, StmtPtr t, StmtPtr e, std::vector<VarPtr> rv = {}, Span s = {});
};

struct YieldStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Yield;
  const std::vector<ExprPtr> values;
  YieldStmt(Key, std::vector<ExprPtr> v, Span s) : Stmt(kKind, std::move(s)), values(std::move(v)) {}
  static StmtPtr make(std::vector<ExprPtr> v, Span s = {}) { return std::make_shared<YieldStmt>(Key{}, std::move(v), std::move(s)); }
};

struct ReturnStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Return;
  const std::vector<ExprPtr> values;
  ReturnStmt(Key, std::vector<ExprPtr> v, Span s) : Stmt(kKind, std::move(s)), values(std::move(v)) {}
  static StmtPtr make(std::vector<ExprPtr> v, Span s = {}) { return std::make_shared<ReturnStmt>(Key{}, std::move(v), std::move(s)); }
};

struct SeqStmts : Stmt {
  static constexpr StmtKind kKind = StmtKind::Seq;
  const std::vector<StmtPtr> stmts;
  SeqStmts(Key, std::vector<StmtPtr> v, Span s) : Stmt(kKind, std::move(s)), stmts(std::move(v)) {}
  static StmtPtr make(std::vector<StmtPtr> v, Span s = {}) { return std::make_shared<SeqStmts>(Key{}, std::move(v), std::move(s)); }
};

// `with pl.at(level=...):` — a region that OutlineIncore turns into an InCore function.
struct ScopeStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Scope;
  const Level level;
  const StmtPtr body;
  const TaskInfo task;                   // `as tid`, deps=[...], pl.spmd(n)
  const std::vector<VarPtr> block_vars;  // the __block_idx / __block_num Vars the body reads (pl.spmd)
  ScopeStmt(Key, Level l, StmtPtr b, Span s, TaskInfo t = {}, std::vector<VarPtr> bv = {})
      : Stmt(kKind, std::move(s)), level(l), body(std::move(b)), task(std::move(t)), block_vars(std::move(bv)) {}
  static StmtPtr make(Level l, StmtPtr b, Span s = {}, TaskInfo t = {}, std::vector<VarPtr> bv = {}) {
    return std::make_shared<ScopeStmt>(Key{}, l, std::move(b), std::move(s), std::move(t), std::move(bv));
  }
};

struct Function {
  std::string name;
  std::vector<VarPtr> params;
  std::vector<ParamDirection> directions;
  std::vector<TypePtr> return_types;
  StmtPtr body;
  FunctionType func_type = FunctionType::Opaque;
  Span span;
  // Hints of `@pl.function(level=, role=)` and `pl.func_attr({...})`: kept, printed, compared.
  std::optional<Level> level;
  std::optional<Role> role;
  Attrs attrs;
  static std::shared_ptr<const Function> make(std::string name, std::vector<VarPtr> params, std::vector<ParamDirection> dirs,
                                              std::vector<TypePtr> rets, StmtPtr body, FunctionType ft, Span s = {},
                                              std::optional<Level> level = {}, std::optional<Role> role = {},
                                              Attrs attrs = {});
};
using FunctionPtr = std::shared_ptr<const Function>;

struct Program {
  std::string name;
  std::vector<FunctionPtr> functions;
  // The function called `name`, or null.
  FunctionPtr find(const std::string& fname) const;
  static std::shared_ptr<const Program> make(std::string name, std::vector<FunctionPtr> fns);
};
using ProgramPtr = std::shared_ptr<const Program>;

}  // namespace pypto::ir

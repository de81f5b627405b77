// Expressions: variables, constants, scalar arithmetic, op calls and function calls.
// Nodes are immutable and shared; a Var's identity is its address.
#pragma once
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "pypto/base/attrs.h"
#include "pypto/base/error.h"
#include "pypto/ir/type.h"

namespace pypto::ir {

// The scalar operators and attribute values are base's (pypto/base/attrs.h): the ISA's scalar
// instructions share them.
using pypto::AttrValue;
using pypto::Attrs;
using pypto::BinaryOp;

struct OpDef;

#include "pypto/ir/nodes.def"

// The kinds of expression nodes, from the node list (nodes.def).
enum class ExprKind : uint8_t {
#define PYPTO_X(Kind, Class, hook) Kind,
  PYPTO_EXPR_NODES(PYPTO_X)
#undef PYPTO_X
};
const char* expr_kind_name(ExprKind k);  // "Var", "Call", ...

// Nodes are immutable: every field is const, set once by the node's make() (which checks it).
struct Expr {
  const ExprKind kind;
  const TypePtr type;
  const Span span;
  Expr(ExprKind k, TypePtr t, Span s) : kind(k), type(std::move(t)), span(std::move(s)) {}
  virtual ~Expr() = default;
  template <typename T>
  const T* as() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
 protected:
  // Only a node's make() builds it: every node constructor takes this key.
  struct Key {
    explicit Key() = default;
  };
};

struct Var : Expr {
  static constexpr ExprKind kKind = ExprKind::Var;
  const std::string name;
  Var(Key, std::string n, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), name(std::move(n)) {}
  static std::shared_ptr<const Var> make(std::string n, TypePtr t, Span s = {}) {
    return std::make_shared<Var>(Key{}, std::move(n), std::move(t), std::move(s));
  }
};
using VarPtr = std::shared_ptr<const Var>;

struct ConstInt : Expr {
  static constexpr ExprKind kKind = ExprKind::ConstInt;
  const int64_t value;
  ConstInt(Key, int64_t v, DataType d, Span s) : Expr(kKind, ScalarType::make(d), std::move(s)), value(v) {}
  static ExprPtr make(int64_t v, DataType d = DataType::INDEX, Span s = {}) {
    return std::make_shared<ConstInt>(Key{}, v, d, std::move(s));
  }
};

struct ConstFloat : Expr {
  static constexpr ExprKind kKind = ExprKind::ConstFloat;
  const double value;
  ConstFloat(Key, double v, DataType d, Span s) : Expr(kKind, ScalarType::make(d), std::move(s)), value(v) {}
  static ExprPtr make(double v, DataType d = DataType::FP32, Span s = {}) {
    return std::make_shared<ConstFloat>(Key{}, v, d, std::move(s));
  }
};

struct ConstBool : Expr {
  static constexpr ExprKind kKind = ExprKind::ConstBool;
  const bool value;
  ConstBool(Key, bool v, Span s) : Expr(kKind, ScalarType::make(DataType::BOOL), std::move(s)), value(v) {}
  static ExprPtr make(bool v, Span s = {}) { return std::make_shared<ConstBool>(Key{}, v, std::move(s)); }
};

// The Python spelling of a binary operator ("+", "//", "min", ...).
const char* binary_op_symbol(BinaryOp op);

// Scalar arithmetic and comparison on scalar operands.
struct BinaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Binary;
  const BinaryOp op;
  const ExprPtr a, b;
  BinaryExpr(Key, BinaryOp o, ExprPtr x, ExprPtr y, TypePtr t, Span s)
      : Expr(kKind, std::move(t), std::move(s)), op(o), a(std::move(x)), b(std::move(y)) {}
  // Infers the result type (comparisons give BOOL, mixed int/float gives the float dtype) and
  // rejects non-scalar operands with a user error at `s`.
  static ExprPtr make(BinaryOp o, ExprPtr x, ExprPtr y, Span s = {});
};

enum class UnaryOp : uint8_t { Neg, Not };

struct UnaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Unary;
  const UnaryOp op;
  const ExprPtr a;
  UnaryExpr(Key, UnaryOp o, ExprPtr x, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), op(o), a(std::move(x)) {}
  static ExprPtr make(UnaryOp o, ExprPtr x, Span s = {});
};

// Scalar pl.cast(x, dtype): the value of a scalar converted to another scalar dtype (the
// rule: pypto/base/scalar_cast.h). The result type is Scalar[dtype].
struct CastExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Cast;
  const ExprPtr a;
  CastExpr(Key, ExprPtr x, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), a(std::move(x)) {}
  // Checks the operand (a scalar, not a task id), the target dtype (one the scalar unit
  // computes on) and the mode (only "round": another of tile pl.cast's modes is a type
  // error, an unknown name a value error); a constant operand folds to a constant.
  static ExprPtr make(ExprPtr x, DataType to, const std::string& mode = "round", Span s = {});
};

// A call of a registered op. Built by `Call::make` (or `make_op_call`, ops/op_registry.h, which
// binds Python-style positional and keyword arguments first): the type comes from the op's
// type rule, so a call rebuilt with other arguments gets the type they give.
struct Call : Expr {
  static constexpr ExprKind kKind = ExprKind::Call;
  const OpDef* const op;
  const std::vector<ExprPtr> args;  // aligned with the op's kExpr/kExprList params (absent optional ones: null)
  const Attrs attrs;                // every kAttr param, defaults filled in
  Call(Key, const OpDef* o, std::vector<ExprPtr> a, Attrs at, TypePtr t, Span s)
      : Expr(kKind, std::move(t), std::move(s)), op(o), args(std::move(a)), attrs(std::move(at)) {}
  // Checks the arguments' types and infers the result type with the op's type rule; user
  // errors at `s`. (src/ops/op_registry.cpp)
  static ExprPtr make(const OpDef* o, std::vector<ExprPtr> a, Attrs at, Span s = {});
  // The same, for a call whose type a pass has refined (a memory, an address, a valid
  // shape): `t` must agree with the inferred type in kind, dtype and rank (for tuples, element
  // by element); a type that does not is a compiler bug (an internal error).
  static ExprPtr make(const OpDef* o, std::vector<ExprPtr> a, Attrs at, TypePtr t, Span s);
};

// A call of another function of the same program (a kernel call from the orchestration).
// Explicit task-graph information of a kernel launch: `with pl.at(...) as tid`,
// `deps=[tid, ...]` and `pl.spmd(n)`. Task ids are numbered per function by the parser.
struct TaskInfo {
  int64_t task_id = -1;       // -1: the launch binds no task id
  std::vector<int64_t> deps;  // task ids of earlier launches this one runs after
  int64_t block_num = 0;      // > 0: SPMD launch over block_num blocks
  bool manual = false;        // inside pl.manual_scope(): no automatic edges to other manual launches
  // Run-time edges: TASK_ID scalars (elements of a pl.array of TASK_ID) read when the launch
  // is submitted; a TASK_ID that names no task (an element never written) adds no edge.
  std::vector<ExprPtr> dyn_deps;
  // PyPTO's launch keywords (pl.at / pl.spmd / pl.submit); docs/language.md "Scopes and launches".
  ExprPtr core_num;                 // pl.spmd(n) with a run-time n (block_num is 0 then)
  bool sync_start = false;          // pl.spmd(..., sync_start=True)
  std::string name_hint;            // the outlined kernel's name (pl.at / pl.spmd name_hint=)
  int role = 0;                     // pl.at(level, role): 0 none, 1 Orchestrator, 2 Worker, 3 SubWorker
  int split = -1;                   // optimizations=[pl.split(mode)]: -1 none, 0 NONE, 1 UP_DOWN, 2 LEFT_RIGHT
  int64_t split_slot_num = 0;       // pl.split(mode, slot_num=N) (deprecated spelling of the slot depth)
  int64_t slot_num = 0;             // optimizations=[pl.cross_core_slot(slot_num=N)]
  std::vector<ExprPtr> no_dep_args; // tensors whose slot gets no dependency lookup / registration
  std::vector<ExprPtr> dumps;       // tensors marked for dumping (dumps=[t])
  bool allow_early_resolve = false;
  bool windowize = false;
  ExprPtr predicate;                // (pl.tensor.read(t, idx) OP value), evaluated at dispatch
  bool has_hints() const {
    return core_num || sync_start || !name_hint.empty() || role || split >= 0 || split_slot_num || slot_num ||
           !no_dep_args.empty() || !dumps.empty() || allow_early_resolve || windowize || predicate;
  }
  bool empty() const {
    return task_id < 0 && deps.empty() && dyn_deps.empty() && block_num == 0 && !manual && !has_hints();
  }
};

struct FuncCall : Expr {
  static constexpr ExprKind kKind = ExprKind::FuncCall;
  const std::string callee;
  const std::vector<ExprPtr> args;
  const TaskInfo task;  // set by OutlineIncore / the parser for kernel launches
  FuncCall(Key, std::string c, std::vector<ExprPtr> a, TypePtr t, Span s, TaskInfo ti = {})
      : Expr(kKind, std::move(t), std::move(s)), callee(std::move(c)), args(std::move(a)), task(std::move(ti)) {}
  static ExprPtr make(std::string c, std::vector<ExprPtr> a, TypePtr t, Span s = {}, TaskInfo ti = {}) {
    return std::make_shared<FuncCall>(Key{}, std::move(c), std::move(a), std::move(t), std::move(s), std::move(ti));
  }
};

// A list literal of scalar expressions: offsets, shapes, valid shapes.
struct ListExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::List;
  const std::vector<ExprPtr> elems;
  ListExpr(Key, std::vector<ExprPtr> e, Span s) : Expr(kKind, NoneType::make(), std::move(s)), elems(std::move(e)) {}
  static ExprPtr make(std::vector<ExprPtr> e, Span s = {}) { return std::make_shared<ListExpr>(Key{}, std::move(e), std::move(s)); }
};

struct TupleGetItem : Expr {
  static constexpr ExprKind kKind = ExprKind::TupleGet;
  const ExprPtr tuple;
  const int index;
  TupleGetItem(Key, ExprPtr t, int i, TypePtr ty, Span s) : Expr(kKind, std::move(ty), std::move(s)), tuple(std::move(t)), index(i) {}
  static ExprPtr make(ExprPtr t, int i, Span s = {});
};

// The constant value of `e` if it is an integer constant.
std::optional<int64_t> as_const_int(const ExprPtr& e);

}  // namespace pypto::ir

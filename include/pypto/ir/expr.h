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

struct OpDef;

enum class ExprKind : uint8_t { Var, ConstInt, ConstFloat, ConstBool, Binary, Unary, Call, FuncCall, List, TupleGet, Cast };

struct Expr {
  ExprKind kind;
  TypePtr type;
  Span span;
  Expr(ExprKind k, TypePtr t, Span s) : kind(k), type(std::move(t)), span(std::move(s)) {}
  virtual ~Expr() = default;
  template <typename T>
  const T* as() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
};

struct Var : Expr {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;
  Var(std::string n, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), name(std::move(n)) {}
  static std::shared_ptr<const Var> make(std::string n, TypePtr t, Span s = {}) {
    return std::make_shared<Var>(std::move(n), std::move(t), std::move(s));
  }
};
using VarPtr = std::shared_ptr<const Var>;

struct ConstInt : Expr {
  static constexpr ExprKind kKind = ExprKind::ConstInt;
  int64_t value;
  ConstInt(int64_t v, DataType d, Span s) : Expr(kKind, ScalarType::make(d), std::move(s)), value(v) {}
  static ExprPtr make(int64_t v, DataType d = DataType::INDEX, Span s = {}) {
    return std::make_shared<ConstInt>(v, d, std::move(s));
  }
};

struct ConstFloat : Expr {
  static constexpr ExprKind kKind = ExprKind::ConstFloat;
  double value;
  ConstFloat(double v, DataType d, Span s) : Expr(kKind, ScalarType::make(d), std::move(s)), value(v) {}
  static ExprPtr make(double v, DataType d = DataType::FP32, Span s = {}) {
    return std::make_shared<ConstFloat>(v, d, std::move(s));
  }
};

struct ConstBool : Expr {
  static constexpr ExprKind kKind = ExprKind::ConstBool;
  bool value;
  ConstBool(bool v, Span s) : Expr(kKind, ScalarType::make(DataType::BOOL), std::move(s)), value(v) {}
  static ExprPtr make(bool v, Span s = {}) { return std::make_shared<ConstBool>(v, std::move(s)); }
};

// The Python spelling of a binary operator ("+", "//", "min", ...).
const char* binary_op_symbol(BinaryOp op);

// Scalar arithmetic and comparison on scalar operands.
struct BinaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryOp op;
  ExprPtr a, b;
  BinaryExpr(BinaryOp o, ExprPtr x, ExprPtr y, TypePtr t, Span s)
      : Expr(kKind, std::move(t), std::move(s)), op(o), a(std::move(x)), b(std::move(y)) {}
  // Infers the result type (comparisons give BOOL, mixed int/float gives the float dtype) and
  // rejects non-scalar operands with a user error at `s`.
  static ExprPtr make(BinaryOp o, ExprPtr x, ExprPtr y, Span s = {});
};

enum class UnaryOp : uint8_t { Neg, Not };

struct UnaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryOp op;
  ExprPtr a;
  UnaryExpr(UnaryOp o, ExprPtr x, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), op(o), a(std::move(x)) {}
  static ExprPtr make(UnaryOp o, ExprPtr x, Span s = {});
};

// Scalar pl.cast(x, dtype): the value of a scalar converted to another scalar dtype (the
// rule: pypto/isa/scalar_cast.h). The result type is Scalar[dtype].
struct CastExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Cast;
  ExprPtr a;
  CastExpr(ExprPtr x, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), a(std::move(x)) {}
  // Checks the operand (a scalar, not a task id), the target dtype (one the scalar unit
  // computes on) and the mode (only "round": another of tile pl.cast's modes is a type
  // error, an unknown name a value error); a constant operand folds to a constant.
  static ExprPtr make(ExprPtr x, DataType to, const std::string& mode = "round", Span s = {});
};

// A call of a registered op. Built through `make_op_call` (op_registry.h), which checks the
// arguments and infers the type from the op's definition.
struct Call : Expr {
  static constexpr ExprKind kKind = ExprKind::Call;
  const OpDef* op;
  std::vector<ExprPtr> args;
  Attrs attrs;
  Call(const OpDef* o, std::vector<ExprPtr> a, Attrs at, TypePtr t, Span s)
      : Expr(kKind, std::move(t), std::move(s)), op(o), args(std::move(a)), attrs(std::move(at)) {}
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
  std::string callee;
  std::vector<ExprPtr> args;
  TaskInfo task;  // set by OutlineIncore / the parser for kernel launches
  FuncCall(std::string c, std::vector<ExprPtr> a, TypePtr t, Span s)
      : Expr(kKind, std::move(t), std::move(s)), callee(std::move(c)), args(std::move(a)) {}
  static ExprPtr make(std::string c, std::vector<ExprPtr> a, TypePtr t, Span s = {}) {
    return std::make_shared<FuncCall>(std::move(c), std::move(a), std::move(t), std::move(s));
  }
};

// A list literal of scalar expressions: offsets, shapes, valid shapes.
struct ListExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::List;
  std::vector<ExprPtr> elems;
  ListExpr(std::vector<ExprPtr> e, Span s) : Expr(kKind, NoneType::make(), std::move(s)), elems(std::move(e)) {}
  static ExprPtr make(std::vector<ExprPtr> e, Span s = {}) { return std::make_shared<ListExpr>(std::move(e), std::move(s)); }
};

struct TupleGetItem : Expr {
  static constexpr ExprKind kKind = ExprKind::TupleGet;
  ExprPtr tuple;
  int index;
  TupleGetItem(ExprPtr t, int i, TypePtr ty, Span s) : Expr(kKind, std::move(ty), std::move(s)), tuple(std::move(t)), index(i) {}
  static ExprPtr make(ExprPtr t, int i, Span s = {});
};

// The constant value of `e` if it is an integer constant.
std::optional<int64_t> as_const_int(const ExprPtr& e);

}  // namespace pypto::ir

// Construction of expressions: type rules of scalar arithmetic.
#include "pypto/ir/expr.h"

#include "pypto/base/scalar_cast.h"
#include "pypto/ir/op_def.h"
#include "pypto/ir/printer.h"

namespace pypto::ir {

std::optional<DataType> element_dtype(const TypePtr& t) {
  if (auto* s = t->as<ScalarType>()) return s->dtype;
  if (auto* s = t->as<TensorType>()) return s->dtype;
  if (auto* s = t->as<TileType>()) return s->dtype;
  if (auto* s = t->as<ArrayType>()) return s->dtype;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> static_shape(const std::vector<ExprPtr>& shape) {
  std::vector<int64_t> out;
  for (auto& e : shape) {
    auto v = as_const_int(e);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<int64_t> as_const_int(const ExprPtr& e) {
  if (!e) return std::nullopt;
  if (auto* c = e->as<ConstInt>()) return c->value;
  return std::nullopt;
}

const char* expr_kind_name(ExprKind k) {
  static const char* names[] = {
#define PYPTO_X(Kind, Class, hook) #Kind,
      PYPTO_EXPR_NODES(PYPTO_X)
#undef PYPTO_X
  };
  return names[static_cast<int>(k)];
}

const char* binary_op_symbol(BinaryOp op) {
  static const char* names[] = {"+", "-", "*", "/", "//", "%", "min", "max", "==", "!=", "<", "<=", ">", ">=", "and", "or"};
  return names[static_cast<int>(op)];
}

static DataType scalar_dtype_of(const ExprPtr& e, BinaryOp op, const Span& s) {
  auto* st = e->type->as<ScalarType>();
  if (!st)
    fail(ErrorKind::kType, s, std::string("operator '") + binary_op_symbol(op) + "' takes scalars, got a non-scalar operand",
         "use the tile op (pl.add, pl.mul, ...) for tiles and tensors");
  return st->dtype;
}

ExprPtr BinaryExpr::make(BinaryOp o, ExprPtr x, ExprPtr y, Span s) {
  DataType da = scalar_dtype_of(x, o, s), db = scalar_dtype_of(y, o, s);
  if (da == DataType::TASK_ID || db == DataType::TASK_ID)
    fail(ErrorKind::kType, s, std::string("operator '") + binary_op_symbol(o) + "' on a task id: task ids are handles, not numbers",
         "store task ids in a pl.array of pl.TASK_ID and pass them in deps=[...]");
  DataType result;
  if (o >= BinaryOp::Eq && o <= BinaryOp::Or) {
    result = DataType::BOOL;
  } else if (o == BinaryOp::Div || dtype_is_float(da) || dtype_is_float(db)) {
    result = dtype_is_float(da) ? da : (dtype_is_float(db) ? db : DataType::FP32);
  } else {
    result = (da == DataType::BOOL) ? db : da;
  }
  return std::make_shared<BinaryExpr>(Key{}, o, std::move(x), std::move(y), ScalarType::make(result), std::move(s));
}

ExprPtr UnaryExpr::make(UnaryOp o, ExprPtr x, Span s) {
  auto* st = x->type->as<ScalarType>();
  if (!st) fail(ErrorKind::kType, s, "unary operator takes a scalar operand", "use pl.neg for tiles");
  if (st->dtype == DataType::TASK_ID)
    fail(ErrorKind::kType, s, "unary operator on a task id: task ids are handles, not numbers",
         "store task ids in a pl.array of pl.TASK_ID and pass them in deps=[...]");
  TypePtr t = o == UnaryOp::Not ? ScalarType::make(DataType::BOOL) : x->type;
  return std::make_shared<UnaryExpr>(Key{}, o, std::move(x), std::move(t), std::move(s));
}

ExprPtr TupleGetItem::make(ExprPtr t, int i, Span s) {
  auto* tt = t->type->as<TupleType>();
  if (!tt) fail(ErrorKind::kType, s, "indexing a value that is not a tuple");
  if (i < 0 || i >= static_cast<int>(tt->elems.size()))
    fail(ErrorKind::kValue, s, "tuple index " + std::to_string(i) + " out of range for " + std::to_string(tt->elems.size()) + " values");
  TypePtr et = tt->elems[i];
  return std::make_shared<TupleGetItem>(Key{}, std::move(t), i, std::move(et), std::move(s));
}

}  // namespace pypto::ir

namespace pypto::ir {

ExprPtr CastExpr::make(ExprPtr x, DataType to, const std::string& mode, Span s) {
  static const char* modes[] = {"none", "rint", "round", "floor", "ceil", "trunc", "odd"};
  if (mode != "round") {
    bool known = false;
    for (const char* m : modes) known = known || mode == m;
    if (known)
      fail(ErrorKind::kType, s,
           "TypeError: pl.cast of a scalar takes only mode='round' (its default), got mode='" + mode +
               "'; the other modes exist for tiles and tensors",
           "drop mode= (a scalar cast truncates toward zero), or cast a tile to use that mode");
    fail(ErrorKind::kValue, s,
         "ValueError: pl.cast: unknown cast mode '" + mode + "' (the modes are none, rint, round, floor, ceil, trunc, odd)",
         "drop mode= on a scalar cast");
  }
  auto* st = x->type->as<ScalarType>();
  if (!st) fail(ErrorKind::kType, s, "pl.cast of a scalar: the operand is not a scalar", "pass a tile, a tensor or a scalar");
  if (st->dtype == DataType::TASK_ID || to == DataType::TASK_ID)
    fail(ErrorKind::kType, s, "pl.cast of a task id: task ids are handles, not numbers",
         "store task ids in a pl.array of pl.TASK_ID and pass them in deps=[...]");
  if (scalar_cast_target(st->dtype) < 0 || scalar_cast_target(to) < 0)
    fail(ErrorKind::kType, s,
         std::string("pl.cast of a scalar from ") + dtype_name(st->dtype) + " to " + dtype_name(to) +
             ": the scalar unit computes on BOOL, the integer dtypes, INDEX, FP16, BF16 and FP32 only",
         "cast to one of those dtypes");
  const int target = scalar_cast_target(to);
  // A constant folds to the constant of the target dtype (the rule of the engines).
  if (auto* c = x->as<ConstFloat>()) {
    if (scalar_cast_to_float(target)) return ConstFloat::make(scalar_cast_float(c->value, target), to, s);
    int64_t v = scalar_cast_float_to_int(c->value, target);
    return to == DataType::BOOL ? ConstBool::make(v != 0, s) : ConstInt::make(v, to, s);
  }
  std::optional<int64_t> iv;
  if (auto* c = x->as<ConstInt>()) iv = c->value;
  if (auto* c = x->as<ConstBool>()) iv = c->value ? 1 : 0;
  if (iv) {
    if (scalar_cast_to_float(target))
      return ConstFloat::make(scalar_cast_float(static_cast<double>(*iv), target), to, s);
    int64_t v = scalar_cast_int(*iv, target);
    return to == DataType::BOOL ? ConstBool::make(v != 0, s) : ConstInt::make(v, to, s);
  }
  if (st->dtype == to) return x;  // nothing to convert
  return std::make_shared<CastExpr>(Key{}, std::move(x), ScalarType::make(to), std::move(s));
}

// Call::make lives with the node, not the registry: it needs only the op's definition
// (ir/op_def.h), whose type rule the ops layer fills in.
ExprPtr Call::make(const OpDef* o, std::vector<ExprPtr> a, Attrs at, Span s) {
  PYPTO_CHECK(o, "a call without an op");
  TypePtr t = o->infer_type(CallSite{*o, a, at, s});
  return std::make_shared<Call>(Key{}, o, std::move(a), std::move(at), std::move(t), std::move(s));
}

namespace {
// A refined type agrees with the inferred one: same kind, dtype and rank (a pass may place a
// tile in another memory, give it an address or a smaller valid shape, never change what it is).
bool refines(const TypePtr& given, const TypePtr& inferred) {
  if (!given || !inferred) return given == inferred;
  if (given->kind != inferred->kind) return false;
  if (auto* g = given->as<ScalarType>()) return g->dtype == inferred->as<ScalarType>()->dtype;
  if (auto* g = given->as<TensorType>()) {
    auto* i = inferred->as<TensorType>();
    return g->dtype == i->dtype && g->shape.size() == i->shape.size();
  }
  if (auto* g = given->as<TileType>()) {
    auto* i = inferred->as<TileType>();
    return g->dtype == i->dtype && g->shape.size() == i->shape.size();
  }
  if (auto* g = given->as<TupleType>()) {
    auto* i = inferred->as<TupleType>();
    if (g->elems.size() != i->elems.size()) return false;
    for (size_t k = 0; k < g->elems.size(); ++k)
      if (!refines(g->elems[k], i->elems[k])) return false;
    return true;
  }
  if (auto* g = given->as<ArrayType>()) {
    auto* i = inferred->as<ArrayType>();
    return g->dtype == i->dtype && g->size == i->size;
  }
  return true;  // None
}
}  // namespace

ExprPtr Call::make(const OpDef* o, std::vector<ExprPtr> a, Attrs at, TypePtr t, Span s) {
  PYPTO_CHECK(o, "a call without an op");
  TypePtr inferred = o->infer_type(CallSite{*o, a, at, s});
  PYPTO_CHECK(refines(t, inferred), "pl." + o->name + ": the given result type " + print_type(t) +
                                        " does not agree with the inferred " + print_type(inferred));
  return std::make_shared<Call>(Key{}, o, std::move(a), std::move(at), std::move(t), std::move(s));
}

}  // namespace pypto::ir

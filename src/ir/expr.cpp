// Construction of expressions: type rules of scalar arithmetic.
#include "pypto/ir/expr.h"

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
  return std::make_shared<BinaryExpr>(o, std::move(x), std::move(y), ScalarType::make(result), std::move(s));
}

ExprPtr UnaryExpr::make(UnaryOp o, ExprPtr x, Span s) {
  auto* st = x->type->as<ScalarType>();
  if (!st) fail(ErrorKind::kType, s, "unary operator takes a scalar operand", "use pl.neg for tiles");
  if (st->dtype == DataType::TASK_ID)
    fail(ErrorKind::kType, s, "unary operator on a task id: task ids are handles, not numbers",
         "store task ids in a pl.array of pl.TASK_ID and pass them in deps=[...]");
  TypePtr t = o == UnaryOp::Not ? ScalarType::make(DataType::BOOL) : x->type;
  return std::make_shared<UnaryExpr>(o, std::move(x), std::move(t), std::move(s));
}

ExprPtr TupleGetItem::make(ExprPtr t, int i, Span s) {
  auto* tt = t->type->as<TupleType>();
  if (!tt) fail(ErrorKind::kType, s, "indexing a value that is not a tuple");
  if (i < 0 || i >= static_cast<int>(tt->elems.size()))
    fail(ErrorKind::kValue, s, "tuple index " + std::to_string(i) + " out of range for " + std::to_string(tt->elems.size()) + " values");
  TypePtr et = tt->elems[i];
  return std::make_shared<TupleGetItem>(std::move(t), i, std::move(et), std::move(s));
}

}  // namespace pypto::ir

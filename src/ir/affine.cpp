// Index arithmetic in canonical affine form: a sum of integer multiples of atoms (variables
// and the sub-expressions that are not affine) plus a constant. The parser uses it for the
// extents of slices (`x[r : r + T]` has extent T, `x[q + 8 : q + 16]` extent 8), where the
// difference of two bounds must come out as simple as the user wrote it.
#include <map>

#include "pypto/ir/affine.h"
#include "pypto/ir/printer.h"

namespace pypto::ir {
namespace {

// Two index expressions that are the same computation: the same tree of operators over the
// same variables (by identity, not by name) and constants.
bool same_expr(const ExprPtr& a, const ExprPtr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  if (auto x = as_const_int(a)) return as_const_int(b) == x;
  if (auto* x = a->as<BinaryExpr>()) {
    auto* y = b->as<BinaryExpr>();
    return x->op == y->op && same_expr(x->a, y->a) && same_expr(x->b, y->b);
  }
  if (auto* x = a->as<UnaryExpr>()) {
    auto* y = b->as<UnaryExpr>();
    return x->op == y->op && same_expr(x->a, y->a);
  }
  return false;  // variables compare by identity (a == b above), calls are distinct reads
}

// A coefficient per atom plus a constant. Atoms are bucketed by their printed form and told
// apart within a bucket by same_expr (two variables may share a name).
struct Affine {
  std::multimap<std::string, std::pair<ExprPtr, int64_t>> terms;
  std::pair<ExprPtr, int64_t>& slot(const std::string& key, const ExprPtr& atom) {
    auto range = terms.equal_range(key);
    for (auto it = range.first; it != range.second; ++it)
      if (same_expr(it->second.first, atom)) return it->second;
    return terms.emplace(key, std::pair<ExprPtr, int64_t>{atom, 0})->second;
  }
  int64_t constant = 0;
  void add(const Affine& o, int64_t sign) {
    constant += sign * o.constant;
    for (auto& [key, t] : o.terms) slot(key, t.first).second += sign * t.second;
  }
  void scale(int64_t k) {
    constant *= k;
    for (auto& [key, t] : terms) t.second *= k;
  }
};

bool is_int_scalar(const ExprPtr& e) {
  auto* s = e->type ? e->type->as<ScalarType>() : nullptr;
  return s && dtype_is_int(s->dtype);
}

Affine linearize(const ExprPtr& e) {
  Affine a;
  if (auto c = as_const_int(e)) {
    a.constant = *c;
    return a;
  }
  if (auto* b = e->as<BinaryExpr>(); b && is_int_scalar(b->a) && is_int_scalar(b->b)) {
    if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) {
      a = linearize(b->a);
      a.add(linearize(b->b), b->op == BinaryOp::Add ? 1 : -1);
      return a;
    }
    if (b->op == BinaryOp::Mul) {
      Affine x = linearize(b->a), y = linearize(b->b);
      if (y.terms.empty()) return x.scale(y.constant), x;
      if (x.terms.empty()) return y.scale(x.constant), y;
    }
  }
  if (auto* u = e->as<UnaryExpr>(); u && u->op == UnaryOp::Neg && is_int_scalar(u->a)) {
    a = linearize(u->a);
    a.scale(-1);
    return a;
  }
  a.slot(print_expr(e), e).second = 1;
  return a;
}

ExprPtr rebuild(const Affine& a, const Span& span) {
  ExprPtr sum;
  for (auto& [key, t] : a.terms) {
    if (t.second == 0) continue;
    int64_t k = t.second < 0 ? -t.second : t.second;
    ExprPtr term = k == 1 ? t.first : BinaryExpr::make(BinaryOp::Mul, t.first, ConstInt::make(k, DataType::INDEX, span), span);
    if (!sum) sum = t.second < 0 ? UnaryExpr::make(UnaryOp::Neg, term, span) : term;
    else sum = BinaryExpr::make(t.second < 0 ? BinaryOp::Sub : BinaryOp::Add, sum, term, span);
  }
  if (!sum) return ConstInt::make(a.constant, DataType::INDEX, span);
  if (a.constant != 0) {
    int64_t k = a.constant < 0 ? -a.constant : a.constant;
    sum = BinaryExpr::make(a.constant < 0 ? BinaryOp::Sub : BinaryOp::Add, sum, ConstInt::make(k, DataType::INDEX, span), span);
  }
  return sum;
}

}  // namespace

ExprPtr index_difference(const ExprPtr& hi, const ExprPtr& lo, const Span& span) {
  if (!is_int_scalar(hi) || !is_int_scalar(lo))
    return BinaryExpr::make(BinaryOp::Sub, hi, lo, span);  // BinaryExpr reports what is wrong
  Affine a = linearize(hi);
  a.add(linearize(lo), -1);
  return rebuild(a, span);
}

}  // namespace pypto::ir

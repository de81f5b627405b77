// Index arithmetic in canonical affine form (src/ir/affine.cpp).
#pragma once
#include "pypto/ir/expr.h"

namespace pypto::ir {

// hi - lo simplified as affine index arithmetic: terms that cancel are gone and constants
// are folded, so `(r + 16) - r` is 16 and `(q + n) - q` is n. Parts that are not affine
// (products of variables, divisions, mins) are kept whole as atoms.
ExprPtr index_difference(const ExprPtr& hi, const ExprPtr& lo, const Span& span = {});

}  // namespace pypto::ir

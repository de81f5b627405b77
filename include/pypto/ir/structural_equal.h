// Structural equality and hashing of IR trees, modulo the identity of variables: two trees
// are equal when they match node by node and their variables correspond one to one.
#pragma once
#include <cstdint>

#include "pypto/ir/stmt.h"

namespace pypto::ir {

bool structural_equal(const ProgramPtr& a, const ProgramPtr& b);
bool structural_equal(const FunctionPtr& a, const FunctionPtr& b);
bool structural_equal(const StmtPtr& a, const StmtPtr& b);
bool structural_equal(const ExprPtr& a, const ExprPtr& b);
bool structural_equal(const TypePtr& a, const TypePtr& b);

// Hashes consistent with structural_equal: equal trees hash equal. Spans are ignored.
uint64_t structural_hash(const ProgramPtr& p);
uint64_t structural_hash(const FunctionPtr& f);
uint64_t structural_hash(const StmtPtr& s);
uint64_t structural_hash(const ExprPtr& e);
uint64_t structural_hash(const TypePtr& t);

}  // namespace pypto::ir

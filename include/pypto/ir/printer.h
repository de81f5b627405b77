// The IR printer: renders programs, functions, types and expressions as DSL text in the
// `@pl.program` class form, which `pl.parse` reads back to a structurally equal program.
#pragma once
#include <string>

#include "pypto/ir/stmt.h"

namespace pypto::ir {

// The whole program as a module: `import pypto.language as pl` and one `@pl.program` class.
std::string print_program(const ProgramPtr& program);
// One function as a `@pl.function` method (indented by 4 as inside a class).
std::string print_function(const FunctionPtr& function);
// A type in annotation spelling, e.g. `pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]`.
std::string print_type(const TypePtr& type);
// An expression with variables printed by their names.
std::string print_expr(const ExprPtr& expr);
// A compile-time attribute value in DSL spelling (`pl.FP32`, `[1, 2]`, `'round'`).
std::string print_attr(const AttrValue& value);

}  // namespace pypto::ir

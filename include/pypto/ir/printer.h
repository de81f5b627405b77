// The IR printer: renders programs, functions, types and expressions as DSL text in the
// `@pl.program` class form, which `pl.parse` reads back to a structurally equal program.
#pragma once
#include <set>
#include <string>
#include <unordered_map>

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
// A float as a Python literal: `1.0`, `1e-30`, `float('inf')`.
std::string python_float(double v);

// Gives each Var of a function a unique, valid Python name: `c`, `c_1`, `c_2`, ... (Python
// keywords and the module names `pl`, `self`, `torch` get a trailing `_`).
class PythonNamer {
 public:
  std::string name(const Var* v);
  // Keeps `n` for something else (a function, a helper): no Var will be named `n`.
  void reserve(const std::string& n) { used_.insert(n); }

 private:
  std::unordered_map<const Var*, std::string> names_;
  std::set<std::string> used_;
};

}  // namespace pypto::ir

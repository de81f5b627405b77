// Bindings of the IR (pypto._core.ir): enums, types, expressions, statements, functions and
// programs as read-only nanobind classes, the op registry queries the parser needs, the
// printer and structural equality. Thin: every rule lives in the C++ core.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "pypto/ir/affine.h"
#include "pypto/ops/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ops/tensor_ops.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {
namespace {
using namespace pypto::ir;

// Python value -> attribute value: bool, int, float, str, the enums, or a list of ints.
AttrValue to_attr(nb::handle h) {
  if (PyBool_Check(h.ptr())) return nb::cast<bool>(h);
  if (nb::isinstance<DataType>(h)) return nb::cast<DataType>(h);
  if (nb::isinstance<MemorySpace>(h)) return nb::cast<MemorySpace>(h);
  if (nb::isinstance<PadValue>(h)) return nb::cast<PadValue>(h);
  if (PyLong_Check(h.ptr())) return to_int64(h);
  if (PyFloat_Check(h.ptr())) return nb::cast<double>(h);
  if (PyUnicode_Check(h.ptr())) return nb::cast<std::string>(h);
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
    std::vector<int64_t> out;
    for (nb::handle item : h) {
      if (PyBool_Check(item.ptr()) || !PyLong_Check(item.ptr()))
        throw nb::type_error("an attribute list must hold ints only");
      out.push_back(to_int64(item));
    }
    return out;
  }
  throw nb::type_error(("cannot use a value of type " + std::string(nb::type_name(h.type()).c_str()) +
                        " as a compile-time attribute")
                           .c_str());
}

nb::object from_attr(const AttrValue& v) {
  return std::visit([](const auto& x) -> nb::object { return nb::cast(x); }, v);
}

Attrs to_attrs(const nb::dict& d) {
  Attrs out;
  for (auto [k, v] : d) out[nb::cast<std::string>(k)] = to_attr(v);
  return out;
}

// PyPTO's launch keywords of a TaskInfo as a dict (the parser's view): core_num, sync_start,
// name_hint, role, split, split_slot_num, slot_num, no_dep_args, dumps, allow_early_resolve,
// windowize, predicate. Keys absent from `d` keep their defaults.
void apply_hints(TaskInfo& t, const nb::dict& d) {
  for (auto [k, v] : d) {
    const std::string key = nb::cast<std::string>(k);
    if (key == "core_num") t.core_num = v.is_none() ? nullptr : nb::cast<ExprPtr>(v);
    else if (key == "sync_start") t.sync_start = nb::cast<bool>(v);
    else if (key == "name_hint") t.name_hint = nb::cast<std::string>(v);
    else if (key == "role") t.role = nb::cast<int>(v);
    else if (key == "split") t.split = nb::cast<int>(v);
    else if (key == "split_slot_num") t.split_slot_num = nb::cast<int64_t>(v);
    else if (key == "slot_num") t.slot_num = nb::cast<int64_t>(v);
    else if (key == "no_dep_args") t.no_dep_args = nb::cast<std::vector<ExprPtr>>(v);
    else if (key == "dumps") t.dumps = nb::cast<std::vector<ExprPtr>>(v);
    else if (key == "allow_early_resolve") t.allow_early_resolve = nb::cast<bool>(v);
    else if (key == "windowize") t.windowize = nb::cast<bool>(v);
    else if (key == "predicate") t.predicate = v.is_none() ? nullptr : nb::cast<ExprPtr>(v);
    else throw nb::key_error(("unknown launch hint '" + key + "'").c_str());
  }
}

nb::dict hints_of(const TaskInfo& t) {
  nb::dict d;
  d["core_num"] = t.core_num ? nb::cast(t.core_num) : nb::none();
  d["sync_start"] = t.sync_start;
  d["name_hint"] = t.name_hint;
  d["role"] = t.role;
  d["split"] = t.split;
  d["split_slot_num"] = t.split_slot_num;
  d["slot_num"] = t.slot_num;
  d["no_dep_args"] = t.no_dep_args;
  d["dumps"] = t.dumps;
  d["allow_early_resolve"] = t.allow_early_resolve;
  d["windowize"] = t.windowize;
  d["predicate"] = t.predicate ? nb::cast(t.predicate) : nb::none();
  return d;
}

nb::dict from_attrs(const Attrs& a) {
  nb::dict d;
  for (auto& [k, v] : a) d[k.c_str()] = from_attr(v);
  return d;
}

// nanobind constructs from a mutable holder; IR nodes are handed out as const.
template <typename T, typename B>
std::shared_ptr<T> unconst(const std::shared_ptr<const B>& p) {
  return std::const_pointer_cast<T>(std::static_pointer_cast<const T>(p));
}

template <typename E, size_t N>
void bind_enum(nb::module_& m, const char* name, const char* (*namer)(E)) {
  nb::enum_<E> e(m, name);
  for (size_t i = 0; i < N; ++i) e.value(namer(static_cast<E>(i)), static_cast<E>(i));
}

const char* binary_op_name(BinaryOp o) {
  static const char* n[] = {"Add", "Sub", "Mul", "Div", "FloorDiv", "Mod", "Min", "Max",
                            "Eq",  "Ne",  "Lt",  "Le",  "Gt",       "Ge",  "And", "Or"};
  return n[static_cast<int>(o)];
}
const char* unary_op_name(UnaryOp o) { return o == UnaryOp::Neg ? "Neg" : "Not"; }
const char* for_kind_enum_name(ForKind k) {
  static const char* n[] = {"Range", "Parallel", "Unroll", "Pipeline"};
  return n[static_cast<int>(k)];
}
const char* param_kind_name(ParamKind k) {
  static const char* n[] = {"Expr", "ExprList", "Attr"};
  return n[static_cast<int>(k)];
}

void bind_enums(nb::module_& m) {
  bind_enum<DataType, kDataTypeCount>(m, "DataType", dtype_name);
  bind_enum<MemorySpace, kMemorySpaceCount>(m, "MemorySpace", memory_space_name);
  bind_enum<PadValue, 4>(m, "PadValue", pad_value_name);
  bind_enum<FunctionType, 9>(m, "FunctionType", function_type_name);
  bind_enum<Level, kLevelCount>(m, "Level", level_name);
  {  // PyPTO's alias names of levels (pl.Level.L2CACHE is pl.Level.CHIP_DIE)
    nb::object level = m.attr("Level");
    for (const LevelAlias& a : kLevelAliases) nb::setattr(level, a.name, nb::cast(a.level));
  }
  bind_enum<Role, 3>(m, "Role", role_name);
  bind_enum<ParamDirection, 3>(m, "ParamDirection", param_direction_name);
  bind_enum<BinaryOp, 16>(m, "BinaryOp", binary_op_name);
  bind_enum<UnaryOp, 2>(m, "UnaryOp", unary_op_name);
  bind_enum<ForKind, 4>(m, "ForKind", for_kind_enum_name);
  bind_enum<ParamKind, 3>(m, "ParamKind", param_kind_name);
  m.def("dtype_bytes", &dtype_bytes);
  m.def("dtype_bits", &dtype_bits);
  m.def("dtype_storage_only", &dtype_storage_only);
  m.def("dtype_is_float", &dtype_is_float);
  m.def("dtype_is_int", &dtype_is_int);
}

void bind_types(nb::module_& m) {
  nb::class_<Type>(m, "Type")
      .def("__str__", [](nb::handle self) { return print_type(nb::cast<TypePtr>(self)); });
  nb::class_<ScalarType, Type>(m, "ScalarType")
      .def(nb::new_([](DataType d) { return std::make_shared<ScalarType>(d); }), "dtype"_a)
      .def_ro("dtype", &ScalarType::dtype);
  nb::class_<TensorType, Type>(m, "TensorType")
      .def(nb::new_([](std::vector<ExprPtr> s, DataType d) { return std::make_shared<TensorType>(std::move(s), d); }),
           "shape"_a, "dtype"_a)
      .def_ro("shape", &TensorType::shape)
      .def_ro("dtype", &TensorType::dtype);
  nb::class_<TileType, Type>(m, "TileType")
      .def(nb::new_([](std::vector<ExprPtr> s, DataType d, MemorySpace mem, std::vector<ExprPtr> v, PadValue p,
                       int64_t a) { return std::make_shared<TileType>(std::move(s), d, mem, std::move(v), p, a); }),
           "shape"_a, "dtype"_a, "memory"_a = MemorySpace::Vec, "valid_shape"_a = std::vector<ExprPtr>{},
           "pad"_a = PadValue::null, "addr"_a = -1)
      .def_ro("shape", &TileType::shape)
      .def_ro("dtype", &TileType::dtype)
      .def_ro("memory", &TileType::memory)
      .def_ro("valid_shape", &TileType::valid_shape)
      .def_ro("pad", &TileType::pad)
      .def_ro("addr", &TileType::addr);
  nb::class_<TupleType, Type>(m, "TupleType")
      .def(nb::new_([](std::vector<TypePtr> e) { return std::make_shared<TupleType>(std::move(e)); }), "elems"_a)
      .def_ro("elems", &TupleType::elems);
  nb::class_<ArrayType, Type>(m, "ArrayType")
      .def(nb::new_([](int64_t n, DataType d) { return std::make_shared<ArrayType>(n, d); }), "size"_a, "dtype"_a)
      .def_ro("size", &ArrayType::size)
      .def_ro("dtype", &ArrayType::dtype);
  nb::class_<NoneType, Type>(m, "NoneType").def(nb::new_([]() { return std::make_shared<NoneType>(); }));
}

void bind_exprs(nb::module_& m) {
  nb::class_<Expr>(m, "Expr")
      .def_ro("type", &Expr::type)
      .def_ro("span", &Expr::span)
      .def_prop_ro("node_id", [](const Expr& e) { return reinterpret_cast<uintptr_t>(&e); })
      .def("__str__", [](nb::handle self) { return print_expr(nb::cast<ExprPtr>(self)); });
  nb::class_<Var, Expr>(m, "Var")
      .def(nb::new_([](std::string n, TypePtr t, Span s) { return std::make_shared<Var>(std::move(n), std::move(t), s); }),
           "name"_a, "type"_a, "span"_a = Span{})
      .def_ro("name", &Var::name)
      .def("same_as", [](const Var& a, const Var& b) { return &a == &b; });
  nb::class_<ConstInt, Expr>(m, "ConstInt")
      .def(nb::new_([](int64_t v, DataType d, Span s) { return std::make_shared<ConstInt>(v, d, s); }), "value"_a,
           "dtype"_a = DataType::INDEX, "span"_a = Span{})
      .def_ro("value", &ConstInt::value);
  nb::class_<ConstFloat, Expr>(m, "ConstFloat")
      .def(nb::new_([](double v, DataType d, Span s) { return std::make_shared<ConstFloat>(v, d, s); }), "value"_a,
           "dtype"_a = DataType::FP32, "span"_a = Span{})
      .def_ro("value", &ConstFloat::value);
  nb::class_<ConstBool, Expr>(m, "ConstBool")
      .def(nb::new_([](bool v, Span s) { return std::make_shared<ConstBool>(v, s); }), "value"_a, "span"_a = Span{})
      .def_ro("value", &ConstBool::value);
  nb::class_<BinaryExpr, Expr>(m, "BinaryExpr")
      .def(nb::new_([](BinaryOp o, ExprPtr a, ExprPtr b, Span s) {
             return unconst<BinaryExpr>(BinaryExpr::make(o, std::move(a), std::move(b), s));
           }),
           "op"_a, "a"_a, "b"_a, "span"_a = Span{})
      .def_ro("op", &BinaryExpr::op)
      .def_ro("a", &BinaryExpr::a)
      .def_ro("b", &BinaryExpr::b);
  nb::class_<UnaryExpr, Expr>(m, "UnaryExpr")
      .def(nb::new_([](UnaryOp o, ExprPtr a, Span s) { return unconst<UnaryExpr>(UnaryExpr::make(o, std::move(a), s)); }),
           "op"_a, "a"_a, "span"_a = Span{})
      .def_ro("op", &UnaryExpr::op)
      .def_ro("a", &UnaryExpr::a);
  // Scalar pl.cast: make_cast builds it (a constant operand folds to a constant).
  nb::class_<CastExpr, Expr>(m, "CastExpr").def_ro("a", &CastExpr::a);
  m.def("make_cast", [](ExprPtr a, DataType to, const std::string& mode, Span s) { return CastExpr::make(std::move(a), to, mode, s); },
        "a"_a, "dtype"_a, "mode"_a = "round", "span"_a = Span{});
  nb::class_<Call, Expr>(m, "Call")
      .def_prop_ro("op_name", [](const Call& c) { return c.op->name; })
      .def_ro("args", &Call::args)
      .def_prop_ro("attrs", [](const Call& c) { return from_attrs(c.attrs); });
  nb::class_<FuncCall, Expr>(m, "FuncCall")
      .def(nb::new_([](std::string c, std::vector<ExprPtr> a, TypePtr t, Span s, int64_t task_id,
                       std::vector<int64_t> deps, int64_t block_num, bool manual, std::vector<ExprPtr> dyn_deps,
                       nb::dict hints) {
             auto f = std::make_shared<FuncCall>(std::move(c), std::move(a), std::move(t), s);
             f->task = TaskInfo{task_id, std::move(deps), block_num, manual, std::move(dyn_deps)};
             apply_hints(f->task, hints);
             return f;
           }),
           "callee"_a, "args"_a, "type"_a, "span"_a = Span{}, "task_id"_a = -1, "deps"_a = std::vector<int64_t>{},
           "block_num"_a = 0, "manual"_a = false, "dyn_deps"_a = std::vector<ExprPtr>{}, "hints"_a = nb::dict())
      .def_prop_ro("hints", [](const FuncCall& f) { return hints_of(f.task); })
      .def_ro("callee", &FuncCall::callee)
      .def_ro("args", &FuncCall::args)
      .def_prop_ro("task_id", [](const FuncCall& f) { return f.task.task_id; })
      .def_prop_ro("deps", [](const FuncCall& f) { return f.task.deps; })
      .def_prop_ro("block_num", [](const FuncCall& f) { return f.task.block_num; })
      .def_prop_ro("manual", [](const FuncCall& f) { return f.task.manual; })
      .def_prop_ro("dyn_deps", [](const FuncCall& f) { return f.task.dyn_deps; });
  nb::class_<ListExpr, Expr>(m, "ListExpr")
      .def(nb::new_([](std::vector<ExprPtr> e, Span s) { return std::make_shared<ListExpr>(std::move(e), s); }),
           "elems"_a, "span"_a = Span{})
      .def_ro("elems", &ListExpr::elems);
  nb::class_<TupleGetItem, Expr>(m, "TupleGetItem")
      .def(nb::new_([](ExprPtr t, int i, Span s) { return unconst<TupleGetItem>(TupleGetItem::make(std::move(t), i, s)); }),
           "tuple"_a, "index"_a, "span"_a = Span{})
      .def_ro("tuple", &TupleGetItem::tuple)
      .def_ro("index", &TupleGetItem::index);
}

void bind_stmts(nb::module_& m) {
  nb::class_<Stmt>(m, "Stmt").def_ro("span", &Stmt::span);
  nb::class_<AssignStmt, Stmt>(m, "AssignStmt")
      .def(nb::new_([](VarPtr v, ExprPtr e, Span s) { return std::make_shared<AssignStmt>(std::move(v), std::move(e), s); }),
           "var"_a, "value"_a, "span"_a = Span{})
      .def_ro("var", &AssignStmt::var)
      .def_ro("value", &AssignStmt::value);
  nb::class_<EvalStmt, Stmt>(m, "EvalStmt")
      .def(nb::new_([](ExprPtr e, Span s) { return std::make_shared<EvalStmt>(std::move(e), s); }), "expr"_a,
           "span"_a = Span{})
      .def_ro("expr", &EvalStmt::expr);
  nb::class_<ForStmt, Stmt>(m, "ForStmt")
      .def(nb::new_([](VarPtr lv, ExprPtr b, ExprPtr e, ExprPtr st, std::vector<VarPtr> ia, std::vector<ExprPtr> iv,
                       StmtPtr bd, std::vector<VarPtr> rv, ForKind fk, int64_t stg, Span s, const nb::dict& attrs) {
             auto f = unconst<ForStmt>(ForStmt::make(std::move(lv), std::move(b), std::move(e), std::move(st),
                                                     std::move(ia), std::move(iv), std::move(bd), std::move(rv), fk, stg, s));
             f->attrs = to_attrs(attrs);
             return f;
           }),
           "loop_var"_a, "start"_a, "stop"_a, "step"_a, "iter_args"_a, "init_values"_a, "body"_a, "return_vars"_a,
           "for_kind"_a = ForKind::Range, "stages"_a = 0, "span"_a = Span{}, "attrs"_a = nb::dict())
      .def_ro("loop_var", &ForStmt::loop_var)
      .def_ro("start", &ForStmt::start)
      .def_ro("stop", &ForStmt::stop)
      .def_ro("step", &ForStmt::step)
      .def_ro("iter_args", &ForStmt::iter_args)
      .def_ro("init_values", &ForStmt::init_values)
      .def_ro("body", &ForStmt::body)
      .def_ro("return_vars", &ForStmt::return_vars)
      .def_prop_ro("attrs", [](const ForStmt& f) { return from_attrs(f.attrs); })
      .def_ro("for_kind", &ForStmt::for_kind)
      .def_ro("stages", &ForStmt::stages);
  nb::class_<WhileStmt, Stmt>(m, "WhileStmt")
      .def(nb::new_([](std::vector<VarPtr> ia, std::vector<ExprPtr> iv, ExprPtr c, StmtPtr bd, std::vector<VarPtr> rv,
                       Span s) {
             return unconst<WhileStmt>(
                 WhileStmt::make(std::move(ia), std::move(iv), std::move(c), std::move(bd), std::move(rv), s));
           }),
           "iter_args"_a, "init_values"_a, "cond"_a, "body"_a, "return_vars"_a, "span"_a = Span{})
      .def_ro("iter_args", &WhileStmt::iter_args)
      .def_ro("init_values", &WhileStmt::init_values)
      .def_ro("cond", &WhileStmt::cond)
      .def_ro("body", &WhileStmt::body)
      .def_ro("return_vars", &WhileStmt::return_vars);
  nb::class_<IfStmt, Stmt>(m, "IfStmt")
      .def(nb::new_([](ExprPtr c, StmtPtr t, StmtPtr e, std::vector<VarPtr> rv, Span s) {
             return unconst<IfStmt>(IfStmt::make(std::move(c), std::move(t), std::move(e), std::move(rv), s));
           }),
           "cond"_a, "then_body"_a, "else_body"_a.none() = nb::none(), "return_vars"_a = std::vector<VarPtr>{},
           "span"_a = Span{})
      .def_ro("cond", &IfStmt::cond)
      .def_ro("then_body", &IfStmt::then_body)
      .def_ro("else_body", &IfStmt::else_body)
      .def_ro("return_vars", &IfStmt::return_vars);
  nb::class_<YieldStmt, Stmt>(m, "YieldStmt")
      .def(nb::new_([](std::vector<ExprPtr> v, Span s) { return std::make_shared<YieldStmt>(std::move(v), s); }),
           "values"_a, "span"_a = Span{})
      .def_ro("values", &YieldStmt::values);
  nb::class_<ReturnStmt, Stmt>(m, "ReturnStmt")
      .def(nb::new_([](std::vector<ExprPtr> v, Span s) { return std::make_shared<ReturnStmt>(std::move(v), s); }),
           "values"_a, "span"_a = Span{})
      .def_ro("values", &ReturnStmt::values);
  nb::class_<SeqStmts, Stmt>(m, "SeqStmts")
      .def(nb::new_([](std::vector<StmtPtr> v, Span s) { return std::make_shared<SeqStmts>(std::move(v), s); }),
           "stmts"_a, "span"_a = Span{})
      .def_ro("stmts", &SeqStmts::stmts);
  nb::class_<ScopeStmt, Stmt>(m, "ScopeStmt")
      .def(nb::new_([](Level l, StmtPtr b, Span s, int64_t task_id, std::vector<int64_t> deps, int64_t block_num,
                       std::vector<VarPtr> block_vars, bool manual, std::vector<ExprPtr> dyn_deps, nb::dict hints) {
             auto sc = std::make_shared<ScopeStmt>(l, std::move(b), s);
             sc->task = TaskInfo{task_id, std::move(deps), block_num, manual, std::move(dyn_deps)};
             apply_hints(sc->task, hints);
             sc->block_vars = std::move(block_vars);
             return sc;
           }),
           "level"_a, "body"_a, "span"_a = Span{}, "task_id"_a = -1, "deps"_a = std::vector<int64_t>{},
           "block_num"_a = 0, "block_vars"_a = std::vector<VarPtr>{}, "manual"_a = false,
           "dyn_deps"_a = std::vector<ExprPtr>{}, "hints"_a = nb::dict())
      .def_prop_ro("hints", [](const ScopeStmt& s) { return hints_of(s.task); })
      .def_ro("level", &ScopeStmt::level)
      .def_ro("body", &ScopeStmt::body)
      .def_prop_ro("task_id", [](const ScopeStmt& s) { return s.task.task_id; })
      .def_prop_ro("deps", [](const ScopeStmt& s) { return s.task.deps; })
      .def_prop_ro("block_num", [](const ScopeStmt& s) { return s.task.block_num; })
      .def_prop_ro("block_vars", [](const ScopeStmt& s) { return s.block_vars; })
      .def_prop_ro("manual", [](const ScopeStmt& s) { return s.task.manual; })
      .def_prop_ro("dyn_deps", [](const ScopeStmt& s) { return s.task.dyn_deps; });

  nb::class_<Function>(m, "Function")
      .def(nb::new_([](std::string n, std::vector<VarPtr> p, std::vector<ParamDirection> d, std::vector<TypePtr> r,
                       StmtPtr b, FunctionType ft, Span s, std::optional<Level> level, std::optional<Role> role,
                       const nb::dict& attrs) {
             return std::const_pointer_cast<Function>(Function::make(std::move(n), std::move(p), std::move(d),
                                                                     std::move(r), std::move(b), ft, s, level, role,
                                                                     to_attrs(attrs)));
           }),
           "name"_a, "params"_a, "directions"_a, "return_types"_a, "body"_a, "func_type"_a, "span"_a = Span{},
           "level"_a = nb::none(), "role"_a = nb::none(), "attrs"_a = nb::dict())
      .def_ro("name", &Function::name)
      .def_ro("params", &Function::params)
      .def_ro("directions", &Function::directions)
      .def_ro("return_types", &Function::return_types)
      .def_ro("body", &Function::body)
      .def_ro("func_type", &Function::func_type)
      .def_ro("span", &Function::span)
      .def_ro("level", &Function::level)
      .def_ro("role", &Function::role)
      .def_prop_ro("attrs", [](const Function& f) { return from_attrs(f.attrs); })
      .def("__str__", [](nb::handle self) { return print_function(nb::cast<FunctionPtr>(self)); });
  nb::class_<Program>(m, "Program")
      .def(nb::new_([](std::string n, std::vector<FunctionPtr> f) {
             return std::const_pointer_cast<Program>(Program::make(std::move(n), std::move(f)));
           }),
           "name"_a, "functions"_a)
      .def_ro("name", &Program::name)
      .def_ro("functions", &Program::functions)
      .def("find", &Program::find, "name"_a)
      .def("__str__", [](nb::handle self) { return print_program(nb::cast<ProgramPtr>(self)); });
}

void bind_registry(nb::module_& m) {
  nb::class_<ParamSpec>(m, "ParamSpec")
      .def_ro("name", &ParamSpec::name)
      .def_ro("kind", &ParamSpec::kind)
      .def_ro("optional", &ParamSpec::optional)
      .def_ro("index", &ParamSpec::index)
      .def_ro("aliases", &ParamSpec::aliases)
      .def_prop_ro("has_default", [](const ParamSpec& p) { return p.default_value.has_value(); })
      .def_prop_ro("default", [](const ParamSpec& p) { return p.default_value ? from_attr(*p.default_value) : nb::none(); });
  nb::class_<OpDef>(m, "OpDef")
      .def_ro("name", &OpDef::name)
      .def_ro("params", &OpDef::params)
      .def_ro("pto", &OpDef::pto)
      .def_ro("doc", &OpDef::doc)
      .def_ro("aliases", &OpDef::aliases)
      .def_ro("scalar_variant", &OpDef::scalar_variant)
      .def_ro("torch", &OpDef::torch);
  m.def(
      "make_op_call",
      [](const std::string& name, std::vector<ExprPtr> args, const nb::dict& kwargs, const nb::dict& attr_kwargs,
         const Span& span) {
        std::vector<std::pair<std::string, ExprPtr>> kw;
        for (auto [k, v] : kwargs) kw.emplace_back(nb::cast<std::string>(k), nb::cast<ExprPtr>(v));
        return make_op_call(name, args, kw, to_attrs(attr_kwargs), span);
      },
      "name"_a, "args"_a, "kwargs"_a = nb::dict(), "attr_kwargs"_a = nb::dict(), "span"_a = Span{});
  m.def(
      "resolve_op",
      [](const std::string& name, const std::vector<TypePtr>& types) -> const OpDef* { return resolve_op(name, types); },
      "name"_a, "arg_types"_a, nb::rv_policy::reference);
  m.def(
      "find_op", [](const std::string& name) -> const OpDef* { return OpRegistry::instance().find(name); }, "name"_a,
      nb::rv_policy::reference);
  m.def(  // the tile op computing one block of a tensor-level compute op (tensor.add -> tile.add), or None
      "tile_form",
      [](const std::string& name) -> std::optional<std::string> {
        auto* op = OpRegistry::instance().find(name);
        auto info = op ? tensor_op_info(*op) : std::nullopt;
        if (!info || info->shape == TensorOpShape::kBatchMatmul) return std::nullopt;  // batches have no tile form
        return info->shape == TensorOpShape::kMatmulAcc ? std::string("tile.matmul_acc") : info->tile_op->name;
      },
      "name"_a);
  m.def(
      "op_params",
      [](const std::string& name) -> std::optional<std::vector<ParamSpec>> {
        auto* op = OpRegistry::instance().find(name);
        if (!op) return std::nullopt;
        return op->params;
      },
      "name"_a);
  m.def(
      "all_ops", [] { return OpRegistry::instance().all(); }, nb::rv_policy::reference);
}

}  // namespace

void bind_ir(nb::module_& top) {
  nb::module_ m = top.def_submodule("ir", "pypto IR: types, expressions, statements, programs");
  nb::class_<Span>(m, "Span")
      .def(nb::init<>())
      .def(
          "__init__", [](Span* s, std::string f, int l, int c) { new (s) Span{std::move(f), l, c}; }, "file"_a, "line"_a,
          "col"_a = 0)
      .def_rw("file", &Span::file)
      .def_rw("line", &Span::line)
      .def_rw("col", &Span::col)
      .def("__str__", &Span::str);
  bind_enums(m);
  bind_types(m);
  bind_exprs(m);
  bind_stmts(m);
  bind_registry(m);

  m.def("ops_reference_markdown", &ops_reference_markdown, "The op registry rendered as markdown (docs/ops.md).");
  m.def("print_program", &print_program, "program"_a);
  m.def("print_function", &print_function, "function"_a);
  m.def("print_type", &print_type, "type"_a);
  m.def("print_expr", &print_expr, "expr"_a);
  m.def("index_difference", &index_difference, "hi"_a, "lo"_a, "span"_a = Span{},
        "hi - lo as simplified affine index arithmetic (the extent of a slice lo:hi).");
  m.def("structural_equal", nb::overload_cast<const ProgramPtr&, const ProgramPtr&>(&structural_equal), "a"_a, "b"_a);
  m.def("structural_equal", nb::overload_cast<const FunctionPtr&, const FunctionPtr&>(&structural_equal), "a"_a, "b"_a);
  m.def("structural_equal", nb::overload_cast<const StmtPtr&, const StmtPtr&>(&structural_equal), "a"_a, "b"_a);
  m.def("structural_equal", nb::overload_cast<const ExprPtr&, const ExprPtr&>(&structural_equal), "a"_a, "b"_a);
  m.def("structural_equal", nb::overload_cast<const TypePtr&, const TypePtr&>(&structural_equal), "a"_a, "b"_a);
  m.def("structural_hash", nb::overload_cast<const ProgramPtr&>(&structural_hash), "node"_a);
  m.def("structural_hash", nb::overload_cast<const FunctionPtr&>(&structural_hash), "node"_a);
  m.def("structural_hash", nb::overload_cast<const StmtPtr&>(&structural_hash), "node"_a);
  m.def("structural_hash", nb::overload_cast<const ExprPtr&>(&structural_hash), "node"_a);
  m.def("structural_hash", nb::overload_cast<const TypePtr&>(&structural_hash), "node"_a);

  // The enums and top-level nodes are also reachable as pypto._core.<Name>.
  for (const char* name : {"DataType", "MemorySpace", "PadValue", "FunctionType", "Level", "Role", "ParamDirection", "Span",
                           "Program", "Function"})
    top.attr(name) = m.attr(name);
}

}  // namespace pypto::bindings

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
#include "pypto/ir/visitor.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {
namespace {
using namespace pypto::ir;
using namespace pypto::ops;

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
      .def(nb::new_([](std::vector<ExprPtr> s, DataType d, std::vector<int64_t> st, bool dn) {
             return std::make_shared<TensorType>(std::move(s), d, std::move(st), dn);
           }),
           "shape"_a, "dtype"_a, "stride"_a = std::vector<int64_t>{}, "dn"_a = false)
      .def_ro("shape", &TensorType::shape)
      .def_ro("dtype", &TensorType::dtype)
      .def_ro("stride", &TensorType::stride)
      .def_ro("dn", &TensorType::dn);
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

// ---- IR nodes. The classes and their field accessors come from the node list (nodes.def);
// the constructors (each through the node's checking make()) are written per node below.

// A field accessor by the field's kind in the node list.
template <typename Cls, typename N, typename D>
void bind_field_plain(Cls& cls, const char* name, D N::*p) { cls.def_ro(name, p); }
#define PYPTO_PLAIN_FIELD(kind)                                    \
  template <typename Cls, typename N, typename D>                  \
  void bind_field_##kind(Cls& cls, const char* name, D N::*p) {    \
    bind_field_plain(cls, name, p);                                \
  }
PYPTO_PLAIN_FIELD(attr)
PYPTO_PLAIN_FIELD(float)
PYPTO_PLAIN_FIELD(expr)
PYPTO_PLAIN_FIELD(exprs)
PYPTO_PLAIN_FIELD(def)
PYPTO_PLAIN_FIELD(defs)
PYPTO_PLAIN_FIELD(stmt)
PYPTO_PLAIN_FIELD(stmts)
PYPTO_PLAIN_FIELD(extra)
#undef PYPTO_PLAIN_FIELD
template <typename Cls, typename N, typename D>
void bind_field_op(Cls& cls, const char*, D N::*p) {  // the op by name: Call.op_name
  cls.def_prop_ro("op_name", [p](const N& n) { return (n.*p)->name; });
}
template <typename Cls, typename N, typename D>
void bind_field_attrs(Cls& cls, const char* name, D N::*p) {  // attributes as a dict
  cls.def_prop_ro(name, [p](const N& n) { return from_attrs(n.*p); });
}
template <typename Cls, typename N, typename D>
void bind_field_task(Cls& cls, const char*, D N::*p) {  // a launch's task info, key by key
  cls.def_prop_ro("hints", [p](const N& n) { return hints_of(n.*p); })
      .def_prop_ro("task_id", [p](const N& n) { return (n.*p).task_id; })
      .def_prop_ro("deps", [p](const N& n) { return (n.*p).deps; })
      .def_prop_ro("block_num", [p](const N& n) { return (n.*p).block_num; })
      .def_prop_ro("manual", [p](const N& n) { return (n.*p).manual; })
      .def_prop_ro("dyn_deps", [p](const N& n) { return (n.*p).dyn_deps; });
}

TaskInfo task_info(int64_t task_id, std::vector<int64_t> deps, int64_t block_num, bool manual,
                   std::vector<ExprPtr> dyn_deps, const nb::dict& hints) {
  TaskInfo t{task_id, std::move(deps), block_num, manual, std::move(dyn_deps)};
  apply_hints(t, hints);
  return t;
}

// The Python constructors, one per node.
template <typename Cls>
void bind_ctor(Cls& c, const Var*) {
  c.def(nb::new_([](std::string n, TypePtr t, Span s) { return unconst<Var>(Var::make(std::move(n), std::move(t), s)); }),
        "name"_a, "type"_a, "span"_a = Span{})
      .def("same_as", [](const Var& a, const Var& b) { return &a == &b; });
}
template <typename Cls>
void bind_ctor(Cls& c, const ConstInt*) {
  c.def(nb::new_([](int64_t v, DataType d, Span s) { return unconst<ConstInt>(ConstInt::make(v, d, s)); }), "value"_a,
        "dtype"_a = DataType::INDEX, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const ConstFloat*) {
  c.def(nb::new_([](double v, DataType d, Span s) { return unconst<ConstFloat>(ConstFloat::make(v, d, s)); }), "value"_a,
        "dtype"_a = DataType::FP32, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const ConstBool*) {
  c.def(nb::new_([](bool v, Span s) { return unconst<ConstBool>(ConstBool::make(v, s)); }), "value"_a, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const BinaryExpr*) {
  c.def(nb::new_([](BinaryOp o, ExprPtr a, ExprPtr b, Span s) {
          return unconst<BinaryExpr>(BinaryExpr::make(o, std::move(a), std::move(b), s));
        }),
        "op"_a, "a"_a, "b"_a, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const UnaryExpr*) {
  c.def(nb::new_([](UnaryOp o, ExprPtr a, Span s) { return unconst<UnaryExpr>(UnaryExpr::make(o, std::move(a), s)); }),
        "op"_a, "a"_a, "span"_a = Span{});
}
// A Call of the op called `op` on arguments aligned with its kExpr/kExprList params and every
// attribute: Call::make infers the type, or checks a given one (make_op_call binds
// Python-style arguments first).
template <typename Cls>
void bind_ctor(Cls& c, const Call*) {
  c.def(nb::new_([](const std::string& op, std::vector<ExprPtr> args, const nb::dict& attrs, TypePtr type, Span s) {
          const OpDef* def = OpRegistry::instance().find(op);
          if (!def) throw nb::key_error(("unknown op '" + op + "'").c_str());
          ExprPtr call = type ? Call::make(def, std::move(args), to_attrs(attrs), std::move(type), s)
                              : Call::make(def, std::move(args), to_attrs(attrs), s);
          return unconst<Call>(call);
        }),
        "op"_a, "args"_a, "attrs"_a = nb::dict(), "type"_a.none() = nb::none(), "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const FuncCall*) {
  c.def(nb::new_([](std::string c, std::vector<ExprPtr> a, TypePtr t, Span s, int64_t task_id, std::vector<int64_t> deps,
                    int64_t block_num, bool manual, std::vector<ExprPtr> dyn_deps, nb::dict hints) {
          return unconst<FuncCall>(FuncCall::make(std::move(c), std::move(a), std::move(t), s,
                                                  task_info(task_id, std::move(deps), block_num, manual,
                                                            std::move(dyn_deps), hints)));
        }),
        "callee"_a, "args"_a, "type"_a, "span"_a = Span{}, "task_id"_a = -1, "deps"_a = std::vector<int64_t>{},
        "block_num"_a = 0, "manual"_a = false, "dyn_deps"_a = std::vector<ExprPtr>{}, "hints"_a = nb::dict());
}
template <typename Cls>
void bind_ctor(Cls& c, const ListExpr*) {
  c.def(nb::new_([](std::vector<ExprPtr> e, Span s) { return unconst<ListExpr>(ListExpr::make(std::move(e), s)); }),
        "elems"_a, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const TupleGetItem*) {
  c.def(nb::new_([](ExprPtr t, int i, Span s) { return unconst<TupleGetItem>(TupleGetItem::make(std::move(t), i, s)); }),
        "tuple"_a, "index"_a, "span"_a = Span{});
}
// Scalar pl.cast: make_cast builds it (a constant operand folds to a constant).
template <typename Cls>
void bind_ctor(Cls&, const CastExpr*) {}

template <typename Cls>
void bind_ctor(Cls& c, const AssignStmt*) {
  c.def(nb::new_([](VarPtr v, ExprPtr e, Span s) { return unconst<AssignStmt>(AssignStmt::make(std::move(v), std::move(e), s)); }),
        "var"_a, "value"_a, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const EvalStmt*) {
  c.def(nb::new_([](ExprPtr e, Span s) { return unconst<EvalStmt>(EvalStmt::make(std::move(e), s)); }), "expr"_a,
        "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const ForStmt*) {
  c.def(nb::new_([](VarPtr lv, ExprPtr b, ExprPtr e, ExprPtr st, std::vector<VarPtr> ia, std::vector<ExprPtr> iv,
                    StmtPtr bd, std::vector<VarPtr> rv, ForKind fk, int64_t stg, Span s, const nb::dict& attrs) {
          return unconst<ForStmt>(ForStmt::make(std::move(lv), std::move(b), std::move(e), std::move(st), std::move(ia),
                                                std::move(iv), std::move(bd), std::move(rv), fk, stg, s, to_attrs(attrs)));
        }),
        "loop_var"_a, "start"_a, "stop"_a, "step"_a, "iter_args"_a, "init_values"_a, "body"_a, "return_vars"_a,
        "for_kind"_a = ForKind::Range, "stages"_a = 0, "span"_a = Span{}, "attrs"_a = nb::dict());
}
template <typename Cls>
void bind_ctor(Cls& c, const WhileStmt*) {
  c.def(nb::new_([](std::vector<VarPtr> ia, std::vector<ExprPtr> iv, ExprPtr c, StmtPtr bd, std::vector<VarPtr> rv, Span s) {
          return unconst<WhileStmt>(
              WhileStmt::make(std::move(ia), std::move(iv), std::move(c), std::move(bd), std::move(rv), s));
        }),
        "iter_args"_a, "init_values"_a, "cond"_a, "body"_a, "return_vars"_a, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const IfStmt*) {
  c.def(nb::new_([](ExprPtr c, StmtPtr t, StmtPtr e, std::vector<VarPtr> rv, Span s) {
          return unconst<IfStmt>(IfStmt::make(std::move(c), std::move(t), std::move(e), std::move(rv), s));
        }),
        "cond"_a, "then_body"_a, "else_body"_a.none() = nb::none(), "return_vars"_a = std::vector<VarPtr>{},
        "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const YieldStmt*) {
  c.def(nb::new_([](std::vector<ExprPtr> v, Span s) { return unconst<YieldStmt>(YieldStmt::make(std::move(v), s)); }),
        "values"_a, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const ReturnStmt*) {
  c.def(nb::new_([](std::vector<ExprPtr> v, Span s) { return unconst<ReturnStmt>(ReturnStmt::make(std::move(v), s)); }),
        "values"_a, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const SeqStmts*) {
  c.def(nb::new_([](std::vector<StmtPtr> v, Span s) { return unconst<SeqStmts>(SeqStmts::make(std::move(v), s)); }),
        "stmts"_a, "span"_a = Span{});
}
template <typename Cls>
void bind_ctor(Cls& c, const ScopeStmt*) {
  c.def(nb::new_([](Level l, StmtPtr b, Span s, int64_t task_id, std::vector<int64_t> deps, int64_t block_num,
                    std::vector<VarPtr> block_vars, bool manual, std::vector<ExprPtr> dyn_deps, nb::dict hints) {
          return unconst<ScopeStmt>(ScopeStmt::make(
              l, std::move(b), s, task_info(task_id, std::move(deps), block_num, manual, std::move(dyn_deps), hints),
              std::move(block_vars)));
        }),
        "level"_a, "body"_a, "span"_a = Span{}, "task_id"_a = -1, "deps"_a = std::vector<int64_t>{}, "block_num"_a = 0,
        "block_vars"_a = std::vector<VarPtr>{}, "manual"_a = false, "dyn_deps"_a = std::vector<ExprPtr>{},
        "hints"_a = nb::dict());
}

#define PYPTO_BF(kind, name) bind_field_##kind(cls, #name, &N::name);
#define PYPTO_X(Kind, Class, hook)                   \
  {                                                  \
    using N = Class;                                 \
    nb::class_<N, Base> cls(m, #Class);              \
    bind_ctor(cls, static_cast<const N*>(nullptr));  \
    PYPTO_FIELDS_##Class(PYPTO_BF)                   \
  }

void bind_exprs(nb::module_& m) {
  nb::class_<Expr>(m, "Expr")
      .def_ro("type", &Expr::type)
      .def_ro("span", &Expr::span)
      .def_prop_ro("node_id", [](const Expr& e) { return reinterpret_cast<uintptr_t>(&e); })
      .def("__str__", [](nb::handle self) { return print_expr(nb::cast<ExprPtr>(self)); });
  using Base = Expr;
  PYPTO_EXPR_NODES(PYPTO_X)
  m.def("make_cast", [](ExprPtr a, DataType to, const std::string& mode, Span s) { return CastExpr::make(std::move(a), to, mode, s); },
        "a"_a, "dtype"_a, "mode"_a = "round", "span"_a = Span{});
  m.def(
      "substitute",
      [](const ExprPtr& e, const std::vector<std::pair<VarPtr, ExprPtr>>& values) {
        std::unordered_map<const Var*, ExprPtr> map;
        for (auto& [v, x] : values) map[v.get()] = x;
        return substitute(e, map);
      },
      "expr"_a, "values"_a, "`expr` with the uses of each Var replaced by its value (calls re-infer their types).");
}

void bind_stmts(nb::module_& m) {
  nb::class_<Stmt>(m, "Stmt").def_ro("span", &Stmt::span);
  using Base = Stmt;
  PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
#undef PYPTO_BF

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
      .def_ro("memory", &ParamSpec::memory)  // DDR: a tile op's operand that is a tensor in global memory
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
  m.def(  // the parameter index of each positional argument, then each keyword (the parser's binding)
      "bind_op_arguments",
      [](const std::string& name, size_t positional, const std::vector<std::string>& keywords, const std::string& shown,
         const Span& span) {
        const OpDef* op = OpRegistry::instance().find(name);
        if (!op) fail(ErrorKind::kType, span, "unknown op 'pl." + name + "'", "see docs/ops.md for the ops of the language");
        return bind_op_arguments(*op, positional, keywords, shown, span);
      },
      "name"_a, "positional"_a, "keywords"_a, "shown"_a, "span"_a = Span{});
  m.def(
      "op_signature",
      [](const std::string& name) {
        const OpDef* op = OpRegistry::instance().find(name);
        if (!op) fail(ErrorKind::kType, Span{}, "unknown op 'pl." + name + "'", "see docs/ops.md for the ops of the language");
        return op_signature(*op);
      },
      "name"_a);
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

// The IR printer: emits the `@pl.program` class form that the DSL parser reads back.
// Every op call prints as `pl.<registry name>(...)`; variables get unique SSA names per
// function; yields print as assignments of the enclosing for/if's return variables. A while
// loop prints as `for (x_1,) in pl.while_(init_values=(x,)):` whose body starts `pl.cond(c)`.
#include "pypto/ir/printer.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include "pypto/ir/op_def.h"

namespace pypto::ir {

std::string python_float(double v) {
  if (v != v) return "float('nan')";
  if (v == std::numeric_limits<double>::infinity()) return "float('inf')";
  if (v == -std::numeric_limits<double>::infinity()) return "float('-inf')";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "'";
}

bool is_python_keyword(const std::string& s) {
  static const std::set<std::string> kw = {"False", "None", "True", "and", "as", "assert", "async", "await",
                                           "break", "class", "continue", "def", "del", "elif", "else", "except",
                                           "finally", "for", "from", "global", "if", "import", "in", "is",
                                           "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
                                           "while", "with", "yield", "pl", "self", "torch"};
  return kw.count(s) > 0;
}

}  // namespace

std::string PythonNamer::name(const Var* v) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  std::string base;
  for (char c : v->name) base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (base.empty()) base = "v";
  if (std::isdigit(static_cast<unsigned char>(base[0]))) base = "v" + base;
  if (is_python_keyword(base)) base += "_";
  std::string cand = base;
  for (int k = 1; used_.count(cand); ++k) cand = base + "_" + std::to_string(k);
  used_.insert(cand);
  names_[v] = cand;
  return cand;
}

namespace {

class Printer {
 public:
  std::string type(const TypePtr& t) {
    if (!t) return "None";
    if (auto* s = t->as<ScalarType>()) return std::string("pl.Scalar[pl.") + dtype_name(s->dtype) + "]";
    if (auto* s = t->as<TensorType>()) {
      std::string out = "pl.Tensor[" + list(s->shape) + ", pl." + dtype_name(s->dtype);
      if (!s->stride.empty()) {
        out += ", pl.TensorView(stride=[";
        for (size_t i = 0; i < s->stride.size(); ++i) out += (i ? ", " : "") + std::to_string(s->stride[i]);
        out += std::string("], layout=pl.TensorLayout.") + (s->dn ? "DN" : "ND") + ")";
      }
      return out + "]";
    }
    if (auto* s = t->as<TileType>()) {
      std::string out = "pl.Tile[" + list(s->shape) + ", pl." + dtype_name(s->dtype) + ", pl.Mem." +
                        memory_space_name(s->memory);
      if (!s->valid_shape.empty()) out += ", pl.ValidShape(" + list(s->valid_shape) + ")";
      if (s->pad != PadValue::null) out += std::string(", pl.PadValue.") + pad_value_name(s->pad);
      if (s->addr >= 0) out += ", pl.Addr(" + std::to_string(s->addr) + ")";
      return out + "]";
    }
    if (auto* s = t->as<ArrayType>()) return "pl.Array[" + std::to_string(s->size) + ", pl." + dtype_name(s->dtype) + "]";
    if (auto* s = t->as<TupleType>()) {
      std::string out = "pl.Tuple[";
      for (size_t i = 0; i < s->elems.size(); ++i) out += (i ? ", " : "") + type(s->elems[i]);
      return out + "]";
    }
    return "None";
  }

  std::string list(const std::vector<ExprPtr>& xs) {
    std::string out = "[";
    for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + expr(xs[i]);
    return out + "]";
  }

  // An operand of an infix operator: parenthesised when it is itself an operator.
  std::string operand(const ExprPtr& e) {
    if (auto* b = e->as<BinaryExpr>(); b && b->op != BinaryOp::Min && b->op != BinaryOp::Max) return "(" + expr(e) + ")";
    if (e->as<UnaryExpr>()) return "(" + expr(e) + ")";
    return expr(e);
  }

  // One method per expression node; the dispatch comes from the node list (ir/nodes.def), so a
  // node without its printer case does not compile.
  std::string expr(const ExprPtr& e) {
    if (!e) return "None";
    switch (e->kind) {
#define PYPTO_PRINT_EXPR(Kind, Class, hook) \
  case ExprKind::Kind: return print_##hook(*static_cast<const Class*>(e.get()));
      PYPTO_EXPR_NODES(PYPTO_PRINT_EXPR)
#undef PYPTO_PRINT_EXPR
    }
    return "None";
  }

  std::string print_var(const Var& v) { return namer.name(&v); }
  std::string print_const_int(const ConstInt& c) {
    DataType d = c.type->as<ScalarType>()->dtype;
    if (d == DataType::INDEX) return std::to_string(c.value);
    return "pl.const(" + std::to_string(c.value) + ", pl." + dtype_name(d) + ")";
  }
  std::string print_const_float(const ConstFloat& c) {
    DataType d = c.type->as<ScalarType>()->dtype;
    if (d == DataType::FP32) return python_float(c.value);
    return "pl.const(" + python_float(c.value) + ", pl." + dtype_name(d) + ")";
  }
  std::string print_const_bool(const ConstBool& c) { return c.value ? "True" : "False"; }
  std::string print_binary(const BinaryExpr& b) {
    if (b.op == BinaryOp::Min || b.op == BinaryOp::Max)
      return std::string("pl.") + binary_op_symbol(b.op) + "(" + expr(b.a) + ", " + expr(b.b) + ")";
    return operand(b.a) + " " + binary_op_symbol(b.op) + " " + operand(b.b);
  }
  std::string print_unary(const UnaryExpr& u) { return (u.op == UnaryOp::Neg ? "-" : "not ") + operand(u.a); }
  std::string print_cast(const CastExpr& c) {
    return "pl.cast(" + expr(c.a) + ", pl." + dtype_name(c.type->as<ScalarType>()->dtype) + ")";
  }
  std::string print_call(const Call& c) { return call(c); }
  std::string print_func_call(const FuncCall& f) {
    std::string out = "self." + f.callee + "(";
    for (size_t i = 0; i < f.args.size(); ++i) out += (i ? ", " : "") + expr(f.args[i]);
    // A launch's task info as keywords that parse back (ids as integers: the program's
    // launches after OutlineIncore have no `with ... as` names).
    std::string kw;
    if (f.task.task_id >= 0) kw += ", task_id=" + std::to_string(f.task.task_id);
    if (!f.task.deps.empty() || !f.task.dyn_deps.empty()) {
      std::string d;
      for (int64_t t : f.task.deps) d += (d.empty() ? "" : ", ") + std::to_string(t);
      for (auto& e : f.task.dyn_deps) d += (d.empty() ? "" : ", ") + expr(e);
      kw += ", deps=[" + d + "]";
    }
    if (f.task.block_num > 0) kw += ", block_num=" + std::to_string(f.task.block_num);
    if (f.task.manual) kw += ", manual=True";
    kw += hints(f.task);
    if (!kw.empty()) out += f.args.empty() ? kw.substr(2) : kw;
    return out + ")";
  }
  std::string print_list(const ListExpr& l) { return list(l.elems); }
  std::string print_tuple_get(const TupleGetItem& t) { return operand(t.tuple) + "[" + std::to_string(t.index) + "]"; }

  // PyPTO's launch keywords of a pl.at / pl.spmd scope or a kernel launch (", k=v" each).
  std::string hints(const TaskInfo& t, bool scope = false) {
    static const char* roles[] = {"", "Orchestrator", "Worker", "SubWorker"};
    static const char* splits[] = {"NONE", "UP_DOWN", "LEFT_RIGHT"};
    std::string kw;
    if (t.role > 0 && t.role <= 3) kw += std::string(", role=pl.Role.") + roles[t.role];
    if (t.core_num && !scope) kw += ", core_num=" + expr(t.core_num);
    if (t.sync_start) kw += ", sync_start=True";
    if (!t.name_hint.empty()) kw += ", name_hint=" + quote(t.name_hint);
    std::string opts;
    if (t.split >= 0 && t.split <= 2) {
      opts += std::string("pl.split(pl.SplitMode.") + splits[t.split];
      if (t.split_slot_num > 0) opts += ", slot_num=" + std::to_string(t.split_slot_num);
      opts += ")";
    }
    if (t.slot_num > 0) opts += (opts.empty() ? "" : ", ") + std::string("pl.cross_core_slot(slot_num=") + std::to_string(t.slot_num) + ")";
    if (!opts.empty()) kw += ", optimizations=[" + opts + "]";
    if (!t.no_dep_args.empty()) kw += ", no_dep_args=" + list(t.no_dep_args);
    if (!t.dumps.empty()) kw += ", dumps=" + list(t.dumps);
    if (t.allow_early_resolve) kw += ", allow_early_resolve=True";
    if (t.windowize) kw += ", windowize=True";
    if (t.predicate) kw += ", predicate=(" + expr(t.predicate) + ")";
    return kw;
  }
  static std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += (c == '\\' || c == '\'') ? std::string("\\") + c : std::string(1, c);
    return out + "'";
  }

  // Required parameters print by position, optional ones and attributes by keyword.
  std::string call(const Call& c) {
    // A launch's task id as a value: the name the launch binds (`as task_N` / task_id=N).
    if (c.op->name == "task.latest") return "task_" + std::to_string(std::get<int64_t>(c.attrs.at("task_id")));
    std::vector<std::string> parts;
    bool positional = true;
    size_t k = 0;
    for (auto& p : c.op->params) {
      std::string value;
      bool required;
      if (p.kind == ParamKind::kAttr) {
        auto it = c.attrs.find(p.name);
        required = !p.default_value.has_value();
        if (it == c.attrs.end() || (p.quiet && p.default_value && it->second == *p.default_value)) {
          positional = false;
          continue;
        }
        value = print_attr(it->second);
      } else {
        ExprPtr a = k < c.args.size() ? c.args[k] : nullptr;
        ++k;
        required = !p.optional;
        if (!a) {
          positional = false;
          continue;
        }
        value = expr(a);
      }
      positional = positional && required;
      parts.push_back(positional ? value : p.name + "=" + value);
    }
    std::string out = "pl." + c.op->name + "(";
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    return out + ")";
  }

  void line(int indent, const std::string& s) { os << std::string(indent * 4, ' ') << s << "\n"; }

  void flatten(const StmtPtr& s, std::vector<StmtPtr>& out) {
    if (!s) return;
    if (auto* seq = s->as<SeqStmts>()) {
      for (auto& x : seq->stmts) flatten(x, out);
    } else {
      out.push_back(s);
    }
  }

  void block(const StmtPtr& s, int indent) {
    std::vector<StmtPtr> stmts;
    flatten(s, stmts);
    if (stmts.empty()) line(indent, "pass");
    for (auto& x : stmts) stmt(x, indent);
  }

  std::string targets(const std::vector<VarPtr>& vars) {
    std::string out;
    for (size_t i = 0; i < vars.size(); ++i) out += (i ? ", " : "") + expr(vars[i]);
    return out;
  }

  std::string exprs(const std::vector<ExprPtr>& xs) {
    std::string out;
    for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + expr(xs[i]);
    return out;
  }

  // One method per statement node, dispatched from the node list (ir/nodes.def).
  void stmt(const StmtPtr& s, int indent) {
    switch (s->kind) {
#define PYPTO_PRINT_STMT(Kind, Class, hook) \
  case StmtKind::Kind: print_##hook(s, *static_cast<const Class*>(s.get()), indent); break;
      PYPTO_STMT_NODES(PYPTO_PRINT_STMT)
#undef PYPTO_PRINT_STMT
    }
  }

  void print_assign(const StmtPtr&, const AssignStmt& a, int indent) {
    line(indent, expr(a.var) + ": " + type(a.var->type) + " = " + expr(a.value));
  }
  void print_eval(const StmtPtr&, const EvalStmt& e, int indent) { line(indent, expr(e.expr)); }
  void print_yield(const StmtPtr&, const YieldStmt& y, int indent) {
    std::string call = "pl.yield_(" + exprs(y.values) + ")";
    const auto* rv = yield_targets.empty() ? nullptr : yield_targets.back();
    line(indent, rv && !rv->empty() ? targets(*rv) + " = " + call : call);
  }
  void print_return(const StmtPtr&, const ReturnStmt& r, int indent) {
    line(indent, r.values.empty() ? "return" : "return " + exprs(r.values));
  }
  void print_seq(const StmtPtr& s, const SeqStmts&, int indent) { block(s, indent); }
  void print_scope(const StmtPtr&, const ScopeStmt& sc, int indent) {
    std::string head = sc.task.core_num       ? "with pl.spmd(" + expr(sc.task.core_num) + ", level=pl.Level."
                       : sc.task.block_num > 0 ? "with pl.spmd(" + std::to_string(sc.task.block_num) + ", level=pl.Level."
                                               : std::string("with pl.at(level=pl.Level.");
    std::string deps;
    for (int64_t t : sc.task.deps) deps += (deps.empty() ? "task_" : ", task_") + std::to_string(t);
    for (auto& e : sc.task.dyn_deps) deps += (deps.empty() ? "" : ", ") + expr(e);
    head += level_name(sc.level) + (deps.empty() ? "" : ", deps=[" + deps + "]") + (sc.task.manual ? ", manual=True" : "") + hints(sc.task, true) + ")";
    if (sc.task.task_id >= 0) head += " as task_" + std::to_string(sc.task.task_id);
    line(indent, head + ":");
    yield_targets.push_back(nullptr);
    block(sc.body, indent + 1);
    yield_targets.pop_back();
  }
  void print_for(const StmtPtr&, const ForStmt& f, int indent) {
    std::string head = "for " + expr(f.loop_var);
    if (auto m = f.attrs.find("split_aiv"); m != f.attrs.end() && std::holds_alternative<int64_t>(m->second)) {
      static const char* modes[] = {"NONE", "UP_DOWN", "LEFT_RIGHT"};  // a region of pass SplitAiv
      line(indent, head + " in pl.split_aiv(" + expr(f.stop) + ", mode=pl.SplitMode." +
                       modes[std::get<int64_t>(m->second) % 3] + "):");
      block(f.body, indent + 1);
      return;
    }
    if (!f.iter_args.empty()) head += ", (" + targets(f.iter_args) + (f.iter_args.size() == 1 ? ",)" : ")");
    head += std::string(" in pl.") + for_kind_name(f.for_kind) + "(" + expr(f.start) + ", " + expr(f.stop) + ", " +
            expr(f.step);
    if (!f.init_values.empty())
      head += ", init_values=(" + exprs(f.init_values) + (f.init_values.size() == 1 ? ",)" : ")");
    if (f.for_kind == ForKind::Pipeline || f.stages != 0) head += ", stage=" + std::to_string(f.stages);
    if (!f.attrs.empty()) {
      head += ", attrs={";
      bool first = true;
      for (auto& [k, v] : f.attrs) {
        head += (first ? "" : ", ") + quote(k) + ": " + print_attr(v);
        first = false;
      }
      head += "}";
    }
    line(indent, head + "):");
    yield_targets.push_back(&f.return_vars);
    block(f.body, indent + 1);
    yield_targets.pop_back();
  }
  void print_while(const StmtPtr&, const WhileStmt& w, int indent) {
    // `for (x_1, n_1) in pl.while_(init_values=(x, n)):` then `pl.cond(...)` first in the body.
    std::string tuple = w.iter_args.size() == 1 ? "(" + targets(w.iter_args) + ",)" : "(" + targets(w.iter_args) + ")";
    std::string inits = w.init_values.size() == 1 ? "(" + exprs(w.init_values) + ",)" : "(" + exprs(w.init_values) + ")";
    line(indent, "for " + tuple + " in pl.while_(init_values=" + inits + "):");
    line(indent + 1, "pl.cond(" + expr(w.cond) + ")");
    yield_targets.push_back(&w.return_vars);
    std::vector<StmtPtr> stmts;
    flatten(w.body, stmts);
    for (auto& x : stmts) stmt(x, indent + 1);
    yield_targets.pop_back();
  }
  void print_if(const StmtPtr&, const IfStmt& i, int indent) {
    line(indent, "if " + expr(i.cond) + ":");
    yield_targets.push_back(&i.return_vars);
    block(i.then_body, indent + 1);
    if (i.else_body) {
      line(indent, "else:");
      block(i.else_body, indent + 1);
    }
    yield_targets.pop_back();
  }

  void function(const Function& f, int indent) {
    std::string deco = std::string("@pl.function(type=pl.FunctionType.") + function_type_name(f.func_type);
    if (f.level) deco += std::string(", level=pl.Level.") + level_name(*f.level);
    if (f.role) deco += std::string(", role=pl.Role.") + role_name(*f.role);
    line(indent, deco + ")");
    std::string head = "def " + f.name + "(self";
    for (size_t i = 0; i < f.params.size(); ++i) {
      std::string t = type(f.params[i]->type);
      if (f.directions[i] == ParamDirection::Out) t = "pl.Out[" + t + "]";
      if (f.directions[i] == ParamDirection::InOut) t = "pl.InOut[" + t + "]";
      head += ", " + expr(f.params[i]) + ": " + t;
    }
    head += ")";
    if (f.return_types.size() == 1) head += " -> " + type(f.return_types[0]);
    if (f.return_types.size() > 1) {
      head += " -> tuple[";
      for (size_t i = 0; i < f.return_types.size(); ++i) head += (i ? ", " : "") + type(f.return_types[i]);
      head += "]";
    }
    line(indent, head + ":");
    if (!f.attrs.empty()) {
      std::string attrs = "pl.func_attr({";
      bool first = true;
      for (auto& [k, v] : f.attrs) {
        attrs += (first ? "" : ", ") + quote(k) + ": " + print_attr(v);
        first = false;
      }
      line(indent + 1, attrs + "})");
    }
    block(f.body, indent + 1);
  }

  PythonNamer namer;
  std::ostringstream os;
  std::vector<const std::vector<VarPtr>*> yield_targets;
};

}  // namespace

std::string print_attr(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return python_float(v);
        else if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
        else if constexpr (std::is_same_v<T, std::string>) return quote(v);
        else if constexpr (std::is_same_v<T, DataType>) return std::string("pl.") + dtype_name(v);
        else if constexpr (std::is_same_v<T, MemorySpace>) return std::string("pl.Mem.") + memory_space_name(v);
        else if constexpr (std::is_same_v<T, PadValue>) return std::string("pl.PadValue.") + pad_value_name(v);
        else {
          std::string out = "[";
          for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
          return out + "]";
        }
      },
      value);
}

std::string print_program(const ProgramPtr& program) {
  std::ostringstream os;
  os << "import pypto.language as pl\n\n\n@pl.program\nclass " << program->name << ":\n";
  if (program->functions.empty()) os << "    pass\n";
  for (size_t i = 0; i < program->functions.size(); ++i) {
    if (i) os << "\n";
    os << print_function(program->functions[i]);
  }
  return os.str();
}

std::string print_function(const FunctionPtr& function) {
  Printer p;
  p.function(*function, 1);
  return p.os.str();
}

std::string print_type(const TypePtr& type) { return Printer().type(type); }
std::string print_expr(const ExprPtr& expr) { return Printer().expr(expr); }

}  // namespace pypto::ir

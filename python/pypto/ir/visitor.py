"""`pypto.ir.IRVisitor` / `IRMutator`: Python walkers of the bound IR nodes with PyPTO's
visit_* method names.

`visit_expr` / `visit_stmt` dispatch on the node kind; each kind's visit_* visits the
children (the visitor returns None, the mutator returns the node, rebuilt when a child
changed). Binary expressions dispatch to visit_add, visit_sub, ... whose default is
visit_binary_expr; unary ones to visit_neg / visit_not then visit_unary_expr, scalar pl.cast to visit_cast (default
visit_unary_expr). Kernel and
function calls go to visit_call, lists to visit_make_tuple, `with pl.at(...)` scopes to
visit_in_core_scope_stmt (core levels) or visit_hierarchy_scope_stmt. PyPTO's names of node
kinds our IR does not have (iter_arg, mem_ref, window_buffer, submit, the bit ops, pow,
xor, abs, cluster/spmd/split/runtime/comm-domain scopes, break, continue, inline)
exist and are never called."""

from __future__ import annotations

from pypto._core import ir as _ir

_BINARY = {
    "Add": "visit_add", "Sub": "visit_sub", "Mul": "visit_mul", "Div": "visit_float_div",
    "FloorDiv": "visit_floor_div", "Mod": "visit_floor_mod", "Min": "visit_min", "Max": "visit_max",
    "Eq": "visit_eq", "Ne": "visit_ne", "Lt": "visit_lt", "Le": "visit_le", "Gt": "visit_gt", "Ge": "visit_ge",
    "And": "visit_and", "Or": "visit_or",
}
_UNARY = {"Neg": "visit_neg", "Not": "visit_not"}
# Binary / unary kinds PyPTO has and our IR does not: their visit_* names exist, never called.
_BINARY_ONLY_PYPTO = ("visit_pow", "visit_xor", "visit_bit_and", "visit_bit_or", "visit_bit_xor",
                      "visit_bit_shift_left", "visit_bit_shift_right")
_UNARY_ONLY_PYPTO = ("visit_abs", "visit_bit_not", "visit_cast")
_CORE_LEVELS = ("AIV", "AIC", "CORE_GROUP")

_EXPR = {
    _ir.Var: "visit_var", _ir.ConstInt: "visit_const_int", _ir.ConstFloat: "visit_const_float",
    _ir.ConstBool: "visit_const_bool", _ir.Call: "visit_call", _ir.FuncCall: "visit_call",
    _ir.ListExpr: "visit_make_tuple", _ir.TupleGetItem: "visit_tuple_get_item_expr",
}
_STMT = {
    _ir.AssignStmt: "visit_assign_stmt", _ir.EvalStmt: "visit_eval_stmt", _ir.ForStmt: "visit_for_stmt",
    _ir.WhileStmt: "visit_while_stmt", _ir.IfStmt: "visit_if_stmt", _ir.YieldStmt: "visit_yield_stmt",
    _ir.ReturnStmt: "visit_return_stmt", _ir.SeqStmts: "visit_seq_stmts",
}


def _expr_method(node):
    if isinstance(node, _ir.BinaryExpr):
        return _BINARY[node.op.name]
    if isinstance(node, _ir.UnaryExpr):
        return _UNARY[node.op.name]
    if isinstance(node, _ir.CastExpr):
        return "visit_cast"  # scalar pl.cast; default visit_unary_expr (its operand is op.a)
    for cls in type(node).__mro__:
        if cls in _EXPR:
            return _EXPR[cls]
    return None


def _stmt_method(node):
    if isinstance(node, _ir.ScopeStmt):
        return "visit_in_core_scope_stmt" if node.level.name in _CORE_LEVELS else "visit_hierarchy_scope_stmt"
    for cls in type(node).__mro__:
        if cls in _STMT:
            return _STMT[cls]
    return None


class IRVisitor:
    """Walks a Program, Function, statement or expression; override visit_* to look at nodes."""

    def __init__(self):
        pass

    # ---- entry points ----
    def visit_program(self, program):
        for f in program.functions.values():
            self.visit_function(f)

    def visit_function(self, func):
        for p in func.params:
            self.visit_var(p)
        self.visit_stmt(func.body)

    def visit_expr(self, expr):
        if expr is None:
            return None
        method = _expr_method(expr)
        if method is None:
            return None
        return getattr(self, method)(expr)

    def visit_stmt(self, stmt):
        if stmt is None:
            return None
        method = _stmt_method(stmt)
        if method is None:
            raise TypeError(f"IRVisitor: no visit method for a {type(stmt).__name__}")
        return getattr(self, method)(stmt)

    # ---- expressions ----
    def visit_var_like(self, op):
        pass

    def visit_var(self, op):
        return self.visit_var_like(op)

    def visit_iter_arg(self, op):
        return self.visit_var_like(op)

    def visit_mem_ref(self, op):
        return self.visit_var_like(op)

    def visit_window_buffer(self, op):
        return self.visit_var_like(op)

    def visit_const_int(self, op):
        pass

    def visit_const_float(self, op):
        pass

    def visit_const_bool(self, op):
        pass

    def visit_call(self, op):
        for a in op.args:
            self.visit_expr(a)

    def visit_submit(self, op):
        return self.visit_call(op)

    def visit_make_tuple(self, op):
        for e in op.elems:
            self.visit_expr(e)

    def visit_tuple_get_item_expr(self, op):
        self.visit_expr(op.tuple)

    def visit_binary_expr(self, op):
        self.visit_expr(op.a)
        self.visit_expr(op.b)

    def visit_unary_expr(self, op):
        self.visit_expr(op.a)

    # ---- statements ----
    def visit_assign_stmt(self, op):
        self.visit_var(op.var)
        self.visit_expr(op.value)

    def visit_eval_stmt(self, op):
        self.visit_expr(op.expr)

    def visit_if_stmt(self, op):
        self.visit_expr(op.cond)
        self.visit_stmt(op.then_body)
        if op.else_body is not None:
            self.visit_stmt(op.else_body)

    def visit_for_stmt(self, op):
        self.visit_var(op.loop_var)
        for e in (op.start, op.stop, op.step, *op.init_values):
            self.visit_expr(e)
        self.visit_stmt(op.body)

    def visit_while_stmt(self, op):
        for e in op.init_values:
            self.visit_expr(e)
        self.visit_expr(op.cond)
        self.visit_stmt(op.body)

    def visit_seq_stmts(self, op):
        for s in op.stmts:
            self.visit_stmt(s)

    def visit_yield_stmt(self, op):
        for v in op.values:
            self.visit_expr(v)

    def visit_return_stmt(self, op):
        for v in op.values:
            self.visit_expr(v)

    def _visit_scope(self, op):
        self.visit_stmt(op.body)

    visit_in_core_scope_stmt = _visit_scope
    visit_hierarchy_scope_stmt = _visit_scope
    visit_cluster_scope_stmt = _visit_scope
    visit_spmd_scope_stmt = _visit_scope
    visit_split_aiv_scope_stmt = _visit_scope
    visit_runtime_scope_stmt = _visit_scope
    visit_comm_domain_scope_stmt = _visit_scope

    def visit_break_stmt(self, op):
        pass

    def visit_continue_stmt(self, op):
        pass

    def visit_inline_stmt(self, op):
        pass


def _binary_default(self, op):
    return self.visit_binary_expr(op)


def _unary_default(self, op):
    return self.visit_unary_expr(op)


for _name in (*_BINARY.values(), *_BINARY_ONLY_PYPTO):
    setattr(IRVisitor, _name, _binary_default)
for _name in (*_UNARY.values(), *_UNARY_ONLY_PYPTO):
    setattr(IRVisitor, _name, _unary_default)


def _rebuild_call(op, args):
    """The op call `op` with its value arguments replaced by `args` (in the order of the op's
    Expr / ExprList parameters; attributes kept); its type is inferred again."""
    specs = [p for p in (_ir.op_params(op.op_name) or []) if p.kind != _ir.ParamKind.Attr]
    kwargs = {spec.name: a for spec, a in zip(specs, args) if a is not None}
    return _ir.make_op_call(op.op_name, [], kwargs, dict(op.attrs), op.span)


def _same(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class IRMutator(IRVisitor):
    """Rewrites a Program, Function, statement or expression: each visit_* returns the node,
    rebuilt (a new node of the same kind) when a visited child came back different. Override
    visit_* to replace nodes; variables are kept as they are unless visit_var returns another."""

    def visit_program(self, program):
        funcs = [self.visit_function(f) for f in program.functions.values()]
        if _same(funcs, program.functions.values()):
            return program
        return _ir.Program(program.name, funcs)

    def visit_function(self, func):
        body = self.visit_stmt(func.body)
        if body is func.body:
            return func
        return _ir.Function(func.name, list(func.params), list(func.directions), list(func.return_types), body,
                            func.func_type, func.span)

    def visit_expr(self, expr):
        if expr is None:
            return None
        method = _expr_method(expr)
        return expr if method is None else getattr(self, method)(expr)

    def visit_var_like(self, op):
        return op

    def visit_const_int(self, op):
        return op

    visit_const_float = visit_const_int
    visit_const_bool = visit_const_int

    def visit_call(self, op):
        args = [self.visit_expr(a) for a in op.args]
        if _same(args, op.args):
            return op
        if isinstance(op, _ir.FuncCall):
            return _ir.FuncCall(op.callee, args, op.type, op.span, op.task_id, list(op.deps), op.block_num,
                                op.manual, list(op.dyn_deps))
        return _rebuild_call(op, args)

    def visit_make_tuple(self, op):
        elems = [self.visit_expr(e) for e in op.elems]
        return op if _same(elems, op.elems) else _ir.ListExpr(elems, op.span)

    def visit_tuple_get_item_expr(self, op):
        t = self.visit_expr(op.tuple)
        return op if t is op.tuple else _ir.TupleGetItem(t, op.index, op.span)

    def visit_binary_expr(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        return op if (a is op.a and b is op.b) else _ir.BinaryExpr(op.op, a, b, op.span)

    def visit_unary_expr(self, op):
        a = self.visit_expr(op.a)
        return op if a is op.a else _ir.UnaryExpr(op.op, a, op.span)

    def visit_cast(self, op):
        a = self.visit_expr(op.a)
        return op if a is op.a else _ir.make_cast(a, op.type.dtype, "round", op.span)

    def visit_assign_stmt(self, op):
        var, value = self.visit_var(op.var), self.visit_expr(op.value)
        return op if (var is op.var and value is op.value) else _ir.AssignStmt(var, value, op.span)

    def visit_eval_stmt(self, op):
        e = self.visit_expr(op.expr)
        return op if e is op.expr else _ir.EvalStmt(e, op.span)

    def visit_if_stmt(self, op):
        cond = self.visit_expr(op.cond)
        then = self.visit_stmt(op.then_body)
        other = self.visit_stmt(op.else_body) if op.else_body is not None else None
        if cond is op.cond and then is op.then_body and other is op.else_body:
            return op
        return _ir.IfStmt(cond, then, other, list(op.return_vars), op.span)

    def visit_for_stmt(self, op):
        start, stop, step = (self.visit_expr(e) for e in (op.start, op.stop, op.step))
        inits = [self.visit_expr(e) for e in op.init_values]
        body = self.visit_stmt(op.body)
        if start is op.start and stop is op.stop and step is op.step and _same(inits, op.init_values) \
                and body is op.body:
            return op
        return _ir.ForStmt(op.loop_var, start, stop, step, list(op.iter_args), inits, body, list(op.return_vars),
                           op.for_kind, op.stages, op.span)

    def visit_while_stmt(self, op):
        inits = [self.visit_expr(e) for e in op.init_values]
        cond, body = self.visit_expr(op.cond), self.visit_stmt(op.body)
        if _same(inits, op.init_values) and cond is op.cond and body is op.body:
            return op
        return _ir.WhileStmt(list(op.iter_args), inits, cond, body, list(op.return_vars), op.span)

    def visit_seq_stmts(self, op):
        stmts = [self.visit_stmt(s) for s in op.stmts]
        return op if _same(stmts, op.stmts) else _ir.SeqStmts(stmts, op.span)

    def visit_yield_stmt(self, op):
        vals = [self.visit_expr(v) for v in op.values]
        return op if _same(vals, op.values) else _ir.YieldStmt(vals, op.span)

    def visit_return_stmt(self, op):
        vals = [self.visit_expr(v) for v in op.values]
        return op if _same(vals, op.values) else _ir.ReturnStmt(vals, op.span)

    def _visit_scope(self, op):
        body = self.visit_stmt(op.body)
        if body is op.body:
            return op
        return _ir.ScopeStmt(op.level, body, op.span, op.task_id, list(op.deps), op.block_num, list(op.block_vars),
                             op.manual, list(op.dyn_deps))

    visit_in_core_scope_stmt = _visit_scope
    visit_hierarchy_scope_stmt = _visit_scope
    visit_cluster_scope_stmt = _visit_scope
    visit_spmd_scope_stmt = _visit_scope
    visit_split_aiv_scope_stmt = _visit_scope
    visit_runtime_scope_stmt = _visit_scope
    visit_comm_domain_scope_stmt = _visit_scope

    def visit_break_stmt(self, op):
        return op

    visit_continue_stmt = visit_break_stmt
    visit_inline_stmt = visit_break_stmt

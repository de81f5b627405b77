"""`with pl.scope():` and `with pl.manual_scope():` in an orchestration. A scope bounds the
lifetime of the tensors created in it: they are not visible after the block (the runtime
frees a created tensor after its last use, so never later than the scope's end). Kernel
launches inside a manual scope get no automatic dependencies on one another; they wait for
their explicit `deps=[...]` only (and for earlier tasks outside manual scopes). Neither
block leaves a node in the IR: launches carry `manual=True` (printed that way)."""

import ast

from pypto._core import ir

from . import ops


def _manual(stmt):
    """`stmt` with its kernel launch (a call statement or a pl.at block) marked manual."""
    if isinstance(stmt, ir.ScopeStmt):
        if stmt.manual:
            return stmt
        return ir.ScopeStmt(stmt.level, stmt.body, stmt.span, task_id=stmt.task_id, deps=list(stmt.deps),
                            block_num=stmt.block_num, block_vars=list(stmt.block_vars), manual=True,
                            dyn_deps=list(stmt.dyn_deps), hints=stmt.hints)
    value = stmt.value if isinstance(stmt, ir.AssignStmt) else stmt.expr if isinstance(stmt, ir.EvalStmt) else None
    if not isinstance(value, ir.FuncCall) or value.manual:
        return stmt
    call = ir.FuncCall(value.callee, list(value.args), value.type, value.span, task_id=value.task_id,
                       deps=list(value.deps), block_num=value.block_num, manual=True, dyn_deps=list(value.dyn_deps),
                       hints=value.hints)
    if isinstance(stmt, ir.AssignStmt):
        return ir.AssignStmt(stmt.var, call, stmt.span)
    return ir.EvalStmt(call, stmt.span)


class ScopeParser:
    """Mixin of FunctionParser (before StmtParser and ControlFlowParser): the scope blocks,
    and `pl.at(..., manual=True)` as the IR printer writes a manual launch."""

    manual_depth = 0

    def emit(self, stmt):
        super().emit(_manual(stmt) if self.manual_depth else stmt)

    def stmt_With(self, node):
        if len(node.items) == 1 and isinstance(node.items[0].context_expr, ast.Call):
            call = node.items[0].context_expr
            func = self.eval(call.func)
            if isinstance(func, ops.Construct) and func.name in ("scope", "manual_scope"):
                return self.lifetime_scope(node, func.name, call)
            if isinstance(func, ops.Construct) and func.name == "cluster":
                return self.cluster_scope(node, call)
            if isinstance(func, ops.Construct) and func.name == "split_aiv":  # `with pl.split_aiv(...) as aiv_id:`
                return self.split_aiv_region(node, func, call, node.items[0].optional_vars, node.body)
            if isinstance(func, ops.Construct) and func.name in ("at", "spmd"):
                manual = [k for k in call.keywords if k.arg == "manual"]
                if manual:
                    return self.manual_launch(node, call, manual[0])
        return super().stmt_With(node)

    def lifetime_scope(self, node, name, call):
        from .launch import ScopeMode
        if node.items[0].optional_vars is not None:
            raise self.error(node, f"pl.{name}() binds no name", f"write `with pl.{name}():`")
        b = self.bind_construct(ops.scope if name == "scope" else ops.manual_scope, call, node)
        mode = b.get("mode")
        if mode is not None and not isinstance(mode, ScopeMode):
            raise self.error(node, f"mode= of pl.scope takes a pl.ScopeMode, got {self.describe(mode)}",
                             "write pl.scope(mode=pl.ScopeMode.MANUAL) or pl.scope(mode=pl.ScopeMode.AUTO)")
        manual = name == "manual_scope" or mode == ScopeMode.MANUAL
        if self.manual_depth:  # PyPTO forbids AUTO-in-MANUAL and MANUAL-in-MANUAL
            inner = "a manual scope" if manual else "an AUTO pl.scope()"
            raise self.error(node, f"{inner} inside a manual scope: scopes do not nest in a MANUAL scope",
                             "close the manual scope first, or drop the inner `with`")
        before = dict(self.symbols)
        known = {v.node_id for v in before.values() if isinstance(v, ir.Expr)}
        self.manual_depth += manual
        try:
            for stmt in node.body:
                self.parse_stmt(stmt)
        finally:
            self.manual_depth -= manual
        # Tensors born in the block that are neither outputs nor values from before it are
        # the block's own: they end with it. Other names (rebound outputs, scalars) stay.
        for n, v in list(self.symbols.items()):
            if n in before or not isinstance(v, ir.Var) or not isinstance(v.type, ir.TensorType):
                continue
            if v.node_id in self.lineage or v.node_id in known:
                continue
            del self.symbols[n]
            self.out_of_scope[n] = (f"`with pl.{name}()` at line {self.span(node).line}, which frees the "
                                    "tensors created in it at its end,")

    def manual_launch(self, node, call, keyword):
        flag = self.eval(keyword.value)
        if not isinstance(flag, bool):
            raise self.error(node, f"manual= of pl.at takes True or False, got '{self.text(keyword.value)}'",
                             "write manual=True (or put the block inside `with pl.manual_scope():`)")
        stripped = ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k is not keyword])
        ast.copy_location(stripped, call)
        item = ast.withitem(context_expr=stripped, optional_vars=node.items[0].optional_vars)
        plain = ast.copy_location(ast.With(items=[item], body=node.body, type_comment=None), node)
        self.manual_depth += flag
        try:
            return super().stmt_With(plain)
        finally:
            self.manual_depth -= flag

    def cluster_scope(self, node, call):
        """`with pl.cluster(name_hint=''):` over calls of AIC and AIV functions (class form):
        the calls become a Group function (one mixed task on one cluster) and the block a call
        of it. Arguments of the calls must be values from before the block or constants."""
        fix = ("put only calls of self.<AIC function> and self.<AIV function> in the block, with values from "
               "before it (or constants) as arguments")
        b = self.bind_construct(ops.cluster, call, node)
        if node.items[0].optional_vars is not None:
            raise self.error(node, "pl.cluster() binds no name", "write `with pl.cluster():`")
        name = b.get("name_hint") or ""
        if name and (not isinstance(name, str) or not name.isidentifier()):
            raise self.error(node, f"name_hint= of pl.cluster must be a Python identifier, got {name!r}",
                             "write name_hint='fused'")
        before = dict(self.symbols)
        stmts = self.parse_stmts(node.body)
        self.symbols = before
        span = self.span(node)
        inner, params, outer_args, param_of = set(), [], [], {}
        current = {}  # param node_id -> its latest value inside the group
        body = []
        for st in stmts:
            value = st.value if isinstance(st, ir.AssignStmt) else st.expr if isinstance(st, ir.EvalStmt) else None
            if not isinstance(value, ir.FuncCall) or value.task_id >= 0 or value.deps or value.block_num:
                raise self.error(node, "a pl.cluster block holds kernel calls only", fix)
            if value.hints["predicate"] is not None or value.hints["allow_early_resolve"]:
                raise self.error(node, "predicate= and allow_early_resolve= are not allowed under pl.cluster() "
                                       "(its parts start together on one cluster)",
                                 "drop them from the calls in the pl.cluster block")
            callee = self.program.method(value.callee, self, node)
            args = []
            for a, direction in zip(value.args, callee.directions):
                if isinstance(a, ir.Var) and a.node_id not in inner:
                    if a.node_id not in param_of:
                        p = ir.Var(a.name, a.type, span)
                        param_of[a.node_id] = p
                        params.append([p, ir.ParamDirection.In])
                        outer_args.append(a)
                    p = param_of[a.node_id]
                    if direction != ir.ParamDirection.In:
                        entry = next(e for e in params if e[0] is p)
                        if entry[1] != ir.ParamDirection.InOut:
                            entry[1] = direction
                    args.append(current.get(p.node_id, p))
                elif isinstance(a, ir.Var) or isinstance(a, (ir.ConstInt, ir.ConstFloat, ir.ConstBool)):
                    args.append(a)
                else:
                    raise self.error(node, f"argument '{ir.print_expr(a)}' of self.{value.callee} in pl.cluster is "
                                           "computed; a Group function passes its own parameters or constants", fix)
            new_call = ir.FuncCall(value.callee, args, value.type, value.span)
            if isinstance(st, ir.AssignStmt):
                inner.add(st.var.node_id)
                body.append(ir.AssignStmt(st.var, new_call, st.span))
                outs = [param_of[a.node_id] for a, d in zip(value.args, callee.directions)
                        if d != ir.ParamDirection.In and isinstance(a, ir.Var) and a.node_id in param_of]
                if isinstance(st.var.type, ir.TensorType) and len(outs) == 1:
                    current[outs[0].node_id] = st.var
            else:
                body.append(ir.EvalStmt(new_call, st.span))
        outs = [p for p, d in params if d != ir.ParamDirection.In]
        rets = [current.get(p.node_id, p) for p in outs]
        body.append(ir.ReturnStmt(rets, span))
        k, base = 0, name or f"{self.fdef.name}_cluster"
        gname = base if name and base not in self.program.functions and base not in self.program.methods else None
        while gname is None:
            cand = f"{base}_{k}"
            if cand not in self.program.functions and cand not in self.program.methods:
                gname = cand
            k += 1
        fn = ir.Function(gname, [p for p, _ in params], [d for _, d in params], [r.type for r in rets],
                         ir.SeqStmts(body, span), ir.FunctionType.Group, span)
        self.program.functions[gname] = fn
        ty = ir.NoneType() if not rets else rets[0].type if len(rets) == 1 else ir.TupleType([r.type for r in rets])
        group_call = ir.FuncCall(gname, outer_args, ty, span)
        if not rets:
            return self.emit(ir.EvalStmt(group_call, span))
        by_param = {p.node_id: n for n, (p, d) in zip([self.name_of(a, before) for a in outer_args], params)}
        targets = [by_param[p.node_id] for p in outs]
        if len(rets) == 1:
            return self.bind(targets[0], group_call, node)
        tup = ir.Var("_".join(targets), ty, span)
        self.emit(ir.AssignStmt(tup, group_call, span))
        self.track_lineage(tup, group_call)
        for i, n in enumerate(targets):
            self.bind(n, ir.TupleGetItem(tup, i, span), node)

    @staticmethod
    def name_of(var, symbols):
        """The name `var` is bound to in `symbols` (its own name otherwise)."""
        return next((n for n, v in symbols.items() if v is var), var.name)

"""Loops, branches and scopes: `for ... in pl.range/parallel/unroll/pipeline(...)`, if/else
and `with pl.at(level=...)`, with loop-carried and branch-merged values in SSA form (while
loops are in while_loops.py, break/continue in loop_exits.py)."""

import ast
import re

from pypto._core import ir

from . import ops
from .expr_parser import _CMPOPS, is_ir
from .launch import SplitMode
from .loop_exits import LoopExits
from .stmt_parser import YieldFrame, assigned_names
from .tasks import NoDep, SubmitResult, TaskId, new_task_id, reserve_task_id  # noqa: F401


class ControlFlowParser:
    """Mixin of FunctionParser: for, if and with statements."""

    def same_type(self, a, b):
        return ir.structural_equal(a, b)

    def leave_block(self, before, node, what):
        """Restores the names visible before a block; names born inside it go out of scope."""
        for name in self.symbols:
            if name not in before:
                self.out_of_scope[name] = f"{what} at line {self.span(node).line}"
        # Task ids outlive the block: `deps=[tid]` after it means "after tid's latest launch".
        kept = {n: v for n, v in self.symbols.items() if isinstance(v, TaskId)}
        self.symbols = {**before, **kept}
        for name in kept:
            self.out_of_scope.pop(name, None)

    def carried_value(self, value, ty, name, node, where):
        expr = self.to_expr(value, node, ty.dtype if isinstance(ty, ir.ScalarType) else None)
        if not self.same_type(expr.type, ty):
            raise self.error(node, f"'{name}' changes type {where}: {ir.print_type(ty)} before, "
                                   f"{ir.print_type(expr.type)} after",
                             f"keep the type of '{name}' the same (use a new name for the other value)")
        return expr

    # -- for -------------------------------------------------------------------------------
    def stmt_For(self, node):
        if node.orelse:
            raise self.error(node, "for/else is not supported", "move the else part after the loop")
        it = node.iter
        func = self.eval(it.func) if isinstance(it, ast.Call) else None
        if isinstance(func, ops.Construct) and func.name == "while_":
            return self.explicit_while(node, it)
        if isinstance(func, ops.Construct) and func.name == "spmd":  # for i in pl.spmd(n): i is the block index
            if not isinstance(node.target, ast.Name):
                raise self.error(node, f"a pl.spmd loop binds one name, the block index, not '{self.text(node.target)}'",
                                 "write `for i in pl.spmd(4):`")
            return self.launch_scope(node, func, it, node.body, None, loop_name=node.target.id)
        if isinstance(func, ops.Construct) and func.name == "split_aiv":
            return self.split_aiv_region(node, func, it, node.target, node.body)
        if not isinstance(func, ops.Construct) or func.name not in ops.LOOP_KINDS:
            raise self.error(node, f"a for loop must iterate over pl.range/pl.parallel/pl.unroll/pl.pipeline, "
                                   f"not '{self.text(it)}'", "write `for i in pl.range(n):`")
        args, kwargs = self.call_args(it)
        init_values = kwargs.pop("init_values", None)
        stage = kwargs.pop("stage", None)
        loop_attrs = kwargs.pop("attrs", None)  # hints of the loop, kept on the ForStmt
        loop_attrs = {} if loop_attrs is None else self.attr_dict(loop_attrs, node, f"attrs= of pl.{func.name}")
        if stage is not None and func.name != "pipeline":
            raise self.error(node, f"pl.{func.name} has no keyword 'stage'", "use pl.pipeline(n, stage=k)")
        if kwargs:
            raise self.error(node, f"pl.{func.name} has no keyword argument '{next(iter(kwargs))}'",
                             f"call it as pl.{func.name}(start, stop, step, init_values=(...))")
        if not 1 <= len(args) <= 3:
            raise self.error(node, f"pl.{func.name} takes 1 to 3 positional arguments (stop | start, stop | "
                                   f"start, stop, step), got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
        if step == 0:
            raise self.error(node, f"pl.{func.name} with step 0 never ends", "use a non-zero step")
        for what, v in (("start", start), ("stop", stop), ("step", step)):
            # Python's range refuses floats too: a float bound (a constant or a float scalar) is an error
            is_float = isinstance(v, float) or (
                is_ir(v) and isinstance(v.type, ir.ScalarType) and ir.dtype_is_float(v.type.dtype))
            if is_float:
                shown = repr(v) if isinstance(v, float) else ir.print_expr(v)
                raise self.error(node, f"pl.{func.name}: the {what} {shown} is a float; loop bounds are integers",
                                 f"pass an int (int({shown}), or pl.cast(..., pl.INDEX) for a float scalar)")
        stages = 0
        if func.name == "pipeline":
            stages = self.constant(stage if stage is not None else 2, node, "stage= of pl.pipeline")
        bounds = [self.to_expr(v, node, ir.DataType.INDEX) for v in (start, stop, step)]

        target = node.target
        if isinstance(target, ast.Name):
            loop_name, iter_names = target.id, None
        elif (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name)
              and isinstance(target.elts[1], (ast.Tuple, ast.List))
              and all(isinstance(e, ast.Name) for e in target.elts[1].elts)):
            loop_name, iter_names = target.elts[0].id, [e.id for e in target.elts[1].elts]
        else:
            raise self.error(node, f"unsupported loop target '{self.text(target)}'",
                             "write `for i in ...` or `for i, (acc,) in pl.range(n, init_values=(x,))`")
        if (iter_names is None) != (init_values is None):
            raise self.error(node, "loop-carried names and init_values go together",
                             "write `for i, (acc,) in pl.range(n, init_values=(x,)):`")
        explicit = iter_names is not None
        exits = LoopExits.of(self, node)
        if exits is not None:
            if explicit:
                raise self.error(node, "break/continue in a loop with init_values is not supported",
                                 "carry the values by rebinding their names (drop init_values and pl.yield_)")
            if exits.has_break and func.name in ("parallel", "pipeline"):
                raise self.error(node, f"break in a pl.{func.name} loop: its iterations do not run one after another",
                                 "use pl.range for a loop that may stop early")
            if exits.has_break and func.name == "range":
                return self.range_with_break(node, loop_name, start, stop, step, exits)
            if exits.has_break:
                self.bind(exits.brk, False, node)
            node = ast.copy_location(ast.For(target=node.target, iter=node.iter, body=exits.break_guarded_body(),
                                             orelse=[], type_comment=None), node)
        span = self.span(node)
        before = dict(self.symbols)
        if explicit:
            if not isinstance(init_values, (tuple, list)) or len(init_values) != len(iter_names):
                raise self.error(node, f"init_values must be a tuple of {len(iter_names)} values, one per "
                                       "loop-carried name", "write init_values=(x,) for one value")
            inits = [self.to_expr(v, node) for v in init_values]
            names = iter_names
        else:
            names = [n for n in assigned_names(node.body) if n in self.symbols and n != loop_name]
            inits = [self.to_expr(self.symbols[n], node) for n in names]
        loop_var = ir.Var(loop_name, ir.ScalarType(ir.DataType.INDEX), span)
        self.symbols[loop_name] = loop_var
        iter_args = self.enter_loop(names, inits, span)
        frame = YieldFrame("for", explicit)
        body = self.loop_body(node.body, frame)
        return_vars = self.leave_loop(node, before, names, iter_args, inits, body, frame, {loop_name})
        self.emit(ir.ForStmt(loop_var, bounds[0], bounds[1], bounds[2], iter_args, inits, self.seq(body, node.body),
                             return_vars, ops.LOOP_KINDS[func.name], stages, span, attrs=loop_attrs))

    # -- for aiv_id in pl.split_aiv(2, mode=...) -----------------------------------------
    def split_aiv_region(self, node, func, call, target, body_nodes):
        """The vector part of a mixed kernel: a ForStmt over the two AIV lanes marked
        attrs={"split_aiv": mode}, which pass SplitAiv divides between the cores. The body runs
        once per lane, so the names it binds (its pl.aic_gather results) stay visible after it."""
        b = self.bind_construct(func, call, node)
        if target is not None and not isinstance(target, ast.Name):
            raise self.error(node, f"a pl.split_aiv region binds one name, the lane index, not "
                                   f"'{self.text(target)}'", "write `for aiv_id in pl.split_aiv(2, mode=...)`")
        if b["n"] != 2 or isinstance(b["n"], bool):
            raise self.error(node, f"pl.split_aiv({self.describe(b['n'])}): a cluster has 2 vector cores, "
                                   "so a region splits over 2 lanes", "write pl.split_aiv(2, mode=...)")
        if not isinstance(b["mode"], SplitMode):
            raise self.error(node, f"mode= of pl.split_aiv must be a pl.SplitMode, got {self.describe(b['mode'])}",
                             "write mode=pl.SplitMode.UP_DOWN (rows), LEFT_RIGHT (columns) or NONE")
        if getattr(self, "aiv_region", None) is not None:
            raise self.error(node, "pl.split_aiv regions cannot nest", "write one region at a time")
        span = self.span(node)
        name = target.id if target is not None else "aiv_id"  # `with pl.split_aiv(...):` binds no name
        outer = self.symbols.get(name)
        lane = ir.Var(name, ir.ScalarType(ir.DataType.INDEX), span)
        if target is not None:
            self.symbols[name] = lane
        self.aiv_region = int(b["mode"])
        self.yield_frames.append(YieldFrame("scope", False))
        try:
            body = self.parse_stmts(body_nodes)
        finally:
            self.yield_frames.pop()
            self.aiv_region = None
        if target is not None and outer is not None:
            self.symbols[name] = outer
        elif target is not None:
            self.symbols.pop(name, None)
        one = ir.ConstInt(1, ir.DataType.INDEX, span)
        self.emit(ir.ForStmt(lane, ir.ConstInt(0, ir.DataType.INDEX, span), ir.ConstInt(2, ir.DataType.INDEX, span),
                             one, [], [], self.seq(body, body_nodes), [], ir.ForKind.Range, 0, span,
                             attrs={"split_aiv": int(b["mode"])}))

    def region_crossing(self, op_name, kwargs, node):
        """pl.aiv_shard / pl.aic_gather take the mode of the region they are in (split=)."""
        name = op_name.split(".")[1]
        mode = getattr(self, "aiv_region", None)
        if mode is None:
            raise self.error(node, f"pl.{name} is used outside a pl.split_aiv region",
                             "name a crossing inside `for aiv_id in pl.split_aiv(2, mode=...)`: "
                             "t = pl.aiv_shard(x) at its top, g = pl.aic_gather(v) at its bottom")
        if "split" in kwargs and kwargs["split"] != mode:
            raise self.error(node, f"split={kwargs['split']} of pl.{name} differs from the region's mode "
                                   f"({SplitMode(mode).name})", f"leave split= out: pl.{name}(x)")
        return {**kwargs, "split": mode}

    # -- loop bodies shared by for and while ----------------------------------------------
    def enter_loop(self, names, inits, span):
        """The iter_args of a loop carrying `names` (initial values `inits`), bound in scope."""
        iter_args = [ir.Var(n, e.type, span) for n, e in zip(names, inits)]
        for n, v, e in zip(names, iter_args, inits):
            self.symbols[n] = v
            if self.in_lineage(e):
                self.lineage.add(v.node_id)
        return iter_args

    def loop_body(self, stmts, frame):
        self.yield_frames.append(frame)
        try:
            return self.parse_stmts(stmts)
        finally:
            self.yield_frames.pop()

    def leave_loop(self, node, before, names, iter_args, inits, body, frame, own_names=()):
        """Checks the loop's yields (explicit form) or appends the yield of the rebound names
        (implicit form); returns the return_vars, bound in scope after the loop."""
        span = self.span(node)
        if frame.explicit:
            for n, old in before.items():
                if n not in names and n not in own_names and self.symbols.get(n) is not old:
                    raise self.error(node, f"'{n}' is rebound inside a loop with explicit init_values",
                                     f"carry it explicitly: add '{n}' to the loop's names and init_values "
                                     "and to pl.yield_")
            if frame.targets is None:
                if iter_args:
                    raise self.error(node, "a loop with init_values must end with `x = pl.yield_(...)`",
                                     "yield the next value of every loop-carried name")
                out_names = []
            else:
                if len(frame.values) != len(iter_args):
                    raise self.error(node, f"pl.yield_ gives {len(frame.values)} values for "
                                           f"{len(iter_args)} loop-carried names")
                for ia, v in zip(iter_args, frame.values):
                    self.carried_value(v, ia.type, ia.name, node, "across the loop")
                out_names = frame.targets
            return_vars = [ir.Var(t, ia.type, span) for t, ia in zip(out_names or names, iter_args)]
        else:
            self.promote_loop_stores(before, body, names, iter_args, inits, own_names, span, node)
            finals = [self.carried_value(self.symbols[n], ia.type, n, node, "in the loop body")
                      for n, ia in zip(names, iter_args)]
            if names:
                body.append(ir.YieldStmt(finals, span))
            out_names = names
            return_vars = [ir.Var(n, ia.type, span) for n, ia in zip(names, iter_args)]

        self.leave_block(before, node, "a loop body")
        for v, e in zip(return_vars, inits):
            if self.in_lineage(e):
                self.lineage.add(v.node_id)
        for n, v in zip(out_names, return_vars):
            self.symbols[n] = v
        return return_vars

    def names_read_after(self, node):
        """Names whose value after the statement `node` is read later in the function (before
        being assigned again): the statements after `node` in its block, then after the block's
        statement, and so on up to the function body."""
        cached = getattr(self, "_stmt_parents", None)  # one walk per function, not per loop
        if cached is None or cached[0] is not self.fdef:
            parents = {}
            for p in ast.walk(self.fdef):
                for field in ("body", "orelse"):
                    block = getattr(p, field, None)
                    if not isinstance(block, list):  # an `a if c else b` expression's body / orelse
                        continue
                    for child in block:
                        if isinstance(child, ast.stmt):
                            parents[id(child)] = (p, field)
            self._stmt_parents = cached = (self.fdef, parents)
        parents = cached[1]
        candidates = {t.id for t in ast.walk(node) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
        out = set()
        for name in candidates:
            cur = node
            while id(cur) in parents:
                parent, field = parents[id(cur)]
                block = getattr(parent, field)
                state = _flow(block[block.index(cur) + 1:], name)
                if state is not None:
                    if state == "read":
                        out.add(name)
                    break
                if isinstance(parent, (ast.For, ast.While)):  # the enclosing loop's next iteration
                    if _flow(parent.body, name) == "read":
                        out.add(name)
                        break
                cur = parent
        return out

    def promote_loop_stores(self, before, body, names, iter_args, inits, own_names, span, node=None):
        """A name first defined in the loop body and read after the loop is visible there
        (PyPTO's ConvertToSSA; Python: the last iteration's value): it becomes a loop-carried
        value. When it is the result of writing a tensor that exists before the loop
        (`r = pl.store(t, offs, out)`, `r = pl.assemble(out, v, offs)`) its initial value is
        that tensor; a Vec/Mat tile starts as a new uninitialised tile (pl.create_tile) and a
        scalar as 0. Appends to `names`, `iter_args` and `inits`."""
        read_after = self.names_read_after(node) if node is not None else set()
        visible = {v.node_id for v in before.values() if is_ir(v)} | {v.node_id for v in iter_args}
        defs = {}

        def scan(stmts):
            for st in stmts:
                if isinstance(st, ir.AssignStmt):
                    defs[st.var.node_id] = st.value
                elif isinstance(st, ir.SeqStmts):
                    scan(st.stmts)
                elif isinstance(st, ir.ScopeStmt):
                    scan([st.body])
        scan(body)
        for n, v in list(self.symbols.items()):
            if n in before or n in own_names or n in names or not is_ir(v) or n not in read_after:
                continue
            target = None
            if isinstance(v.type, ir.TensorType):
                value = defs.get(v.node_id)
                if isinstance(value, ir.Call):
                    target = next((a for a in value.args if isinstance(a, ir.Var) and a.node_id in visible
                                   and isinstance(a.type, ir.TensorType) and self.same_type(a.type, v.type)), None)
            elif isinstance(v.type, ir.TileType) and v.type.memory in (ir.MemorySpace.Vec, ir.MemorySpace.Mat) \
                    and all(isinstance(d, ir.ConstInt) for d in v.type.shape):
                fresh = self.op_call("create_tile", [[d.value for d in v.type.shape]],
                                     {"dtype": v.type.dtype, "target_memory": v.type.memory}, node)
                if self.same_type(fresh.type, v.type):
                    target = ir.Var(n + "_init", fresh.type, span)
                    self.emit(ir.AssignStmt(target, fresh, span))  # before the loop
            elif isinstance(v.type, ir.ScalarType) and v.type.dtype != ir.DataType.TASK_ID:
                target = self.to_expr(0, node, v.type.dtype)
            if target is None:
                continue
            names.append(n)
            inits.append(target)
            ia = ir.Var(n, v.type, span)
            iter_args.append(ia)
            if self.in_lineage(target):
                self.lineage.add(ia.node_id)

    # -- if --------------------------------------------------------------------------------
    def stmt_If(self, node):
        cond = self.eval(node.test)
        if not is_ir(cond):
            for stmt in (node.body if cond else node.orelse):  # compile-time condition
                self.parse_stmt(stmt)
            return
        if not isinstance(cond.type, ir.ScalarType):
            raise self.error(node, f"the condition '{self.text(node.test)}' is not a scalar",
                             "compare scalars, e.g. `if i < n:`")
        span = self.span(node)
        before = dict(self.symbols)
        arms = []
        for body in (node.body, node.orelse):
            self.symbols = dict(before)
            frame = YieldFrame("if", True)
            self.yield_frames.append(frame)
            try:
                stmts = self.parse_stmts(body)
            finally:
                self.yield_frames.pop()
            arms.append((stmts, dict(self.symbols), frame))
        (then_stmts, then_syms, then_frame), (else_stmts, else_syms, else_frame) = arms
        if then_frame.targets is not None or else_frame.targets is not None:
            if then_frame.targets is None or else_frame.targets is None:
                raise self.error(node, "only one arm of this if ends with pl.yield_",
                                 "end both arms with `x = pl.yield_(...)`")
            names = then_frame.targets
            return_vars = []
            for n, a, b in zip(names, then_frame.values, else_frame.values):
                if not self.same_type(a.type, b.type):
                    raise self.error(node, f"'{n}' has type {ir.print_type(a.type)} in the then arm and "
                                           f"{ir.print_type(b.type)} in the else arm", "yield values of one type")
                return_vars.append(ir.Var(n, a.type, span))
            lineage = [self.in_lineage(a) or self.in_lineage(b)
                       for a, b in zip(then_frame.values, else_frame.values)]
        else:
            names = [n for n in list(then_syms) + [k for k in else_syms if k not in then_syms]
                     if n in then_syms and n in else_syms and then_syms[n] is not else_syms[n]]
            then_vals, else_vals, return_vars, lineage = [], [], [], []
            for n in names:
                a, b = then_syms[n], else_syms[n]
                hint_src = a if is_ir(a) else b
                hint = hint_src.type.dtype if is_ir(hint_src) and isinstance(hint_src.type, ir.ScalarType) else None
                a, b = self.to_expr(a, node, hint), self.to_expr(b, node, hint)
                if not self.same_type(a.type, b.type):
                    raise self.error(node, f"'{n}' has type {ir.print_type(a.type)} in the then arm and "
                                           f"{ir.print_type(b.type)} in the else arm",
                                     f"give '{n}' the same type in both arms")
                then_vals.append(a)
                else_vals.append(b)
                return_vars.append(ir.Var(n, a.type, span))
                lineage.append(self.in_lineage(a) or self.in_lineage(b))
            if names:
                then_stmts.append(ir.YieldStmt(then_vals, span))
                else_stmts.append(ir.YieldStmt(else_vals, span))
        self.symbols = {**else_syms, **then_syms}
        self.leave_block(before, node, "an if arm")
        for n, v, lin in zip(names, return_vars, lineage):
            self.symbols[n] = v
            if lin:
                self.lineage.add(v.node_id)
        else_body = self.seq(else_stmts, node.orelse) if (else_stmts or return_vars) else None
        self.emit(ir.IfStmt(cond, self.seq(then_stmts, node.body), else_body, return_vars, span))

    # -- with pl.at / pl.spmd -----------------------------------------------------------------
    def stmt_With(self, node):
        if len(node.items) != 1:
            raise self.error(node, "a with statement takes one pl.at(...)", "nest the with statements")
        item = node.items[0]
        call = item.context_expr
        func = self.eval(call.func) if isinstance(call, ast.Call) else None
        if not isinstance(func, ops.Construct) or func.name not in ("at", "spmd"):
            raise self.error(node, f"with '{self.text(call)}' is not supported", "use `with pl.at(level=pl.Level.CORE_GROUP):`")
        tid_name = None
        if item.optional_vars is not None:
            if not isinstance(item.optional_vars, ast.Name):
                raise self.error(node, "`with pl.at(...) as tid` binds one name", "write `with pl.at(level=...) as tid:`")
            tid_name = item.optional_vars.id
        self.launch_scope(node, func, call, node.body, tid_name)

    def launch_scope(self, node, func, call, body_nodes, tid_name, loop_name=None):
        """`with pl.at(...)` / `with pl.spmd(...)` / `for i in pl.spmd(...)`: a ScopeStmt whose
        task info holds every keyword of the construct (bound through its signature)."""
        b = self.bind_construct(func, call, node)
        deps, dyn_deps = self.task_deps(b["deps"], node)
        hints = self.launch_hints(b, node, func.name)
        block_num = 0
        if func.name == "spmd":
            block_num, core_num = self.core_num(b["core_num"], node, "pl.spmd")
            if core_num is not None:
                hints["core_num"] = core_num
            level = ir.Level.CORE_GROUP if b["level"] is None else b["level"]
        else:
            level = b["level"]
        if not isinstance(level, ir.Level):
            raise self.error(node, f"pl.{func.name} needs level=pl.Level.<AIV|AIC|CORE_GROUP|CHIP|HOST>, got "
                                   f"{self.describe(level)}", "write pl.at(level=pl.Level.CORE_GROUP)")
        is_spmd = func.name == "spmd"
        outer_spmd = getattr(self, "spmd_frame", None)
        if is_spmd:
            if outer_spmd is not None:
                raise self.error(node, "pl.spmd blocks cannot nest", "launch one SPMD block at a time")
            self.spmd_frame = SpmdFrame()
        before = dict(self.symbols)
        if loop_name is not None:
            self.symbols[loop_name] = self.spmd_frame.var("get_block_idx", self.span(node))
        self.yield_frames.append(YieldFrame("scope", False))
        try:
            body = self.parse_stmts(body_nodes)
        finally:
            self.yield_frames.pop()
            frame, self.spmd_frame = getattr(self, "spmd_frame", None), outer_spmd
        if loop_name is not None:
            if before.get(loop_name) is not None:
                self.symbols[loop_name] = before[loop_name]
            else:
                self.symbols.pop(loop_name, None)
        task_id = self.scope_task_id(tid_name) if tid_name is not None else -1
        block_vars = list(frame.vars.values()) if is_spmd and frame is not None else []
        if is_spmd and self.spmd_dispatch(body, block_vars, task_id, deps, dyn_deps, block_num, hints, b):
            if tid_name is not None:
                self.symbols[tid_name] = TaskId(task_id, tid_name)
            return
        self.emit(ir.ScopeStmt(level, self.seq(body, body_nodes), self.span(node), task_id=task_id, deps=deps,
                               block_num=block_num, block_vars=block_vars, dyn_deps=dyn_deps, hints=hints,
                               manual=b.get("manual") is True))
        if tid_name is not None:
            self.symbols[tid_name] = TaskId(task_id, tid_name)

    def spmd_dispatch(self, body, block_vars, task_id, deps, dyn_deps, block_num, hints, b):
        """A pl.spmd body that is one kernel launch dispatches that kernel over the grid (its
        pl.get_block_idx() is the grid's): the launch itself carries the grid, nothing is outlined."""
        if len(body) != 1 or not isinstance(body[0], (ir.AssignStmt, ir.EvalStmt)):
            return False
        value = body[0].value if isinstance(body[0], ir.AssignStmt) else body[0].expr
        if not isinstance(value, ir.FuncCall) or value.block_num or value.task_id >= 0 or value.hints["core_num"]:
            return False
        blocks = {v.node_id for v in block_vars}
        args = [ir.ConstInt(0, ir.DataType.INDEX, value.span) if a.node_id in blocks else a for a in value.args]
        if any(self.uses_any(a, blocks) for a in args):
            return False  # the block index feeds an argument expression: outline the body instead
        hints = {k: v for k, v in hints.items() if k != "name_hint"}
        call = ir.FuncCall(value.callee, args, value.type, value.span, task_id=task_id, deps=deps,
                           block_num=block_num, manual=value.manual or b.get("manual") is True,
                           dyn_deps=dyn_deps, hints=hints)
        self.emit(ir.AssignStmt(body[0].var, call, body[0].span) if isinstance(body[0], ir.AssignStmt)
                  else ir.EvalStmt(call, body[0].span))
        return True

    @staticmethod
    def uses_any(expr, ids):
        """Whether `expr` reads one of the values `ids` (node ids)."""
        if expr.node_id in ids:
            return True
        parts = []
        for attr in ("a", "b", "elems", "args"):
            v = getattr(expr, attr, None)
            parts.extend(v if isinstance(v, (list, tuple)) else [v])
        return any(isinstance(e, ir.Expr) and ControlFlowParser.uses_any(e, ids) for e in parts)

    def scope_task_id(self, tid_name):
        """The id of `with ... as tid_name`: a fresh one, except for a name `task_N` (as the
        printer writes it; launches after OutlineIncore name it by the integer N in deps=[N])
        when N is not yet an id of this function."""
        used = self.__dict__.setdefault("task_ids_used", set())
        m = re.fullmatch(r"task_(\d+)", tid_name)
        task_id = int(m.group(1)) if m and int(m.group(1)) not in used else new_task_id()
        reserve_task_id(task_id)
        used.add(task_id)
        return task_id

    def bind_construct(self, func, call, node, skip=0):
        """{parameter: value} of a use of a construct, through its PyPTO signature; predicate=
        is read as a comparison of a tensor element (t[i] OP v)."""
        args = [self.eval(a) for a in call.args[skip:]]
        for a in call.args:
            if isinstance(a, ast.Starred):
                raise self.error(a, "*args in a call is not supported", "pass the arguments one by one")
        kwargs = {}
        for k in call.keywords:
            if k.arg is None:
                raise self.error(node, "**kwargs in a call is not supported", "pass keyword arguments one by one")
            kwargs[k.arg] = self.predicate_expr(k.value) if k.arg == "predicate" else self.eval(k.value)
        try:
            return func.bind(([None] * skip) + args, kwargs)
        except TypeError as e:
            sig = getattr(func, "__signature__", "")
            raise self.error(node, f"pl.{func.name}: {e}", f"call it as pl.{func.name}{sig}") from None

    def core_num(self, value, node, what):
        """(block_num, core_num expr) of pl.spmd(core_num) / spmd_submit(core_num=): a constant
        becomes block_num, a run-time integer scalar the core_num expression."""
        if value is None:
            raise self.error(node, f"{what} needs core_num, the number of blocks", f"write {what}(4)")
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 1:
                raise self.error(node, f"ValueError: core_num of {what} must be positive, got {value}",
                                 "launch at least one block: core_num >= 1")
            return value, None
        if is_ir(value) and isinstance(value.type, ir.ScalarType) and (
                value.type.dtype == ir.DataType.INDEX or ir.dtype_is_int(value.type.dtype)):
            return 0, value
        raise self.error(node, f"core_num of {what} must be an integer (a constant or a run-time scalar), got "
                               f"{self.describe(value)}", f"write {what}(4) or {what}(n) with n a pl.Scalar[pl.INDEX]")

    def predicate_expr(self, node):
        """predicate=(t[idx] OP v): a comparison of one tensor element, as
        `pl.tensor.read(t, [idx]) OP v` (the form the printer writes)."""
        fix = "write predicate=(t[i] > 0): one tensor element compared (== != < <= > >=) with a value"
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            raise self.error(node, f"predicate= takes one comparison of a tensor element, got '{self.text(node)}'", fix)
        left = node.left
        if isinstance(left, ast.Subscript):
            base = self.eval(left.value)
            if not (is_ir(base) and isinstance(base.type, ir.TensorType)):
                raise self.error(node, f"the predicate reads '{self.text(left.value)}', which is not a tensor", fix)
            index = self.eval(left.slice)
            index = list(index) if isinstance(index, tuple) else [index]
            if len(index) != len(base.type.shape):
                raise self.error(node, f"the predicate indexes a {len(base.type.shape)}-d tensor with {len(index)} "
                                       "indices", "give one index per dimension: t[i, j]")
            value = self.op_call("tensor.read", [base, index], {}, left)
        else:
            value = self.eval(left)
        right = self.eval(node.comparators[0])
        pred = self.binary(_CMPOPS[type(node.ops[0])][1], value, right, node)
        a = getattr(pred, "a", None)
        if not (isinstance(a, ir.Call) and a.op_name == "tensor.read"):
            raise self.error(node, f"predicate= must compare a tensor element, got '{self.text(node)}'", fix)
        return pred

    def launch_hints(self, b, node, what):
        """The hints= dict of a launch's task info from its bound keywords (absent keys: defaults)."""
        from .launch import CrossCoreSlot, Role, SplitHint
        h = {}
        role = b.get("role")
        if role is not None:
            if not isinstance(role, Role):
                raise self.error(node, f"role= of pl.{what} takes a pl.Role, got {self.describe(role)}",
                                 "write role=pl.Role.Orchestrator or pl.Role.SubWorker")
            h["role"] = {"Orchestrator": 1, "Worker": 2, "SubWorker": 3}[role.name]
        opts = b.get("optimizations")
        if opts is not None:
            if not isinstance(opts, (list, tuple)):
                raise self.error(node, f"optimizations= of pl.{what} takes a list, got {self.describe(opts)}",
                                 "write optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]")
            for o in opts:
                if isinstance(o, SplitHint):
                    if "split" in h:
                        raise self.error(node, f"optimizations= of pl.{what} has two pl.split hints",
                                         "keep one pl.split(mode)")
                    h["split"] = int(o.mode)
                    if o.slot_num:
                        h["split_slot_num"] = o.slot_num
                elif isinstance(o, CrossCoreSlot):
                    if "slot_num" in h:
                        raise self.error(node, f"optimizations= of pl.{what} has two pl.cross_core_slot hints",
                                         "keep one pl.cross_core_slot(slot_num=N)")
                    h["slot_num"] = o.slot_num
                else:
                    raise self.error(node, f"optimizations= of pl.{what} holds {self.describe(o)}, which is not an "
                                           "optimisation hint", "use pl.split(mode) and pl.cross_core_slot(slot_num=N)")
        for key in ("no_dep_args", "dumps"):
            v = b.get(key)
            if v is None:
                continue
            if not isinstance(v, (list, tuple)) or not all(is_ir(t) and isinstance(t.type, ir.TensorType) for t in v):
                raise self.error(node, f"{key}= of pl.{what} takes a list of tensors, got {self.describe(v)}",
                                 f"write {key}=[t] with t a tensor the launch reads or writes")
            if v:
                h[key] = list(v)
        for key in ("allow_early_resolve", "windowize", "sync_start"):
            if key in b and b[key] is not False:
                if not isinstance(b[key], bool):
                    raise self.error(node, f"{key}= of pl.{what} takes True or False, got {self.describe(b[key])}",
                                     f"write {key}=True")
                h[key] = b[key]
        name = b.get("name_hint", "")
        if name:
            if not isinstance(name, str) or not name.isidentifier():
                raise self.error(node, f"name_hint= of pl.{what} must be a Python identifier, got {name!r}",
                                 "write name_hint='my_kernel' (letters, digits and _)")
            h["name_hint"] = name
        if b.get("predicate") is not None:
            h["predicate"] = b["predicate"]
        return h

    def task_deps(self, deps, node):
        """The task ids listed in deps=[...]: (ids known at parse time, run-time ids). Parse-time
        ids are names bound by `with pl.at(...) as tid` (or the integers the printer writes for
        outlined launches, task_id=N); run-time ids are TASK_ID scalars such as `arr[j]` of a
        pl.array of pl.TASK_ID."""
        if deps is None:  # deps=None: no explicit edge
            return [], []
        if isinstance(deps, (TaskId, SubmitResult)) or is_ir(deps):
            deps = [deps]
        if isinstance(deps, (list, tuple)):
            flat = []
            for d in deps:
                if isinstance(d, SubmitResult):  # `r = pl.submit(...)`; deps=[r]: its task id
                    d = d[-1]
                if is_ir(d) and isinstance(d.type, ir.ArrayType) and d.type.dtype == ir.DataType.TASK_ID:
                    # deps=[arr]: every task id stored in the pl.array (unwritten elements add no edge)
                    flat.extend(self.op_call("array.get", [d, i], {}, node) for i in range(d.type.size))
                    continue
                flat.append(d)
            deps = flat
        def run_time(d):
            return is_ir(d) and isinstance(d.type, ir.ScalarType) and d.type.dtype == ir.DataType.TASK_ID
        ok = lambda d: isinstance(d, TaskId) or run_time(d) or (isinstance(d, int) and not isinstance(d, bool) and d >= 0)
        if not isinstance(deps, (list, tuple)) or not all(ok(d) for d in deps):
            raise self.error(node, f"deps= must be a list of task ids, got {self.describe(deps)}",
                             "bind ids with `with pl.at(level=...) as tid:` and pass deps=[tid], or store them in a "
                             "pl.array.create(n, pl.TASK_ID) and pass deps=[arr[j]] or deps=[arr]")
        static = [d.id if isinstance(d, TaskId) else d for d in deps if not run_time(d)]
        return static, [d for d in deps if run_time(d)]


class SpmdFrame:
    """The `with pl.spmd(n)` block being parsed: the Vars pl.get_block_idx/num() read."""

    def __init__(self):
        self.vars = {}

    def var(self, name, span):
        key = "__block_idx" if name == "get_block_idx" else "__block_num"
        if key not in self.vars:
            self.vars[key] = ir.Var(key, ir.ScalarType(ir.DataType.INDEX), span)
        return self.vars[key]


def _reads(node, name):
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def _flow(stmts, name):
    """"read" when `stmts` (run in order) read `name` before assigning it, "kill" when they
    assign it first on every path, else None."""
    for st in stmts:
        if isinstance(st, (ast.For, ast.While)):
            head = st.iter if isinstance(st, ast.For) else st.test
            if _reads(head, name) or _flow(st.body, name) == "read" or _flow(st.orelse, name) == "read":
                return "read"
            continue  # a loop may run no iteration: it kills nothing for sure
        if isinstance(st, ast.If):
            if _reads(st.test, name):
                return "read"
            a, b = _flow(st.body, name), _flow(st.orelse, name)
            if "read" in (a, b):
                return "read"
            if a == b == "kill":
                return "kill"
            continue
        if isinstance(st, ast.With):
            if any(_reads(i, name) for i in st.items):
                return "read"
            state = _flow(st.body, name)
            if state is not None:
                return state
            continue
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            if st.value is not None and _reads(st.value, name):
                return "read"
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            if any(_reads(t, name) for t in targets):  # out[i] = ... reads out
                return "read"
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                return "kill"
            continue
        if _reads(st, name):
            return "read"
    return None

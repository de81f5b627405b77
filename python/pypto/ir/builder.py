"""`pypto.ir.IRBuilder`: builds programs from Python with PyPTO's builder calls, the subset
our IR expresses: programs, functions (params, return types), assignments (`let`,
`assign`), op calls (`pypto.ir.make_call` / `ir.op`), for loops with loop-carried values,
while loops, if statements with results, `pl.at`-style scopes, yield / return / eval.

    ib = IRBuilder()
    with ib.program("p") as p:
        with ib.function("main", type=ir.FunctionType.Orchestration) as f:
            x = f.param("x", ib.tensor_type([64, 64], ir.DataType.FP32))
            f.return_type(x.type)
            ib.return_stmt([x])
    program = p.get_result()

Ints in shapes and loop bounds become index constants. What our IR cannot hold is
refused with a clear error: memrefs and tensor views (PlanMemory places tiles; tensors are
row-major), break / continue statements (write the condition into the while loop),
inline statements. Leading comments are accepted and dropped (our IR keeps none)."""

from __future__ import annotations

from pypto._core import ir as _ir


def _expr(value):
    if isinstance(value, _ir.Expr):
        return value
    if isinstance(value, bool):
        return _ir.ConstBool(value)
    if isinstance(value, int):
        return _ir.ConstInt(value)
    if isinstance(value, float):
        return _ir.ConstFloat(value)
    raise TypeError(f"IRBuilder: {value!r} is not an expression; fix: pass an ir.Expr, an int or a float")


def _body(stmts):
    return stmts[0] if len(stmts) == 1 else _ir.SeqStmts(list(stmts))


def _unsupported(what, fix):
    return NotImplementedError(f"IRBuilder.{what}: our IR cannot hold it; fix: {fix}")


class _Frame:
    kind = "frame"

    def __init__(self, builder):
        self._builder = builder
        self._stmts = []
        self._result = None

    def emit(self, stmt):
        self._stmts.append(stmt)

    def get_result(self):
        if self._result is None:
            raise RuntimeError(f"IRBuilder: the {self.kind} is still open; fix: call get_result() after its `with` block")
        return self._result

    def __enter__(self):
        self._builder._frames.append(self)
        return self

    def __exit__(self, exc_type, *exc):
        self._builder._frames.pop()
        if exc_type is None:
            self._result = self._finish()
        return False


class ProgramFrame(_Frame):
    kind = "program"

    def __init__(self, builder, name):
        super().__init__(builder)
        self.name, self.functions = name, []

    def emit(self, stmt):
        raise TypeError("IRBuilder: a statement directly inside a program; fix: open ib.function(...) first")

    def _finish(self):
        return _ir.Program(self.name, self.functions)


class FunctionFrame(_Frame):
    kind = "function"

    def __init__(self, builder, name, func_type, attrs):
        super().__init__(builder)
        self.name, self.func_type, self.attrs = name, func_type, dict(attrs or {})
        self.params, self.directions, self.return_types = [], [], []

    def param(self, name, type, direction=_ir.ParamDirection.In):  # noqa: A002
        v = _ir.Var(name, type)
        self.params.append(v)
        self.directions.append(direction)
        return v

    def return_type(self, type):  # noqa: A002
        self.return_types.append(type)

    def _finish(self):
        fn = _ir.Function(self.name, self.params, self.directions, self.return_types, _body(self._stmts),
                          self.func_type)
        outer = self._builder._frames[-1] if self._builder._frames else None
        if isinstance(outer, ProgramFrame):
            outer.functions.append(fn)
        return fn


class ForFrame(_Frame):
    kind = "for loop"

    def __init__(self, builder, loop_var, start, stop, step, kind):
        super().__init__(builder)
        self.loop_var, self.start, self.stop, self.step, self.for_kind = loop_var, start, stop, step, kind
        self.iter_args, self.init_values, self.return_vars = [], [], []

    def iter_arg(self, name, init_value):
        init = _expr(init_value)
        v = _ir.Var(name, init.type)
        self.iter_args.append(v)
        self.init_values.append(init)
        return v

    def return_var(self, name, type=None):  # noqa: A002
        t = type or self.iter_args[len(self.return_vars)].type
        v = _ir.Var(name, t)
        self.return_vars.append(v)
        return v

    def _finish(self):
        stmt = _ir.ForStmt(self.loop_var, self.start, self.stop, self.step, self.iter_args, self.init_values,
                           _body(self._stmts or [_ir.YieldStmt([])]), self.return_vars, self.for_kind)
        self._builder.emit(stmt)
        return stmt


class WhileFrame(ForFrame):
    kind = "while loop"

    def __init__(self, builder, condition):
        _Frame.__init__(self, builder)
        self.condition = condition
        self.iter_args, self.init_values, self.return_vars = [], [], []

    def set_condition(self, condition):
        self.condition = _expr(condition)

    def _finish(self):
        if self.condition is None:
            raise ValueError("IRBuilder.while_loop: no condition; fix: pass one or call set_condition(expr)")
        stmt = _ir.WhileStmt(self.iter_args, self.init_values, self.condition, _body(self._stmts), self.return_vars)
        self._builder.emit(stmt)
        return stmt


class IfFrame(_Frame):
    kind = "if statement"

    def __init__(self, builder, condition):
        super().__init__(builder)
        self.condition = condition
        self._then, self._else, self.return_vars = self._stmts, None, []

    def else_(self):
        self._else = self._stmts = []

    def return_var(self, name, type):  # noqa: A002
        v = _ir.Var(name, type)
        self.return_vars.append(v)
        return v

    def _finish(self):
        stmt = _ir.IfStmt(self.condition, _body(self._then), _body(self._else) if self._else else None,
                          self.return_vars)
        self._builder.emit(stmt)
        return stmt


class ScopeFrame(_Frame):
    kind = "scope"

    def __init__(self, builder, level):
        super().__init__(builder)
        self.level = level

    def _finish(self):
        stmt = _ir.ScopeStmt(self.level, _body(self._stmts))
        self._builder.emit(stmt)
        return stmt


class IRBuilder:
    """Builds IR nodes statement by statement (see the module doc)."""

    def __init__(self):
        self._frames = []
        self._comments = []

    # ---- frames ----
    def program(self, name):
        return ProgramFrame(self, name)

    def function(self, name, type=_ir.FunctionType.Opaque, level=None, role=None, attrs=None,  # noqa: A002
                 requires_runtime_binding=False):
        """A function frame; `level`, `role`, `requires_runtime_binding` are accepted (kept
        on the frame: the IR Function of this build has no field for them)."""
        frame = FunctionFrame(self, name, type, attrs)
        frame.level, frame.role, frame.requires_runtime_binding = level, role, requires_runtime_binding
        return frame

    def for_loop(self, loop_var, start, stop, step=1, kind=None, attrs=None):
        """A for loop over [start, stop) by step; `kind` an ir.ForKind (PyPTO's Sequential is
        our Range)."""
        if kind is None or getattr(kind, "name", kind) == "Sequential":
            kind = _ir.ForKind.Range
        return ForFrame(self, loop_var, _expr(start), _expr(stop), _expr(step), kind)

    def while_loop(self, condition=None):
        return WhileFrame(self, None if condition is None else _expr(condition))

    def if_stmt(self, condition):
        return IfFrame(self, _expr(condition))

    def scope(self, scope_kind=None, level=None, role=None, split=None, name_hint="", core_num=None,
              sync_start=None, manual=None, attrs=None):
        """A `with pl.at(level=...)` scope (default level CORE_GROUP); the other settings are
        accepted."""
        return ScopeFrame(self, level if level is not None else _ir.Level.CORE_GROUP)

    # ---- statements ----
    def _current(self):
        if not self._frames or isinstance(self._frames[-1], ProgramFrame):
            raise RuntimeError("IRBuilder: a statement outside a function; fix: open ib.function(...) first")
        return self._frames[-1]

    def emit(self, stmt):
        self._current().emit(stmt)

    def var(self, name, type):  # noqa: A002
        return _ir.Var(name, type)

    def let(self, name, value, type=None):  # noqa: A002
        value = _expr(value)
        v = _ir.Var(name, type or value.type)
        self.emit(_ir.AssignStmt(v, value))
        return v

    def assign(self, var, value):
        stmt = _ir.AssignStmt(var, _expr(value))
        self.emit(stmt)
        return stmt

    def make_tuple(self, elements):
        return _ir.ListExpr([_expr(e) for e in elements])

    def yield_(self, values=()):
        stmt = _ir.YieldStmt([_expr(v) for v in values])
        self.emit(stmt)
        return stmt

    def return_stmt(self, values=None):
        stmt = _ir.ReturnStmt([_expr(v) for v in (values or [])])
        self.emit(stmt)
        return stmt

    def eval_stmt(self, expr):
        stmt = _ir.EvalStmt(_expr(expr))
        self.emit(stmt)
        return stmt

    def break_stmt(self):
        raise _unsupported("break_stmt()", "write the exit test into the while loop's condition")

    def continue_stmt(self):
        raise _unsupported("continue_stmt()", "guard the rest of the body with if_stmt")

    def inline_stmt(self, body, language=None):
        raise _unsupported("inline_stmt()", "build the statements with the builder's calls")

    def add_function_attrs(self, attrs):
        for f in reversed(self._frames):
            if isinstance(f, FunctionFrame):
                f.attrs.update(attrs)
                return
        raise RuntimeError("IRBuilder.add_function_attrs: not inside a function")

    def push_pending_leading_comments(self, comments):
        self._comments.append(list(comments))

    def pop_pending_leading_comments(self):
        return self._comments.pop() if self._comments else []

    def in_function(self) -> bool:
        return any(isinstance(f, FunctionFrame) for f in self._frames)

    def in_loop(self) -> bool:
        return any(isinstance(f, ForFrame) for f in self._frames)

    def in_if(self) -> bool:
        return any(isinstance(f, IfFrame) for f in self._frames)

    # ---- types ----
    def tensor_type(self, shape, dtype, memref=None, tensor_view=None):
        if memref is not None:
            raise _unsupported("tensor_type(memref=...)", "leave memref None: tensors live in DDR, placed by the runtime")
        if tensor_view is not None and (tensor_view.stride is not None or tensor_view.layout is not None):
            raise _unsupported("tensor_type(tensor_view=...)", "tensors are contiguous row-major: drop tensor_view")
        return _ir.TensorType([_expr(d) for d in shape], dtype)

    def tile_type(self, shape, dtype, memref=None, tile_view=None, memory_space=None):
        if memref is not None:
            raise _unsupported("tile_type(memref=...)", "leave memref None: PlanMemory places every tile")
        valid = [] if tile_view is None or tile_view.valid_shape is None else [_expr(d) for d in tile_view.valid_shape]
        pad = _ir.PadValue.null if tile_view is None or tile_view.pad is None else tile_view.pad
        return _ir.TileType([_expr(d) for d in shape], dtype, memory_space or _ir.MemorySpace.Vec, valid, pad)

    def tile_view(self, valid_shape, stride=None, start_offset=None, blayout=None, slayout=None, fractal=512,
                  pad=None, compact=None):
        from pypto.ir._nodes import TileView

        return TileView(valid_shape=valid_shape, stride=stride, start_offset=start_offset, blayout=blayout,
                        slayout=slayout, fractal=fractal, pad=pad, compact=compact)

    def tensor_view(self, stride, layout):
        from pypto.ir._nodes import TensorView

        return TensorView(stride, layout)

    def memref(self, memory_space_or_addr, addr_or_size, size_or_id, id=None):  # noqa: A002
        raise _unsupported("memref()", "leave placement to PlanMemory (tile addresses are planned, not given)")

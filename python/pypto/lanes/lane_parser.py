"""Parses a @pto.kernel function body (never executing it) into a lane program: a flat list
of lane ops on numbered values that the C++ side lowers to PTO instructions. Reuses the pl
front end's source lookup (`Source.of`) and error layout (`parse_error`)."""

import ast

from pypto._core import ir
from pypto.language.errors import parse_error
from pypto.language.function_parser import Source

from . import lane_ops

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


class _Pipeline:
    """The name bound by `with pto.pipeline() as pl:` inside a kernel."""


class LaneParser:
    def __init__(self, fn):
        self.source = Source.of(fn)
        self.fdef = self.source.node
        self.ops = []
        self.num_values = 0
        self.names = {}
        self.pipeline_ran = False

    # ---- helpers -----------------------------------------------------------------------
    def span(self, node):
        return ir.Span(self.source.file, getattr(node, "lineno", 0) + self.source.line_offset, 0)

    def error(self, node, message, fix=""):
        return parse_error(self.span(node), message, fix)

    def emit(self, node, kind, args=(), value=0.0, is_float=False, name="", after="", result=True):
        dst = -1
        if result:
            dst = self.num_values
            self.num_values += 1
        self.ops.append((kind, dst, list(args), float(value), bool(is_float), name, after, self.source.file,
                         getattr(node, "lineno", 0) + self.source.line_offset))
        return dst

    def resolve(self, node):
        """The Python object a dotted name outside the kernel refers to (e.g. pto.load), or None."""
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            return self.source.env.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, _Pipeline) or base is None or isinstance(base, int):
                return None
            return getattr(base, node.attr, None)
        return None

    # ---- program -----------------------------------------------------------------------
    def parse(self):
        if self.fdef.args.vararg or self.fdef.args.kwarg or self.fdef.args.kwonlyargs:
            raise self.error(self.fdef, f"kernel '{self.fdef.name}' may only take plain parameters",
                             "write def kernel(a, b, n): ...")
        params = [a.arg for a in self.fdef.args.args]
        for i, p in enumerate(params):
            self.names[p] = self.emit(self.fdef, "param", [i])
        self.block(self.fdef.body)
        return self.fdef.name, params, self.ops, self.num_values

    def block(self, stmts):
        for s in stmts:
            self.stmt(s)

    def stmt(self, s):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return  # docstring
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1 or not isinstance(s.targets[0], ast.Name):
                raise self.error(s, "only `name = expression` assignments are supported in a kernel",
                                 "assign one value to one name")
            self.names[s.targets[0].id] = self.expr(s.value)
            return
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and type(s.op) in _BINOPS:
            cur = self.expr(s.target)
            self.names[s.target.id] = self.emit(s, "binary", [cur, self.expr(s.value)], name=_BINOPS[type(s.op)])
            return
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            self.call(s.value, statement=True)
            return
        if isinstance(s, ast.If):
            if s.orelse:
                raise self.error(s.orelse[0], "`else` is not supported in a kernel",
                                 "write a second `if` with the opposite condition")
            self.emit(s, "if", [self.expr(s.test)], result=False)
            self.block(s.body)
            self.emit(s, "endif", result=False)
            return
        if isinstance(s, ast.With):
            self.with_stmt(s)
            return
        if isinstance(s, ast.Pass):
            return
        raise self.error(s, f"`{type(s).__name__}` statements are not supported in a kernel",
                         "use assignments, `if`, pto calls and `with pto.pipeline()`")

    def with_stmt(self, s):
        if len(s.items) != 1 or not isinstance(s.items[0].context_expr, ast.Call):
            raise self.error(s, "a kernel's `with` must be `with pto.pipeline() as pl:` or `with pl.stage(name):`")
        item = s.items[0]
        call = item.context_expr
        fn = self.resolve(call.func)
        if fn is lane_ops.pipeline:
            if not isinstance(item.optional_vars, ast.Name):
                raise self.error(s, "write `with pto.pipeline() as pl:`")
            self.names[item.optional_vars.id] = _Pipeline()
            self.block(s.body)
            return
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr == "stage" and isinstance(self.resolve(f.value), _Pipeline):
            name = self.const_str(call.args[0] if call.args else None, s, "stage name")
            after = ""
            for kw in call.keywords:
                if kw.arg == "after":
                    after = self.const_str(kw.value, s, "after=")
            self.emit(s, "stage_begin", name=name, after=after, result=False)
            self.block(s.body)
            self.emit(s, "stage_end", result=False)
            return
        raise self.error(s, "a kernel's `with` must be `with pto.pipeline() as pl:` or `with pl.stage(name):`")

    def const_str(self, node, at, what):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            raise self.error(at, f"the {what} must be a string literal", 'write pl.stage("load_a")')
        return node.value

    # ---- expressions -------------------------------------------------------------------
    def expr(self, e):
        if isinstance(e, ast.Constant) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool):
            return self.emit(e, "const", value=e.value, is_float=isinstance(e.value, float))
        if isinstance(e, ast.Name):
            if e.id in self.names and isinstance(self.names[e.id], int):
                return self.names[e.id]
            v = self.source.env.get(e.id)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return self.emit(e, "const", value=v, is_float=isinstance(v, float))
            raise self.error(e, f"name '{e.id}' is not defined in kernel '{self.fdef.name}'",
                             "define it before use (kernel parameters, assignments or module-level numbers)")
        if isinstance(e, ast.BinOp) and type(e.op) in _BINOPS:
            return self.emit(e, "binary", [self.expr(e.left), self.expr(e.right)], name=_BINOPS[type(e.op)])
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            zero = self.emit(e, "const", value=0)
            return self.emit(e, "binary", [zero, self.expr(e.operand)], name="-")
        if isinstance(e, ast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _CMPOPS:
            return self.emit(e, "binary", [self.expr(e.left), self.expr(e.comparators[0])], name=_CMPOPS[type(e.ops[0])])
        if isinstance(e, ast.Call):
            return self.call(e, statement=False)
        raise self.error(e, f"`{ast.unparse(e)}` is not supported in a kernel",
                         "use numbers, names, + - * / // %, comparisons and pto calls")

    def call(self, c, statement):
        f = c.func
        if isinstance(f, ast.Attribute) and isinstance(self.resolve(f.value), _Pipeline):
            if f.attr == "run" and statement:
                self.emit(c, "pipeline_run", result=False)
                return None
            raise self.error(c, f"pl.{f.attr}(...) is not a pipeline operation here", "use `with pl.stage(name):` and pl.run()")
        fn = self.resolve(f)
        if fn in (min, max):
            a, b = self.args(c, 2, fn.__name__)
            return self.emit(c, "binary", [a, b], name=fn.__name__)
        spec = lane_ops.SPECS.get(fn) if callable(fn) else None
        if spec is None:
            raise self.error(c, f"`{ast.unparse(f)}` cannot be called in a kernel",
                             "call pto operations (pto.load, pto.store, pto.fma, ...)")
        kind, arities, returns = spec
        if len(c.args) not in arities or c.keywords:
            raise self.error(c, f"pto.{fn.__name__} takes {' or '.join(map(str, arities))} positional arguments, "
                                f"got {len(c.args)}", f"see docs/kernel-api.md for pto.{fn.__name__}")
        if fn is lane_ops.store and len(c.args) == 3:
            kind = "store_local"
        args = [self.expr(a) for a in c.args]
        if returns and statement:
            return None
        if not returns and not statement:
            raise self.error(c, f"pto.{fn.__name__} returns nothing", "call it as a statement")
        return self.emit(c, kind, args, result=returns)

    def args(self, c, n, name):
        if len(c.args) != n:
            raise self.error(c, f"{name} takes {n} arguments", "")
        return [self.expr(a) for a in c.args]

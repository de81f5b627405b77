"""Expressions of a parsed body. A value is either an IR expression (`ir.Expr`) or a Python
compile-time value (closure constant, literal, enum, list); arithmetic on compile-time values
folds at parse time, arithmetic on IR scalars builds BinaryExpr, op calls go through the
registry (`resolve_op`, `make_op_call`)."""

import ast
import difflib
import operator

from pypto._core import PyptoError, ir

from . import ops
from .errors import ParseError, excerpt_from_message, parse_error
from .tasks import NoDep, SubmitResult, TaskId, new_task_id, reserve_task_id
from .types import DynDim

_BINOPS = {ast.Add: (operator.add, ir.BinaryOp.Add, "add"), ast.Sub: (operator.sub, ir.BinaryOp.Sub, "sub"),
           ast.Mult: (operator.mul, ir.BinaryOp.Mul, "mul"), ast.Div: (operator.truediv, ir.BinaryOp.Div, "div"),
           ast.FloorDiv: (operator.floordiv, ir.BinaryOp.FloorDiv, None),
           ast.Mod: (operator.mod, ir.BinaryOp.Mod, None),
           ast.Pow: (operator.pow, None, None)}  # folded at parse time only: the IR has no power op
_CMPOPS = {ast.Eq: (operator.eq, ir.BinaryOp.Eq), ast.NotEq: (operator.ne, ir.BinaryOp.Ne),
           ast.Lt: (operator.lt, ir.BinaryOp.Lt), ast.LtE: (operator.le, ir.BinaryOp.Le),
           ast.Gt: (operator.gt, ir.BinaryOp.Gt), ast.GtE: (operator.ge, ir.BinaryOp.Ge)}
_PY_CONST = (bool, int, float, str)


def is_ir(value):
    return isinstance(value, ir.Expr)


def is_number(value):
    return isinstance(value, (bool, int, float))


class SelfRef:
    """`self` inside a `@pl.program` method: `self.kernel(...)` calls another function."""


class FunctionRef:
    def __init__(self, name):
        self.name = name


class ExprParser:
    """Mixin of FunctionParser: evaluation of expression nodes."""

    # -- positions and errors -------------------------------------------------------------
    def span(self, node):
        spliced = getattr(self, "splice_span", None)  # a pld collective's body: the user's call line
        if spliced is not None:
            return spliced
        return ir.Span(self.source.file, getattr(node, "lineno", 0) + self.source.line_offset,
                       getattr(node, "col_offset", 0))

    def columns(self, node):
        """The columns [start, end) of `node` in the file's line (the caret of an error)."""
        col = getattr(node, "col_offset", None)
        if col is None or getattr(self, "splice_span", None) is not None:
            return None, None
        shift = getattr(self.source, "col_offset", 0)
        end = getattr(node, "end_col_offset", None)
        same_line = getattr(node, "end_lineno", None) == getattr(node, "lineno", None)
        return col + shift, (end + shift if end is not None and same_line else None)

    def error(self, node, message, fix=""):
        return parse_error(self.span(node), message, fix, *self.columns(node))

    def text(self, node):
        return ast.unparse(node)

    # -- names ------------------------------------------------------------------------------
    def rebinding_line(self, name):
        """' at <file>:<line>' of the first assignment to `name` in the function body, or ''."""
        fdef = getattr(self, "fdef", None)
        if fdef is None:
            return ""
        lines = [n.lineno for n in ast.walk(fdef) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
        return f" at {self.source.file}:{min(lines) + self.source.line_offset}" if lines else ""

    def lookup(self, name, node):
        if name in self.symbols:
            return self.symbols[name]
        frame = getattr(self, "spmd_frame", None)
        if frame is not None and name in ("__block_idx", "__block_num"):  # as printed inside pl.spmd
            return frame.var("get_block_idx" if name == "__block_idx" else "get_block_num", self.span(node))
        if name in self.source.env:
            return self.source.env[name]
        if name in self.out_of_scope:
            raise self.error(node, f"'{name}' is defined inside {self.out_of_scope[name]} and is not visible here",
                             f"define '{name}' before that block so the value is carried out of it")
        near = difflib.get_close_matches(name, list(self.symbols), n=1)
        raise self.error(node, f"name '{name}' is not defined",
                         f"did you mean '{near[0]}'?" if near else "define it before use or pass it as a parameter")

    # -- conversions -----------------------------------------------------------------------
    def to_expr(self, value, node, dtype=None):
        """An IR expression for `value`; Python numbers become constants (of `dtype` if given)."""
        if is_ir(value):
            return value
        if isinstance(value, DynDim):
            return self.dyn_var(value.name, node)
        span = self.span(node)
        if isinstance(value, bool):
            return ir.ConstBool(value, span)
        if isinstance(value, int):
            self.check_int64(value, node)
            if dtype is not None and ir.dtype_is_float(dtype):
                return ir.ConstFloat(float(value), dtype, span)  # fits: checked as an int64 above
            if dtype is not None and ir.dtype_is_int(dtype):
                return ir.ConstInt(value, dtype, span)
            return ir.ConstInt(value, ir.DataType.INDEX, span)
        if isinstance(value, float):
            return ir.ConstFloat(value, dtype if dtype is not None and ir.dtype_is_float(dtype) else ir.DataType.FP32, span)
        if isinstance(value, (list, tuple)):
            return ir.ListExpr([self.to_expr(v, node) for v in value], span)
        if isinstance(value, TaskId):
            return self.task_value(value, node)
        raise self.error(node, f"'{self.text(node)}' ({type(value).__name__}) cannot be used as a value here",
                         "use a tensor, tile, scalar or a Python number")

    def check_int64(self, value, node):
        """Integers of the IR are 64-bit: a larger Python int is an error at its line."""
        if not -(2**63) <= value < 2**63:
            raise self.error(node, f"the integer {value} does not fit in 64 bits",
                             "use a value between -2**63 and 2**63 - 1")

    def constant(self, value, node, what):
        """`value` as a compile-time constant, or a clear error naming `what`."""
        if is_ir(value) or (isinstance(value, (list, tuple)) and any(is_ir(v) for v in value)):
            raise self.error(node, f"{what} must be a compile-time constant, but '{self.describe(value)}' is a run-time value",
                             "use a literal, a closure constant or a pl.* enum value")
        return value

    def describe(self, value):
        if is_ir(value):
            return ir.print_expr(value)
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(self.describe(v) for v in value) + "]"
        return repr(value)

    # -- evaluation ------------------------------------------------------------------------
    def eval(self, node):
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"the Python construct '{type(node).__name__}' ({self.text(node)}) is not supported "
                                   "in a pl body", "rewrite it with pl ops, scalar arithmetic or closure constants")
        return method(node)

    def eval_Constant(self, node):
        return node.value

    def eval_Name(self, node):
        return self.lookup(node.id, node)

    def eval_Attribute(self, node):
        # self.<function> names a function of the program (a @pl.jit `_helper` outlines to
        # `_helper_incore_0`); any other private attribute could reach outside the language.
        is_self = isinstance(node.value, ast.Name) and isinstance(self.lookup(node.value.id, node.value), SelfRef)
        if node.attr.startswith("__") or (node.attr.startswith("_") and not is_self):
            raise self.error(node, f"attribute '{node.attr}' is private and cannot be used in a pl body",
                             "use the public names of pl and of your constants")
        base = self.eval(node.value)
        if isinstance(base, SelfRef):
            return FunctionRef(node.attr)
        if is_ir(base):
            raise self.error(node, f"attribute '{node.attr}' of an IR value is not supported",
                             "use an op such as pl.tensor.dim(t, axis)")
        try:
            return getattr(base, node.attr)
        except ops.NotSupported as e:
            raise self.error(node, e.message, e.fix) from None
        except AttributeError:
            owner = self.text(node.value)
            root = owner.split(".", 1)[0]
            if root == "pl" and root in getattr(self, "symbols", {}):  # `pl = 3` earlier in the body
                where = self.rebinding_line(root)
                raise self.error(node, f"'{owner}.{node.attr}' reads an attribute of the local name 'pl', which this "
                                       f"function rebinds{where} (it no longer names pypto.language)",
                                 "rename that variable so 'pl' stays the pypto.language module") from None
            names = dir(base)
            if owner == "pl" or (isinstance(base, ops.OpNamespace)):
                names = names + sorted(ops.dsl_op_names())
            names = [n for n in names if n != node.attr]  # never suggest the name itself
            near = difflib.get_close_matches(node.attr, names, n=1)
            if near:
                fix = f"did you mean '{owner}.{near[0]}'?"
            elif owner != "pl" and not isinstance(base, ops.OpNamespace):
                public = [x for x in names if not x.startswith("_")]
                fix = "use one of: " + ", ".join(f"{owner}.{x}" for x in public[:12]) + (", ..." if len(public) > 12 else "")
            else:
                fix = "see docs/ops.md for the names of pl"
            raise self.error(node, f"unknown name '{owner}.{node.attr}'", fix) from None

    def eval_List(self, node):
        return [self.eval(e) for e in node.elts]

    def eval_Tuple(self, node):
        return tuple(self.eval(e) for e in node.elts)

    def eval_Dict(self, node):  # attribute dicts: pl.func_attr({...}), attrs={"arg_directions": [...]}
        if any(k is None for k in node.keys):
            raise self.error(node, f"'**' in the dict '{self.text(node)}' is not supported", "write the keys out")
        return {self.constant(self.eval(k), k, "a dict key"): self.eval(v) for k, v in zip(node.keys, node.values)}

    def eval_IfExp(self, node):
        cond = self.eval(node.test)
        if is_ir(cond):
            raise self.error(node, "a conditional expression needs a compile-time condition",
                             "use an if/else statement for run-time conditions")
        return self.eval(node.body if cond else node.orelse)

    def task_value(self, tid, node):
        """`tid` (bound by `with pl.at(...) as tid` or pl.submit) used as a value: the task id of
        that launch site's latest launch, a TASK_ID scalar."""
        return self.op_call("task.latest", [], {"task_id": tid.id}, node)

    def eval_Subscript(self, node):
        base = self.eval(node.value)
        if self.is_array(base):  # x[a:b, c:d], x[i], x[i, j]: a view or one element
            return self.subscript(base, node)
        index = self.eval(node.slice)
        if is_ir(base) and isinstance(base.type, ir.ArrayType):  # arr[i]: one element of a pl.array
            return self.op_call("array.get", [base, index], {}, node)
        if is_ir(base):
            if isinstance(base.type, ir.TupleType) and isinstance(index, int):
                return ir.TupleGetItem(base, index, self.span(node))
            raise self.error(node, f"subscript '{self.text(node)}' of a {type(base.type).__name__} value is not supported",
                             "subscript tensors, tiles, tuples of results or pl.array values")
        try:
            return base[index]
        except (TypeError, KeyError, IndexError) as e:
            raise self.error(node, f"cannot evaluate '{self.text(node)}': {e}",
                             "write types as pypto.ir.print_program prints them, e.g. "
                             "pl.Tensor[[64, 64], pl.FP32] or pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec]") from None

    def subscript_index(self, base, node, what):
        """The per-dimension entries of `x[...]`: ast.Slice nodes or evaluated indices, padded
        with full slices to the rank (numpy rules: missing trailing indices mean `:`)."""
        elts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        rank = len(base.type.shape)
        for e in elts:
            if isinstance(e, ast.Slice) and e.step is not None:
                raise self.error(node, f"'{self.text(node)}' has a step; {what} windows are contiguous",
                                 "write the window as start:stop (gather strided elements with pl.gather)")
            if isinstance(e, ast.Constant) and (e.value is Ellipsis or e.value is None):
                raise self.error(node, f"'{self.text(node)}': '{self.text(e)}' is not supported in a {what} index",
                                 "index every dimension with start:stop or one integer")
            if isinstance(e, ast.Starred):
                raise self.error(node, f"'{self.text(node)}': starred indices are not supported")
        if len(elts) > rank:
            raise self.error(node, f"'{self.text(node)}' has {len(elts)} indices but the {what} has rank {rank}",
                             f"give at most {rank} indices")
        out = []
        for e in elts:
            if isinstance(e, ast.Slice):
                out.append(e)
                continue
            v = self.eval(e)
            if self.is_array(v):
                raise self.error(e, f"'{self.text(e)}' cannot index a {what} (advanced indexing is not supported)",
                                 "index with integers and start:stop windows, or use pl.gather")
            out.append(v)
        return out + [ast.Slice()] * (rank - len(elts))

    def index_bound(self, value, node, d, what):
        if isinstance(value, bool) or not (isinstance(value, int) or
                                           (is_ir(value) and isinstance(value.type, ir.ScalarType))):
            raise self.error(node, f"index {self.text(node)} of dimension {d} is not an integer",
                             "index with integers or pl.Scalar[pl.INDEX] values")
        if isinstance(value, int) and value < 0:
            raise self.error(node, f"negative index {value} in dimension {d} of the {what}",
                             "count from 0: negative indices are not supported")
        return value

    def extent(self, hi, lo, node):
        """hi - lo as simply as written: `r : r + T` has extent T (affine simplification)."""
        if isinstance(hi, int) and isinstance(lo, int):
            return hi - lo
        e = ir.index_difference(self.to_expr(hi, node, ir.DataType.INDEX), self.to_expr(lo, node, ir.DataType.INDEX),
                                self.span(node))
        return e.value if isinstance(e, ir.ConstInt) else e

    def window(self, base, node, what):
        """(offsets, extents, dropped axes) of `base[...]`; None when every index is a scalar."""
        entries = self.subscript_index(base, node, what)
        if not any(isinstance(e, ast.Slice) for e in entries):
            return None, entries
        offsets, extents, drop = [], [], []
        for d, e in enumerate(entries):
            dim = base.type.shape[d]
            dim = dim.value if isinstance(dim, ir.ConstInt) else dim
            if isinstance(e, ast.Slice):
                lo = self.index_bound(self.eval(e.lower), e.lower, d, what) if e.lower is not None else 0
                hi = self.index_bound(self.eval(e.upper), e.upper, d, what) if e.upper is not None else dim
                n = self.extent(hi, lo, node)
                if isinstance(n, int) and n <= 0:
                    raise self.error(node, f"the window {self.text(e)} of dimension {d} of '{self.text(node)}' is "
                                           f"empty ({n} elements)", "make stop larger than start")
                offsets.append(lo)
                extents.append(n)
            else:
                offsets.append(self.index_bound(e, node, d, what))
                extents.append(1)
                drop.append(d)
        return (offsets, extents, drop), None

    def subscript(self, base, node):
        """`x[a:b, c:d]` is pl.slice(x, [b - a, d - c], [a, c]) (a view of a tensor, a copied
        window of a tile); `x[i, j]` reads one element; a scalar index drops its axis."""
        what = "tensor" if isinstance(base.type, ir.TensorType) else "tile"
        win, scalars = self.window(base, node, what)
        if win is None:
            indices = [self.index_bound(v, node, d, what) for d, v in enumerate(scalars)]
            return self.op_call("read", [base, indices], {}, node)
        offsets, extents, drop = win
        if what == "tile" and not all(isinstance(n, int) for n in extents):
            raise self.error(node, f"the window '{self.text(node)}' of a tile has an extent known only at run time",
                             "tiles have static shapes: write windows of constant extent (r : r + 16), or pass "
                             "valid_shape= to pl.slice for the run-time part")
        kwargs = {"drop_dims": drop} if drop else {}
        return self.op_call("slice", [base, extents, offsets], kwargs, node)

    def eval_BinOp(self, node):
        a, b = self.eval(node.left), self.eval(node.right)
        entry = _BINOPS.get(type(node.op))
        if entry is None:
            raise self.error(node, f"operator in '{self.text(node)}' is not supported",
                             "use + - * / // % or pl ops")
        py_op, ir_op, tile_op = entry
        if not is_ir(a) and not is_ir(b):
            return self.fold(py_op, (a, b), node)
        if ir_op is None:
            raise self.error(node, f"'**' in '{self.text(node)}' has a run-time operand; only constants known at "
                                   "parse time can be raised to a power",
                             "multiply explicitly (x * x), or use pl.exp(pl.mul(pl.log(x), p)) for tiles")
        if self.is_array(a) or self.is_array(b):
            if tile_op is None:
                raise self.error(node, f"operator in '{self.text(node)}' is not defined on tiles or tensors")
            return self.op_call(tile_op, [a, b], {}, node)
        return self.binary(ir_op, a, b, node)

    def eval_UnaryOp(self, node):
        a = self.eval(node.operand)
        if not is_ir(a):
            py = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}
            return self.fold(py[type(node.op)], (a,), node)
        if isinstance(node.op, ast.UAdd):
            return a
        if isinstance(node.op, ast.USub):
            if self.is_array(a):
                return self.op_call("neg", [a], {}, node)
            return self.checked(lambda: ir.UnaryExpr(ir.UnaryOp.Neg, a, self.span(node)))
        if isinstance(node.op, ast.Not):
            return self.checked(lambda: ir.UnaryExpr(ir.UnaryOp.Not, a, self.span(node)))
        raise self.error(node, f"operator '~' is not supported on run-time values ({self.text(node)})")

    def eval_BoolOp(self, node):
        values = [self.eval(v) for v in node.values]
        if not any(is_ir(v) for v in values):
            result = values[0]
            for v in values[1:]:
                result = (result and v) if isinstance(node.op, ast.And) else (result or v)
            return result
        op = ir.BinaryOp.And if isinstance(node.op, ast.And) else ir.BinaryOp.Or
        result = values[0]
        for v in values[1:]:
            result = self.binary(op, result, v, node)
        return result

    def eval_Compare(self, node):
        left = self.eval(node.left)
        result = None
        for op_node, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node)
            entry = _CMPOPS.get(type(op_node))
            if entry is None:
                raise self.error(node, f"comparison in '{self.text(node)}' is not supported", "use == != < <= > >=")
            if not is_ir(left) and not is_ir(right):
                part = self.fold(entry[0], (left, right), node)
            else:
                part = self.binary(entry[1], left, right, node)
            if result is None:
                result = part
            elif is_ir(result) or is_ir(part):
                result = self.binary(ir.BinaryOp.And, result, part, node)
            else:
                result = result and part
            left = right
        return result

    def fold(self, fn, args, node):
        # Folding runs the user's constant arithmetic at parse time: keep it bounded.
        if fn is operator.mul and any(isinstance(a, (list, tuple, str)) for a in args):
            count = next((a for a in args if isinstance(a, int)), 0)
            if count > 1 << 16:
                raise self.error(node, f"the constant '{self.text(node)}' is too large to fold",
                                 "build long lists outside the program")
        try:
            return fn(*args)
        except Exception as e:  # noqa: BLE001 - the user's constant arithmetic failed
            raise self.error(node, f"cannot fold the constant expression '{self.text(node)}': {e}") from None

    def is_array(self, value):
        return is_ir(value) and isinstance(value.type, (ir.TileType, ir.TensorType))

    def checked(self, build):
        try:
            return build()
        except ParseError:
            raise
        except PyptoError as e:
            raise ParseError(str(e)) from None

    def binary(self, op, a, b, node):
        """A scalar BinaryExpr; a Python number takes the dtype of the other operand."""
        other = b if is_ir(b) else a
        dtype = other.type.dtype if isinstance(other.type, ir.ScalarType) else None
        a, b = self.to_expr(a, node, dtype), self.to_expr(b, node, dtype)
        return self.checked(lambda: ir.BinaryExpr(op, a, b, self.span(node)))

    # -- calls -----------------------------------------------------------------------------
    def eval_Call(self, node):
        func = self.eval(node.func)
        if isinstance(func, ops.OpStub):
            args, kwargs = self.call_args(node)
            return self.op_call(func.dsl_name, args, kwargs, node)
        if isinstance(func, ops.Construct):
            return self.construct_call(func.name, node)
        if isinstance(func, FunctionRef):
            args, kwargs = self.call_args(node)
            task = self.launch_info(kwargs, node, f"self.{func.name}(...)")
            args = self.no_dep_args(args, task)
            return self.with_deps(self.program.call_method(self, func.name, args, node), **task)
        if getattr(func, "_pl_jit_kind", None) is not None:
            args, kwargs = self.call_args(node)
            task = self.launch_info(kwargs, node, f"{func.__name__}(...)")
            return self.with_deps(self.program.call_jit(self, func, args, node), **task)
        if getattr(func, "_pl_function_opts", None) is not None and self.program is not None:
            args, kwargs = self.call_args(node)  # a module-level @pl.function called from a @pl.program
            task = self.launch_info(kwargs, node, f"{func.__name__}(...)")
            return self.with_deps(self.program.call_module_function(self, func, args, node), **task)
        if getattr(func, "_pl_splice", None) is not None and self.program is not None:
            args, kwargs = self.call_args(node)  # pld.tensor.allreduce, ...: an inline body chosen by its arguments
            try:
                body, body_args = func._pl_splice(args, kwargs)
            except (TypeError, ValueError, NotImplementedError) as e:
                raise self.error(node, str(e), "see docs/distributed.md for the pld signatures") from None
            return self.program.call_jit(self, body, body_args, node)
        if callable(func):
            args, kwargs = self.call_args(node)
            runtime = [a for a in list(args) + list(kwargs.values()) if is_ir(a)]
            if runtime and not getattr(func, "_pl_marker", False):
                raise self.error(node, f"'{self.text(node.func)}' is a Python function and cannot take run-time values",
                                 "only pl ops, @pl.jit.incore / @pl.jit.inline functions and self.<function> "
                                 "calls take tensors, tiles or scalars")
            try:
                return func(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - report the user's parse-time call failure
                raise self.error(node, f"evaluating '{self.text(node)}' at parse time failed: {e}") from None
        raise self.error(node, f"'{self.text(node.func)}' is not callable")

    def launch_info(self, kwargs, node, what):
        """The task keywords of a kernel call: deps=[...] and manual=, plus task_id= and
        block_num= as the printer writes outlined launches."""
        deps, dyn_deps = self.task_deps(kwargs.pop("deps"), node) if "deps" in kwargs else ([], [])
        manual = self.manual_flag(kwargs.pop("manual", False), node)
        task_id = self.constant(kwargs.pop("task_id", -1), node, "task_id=")
        block_num = self.constant(kwargs.pop("block_num", 0), node, "block_num=")
        # PyPTO's launch keywords, as the printer writes them on a kernel launch
        keys = ("core_num", "sync_start", "name_hint", "role", "optimizations", "no_dep_args", "dumps",
                "allow_early_resolve", "windowize", "predicate")
        given = {k: kwargs.pop(k) for k in keys if k in kwargs}
        hints = self.launch_hints(given, node, what)
        if given.get("core_num") is not None:  # run-time block count of an outlined pl.spmd launch
            hints["core_num"] = self.core_num(given["core_num"], node, what)[1] or self.to_expr(given["core_num"], node)
        if kwargs:
            raise self.error(node, f"{what} takes positional arguments (and deps=[...], manual=) only, not "
                                   f"'{next(iter(kwargs))}='")
        for name, v in (("task_id", task_id), ("block_num", block_num)):
            if not isinstance(v, int) or isinstance(v, bool) or v < (-1 if name == "task_id" else 0):
                raise self.error(node, f"{name}= takes a non-negative integer, got {v!r}")
        if task_id >= 0:
            reserve_task_id(task_id)
            self.__dict__.setdefault("task_ids_used", set()).add(task_id)
            # The name the printer gives this launch's id when it is used as a value (task_N).
            self.symbols.setdefault(f"task_{task_id}", TaskId(task_id, f"task_{task_id}"))
        return {"deps": deps, "dyn_deps": dyn_deps, "manual": manual, "task_id": task_id, "block_num": block_num,
                "hints": hints}

    @staticmethod
    def with_deps(call, deps, manual=False, task_id=-1, block_num=0, dyn_deps=(), hints=None):
        """A kernel call that runs after the tasks `deps` (explicit task edges) and the run-time
        task ids `dyn_deps`; `manual`: a launch of a pl.manual_scope (no automatic edges to other
        manual launches); `hints`: PyPTO's launch keywords (ir.FuncCall.hints)."""
        if not (deps or dyn_deps or manual or task_id >= 0 or block_num or hints) or not isinstance(call, ir.FuncCall):
            return call
        return ir.FuncCall(call.callee, list(call.args), call.type, call.span, task_id=task_id, deps=deps,
                           block_num=block_num, manual=manual, dyn_deps=list(dyn_deps), hints=dict(hints or {}))

    def no_dep_args(self, args, task):
        """Arguments wrapped in pl.no_dep(t): unwrapped, and listed in the launch's no_dep_args
        (outside a manual scope, where every edge is explicit anyway)."""
        marked = [a.value for a in args if isinstance(a, NoDep)]
        if marked and not getattr(self, "manual_depth", 0):
            task["hints"]["no_dep_args"] = list(task["hints"].get("no_dep_args", [])) + marked
        return [a.value if isinstance(a, NoDep) else a for a in args]

    def manual_flag(self, value, node):
        if not isinstance(value, bool):
            raise self.error(node, f"manual= takes True or False, got {self.describe(value)}",
                             "write manual=True, or call the kernel inside `with pl.manual_scope():`")
        return value

    def call_args(self, node):
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.error(a, "*args in a call is not supported", "pass the arguments one by one")
            args.append(self.eval(a))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                raise self.error(node, "**kwargs in a call is not supported", "pass keyword arguments one by one")
            kwargs[k.arg] = self.eval(k.value)
        return args, kwargs

    def scalar_cast(self, args, kwargs, node):
        """pl.cast(x, dtype, mode="round") of a scalar (an IR scalar or a Python number): the
        scalar conversion node (a constant folds); None when x is a tile or a tensor."""
        names = (("input", "tile", "tensor"), ("target_type", "dtype"), ("mode",))
        given = list(args[:3])
        for i, keys in enumerate(names):
            for k in keys:
                if k in kwargs:
                    while len(given) <= i:
                        given.append(None)
                    given[i] = kwargs[k]
        x = given[0] if given else None
        scalar = (is_ir(x) and isinstance(x.type, ir.ScalarType)) or \
            (isinstance(x, (bool, int, float)) and not is_ir(x))
        if not scalar:
            return None
        extra = set(kwargs) - {k for keys in names for k in keys}
        if extra or len(args) > 3:
            raise self.error(node, "pl.cast of a scalar takes (input, target_type, mode='round')"
                             + (f"; got keyword '{sorted(extra)[0]}'" if extra else f"; got {len(args)} arguments"),
                             "call it as pl.cast(x, pl.INDEX)")
        dtype = given[1] if len(given) > 1 else None
        if not isinstance(dtype, ir.DataType):
            raise self.error(node, f"pl.cast of a scalar needs a target dtype, got {self.describe(dtype)}",
                             "call it as pl.cast(x, pl.INDEX)")
        mode = given[2] if len(given) > 2 and given[2] is not None else "round"
        mode = self.constant(mode, node, "argument 'mode' of pl.cast")
        if not isinstance(mode, str):
            mode = getattr(mode, "name", mode)
        if not isinstance(mode, str):
            raise self.error(node, f"ValueError: pl.cast: mode must be a name, got {self.describe(mode)}",
                             "drop mode= on a scalar cast")
        value = self.to_expr(x, node)
        return self.checked(lambda: ir.make_cast(value, dtype, mode, self.span(node)))

    def named_extents(self, shape, node):
        """The extents of pl.create_tensor with each run-time one that is not a name (a
        pl.tensor.read, arithmetic) bound to a fresh scalar first: the tensor's type, which
        kernels it is passed to take as theirs, names the extent by that scalar."""
        out = []
        for d, e in enumerate(shape):
            index = is_ir(e) and isinstance(e.type, ir.ScalarType) and e.type.dtype == ir.DataType.INDEX
            if is_ir(e) and isinstance(e.type, ir.ScalarType) and not isinstance(e, ir.ConstInt) \
                    and not (index and isinstance(e, ir.Var)):
                if ir.dtype_is_int(e.type.dtype) and not index:  # an INT32 element read: as INDEX
                    e = self.checked(lambda: ir.make_cast(e, ir.DataType.INDEX, "round", self.span(node)))
                var = ir.Var(f"extent{d}", e.type, self.span(node))
                self.emit(ir.AssignStmt(var, e, self.span(node)))
                e = var
            out.append(e)
        return out

    def op_call(self, dsl_name, args, kwargs, node):
        """Resolves `pl.<dsl_name>` for these arguments and builds the checked Call (a task id
        argument becomes its value in to_expr)."""
        def type_of(v):
            if is_ir(v):
                return v.type
            if isinstance(v, bool):
                return ir.ScalarType(ir.DataType.BOOL)
            if isinstance(v, int):
                return ir.ScalarType(ir.DataType.INDEX)
            if isinstance(v, float):
                return ir.ScalarType(ir.DataType.FP32)
            return ir.NoneType()

        if dsl_name == "cast":
            scalar_cast = self.scalar_cast(args, kwargs, node)
            if scalar_cast is not None:
                return scalar_cast
        types = [type_of(a) for a in args]
        if not args and "." not in dsl_name:
            # All keywords (pl.read(src=t, offset=...)): the first tile or tensor decides tile vs tensor.
            first = next((v for v in kwargs.values() if self.is_array(v)), None)
            types = [first.type] if first is not None else []
        op = ir.resolve_op(dsl_name, types)
        if op is None and "." not in dsl_name:  # a tile op applied to a tensor (pl.load) or vice versa
            op = ir.resolve_op("tile." + dsl_name, types) or ir.resolve_op("tensor." + dsl_name, types)
        if op is None:
            near = difflib.get_close_matches(dsl_name, sorted(ops.dsl_op_names()), n=1)
            raise self.error(node, f"unknown op 'pl.{dsl_name}'",
                             f"did you mean 'pl.{near[0]}'?" if near else "see docs/ops.md for the ops of the language")
        if op.name in ("tile.aiv_shard", "tile.aic_gather"):  # a crossing of a pl.split_aiv region
            kwargs = self.region_crossing(op.name, kwargs, node)
        if op.name == "tensor.dump_tag" and getattr(self, "in_kernel_code", lambda: False)():
            raise self.error(node, "pl.dump_tag marks a tensor of the orchestration for the args dump, but this is "
                                   "kernel code (an InCore function or a pl.at body)",
                             "call pl.dump_tag(t) in the orchestration, before the launches that pass t")
        params = op.params
        signature = ir.op_signature(op.name)
        # The C++ binding (bind_op_arguments: positional order, PyPTO's keyword aliases, the errors)
        # says which parameter each argument is; the values stay Python here because turning one
        # into an expression or an attribute depends on that parameter's kind (build_call).
        slots = self.checked(lambda: ir.bind_op_arguments(op.name, len(args), list(kwargs), dsl_name, self.span(node)))
        given = {params[i].name: v for i, v in zip(slots, [*args, *kwargs.values()])}
        if isinstance(node, ast.Call) and len(node.args) + len(node.keywords) == len(slots):
            # The user's expression of each parameter: errors name `tb`, not only 'rhs'.
            self.call_arg_nodes = (node, {params[i].name: n for i, n in
                                          zip(slots, [*node.args, *(k.value for k in node.keywords)])})
        if op.name == "tensor.create" and isinstance(given.get("shape"), (list, tuple)):
            given["shape"] = self.named_extents(given["shape"], node)
        if getattr(self, "in_kernel_code", lambda: False)():
            wrapped_op, wrapped, problem = self.tile_operands(op, given, node)
            if (wrapped is not given or problem) and wrapped_op is op:  # a tile op that may take this tensor itself
                try:
                    return self.build_call(op, params, given, dsl_name, signature, node)
                except ParseError:
                    if problem:
                        raise problem from None
            elif problem:
                raise problem
            op, params, given = wrapped_op, wrapped_op.params, wrapped
        return self.build_call(op, params, given, dsl_name, signature, node)

    def build_call(self, op, params, given, dsl_name, signature, node):
        # The dtype literals take: the first tile / tensor argument's, positional or keyword (pl.write(dst=t, ...)).
        hint = next((given[p.name].type.dtype for p in params if self.is_array(given.get(p.name))), None)
        exprs, attrs = {}, {}
        for p in params:
            if p.name not in given or given[p.name] is None:
                continue
            v = given[p.name]
            if p.kind == ir.ParamKind.Attr:
                if isinstance(v, FunctionRef):  # peer_func=self.cube: the function's name
                    v = v.name
                v = self.constant(v, node, f"argument '{p.name}' of pl.{dsl_name}")
                if isinstance(p.default, str) and not isinstance(v, str) and hasattr(v, "name") \
                        and not type(v).__module__.startswith("pypto._core"):
                    v = v.name  # a layout enum member (pl.TileLayout.row_major) is kept by its name
                if isinstance(v, tuple):
                    v = list(v)
                if isinstance(p.default, float) and isinstance(v, int) and not isinstance(v, bool):
                    self.check_int64(v, node)
                    v = float(v)
                attrs[p.name] = v
            elif p.kind == ir.ParamKind.ExprList:
                if (isinstance(v, int) and not isinstance(v, bool)) or (is_ir(v) and isinstance(v.type, ir.ScalarType)):
                    v = [v]  # one scalar is a one-entry list: pl.read(t, flat_index)
                if not isinstance(v, (list, tuple)) and not (is_ir(v) and isinstance(v, ir.ListExpr)):
                    raise self.error(node, f"argument '{p.name}' of pl.{dsl_name} must be a list such as [0, 0]")
                exprs[p.name] = self.to_expr(v, node)
            else:
                exprs[p.name] = self.to_expr(v, node, None if p.index else hint)
        if op.name == "tensor.create" and self.in_kernel_code():  # an on-chip buffer (kernel_buffers.py)
            return self.kernel_buffer(attrs, exprs, node)
        try:
            return ir.make_op_call(op.name, [], exprs, attrs, self.span(node))
        except PyptoError as e:
            raise self.call_error(str(e), node) from None
        except (TypeError, OverflowError) as e:  # e.g. an attribute that does not fit in 64 bits
            raise self.error(node, f"pl.{dsl_name}: {e}", f"call it as {signature}") from None

    def call_error(self, text, node):
        """A C++ error about the op call at `node`, with the caret under the user's expression
        for the first parameter it quotes (else under the call) and, after the caret, the
        user's expression for each parameter it quotes: `^^ 'rhs' is tb, 'lhs' is ta`."""
        call, arg_nodes = getattr(self, "call_arg_nodes", (None, {}))
        if call is not node:
            arg_nodes = {}
        mentioned = []
        for name, arg in arg_nodes.items():
            at = text.find(f"'{name}'")
            if at >= 0:
                mentioned.append((at, name, arg))
        mentioned.sort(key=lambda m: m[0])
        first = mentioned[0][2] if mentioned else node
        names = []
        for _at, name, arg in mentioned:
            src = ast.unparse(arg)
            if src != name:
                names.append(f"'{name}' is {src if len(src) <= 40 else src[:37] + '...'}")
        return ParseError(excerpt_from_message(text, *self.columns(first), note=", ".join(names)))

    def tile_operands(self, op, given, node):
        """PyPTO's meaning in kernel code: a tensor used as a tile ("a slice inside InCore yields
        a Tile"). A call mixing tensors and tiles is the tile op, and each tensor operand of a
        tile op (a view x[0:16, :], a parameter, a tensor-level value) is pl.load-ed whole;
        LowerTensorOps folds the load into the view's tensor or computes the value's tile, and
        InferMemory moves it to Mat where a matmul reads it."""
        def operands(o):
            return [(p, given[p.name]) for p in o.params
                    if p.kind == ir.ParamKind.Expr and is_ir(given.get(p.name))]
        form = ir.tile_form(op.name)  # a tensor-level compute op (tensor.add) reading a tile: its tile op
        if form is not None and (any(isinstance(v.type, ir.TileType) for _, v in operands(op))
                                 or getattr(self, "tile_result_call", None) is node):  # kernel_buffers.eval_into_tile
            op = ir.find_op(form)
        if not op.name.startswith("tile."):
            return op, given, None
        original, given, changed, problem = given, dict(given), False, None
        for p, v in operands(op):
            if p.memory == ir.MemorySpace.DDR or not isinstance(v.type, ir.TensorType):  # its record: a global tensor
                continue
            shape = [d.value if isinstance(d, ir.ConstInt) else None for d in v.type.shape]
            if None in shape or len(shape) > 2 and any(n != 1 for n in shape[:-2]):
                problem = problem or self.error(node, f"argument '{p.name}' of pl.{op.name} is the tensor {self.describe(v)}, used as a "
                                       f"tile: a tensor operand of a tile op is loaded whole, which needs a static "
                                       f"2-D shape", "pl.load a tile of it with a static shape, or use the tensor "
                                                     "form of the op on tensors only (out[:] = ...)")
                continue
            rows, cols = [1] + shape if len(shape) == 1 else shape[-2:]
            given[p.name] = self.op_call("tile.load", [v, [0] * len(shape), [rows, cols]], {}, node)
            changed = True
        return op, given if changed else original, problem

    def submit(self, node, spmd=False):
        """`out, tid = pl.submit(kernel, *args, deps=[...], ...)` (and pl.spmd_submit(...,
        core_num=n)): launches the kernel (a @pl.jit.incore function or self.<InCore function>)
        as one task (a grid of core_num blocks) and returns its results followed by its task id,
        a parse-time handle for later deps=[tid]. A kernel with no results gives the task id."""
        what = "pl.spmd_submit" if spmd else "pl.submit"
        if not node.args:
            raise self.error(node, f"{what} needs the kernel to launch", f"write out, tid = {what}(self.kernel, x, y, deps=[...])")
        b = self.bind_construct(ops.spmd_submit if spmd else ops.submit, node, node, skip=1)
        func = self.eval(node.args[0])
        deps, dyn_deps = self.task_deps(b["deps"], node)
        manual = self.manual_flag(b.get("manual", False), node)
        task_id = b.get("task_id", -1)
        if not isinstance(task_id, int) or isinstance(task_id, bool) or task_id < -1:
            raise self.error(node, f"task_id= takes a non-negative integer, got {task_id!r}")
        block_num = b.get("block_num", 0)
        hints = self.launch_hints(b, node, what)
        if spmd:
            block_num, core_num = self.core_num(b["core_num"], node, what)
            if core_num is not None:
                hints["core_num"] = core_num
        task = {"deps": deps, "dyn_deps": dyn_deps, "manual": manual, "block_num": block_num, "hints": hints}
        args = list(b["args"])
        attrs = b.get("attrs")
        if attrs is not None:
            from .launch import adir
            dirs = attrs.get("arg_directions") if isinstance(attrs, dict) else None
            if not isinstance(attrs, dict) or (dirs is not None and (
                    not isinstance(dirs, (list, tuple)) or len(dirs) != len(args)
                    or not all(isinstance(d, adir) for d in dirs))):
                raise self.error(node, f"attrs= of {what} takes {{'arg_directions': [pl.adir.X, ...]}} with one "
                                       f"direction per argument ({len(args)}), got {self.describe(attrs)}",
                                 "write attrs={'arg_directions': [pl.adir.input, pl.adir.no_dep, ...]}")
            if dirs is not None:
                args = [NoDep(a) if d == adir.no_dep and not isinstance(a, NoDep) else a for a, d in zip(args, dirs)]
        args = self.no_dep_args(args, task)
        if isinstance(func, FunctionRef):
            call = self.program.call_method(self, func.name, args, node)
        elif getattr(func, "_pl_jit_kind", None) == "incore":
            call = self.program.call_jit(self, func, args, node)
        else:
            raise self.error(node, f"{what} launches a kernel, not '{self.text(node.args[0])}'",
                             "pass a @pl.jit.incore function or self.<InCore function> as the first argument")
        if task_id >= 0:
            reserve_task_id(task_id)
        task["task_id"] = new_task_id() if task_id < 0 else task_id
        self.__dict__.setdefault("task_ids_used", set()).add(task["task_id"])
        call = self.with_deps(call, **task)
        tid = TaskId(task["task_id"], self.text(node.args[0]))
        span = self.span(node)
        if isinstance(call.type, ir.NoneType):
            self.emit(ir.EvalStmt(call, span))
            return tid
        name = (func.name if isinstance(func, FunctionRef) else func.__name__) + f"_result_{task['task_id']}"
        var = ir.Var(name, call.type, span)
        self.emit(ir.AssignStmt(var, call, span))
        self.track_lineage(var, call)
        if isinstance(call.type, ir.TupleType):
            return SubmitResult([ir.TupleGetItem(var, i, span) for i in range(len(call.type.elems))] + [tid])
        return SubmitResult([var, tid])

    def task_dummy(self, node):
        """`tid = pl.system.task_dummy(deps=[...])`: a task that runs nothing and finishes after
        all its deps, so its id joins them (an empty pl.at scope, outlined like any other)."""
        b = self.bind_construct(self.eval(node.func), node, node)
        deps, dyn_deps = self.task_deps(b["deps"], node)
        task_id = new_task_id()
        self.__dict__.setdefault("task_ids_used", set()).add(task_id)
        span = self.span(node)
        self.emit(ir.ScopeStmt(ir.Level.AIV, ir.SeqStmts([], span), span, task_id=task_id, deps=deps,
                               dyn_deps=dyn_deps, hints={"name_hint": "task_dummy"}))
        return TaskId(task_id, "task_dummy")

    def construct_call(self, name, node):
        if name in ("submit", "spmd_submit"):
            return self.submit(node, spmd=name == "spmd_submit")
        if name == "system.task_dummy":
            return self.task_dummy(node)
        if name == "no_dep":
            b = self.bind_construct(self.eval(node.func), node, node)
            if not (is_ir(b["tensor"]) and isinstance(b["tensor"].type, ir.TensorType)):
                raise self.error(node, f"pl.no_dep takes a tensor, got {self.describe(b['tensor'])}",
                                 "wrap a tensor argument of a kernel launch: self.kernel(pl.no_dep(t), ...)")
            return NoDep(b["tensor"])
        if name in ("const", "min", "max", "static_assert", "static_print", "get_block_idx", "get_block_num"):
            args, kwargs = self.call_args(node)
        if name == "const":
            if len(args) != 2 or kwargs:
                raise self.error(node, "pl.const takes a value and a dtype", "write pl.const(1.0, pl.FP16)")
            value, dtype = self.constant(args[0], node, "the value of pl.const"), args[1]
            if not isinstance(dtype, ir.DataType) or not is_number(value):
                raise self.error(node, "pl.const takes a number and a pl dtype", "write pl.const(1.0, pl.FP16)")
            if dtype == ir.DataType.BOOL:
                return ir.ConstBool(bool(value), self.span(node))
            if ir.dtype_is_float(dtype):
                try:
                    return ir.ConstFloat(float(value), dtype, self.span(node))
                except OverflowError:
                    raise self.error(node, f"pl.const: {value} is too large for a float",
                                     "use a value of at most about 1.8e308") from None
            if isinstance(value, float) and not value.is_integer():
                raise self.error(node, f"pl.const({value}, pl.{dtype.name}): an integer dtype needs an integer value")
            self.check_int64(int(value), node)
            return ir.ConstInt(int(value), dtype, self.span(node))
        if name in ("min", "max"):
            if len(args) != 2 or kwargs:
                raise self.error(node, f"pl.{name} takes two scalars", f"write pl.{name}(a, b)")
            if not is_ir(args[0]) and not is_ir(args[1]):
                return self.fold(min if name == "min" else max, args, node)
            if self.is_array(args[0]) or self.is_array(args[1]):
                return self.op_call("minimum" if name == "min" else "maximum", args, {}, node)
            return self.binary(ir.BinaryOp.Min if name == "min" else ir.BinaryOp.Max, args[0], args[1], node)
        if name == "static_assert":
            unknown = set(kwargs) - {"msg"}
            if unknown or not args or len(args) + len(kwargs) > 2:
                raise self.error(node, "pl.static_assert takes a condition and an optional message",
                                 'write pl.static_assert(N % 16 == 0, "N must be a multiple of 16")')
            cond = self.constant(args[0], node, "the condition of pl.static_assert")
            if not cond:
                msg = args[1] if len(args) > 1 else kwargs.get("msg", self.text(node.args[0]))
                raise self.error(node, f"pl.static_assert failed: {msg}")
            return None
        if name == "static_print":
            if kwargs:
                raise self.error(node, "pl.static_print takes positional values only", "write pl.static_print(x, N)")
            # A run-time value prints as its name and type (its value exists only when the kernel runs).
            shown = [f"{self.describe(a)}: {ir.print_type(a.type)}" if is_ir(a) else a for a in args]
            print(f"{self.span(node)}:", *shown)
            return None
        if name in ("get_block_idx", "get_block_num"):
            if args or kwargs:
                raise self.error(node, f"pl.{name}() takes no arguments", f"write pl.{name}()")
            frame = getattr(self, "spmd_frame", None)
            if frame is None:
                raise self.error(node, f"pl.{name}() is used outside a `with pl.spmd(n):` block",
                                 "read the block index inside the SPMD block: with pl.spmd(4): i = pl.get_block_idx()")
            return frame.var(name, self.span(node))
        where = {"range": "the iterable of a for loop", "parallel": "the iterable of a for loop",
                 "unroll": "the iterable of a for loop", "pipeline": "the iterable of a for loop",
                 "while_": "the iterable of a for loop: for (x,) in pl.while_(init_values=(x0,)):",
                 "cond": "the first statement of a pl.while_ loop body: pl.cond(x < n)",
                 "at": "a with statement: with pl.at(level=...):",
                 "spmd": "a with statement: with pl.spmd(n):",
                 "scope": "a with statement: with pl.scope():",
                 "manual_scope": "a with statement: with pl.manual_scope():",
                 "yield_": "the last statement of a for/if body: x = pl.yield_(v)",
                 "func_attr": 'the first statement of a function body: pl.func_attr({"key": value})'}[name]
        raise self.error(node, f"pl.{name} can only be used as {where}")

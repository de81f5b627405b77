"""Statements of a parsed body and their conversion to SSA: rebinding makes a new value;
a name defined before a loop and rebound in it becomes a loop-carried value (iter_arg +
yield + return var); names rebound in the arms of an if become the if's return vars."""

import ast

from pypto._core import ir

from . import ops
from .expr_parser import is_ir
from .types import TensorLayout, TensorView, TileSpec, annotation_spec


def assigned_names(body):
    """Names assigned anywhere in `body`, in order of first assignment."""
    out = []

    def add(target):
        if isinstance(target, ast.Name) and target.id not in out:
            out.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                add(t)
        elif isinstance(target, ast.Subscript):
            add(target.value)

    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    add(t)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                add(node.target)
    return out


def is_yield_call(node):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "yield_"


class YieldFrame:
    """The for/if whose body is being parsed: collects explicit `x = pl.yield_(...)`."""

    def __init__(self, kind, explicit):
        self.kind, self.explicit = kind, explicit
        self.targets = None


class StmtParser:
    """Mixin of FunctionParser: statements and control flow."""

    def emit(self, stmt):
        self.stmts.append(stmt)

    def parse_stmts(self, body):
        """Parses `body` into a fresh statement list (the current one is kept aside)."""
        saved, self.stmts = self.stmts, []
        try:
            for node in body:
                self.parse_stmt(node)
            return self.stmts
        finally:
            self.stmts = saved

    def seq(self, stmts, body):
        return ir.SeqStmts(stmts, self.span(body[0]) if body else ir.Span())

    def parse_stmt(self, node):
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"the Python statement '{type(node).__name__}' is not supported in a pl body",
                             "use assignments, pl.range loops, if/else, with pl.at(...) and return")
        method(node)

    # -- simple statements -----------------------------------------------------------------
    def stmt_Pass(self, node):
        pass

    def stmt_Break(self, node):
        raise self.error(node, "break outside a loop", "use break only inside a for or while loop body")

    def stmt_Continue(self, node):
        raise self.error(node, "continue outside a loop", "use continue only inside a for or while loop body")

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        if is_yield_call(node.value) and self.is_construct(node.value.func, "yield_"):
            return self.parse_yield([], node.value, node)
        if isinstance(node.value, ast.Call) and self.is_construct(node.value.func, "func_attr"):
            return self.parse_func_attr(node.value, node)
        if self.stmt_bind_dynamic(node):
            return  # read before the body
        value = self.eval(node.value)
        if is_ir(value) and not isinstance(value, ir.Var):  # a spliced call's result may be a plain Var
            self.emit(ir.EvalStmt(value, self.span(node)))

    def stmt_Return(self, node):
        if node.value is None:
            values = []
        elif isinstance(node.value, ast.Tuple):
            values = [self.eval(v) for v in node.value.elts]
        else:
            values = [self.eval(node.value)]
        exprs = [self.to_expr(v, node) for v in values]
        if self.inline_result is not None:
            self.inline_result.append(exprs)
            return
        if self.return_types is None:
            self.return_types = [e.type for e in exprs]
        self.emit(ir.ReturnStmt(exprs, self.span(node)))

    def stmt_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "augmented assignment needs a plain name on the left")
        value = self.eval(ast.BinOp(left=ast.Name(node.target.id, ast.Load(), lineno=node.lineno,
                                                  col_offset=node.col_offset),
                                    op=node.op, right=node.value, lineno=node.lineno, col_offset=node.col_offset))
        self.bind(node.target.id, value, node)

    def stmt_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name) or node.value is None:
            raise self.error(node, "an annotated assignment needs a name and a value", "write `x: pl.Tile[...] = ...`")
        self.bind(node.target.id, self.eval(node.value), node, annotation=node.annotation)

    def stmt_Assign(self, node):
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment (a = b = ...) is not supported", "assign each name separately")
        target = node.targets[0]
        if is_yield_call(node.value) and self.is_construct(node.value.func, "yield_"):
            names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            if not all(isinstance(t, ast.Name) for t in names):
                raise self.error(node, "pl.yield_ results must be assigned to plain names")
            return self.parse_yield([t.id for t in names], node.value, node)
        if isinstance(target, ast.Subscript):
            return self.parse_write(target, node)
        if isinstance(target, ast.Name):
            return self.bind(target.id, self.eval_into_tile(target.id, node.value), node)
        value = self.eval(node.value)
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts):
            names = [t.id for t in target.elts]
            if isinstance(value, (tuple, list)):
                if len(value) != len(names):
                    raise self.error(node, f"cannot unpack {len(value)} values into {len(names)} names")
                for n, v in zip(names, value):
                    self.bind(n, v, node)
                return
            if is_ir(value) and isinstance(value.type, ir.TupleType):
                if len(value.type.elems) != len(names):
                    raise self.error(node, f"the call returns {len(value.type.elems)} values, not {len(names)}")
                tup = ir.Var("_".join(names), value.type, self.span(node))
                self.emit(ir.AssignStmt(tup, value, self.span(node)))
                self.track_lineage(tup, value)
                for i, n in enumerate(names):
                    self.bind(n, ir.TupleGetItem(tup, i, self.span(node)), node)
                return
            raise self.error(node, f"cannot unpack '{self.text(node.value)}' into {len(names)} names")
        raise self.error(node, f"cannot assign to '{self.text(target)}'", "assign to a plain name")

    def parse_write(self, target, node):
        """`out[:] = value` and `out[r0:r1, c0:c1] = value`: write `value` into `out` at the
        slices' lower bounds (pl.assemble); a static upper bound must match value's extent."""
        if self.strict_ssa:
            raise self.error(node, f"'{self.text(target)} = ...' writes into '{self.text(target.value)}' in place; "
                                   "with strict_ssa=True subscript writes are off (each name is assigned once)",
                             f"write it as a new value: `{self.text(target.value)}_new = pl.assemble("
                             f"{self.text(target.value)}, value, offsets)` (or pl.store for a tile)")
        if not isinstance(target.value, ast.Name):
            raise self.error(node, f"cannot write into '{self.text(target)}'", "write into a tensor name: out[...] = value")
        dst = self.eval(target.value)
        if is_ir(dst) and isinstance(dst.type, ir.ArrayType):  # arr[i] = value: one element of a pl.array
            if isinstance(target.slice, (ast.Slice, ast.Tuple)):
                raise self.error(node, f"'{self.text(target)} = ...' writes one element of a pl.array",
                                 f"write {target.value.id}[i] = value")
            updated = self.op_call("array.set", [dst, self.eval(target.slice), self.eval(node.value)], {}, node)
            return self.bind(target.value.id, updated, node)
        if not self.is_array(dst):
            raise self.error(node, f"'{target.value.id}[...] = ...' needs a tensor or a tile on the left")
        what = "tensor" if isinstance(dst.type, ir.TensorType) else "tile"
        rank = len(dst.type.shape)
        whole = isinstance(target.slice, ast.Slice) and target.slice.lower is None and \
            target.slice.upper is None and target.slice.step is None
        value = self.eval(node.value)
        if whole:
            offsets, extents = [0] * rank, None
        else:
            win, scalars = self.window(dst, target, what)
            if win is None:  # x[i, j] = v: one element
                indices = [self.index_bound(v, target, d, what) for d, v in enumerate(scalars)]
                return self.bind(target.value.id, self.op_call("write", [dst, indices, value], {}, node), node)
            offsets, extents, drop = win
        kwargs = {}
        if extents is not None and is_ir(value) and hasattr(value.type, "shape"):
            vshape = [v.value if isinstance(v, ir.ConstInt) else None for v in value.type.shape]
            window = extents[-len(vshape):] if len(vshape) <= len(extents) else extents
            lead = extents[:len(extents) - len(window)]
            kept = [n for d, n in enumerate(extents) if d not in drop]
            if drop and len(kept) == len(vshape) and drop != list(range(len(drop))):
                # x[b, :, h, :] = v: the integer-indexed axes are dropped, the others take v's axes
                window, kwargs = kept, {"drop_dims": list(drop)}
            elif any(n != 1 for n in lead):  # a lower-rank value fills trailing axes; leading ones are units
                window = extents
            for d, (n, v) in enumerate(zip(window, vshape)):
                if isinstance(n, int) and v is not None and n != v:
                    raise self.error(node, f"'{self.text(target)}' spans {n} elements of dimension "
                                           f"{d + len(extents) - len(window)} but the value has {v}",
                                     "make the window as large as the value")
        self.bind(target.value.id, self.op_call("assemble", [dst, value, offsets], kwargs, node), node)

    # -- binding and the Out-parameter rule ----------------------------------------------
    def bind(self, name, value, node, annotation=None):
        if self.strict_ssa and name in self.symbols and not name.startswith("__"):
            from .errors import SSAViolationError
            raise SSAViolationError.at(
                self.span(node), f"'{name}' is assigned again; with strict_ssa=True every name is assigned once "
                                 "(SSA violation)",
                f"use a new name (e.g. '{name}_1'), or carry a loop value with init_values=(...) and "
                f"`{name}_next = pl.yield_(...)`")
        if annotation is None and not is_ir(value):
            if name in self.out_params:
                self.out_rebinding_error(name, node)
            self.symbols[name] = value
            return
        spec = None
        if annotation is not None:
            spec = self.eval_annotation(annotation)
        hint = spec.dtype if spec is not None and hasattr(spec, "dtype") else None
        expr = self.to_expr(value, node, hint)
        if name in self.out_params and not self.in_lineage(expr):
            self.out_rebinding_error(name, node)
        if spec is None and isinstance(expr, ir.Var):
            self.symbols[name] = expr  # plain aliasing: no new value
            return
        ty = expr.type if spec is None else self.checked_annotation(spec, expr.type, name, node)
        var = ir.Var(name, ty, self.span(node))
        self.emit(ir.AssignStmt(var, expr, self.span(node)))
        self.track_lineage(var, expr)
        self.symbols[name] = var

    def in_lineage(self, expr):
        if expr.node_id in self.lineage:
            return True
        if isinstance(expr, (ir.Call, ir.FuncCall)):
            return any(a is not None and a.node_id in self.lineage for a in expr.args)
        if isinstance(expr, ir.TupleGetItem):  # `a, b = kernel(x, a, b)`: each element threads its buffer
            return expr.tuple.node_id in self.lineage
        return False

    def track_lineage(self, var, expr):
        if self.in_lineage(expr) and isinstance(var.type, (ir.TensorType, ir.TupleType)):
            self.lineage.add(var.node_id)

    def out_rebinding_error(self, name, node):
        raise self.error(
            node,
            f"output parameter '{name}' (pl.Out) is rebound to a freshly computed value "
            f"('{self.text(node.value)}'); this does NOT write the output tensor",
            f"write into it instead: `{name}[:] = {self.text(node.value)}`, or store a tile with "
            f"`{name} = pl.store(tile, offsets, {name})`, or assemble with `{name} = pl.assemble({name}, value, offsets)`")

    def checked_annotation(self, spec, inferred, name, node):
        """Checks `name: spec = value` against the value's type; returns the variable's type."""
        declared = self.spec_to_type(spec, node, inferred)
        same = type(declared) is type(inferred)
        if same and isinstance(declared, (ir.TensorType, ir.TileType)):
            same = declared.dtype == inferred.dtype and len(declared.shape) == len(inferred.shape) and all(
                ir.structural_equal(a, b) for a, b in zip(declared.shape, inferred.shape))
            if same and isinstance(declared, ir.TileType):
                same = declared.memory == inferred.memory
        elif same and isinstance(declared, ir.ScalarType):
            same = declared.dtype == inferred.dtype
        if not same:
            raise self.error(node, f"'{name}' is annotated {ir.print_type(declared)} but the value has type "
                                   f"{ir.print_type(inferred)}",
                             f"change the annotation to {ir.print_type(inferred)} or remove it")
        return declared

    # -- yields ----------------------------------------------------------------------------
    def is_construct(self, func_node, name):
        try:
            value = self.eval(func_node)
        except Exception:  # noqa: BLE001 - not a pl construct
            return False
        return isinstance(value, ops.Construct) and value.name == name

    def parse_yield(self, targets, call, node):
        if not self.yield_frames:
            raise self.error(node, "pl.yield_ outside a for/if body",
                             "use it as the last statement of a loop with init_values or of an if/else arm")
        frame = self.yield_frames[-1]
        if not frame.explicit:
            raise self.error(node, "pl.yield_ in a loop without init_values",
                             "write `for i, (acc,) in pl.range(n, init_values=(x,)):` or carry values by rebinding")
        # PyPTO's keyword spellings: pl.yield_(value=x) and pl.yield_(v1=a, v2=b, ...), after any positional values.
        order = ["value", "v1", "v2", "v3", "v4", "v5"]
        kws = {k.arg: k.value for k in call.keywords}
        unknown = [k for k in kws if k not in order]
        if unknown or any(k is None for k in kws):
            raise self.error(node, f"pl.yield_ has no keyword '{unknown[0] if unknown else '**'}'",
                             "write pl.yield_(a, b), pl.yield_(value=a) or pl.yield_(v1=a, v2=b)")
        value_nodes = list(call.args) + [kws[k] for k in order if k in kws]
        values = [self.to_expr(self.eval(a), node) for a in value_nodes]
        if frame.targets is not None and len(frame.targets) != len(targets):
            raise self.error(node, f"the arms of this if yield {len(frame.targets)} and {len(targets)} values")
        frame.targets = targets
        frame.values = values
        self.emit(ir.YieldStmt(values, self.span(node)))

    # -- annotations -----------------------------------------------------------------------
    def eval_annotation(self, node):
        value = self.eval(node)
        try:
            spec = annotation_spec(value)
        except TypeError as e:
            raise self.error(node, str(e)) from None
        if spec is None:
            raise self.error(node, f"'{self.text(node)}' is not a type",
                             "use pl.Tensor[[M, N], pl.FP32], pl.Tile[[M, N], pl.FP32] or pl.Scalar[pl.INT32]")
        return spec

    def spec_to_type(self, spec, node, inferred=None):
        """The IR type of a (direction-free) spec; a short Tile spec takes the rest from `inferred`."""
        from .types import ArraySpec, ScalarSpec, TensorSpec, TupleSpec
        if isinstance(spec, ScalarSpec):
            return ir.ScalarType(spec.dtype)
        if isinstance(spec, ArraySpec):
            return ir.ArrayType(spec.size, spec.dtype)
        if isinstance(spec, TupleSpec):
            return ir.TupleType([self.spec_to_type(annotation_spec(e), node) for e in spec.elems])
        if isinstance(spec, TensorSpec):
            if spec.shape is None:
                raise self.error(node, "bare pl.Tensor has no shape here",
                                 "write pl.Tensor[[M, N], pl.FP32]")
            shape = [self.to_expr(d, node) for d in spec.shape]
            if isinstance(spec.layout, TensorView):
                stride = spec.layout.strides(spec.shape)
                if stride:
                    return ir.TensorType(shape, spec.dtype, stride, spec.layout.layout == TensorLayout.DN)
            return ir.TensorType(shape, spec.dtype)
        if isinstance(spec, TileSpec):
            shape = [self.to_expr(d, node) for d in spec.shape]
            if spec.memory is None and isinstance(inferred, ir.TileType):
                return ir.TileType(shape, spec.dtype, inferred.memory,
                                   list(inferred.valid_shape) if spec.valid_shape is None else
                                   [self.to_expr(d, node) for d in spec.valid_shape],
                                   inferred.pad if spec.pad is None else spec.pad,
                                   inferred.addr if spec.addr is None else spec.addr)
            return ir.TileType(shape, spec.dtype, spec.memory or ir.MemorySpace.Vec,
                               [self.to_expr(d, node) for d in (spec.valid_shape or [])],
                               spec.pad if spec.pad is not None else ir.PadValue.null,
                               spec.addr if spec.addr is not None else -1)
        raise self.error(node, f"'{spec!r}' is not a value type")

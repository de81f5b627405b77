"""Parses one Python function definition (never executing it) into an `ir.Function`:
source lookup with absolute line numbers, the evaluation environment (globals, closure,
enclosing frame), parameters from annotations or call-site types, and the body."""

import ast
import builtins
import inspect
import linecache
import textwrap

from pypto._core import ir

from .control_flow import ControlFlowParser
from .expr_parser import ExprParser, SelfRef
from .scopes import ScopeParser
from .stmt_parser import StmtParser
from .types import DirectionSpec, ScalarSpec, TensorSpec, TupleSpec, annotation_spec
from .while_loops import WhileParser


class Source:
    """Where a definition comes from: its AST node, file, line offset and name environment."""

    def __init__(self, node, file, line_offset, env):
        self.node, self.file, self.line_offset, self.env = node, file, line_offset, env

    @staticmethod
    def of(obj, extra_env=None):
        """The Source of a Python function or class; `extra_env` (e.g. the enclosing frame's
        locals) is consulted after the closure and before the globals."""
        try:
            lines, start = inspect.getsourcelines(obj)
            file = inspect.getsourcefile(obj) or "<unknown>"
        except (OSError, TypeError) as e:
            found = _class_source(obj) if inspect.isclass(obj) else None
            if found is None:
                raise RuntimeError(f"cannot read the source of {obj.__qualname__}: {e}; pl programs must be "
                                   "defined in a file (or use pl.parse(text))") from None
            lines, start, file = found
        tree = ast.parse(textwrap.dedent("".join(lines)))
        node = tree.body[0]
        env = {}
        env.update(vars(builtins))
        module = inspect.getmodule(obj)
        env.update(getattr(obj, "__globals__", None) or (vars(module) if module else {}))
        env.update(extra_env or {})
        funcs = [obj] if inspect.isfunction(obj) else [v for v in vars(obj).values() if inspect.isfunction(v)]
        for f in funcs:
            for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
                try:
                    env[name] = cell.cell_contents
                except ValueError:
                    pass
        return Source(node, file, start - 1, env)


def _class_source(cls):
    """(lines, first line, file) of a class whose module is not in sys.modules (a file loaded
    with importlib's spec_from_file_location, where inspect cannot find classes): found
    through its methods' code objects, which know their file and lines."""
    funcs = [v for v in vars(cls).values() if inspect.isfunction(v)]
    if not funcs:
        return None
    file = funcs[0].__code__.co_filename
    lines = linecache.getlines(file)
    if not lines:
        return None
    first = min(f.__code__.co_firstlineno for f in funcs)
    for node in ast.walk(ast.parse("".join(lines))):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__ and node.lineno <= first <= node.end_lineno:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            return lines[start - 1:node.end_lineno], start, file
    return None


def returns_of(spec_value):
    """Return annotation value -> list of specs (`tuple[A, B]` and `pl.Tuple[A, B]` give two)."""
    if isinstance(spec_value, TupleSpec):
        return list(spec_value.elems)
    args = getattr(spec_value, "__args__", None)
    if getattr(spec_value, "__origin__", None) is tuple and args:
        return list(args)
    return [spec_value]


class FunctionParser(ScopeParser, ExprParser, StmtParser, ControlFlowParser, WhileParser):
    """Parses one function body. `program` resolves calls of other functions."""

    def __init__(self, source, program, fdef=None):
        self.source, self.program = source, program
        self.fdef = fdef if fdef is not None else source.node
        self.symbols, self.out_of_scope = {}, {}
        self.stmts, self.yield_frames = [], []
        self.return_types, self.inline_result = None, None
        self.out_params, self.lineage = set(), set()
        self.dyn_vars, self.early_params = {}, {}  # pl.dynamic dims; INDEX params known before the others

    def check_signature(self):
        a = self.fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
            raise self.error(self.fdef, f"function '{self.fdef.name}' may only have plain parameters",
                             "remove *args, **kwargs, keyword-only parameters and defaults")

    def param_specs(self, is_method):
        """[(arg node, spec or None, direction)] for the parameters (without `self`)."""
        self.check_signature()
        params = list(self.fdef.args.args)
        if is_method:
            if not params or params[0].arg != "self":
                raise self.error(self.fdef, f"method '{self.fdef.name}' of a @pl.program class must take self first",
                                 f"write def {self.fdef.name}(self, ...)")
            params = params[1:]
        # INDEX scalar parameters first: tensor annotations may name them as dimensions
        # (`x: pl.Tensor[[M, 128], pl.FP32], M: pl.Scalar[pl.INDEX]`, as the printer writes
        # pl.dynamic dimensions).
        for p in params:
            if p.annotation is None or p.arg in self.early_params:
                continue
            try:
                spec = annotation_spec(self.eval(p.annotation))
            except Exception:
                continue
            if isinstance(spec, ScalarSpec) and spec.dtype == ir.DataType.INDEX:
                var = ir.Var(p.arg, ir.ScalarType(ir.DataType.INDEX), self.span(p))
                self.early_params[p.arg] = var
                self.symbols[p.arg] = var
        out = []
        for p in params:
            spec, direction = None, ir.ParamDirection.In
            if p.annotation is not None:
                spec = self.eval_annotation(p.annotation)
                if isinstance(spec, DirectionSpec):
                    direction = spec.direction
                    spec = annotation_spec(spec.inner)
            out.append((p, spec, direction))
        return out

    def param_type(self, p, spec, arg_type):
        complete = spec is not None and not (isinstance(spec, TensorSpec) and spec.shape is None)
        if complete:
            declared = self.spec_to_type(spec, p, arg_type)
            if arg_type is not None and not self.compatible(declared, arg_type):
                raise self.error(p, f"parameter '{p.arg}' is annotated {ir.print_type(declared)} but the argument "
                                    f"has type {ir.print_type(arg_type)}",
                                 "pass a value of the annotated shape and dtype, or annotate it as bare pl.Tensor")
            return declared
        if arg_type is None:
            raise self.error(p, f"parameter '{p.arg}' needs a full type annotation",
                             "write e.g. pl.Tensor[[128, 128], pl.FP32] or pl.Scalar[pl.INT32]")
        if isinstance(spec, TensorSpec) and not isinstance(arg_type, ir.TensorType):
            raise self.error(p, f"parameter '{p.arg}' is a pl.Tensor but the argument has type "
                                f"{ir.print_type(arg_type)}", "pass a tensor")
        return arg_type

    def dyn_var(self, name, node):
        """The INDEX scalar of the symbolic dimension `name` (pl.dynamic) in this function."""
        known = self.early_params.get(name)
        if known is not None:
            return known
        if name not in self.dyn_vars:
            self.dyn_vars[name] = ir.Var(name, ir.ScalarType(ir.DataType.INDEX), self.span(node))
        return self.dyn_vars[name]

    def localize(self, arg_type, node):
        """A call-site tensor type whose dimensions are the caller's symbolic sizes, with this
        function's own variables of the same names in their place."""
        if not isinstance(arg_type, ir.TensorType) or all(not isinstance(d, ir.Var) for d in arg_type.shape):
            return arg_type
        dims = [self.dyn_var(d.name, node) if isinstance(d, ir.Var) else d for d in arg_type.shape]
        return ir.TensorType(dims, arg_type.dtype)

    def compatible(self, declared, actual):
        if type(declared) is not type(actual):
            return False
        if isinstance(declared, ir.ScalarType):
            return declared.dtype == actual.dtype
        if isinstance(declared, ir.TensorType):  # a symbolic dimension accepts every extent
            return declared.dtype == actual.dtype and len(declared.shape) == len(actual.shape) and all(
                isinstance(a, ir.Var) or ir.structural_equal(a, b) for a, b in zip(declared.shape, actual.shape))
        if isinstance(declared, ir.TileType):
            return declared.dtype == actual.dtype and len(declared.shape) == len(actual.shape) and all(
                ir.structural_equal(a, b) for a, b in zip(declared.shape, actual.shape))
        return ir.structural_equal(declared, actual)

    def parse(self, name, func_type, arg_types=None, is_method=False, return_outs=False):
        """The ir.Function; `arg_types` (call-site or jit argument types) fill unannotated params.
        With `return_outs`, a body without `return` returns its Out/InOut parameters."""
        specs = self.param_specs(is_method)
        self.func_type = func_type
        if is_method:
            self.symbols["self"] = SelfRef()
        if arg_types is not None and len(arg_types) != len(specs):
            raise self.error(self.fdef, f"'{self.fdef.name}' takes {len(specs)} arguments, got {len(arg_types)}",
                             f"call it with {len(specs)} arguments")
        params, dirs = [], []
        for i, (p, spec, direction) in enumerate(specs):
            arg_type = self.localize(arg_types[i], p) if arg_types is not None else None
            ty = self.param_type(p, spec, arg_type)
            var = self.early_params.get(p.arg) or ir.Var(p.arg, ty, self.span(p))
            params.append(var)
            dirs.append(direction)
            self.symbols[p.arg] = var
            if direction != ir.ParamDirection.In:
                self.out_params.add(p.arg)
                self.lineage.add(var.node_id)
        # Each symbolic dimension becomes a trailing INDEX parameter of its name; callers
        # (and the jit entry's call) pass the extent read from the tensor arguments.
        for dim_name, var in self.dyn_vars.items():
            params.append(var)
            dirs.append(ir.ParamDirection.In)
            self.symbols.setdefault(dim_name, var)
        declared = None
        if self.fdef.returns is not None:
            value = self.eval(self.fdef.returns)
            declared = []
            for r in returns_of(value):
                spec = annotation_spec(r)
                if spec is None or isinstance(spec, DirectionSpec):
                    raise self.error(self.fdef.returns, f"'{self.text(self.fdef.returns)}' is not a return type",
                                     "write -> pl.Tensor[[M, N], pl.FP32]")
                declared.append(spec)
        kernel = func_type in (ir.FunctionType.InCore, ir.FunctionType.AIV, ir.FunctionType.AIC)
        if kernel:  # pl.get_block_idx() in a kernel (launched by pl.spmd_submit): block parameters
            from .control_flow import SpmdFrame
            self.spmd_frame = SpmdFrame()
        body = self.parse_stmts(self.fdef.body)
        if kernel:
            for var in self.spmd_frame.vars.values():
                if not any(p.name == var.name for p in params):
                    params.append(var)
                    dirs.append(ir.ParamDirection.In)
            self.spmd_frame = None
        if self.return_types is None:
            self.return_types = []
            outs = [self.symbols[p.arg] for p, _, d in specs if d != ir.ParamDirection.In]
            if return_outs and outs:
                body.append(ir.ReturnStmt(outs, self.span(self.fdef.body[-1])))
                self.return_types = [o.type for o in outs]
        rets = self.return_types
        if declared is not None:
            if len(declared) != len(rets) and rets:
                raise self.error(self.fdef, f"'{self.fdef.name}' is annotated to return {len(declared)} values "
                                            f"but returns {len(rets)}", "make the annotation match the return")
            declared_types = [self.spec_to_type(s, self.fdef, r) for s, r in zip(declared, rets or [None] * len(declared))]
            for d, r in zip(declared_types, rets):
                if not self.compatible(d, r):
                    raise self.error(self.fdef, f"'{self.fdef.name}' is annotated to return {ir.print_type(d)} but "
                                                f"returns {ir.print_type(r)}",
                                     f"change the annotation to {ir.print_type(r)}")
            rets = declared_types
        return ir.Function(name, params, dirs, rets, self.seq(body, self.fdef.body), func_type, self.span(self.fdef))

    def in_kernel_code(self) -> bool:
        """True while parsing code that runs on a core: a kernel function, a `with pl.at` /
        `pl.spmd` body, or an inline function spliced into one of those."""
        kernel = (ir.FunctionType.InCore, ir.FunctionType.AIC, ir.FunctionType.AIV, ir.FunctionType.Group,
                  ir.FunctionType.Spmd)
        return (getattr(self, "func_type", None) in kernel or getattr(self, "inline_in_kernel", False)
                or any(f.kind == "scope" for f in getattr(self, "yield_frames", ())))

    def parse_inline(self, args, node, caller):
        """Splices this (inline) function into `caller` with `args` bound to its parameters;
        returns the value of its `return`."""
        specs = self.param_specs(False)
        if len(args) != len(specs):
            raise caller.error(node, f"'{self.fdef.name}' takes {len(specs)} arguments, got {len(args)}")
        for (p, _, _), a in zip(specs, args):
            self.symbols[p.arg] = a
        self.stmts = caller.stmts
        self.lineage = caller.lineage
        self.inline_in_kernel = caller.in_kernel_code()  # spliced into a kernel or a pl.at body
        self.inline_result = []
        for stmt in self.fdef.body:
            if self.inline_result:
                raise self.error(stmt, "statements after return in a @pl.jit.inline function",
                                 "end the inline function with its return")
            self.parse_stmt(stmt)
        if not self.inline_result:
            return None
        values = self.inline_result[0]
        return values[0] if len(values) == 1 else tuple(values)

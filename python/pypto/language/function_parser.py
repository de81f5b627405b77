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
from .kernel_buffers import KernelBufferParser
from .scopes import ScopeParser
from .stmt_parser import StmtParser
from .types import DirectionSpec, ScalarSpec, TensorSpec, TupleSpec, annotation_spec
from .while_loops import WhileParser


class Source:
    """Where a definition comes from: its AST node, file, line offset and name environment."""

    def __init__(self, node, file, line_offset, env):
        self.node, self.file, self.line_offset, self.env = node, file, line_offset, env
        self.col_offset = 0  # the indentation textwrap.dedent took off the file's lines

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
        funcs = [obj] if inspect.isfunction(obj) else [v for v in vars(obj).values() if inspect.isfunction(v)]
        # A class's names are its methods' globals: its module may be missing from sys.modules
        # (loaded with importlib's spec_from_file_location), or another module may hold its name there.
        globs = getattr(obj, "__globals__", None) or next((f.__globals__ for f in funcs), None) or \
            (vars(module) if module else {})
        env.update(globs)
        env.update(extra_env or {})
        for f in funcs:
            for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
                try:
                    env[name] = cell.cell_contents
                except ValueError:
                    pass
        source = Source(node, file, start - 1, env)
        first = next((ln for ln in lines if ln.strip()), "")
        source.col_offset = len(first.expandtabs(4)) - len(first.expandtabs(4).lstrip())
        return source


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


class FunctionParser(ScopeParser, ExprParser, StmtParser, ControlFlowParser, WhileParser, KernelBufferParser):
    """Parses one function body. `program` resolves calls of other functions."""

    def __init__(self, source, program, fdef=None):
        self.source, self.program = source, program
        self.fdef = fdef if fdef is not None else source.node
        self.symbols, self.out_of_scope = {}, {}
        self.stmts, self.yield_frames = [], []
        self.return_types, self.inline_result = None, None
        self.out_params, self.lineage = set(), set()
        self.dyn_vars, self.early_params = {}, {}  # pl.dynamic dims; INDEX params known before the others
        self.strict_ssa, self.func_attrs, self.opts = False, None, None  # set by parse() from the decorator

    def check_signature(self):
        from .types import RUNTIME
        a = self.fdef.args
        # `n: pl.Scalar[pl.INDEX] = pl.RUNTIME` is the one default: the scalar stays a run-time parameter.
        defaults_ok = all(self.eval(d) is RUNTIME for d in a.defaults)
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or not defaults_ok:
            raise self.error(self.fdef, f"function '{self.fdef.name}' may only have plain parameters",
                             "remove *args, **kwargs, keyword-only parameters and defaults (the only default "
                             "allowed is pl.RUNTIME)")

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
        return ir.TensorType(dims, arg_type.dtype, list(arg_type.stride), arg_type.dn)

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

    # -- @pl.function / @pl.jit options ------------------------------------------------------
    def set_options(self, opts):
        """Takes level/role/attrs/strict_ssa/external_source from the decorator's options."""
        self.opts = opts
        self.strict_ssa = bool(opts is not None and opts.strict_ssa) or bool(getattr(self.program, "strict_ssa", False))
        self.func_attrs = dict(opts.attrs) if opts is not None else {}
        self.func_attr_seen = False
        if opts is not None and opts.external_source is not None:
            body = [s for s in self.fdef.body
                    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))]
            if len(body) != 1 or not (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                                      and body[0].value.value is Ellipsis):
                raise self.error(self.fdef, f"'{self.fdef.name}' has external_source= and so its body must be `...` "
                                            "(the kernel is the C++ file)", "write the body as `...`")
            self.func_attrs["external_source"] = opts.external_source

    def attr_dict(self, value, node, what, seen=None):
        """Checks a dict of compile-time attributes (str keys; bool/int/float/str/dtype/enum or
        a list of ints as values); `seen` holds keys given before (duplicates are errors)."""
        fix = 'write e.g. {"key": 4, "mode": "fast"}'
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise self.error(node, f"{what} takes a dict with string keys, got {self.describe(value)}", fix)
        for k, v in value.items():
            ok = isinstance(v, (bool, int, float, str, ir.DataType, ir.MemorySpace, ir.PadValue)) or (
                isinstance(v, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v))
            if not ok:
                raise self.error(node, f"{what}: the value of '{k}' is {self.describe(v)}, not a compile-time "
                                       "constant (bool, int, float, str, dtype, or a list of ints)", fix)
            if seen is not None and k in seen:
                raise self.error(node, f"{what}: the attribute '{k}' is given twice", f"give '{k}' once")
        return dict(value)

    def parse_func_attr(self, call, node):
        """`pl.func_attr({...})` as the first statement of a function body: attributes of the function."""
        body = [s for s in self.fdef.body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))]
        if self.func_attrs is None or self.inline_result is not None:
            return  # an inline function's attributes: it leaves no function of its own
        if not body or body[0] is not node or self.func_attr_seen:
            raise self.error(node, "pl.func_attr({...}) must be the first statement of the function body",
                             "move it to the top of the body (after the docstring)")
        if len(call.args) != 1 or call.keywords:
            raise self.error(node, "pl.func_attr takes one dict", 'write pl.func_attr({"key": value})')
        arg = call.args[0]
        if isinstance(arg, ast.Dict):
            keys = [k.value for k in arg.keys if isinstance(k, ast.Constant)]
            for k in keys:
                if keys.count(k) > 1:
                    raise self.error(node, f"pl.func_attr: the attribute '{k}' is given twice", f"give '{k}' once")
        attrs = self.attr_dict(self.eval(arg), node, "pl.func_attr", seen=self.func_attrs)
        self.func_attrs.update(attrs)
        self.func_attr_seen = True

    def bound_dynamic_dims(self):
        """{parameter: {axis: DynVar}} from `x.bind_dynamic(axis, M)` statements of the body
        (PyPTO reads them from the source; at run time they do nothing)."""
        from .types import DynDim
        out = {}
        for stmt in self.fdef.body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "bind_dynamic" and isinstance(call.func.value, ast.Name)):
                continue
            if len(call.args) != 2 or call.keywords:
                raise self.error(stmt, "bind_dynamic takes a dimension index and a pl.DynVar",
                                 'write x.bind_dynamic(0, M) with M = pl.dynamic("M")')
            axis, dyn = self.eval(call.args[0]), self.eval(call.args[1])
            if not isinstance(axis, int) or isinstance(axis, bool) or not isinstance(dyn, DynDim):
                raise self.error(stmt, f"bind_dynamic takes a dimension index and a pl.DynVar, got "
                                       f"'{self.text(call)}'", 'write x.bind_dynamic(0, M) with M = pl.dynamic("M")')
            out.setdefault(call.func.value.id, {})[axis] = dyn
        return out

    def bind_dynamic_type(self, p, spec, ty, dims):
        """The type of a bare pl.Tensor parameter `p` with the dimensions bound by bind_dynamic made symbolic."""
        if not isinstance(spec, TensorSpec) or spec.shape is not None or not isinstance(ty, ir.TensorType):
            raise self.error(p, f"bind_dynamic is called on '{p.arg}', which is not a bare pl.Tensor parameter",
                             f"annotate '{p.arg}' as bare pl.Tensor, or write pl.dynamic dimensions in its annotation")
        shape = list(ty.shape)
        for axis, dyn in dims.items():
            if not -len(shape) <= axis < len(shape):
                raise self.error(p, f"bind_dynamic({axis}, ...) on '{p.arg}', which has {len(shape)} dimensions",
                                 f"use a dimension index below {len(shape)}")
            shape[axis] = self.dyn_var(dyn.name, p)
        return ir.TensorType(shape, ty.dtype, list(ty.stride), ty.dn)

    def stmt_bind_dynamic(self, node):
        """`x.bind_dynamic(0, M)` statements are read before the body (no-op here)."""
        call = node.value
        return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "bind_dynamic" and isinstance(call.func.value, ast.Name)
                and call.func.value.id in {a.arg for a in self.fdef.args.args})

    def parse(self, name, func_type, arg_types=None, is_method=False, return_outs=False, opts=None):
        """The ir.Function; `arg_types` (call-site or jit argument types) fill unannotated params.
        With `return_outs`, a body without `return` returns its Out/InOut parameters."""
        self.set_options(opts)
        bound_dims = self.bound_dynamic_dims()
        specs = self.param_specs(is_method)
        windows = {p.arg for p, spec, _ in specs if isinstance(spec, TensorSpec) and spec.window}
        if windows and isinstance(getattr(self.program, "window_params", None), dict):
            self.program.window_params[name] = windows  # no written-input warning for them
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
            if p.arg in bound_dims:
                ty = self.bind_dynamic_type(p, spec, ty, bound_dims[p.arg])
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
        level = opts.level if opts is not None else None
        role = opts.role if opts is not None else None
        try:
            return ir.Function(name, params, dirs, rets, self.seq(body, self.fdef.body), func_type, self.span(self.fdef),
                               level=level, role=role, attrs=self.func_attrs)
        except TypeError as e:
            raise self.error(self.fdef, f"the attributes of '{name}': {e}",
                             "give attributes bool, int, float, str, dtype values or lists of ints") from None

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
        self.strict_ssa = getattr(caller, "strict_ssa", False)
        self.inline_result = []
        for stmt in self.fdef.body:
            if self.inline_result:
                raise self.error(stmt, "statements after return in a @pl.jit.inline function",
                                 "end the inline function with its return")
            self.parse_stmt(stmt)
        # An Out/InOut parameter the spliced body wrote is written in the caller too: the
        # caller's name passed for it now holds the written tensor.
        outs = []
        arg_nodes = list(getattr(node, "args", []))
        for i, (p, _, direction) in enumerate(specs):
            if direction == ir.ParamDirection.In:
                continue
            outs.append(self.symbols[p.arg])
            if i < len(arg_nodes) and isinstance(arg_nodes[i], ast.Name) and arg_nodes[i].id in caller.symbols:
                caller.symbols[arg_nodes[i].id] = self.symbols[p.arg]
        values = self.inline_result[0] if self.inline_result else outs
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

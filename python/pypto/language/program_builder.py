"""Assembles a Program from parsed functions: the methods of a `@pl.program` class (parsed
on demand, so a caller may come before its callee) or a `@pl.jit` entry with the
`@pl.jit.incore` kernels it calls, each specialised on its call-site argument types."""

from pypto._core import ir

from .function_parser import FunctionParser
from .types import ScalarSpec


def call_type(function, exprs=None):
    """The type of a call of `function`; with the call's arguments `exprs`, the callee's
    symbolic dimensions in its result types are replaced by the caller's values for them."""
    rets = list(function.return_types)
    if exprs is not None:
        values = {p.name: e for p, e in zip(function.params, exprs) if isinstance(p.type, ir.ScalarType)}

        def subst(t):
            if not isinstance(t, ir.TensorType) or not any(isinstance(d, ir.Var) for d in t.shape):
                return t
            return ir.TensorType([values.get(d.name, d) if isinstance(d, ir.Var) else d for d in t.shape], t.dtype)

        rets = [subst(t) for t in rets]
    if not rets:
        return ir.NoneType()
    return rets[0] if len(rets) == 1 else ir.TupleType(rets)


def dimension_args(fn, exprs, caller, node):
    """The values of `fn`'s trailing symbolic-dimension parameters (pl.dynamic) for a call
    with `exprs` for its other parameters: each is the caller's extent of the first tensor
    argument whose parameter has that dimension."""
    extra = []
    for p in list(fn.params)[len(exprs):]:
        if p.name in ("__block_idx", "__block_num"):  # SPMD block parameters
            frame = getattr(caller, "spmd_frame", None)
            if frame is not None:  # called inside a pl.spmd block (or a kernel): the caller's block values
                extra.append(frame.var("get_block_idx" if p.name == "__block_idx" else "get_block_num", caller.span(node)))
            else:  # a launch from the orchestration: the runtime fills them per block
                extra.append(ir.ConstInt(0, ir.DataType.INDEX, caller.span(node)))
            continue
        value = None
        for q, e in zip(fn.params, exprs):
            if isinstance(q.type, ir.TensorType) and isinstance(e.type, ir.TensorType):
                for axis, d in enumerate(q.type.shape):
                    if isinstance(d, ir.Var) and d.name == p.name and axis < len(e.type.shape):
                        value = e.type.shape[axis]
                        break
            if value is not None:
                break
        if value is None:
            raise caller.error(node, f"'{fn.name}' has a parameter '{p.name}' that no tensor argument gives",
                               f"pass '{p.name}' explicitly")
        extra.append(value)
    return extra


class ProgramBuilder:
    def __init__(self, name):
        self.name = name
        self.functions = {}  # name -> ir.Function, in order of completion
        self.methods = {}  # class form: name -> (FunctionDef, FunctionType)
        self.class_source = None
        self.in_progress = set()
        self.kernels = {}  # (id(jit function), argument type keys) -> function name

    # -- class form -------------------------------------------------------------------------
    def add_class(self, source, methods):
        self.class_source = source
        self.methods = methods

    def method(self, name, caller=None, node=None):
        if name in self.functions:
            return self.functions[name]
        if name not in self.methods:
            where = caller.error(node, f"'self.{name}' is not a @pl.function of this program",
                                 f"define `def {name}(self, ...)` decorated with @pl.function in the class")
            raise where
        if name in self.in_progress:
            raise caller.error(node, f"recursive call of '{name}' is not supported")
        self.in_progress.add(name)
        fdef, func_type = self.methods[name]
        fn = FunctionParser(self.class_source, self, fdef).parse(name, func_type, is_method=True)
        self.in_progress.discard(name)
        self.functions[name] = fn
        return fn

    def build_class(self):
        for name in self.methods:
            self.method(name)
        extra = [f for n, f in self.functions.items() if n not in self.methods and f is not None]  # pl.cluster groups
        return ir.Program(self.name, [self.functions[n] for n in self.methods] + extra)

    def call_method(self, caller, name, args, node):
        fn = self.method(name, caller, node)
        trailing = list(fn.params)[len(args):]
        if len(args) > len(fn.params) or not all(isinstance(p.type, ir.ScalarType) for p in trailing):
            raise caller.error(node, f"self.{name} takes {len(fn.params)} arguments, got {len(args)}",
                               f"call it as self.{name}(" + ", ".join(p.name for p in fn.params) + ")")
        exprs = []
        for a, p in zip(args, fn.params):
            dtype = p.type.dtype if isinstance(p.type, ir.ScalarType) else None
            e = caller.to_expr(a, node, dtype)
            if not caller.compatible(p.type, e.type):
                raise caller.error(node, f"argument '{p.name}' of self.{name} must be {ir.print_type(p.type)}, got "
                                         f"{ir.print_type(e.type)}", "pass a value of the parameter's type")
            exprs.append(e)
        exprs += dimension_args(fn, exprs, caller, node)
        return ir.FuncCall(name, exprs, call_type(fn, exprs), caller.span(node))

    # -- jit form ---------------------------------------------------------------------------
    def call_jit(self, caller, jit_fn, args, node):
        if jit_fn._pl_jit_kind == "inline":
            return FunctionParser(jit_fn.source(), self).parse_inline(args, node, caller)
        if jit_fn._pl_jit_kind != "incore":
            raise caller.error(node, f"'{jit_fn.__name__}' is a @pl.jit entry and cannot be called from another one",
                               "decorate the callee with @pl.jit.incore (a kernel) or @pl.jit.inline")
        parser = FunctionParser(jit_fn.source(), self)
        specs = parser.param_specs(False)
        if len(args) != len(specs):
            raise caller.error(node, f"{jit_fn.__name__} takes {len(specs)} arguments, got {len(args)}")
        exprs = []
        for a, (_, spec, _) in zip(args, specs):
            dtype = spec.dtype if isinstance(spec, ScalarSpec) else None
            exprs.append(caller.to_expr(a, node, dtype))
        key = (id(jit_fn), tuple(ir.print_type(e.type) for e in exprs))
        if key not in self.kernels:
            name = jit_fn.__name__
            k = 0
            while name in self.functions:
                k += 1
                name = f"{jit_fn.__name__}_{k}"
            self.functions[name] = None  # reserve the name
            fn = parser.parse(name, ir.FunctionType.InCore, [e.type for e in exprs], return_outs=True)
            self.functions[name] = fn
            self.kernels[key] = name
        fn = self.functions[self.kernels[key]]
        exprs = exprs + dimension_args(fn, exprs, caller, node)
        return ir.FuncCall(fn.name, exprs, call_type(fn, exprs), caller.span(node))

    def build_jit(self, entry_source, entry_name, arg_types):
        entry = FunctionParser(entry_source, self).parse(entry_name, ir.FunctionType.Orchestration, arg_types)
        kernels = [f for f in self.functions.values() if f is not None]
        return ir.Program(self.name, kernels + [entry])


def arg_spec_type(spec, index):
    """("tensor", shape, dtype) or ("scalar", dtype, value) -> the IR type of a jit argument."""
    if isinstance(spec, (tuple, list)) and len(spec) == 3 and spec[0] == "tensor":
        return ir.TensorType([ir.ConstInt(int(d)) for d in spec[1]], spec[2])
    if isinstance(spec, (tuple, list)) and len(spec) == 3 and spec[0] == "scalar":
        return ir.ScalarType(spec[1])
    if isinstance(spec, ir.Type):
        return spec
    raise TypeError(f"argument spec {index} must be ('tensor', shape, dtype) or ('scalar', dtype, value), got {spec!r}")



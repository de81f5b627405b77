"""Assembles a Program from parsed functions: the methods of a `@pl.program` class (parsed
on demand, so a caller may come before its callee) or a `@pl.jit` entry with the
`@pl.jit.incore` kernels it calls, each specialised on its call-site argument types."""

import warnings

from pypto import _core
from pypto._core import ir

from .errors import InputWrittenWarning
from .function_options import _EXTERN_CORES, FunctionOptions
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


_WARNED = {}  # warnings.warn_explicit's registry: each store site warns once


def warn_written_inputs(program, windows=None):
    """One warning at each store to a parameter declared as an input (the C++ analysis
    written_inputs; OutlineIncore makes such a parameter written for the task graph). Window
    tensors (`pld.DistributedTensor` parameters, `windows`: function name -> parameter names)
    are shared memory that kernels write by design: no warning for them."""
    windows = windows or {}
    for fn in program.functions:
        for index, file, line, _col, read in _core.written_inputs(fn):
            name = fn.params[index].name
            if name in windows.get(fn.name, ()):
                continue
            want = "pl.InOut" if read else "pl.Out"
            warnings.warn_explicit(
                f"parameter '{name}' of '{fn.name}' is declared as an input, but this statement stores to it; "
                f"the task graph treats it as {'read and written' if read else 'written'} ({want[3:]})\n"
                f"  fix: declare it {want}[...] ({name}: {want}[pl.Tensor[...]]) so that the signature says so",
                InputWrittenWarning, file, line, registry=_WARNED)
    return program


class ProgramBuilder:
    def __init__(self, name):
        self.name = name
        self.functions = {}  # name -> ir.Function, in order of completion
        self.methods = {}  # class form: name -> (FunctionDef, FunctionOptions)
        self.class_source = None
        self.in_progress = set()
        self.kernels = {}  # (id(jit function), argument type keys) -> function name
        self.module_functions = {}  # name -> the module-level @pl.function called from the class
        self.strict_ssa = False  # @pl.program(strict_ssa=True)
        self.entry = None  # the @pl.jit function being built (jit form)
        self.jit_stack = []  # the @pl.jit functions being parsed, outermost first (recursion check)
        self.window_params = {}  # function name -> its pld.DistributedTensor parameters

    def parse_function(self, source, fdef, name, opts, is_method, arg_types=None, return_outs=False):
        """Parses one function definition with its @pl.function / @pl.jit options."""
        parser = FunctionParser(source, self, fdef)
        return parser.parse(name, opts.type if opts is not None else ir.FunctionType.Opaque, arg_types,
                            is_method=is_method, return_outs=return_outs, opts=opts)

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
        fdef, opts = self.methods[name]
        fn = self.parse_function(self.class_source, fdef, name, opts, True)
        self.in_progress.discard(name)
        self.functions[name] = fn
        return fn

    def build_class(self):
        for name in self.methods:
            self.method(name)
        names = list(self.methods) + [n for n in self.module_functions if n not in self.methods]
        extra = [f for n, f in self.functions.items() if n not in names and f is not None]  # pl.cluster groups
        return warn_written_inputs(ir.Program(self.name, [self.functions[n] for n in names] + extra),
                                   self.window_params)

    def call_method(self, caller, name, args, node):
        return self.call_function(caller, self.method(name, caller, node), f"self.{name}", args, node)

    def call_function(self, caller, fn, shown, args, node):
        trailing = list(fn.params)[len(args):]
        if len(args) > len(fn.params) or not all(isinstance(p.type, ir.ScalarType) for p in trailing):
            raise caller.error(node, f"{shown} takes {len(fn.params)} arguments, got {len(args)}",
                               f"call it as {shown}(" + ", ".join(p.name for p in fn.params) + ")")
        exprs = []
        for a, p in zip(args, fn.params):
            dtype = p.type.dtype if isinstance(p.type, ir.ScalarType) else None
            e = caller.to_expr(a, node, dtype)
            if not caller.compatible(p.type, e.type):
                raise caller.error(node, f"argument '{p.name}' of {shown} must be {ir.print_type(p.type)}, got "
                                         f"{ir.print_type(e.type)}", "pass a value of the parameter's type")
            exprs.append(e)
        exprs += dimension_args(fn, exprs, caller, node)
        return ir.FuncCall(fn.name, exprs, call_type(fn, exprs), caller.span(node))

    def call_module_function(self, caller, pyfunc, args, node):
        """A call of a module-level @pl.function: added to the program once, under its name."""
        from .function_parser import Source
        name = pyfunc.__name__
        if self.class_source is None:
            raise caller.error(node, f"'{name}' is a @pl.function; only a @pl.program calls it",
                               f"call a @pl.jit.incore function from a @pl.jit entry, or put '{name}' in a program")
        if name in self.methods:
            raise caller.error(node, f"the module-level @pl.function '{name}' has the name of a function of "
                                     f"program '{self.name}'", f"rename one of the two '{name}' functions")
        known = self.module_functions.get(name)
        if known is not None and known is not pyfunc:
            raise caller.error(node, f"two different module-level @pl.function '{name}' are called from program "
                                     f"'{self.name}'", "give them different names")
        if known is None:
            if name in self.in_progress:
                raise caller.error(node, f"recursive call of '{name}' is not supported")
            self.module_functions[name] = pyfunc
            self.in_progress.add(name)
            source = Source.of(pyfunc)
            fdef = source.node
            is_method = bool(fdef.args.args) and fdef.args.args[0].arg == "self"
            self.functions[name] = self.parse_function(source, fdef, name, pyfunc._pl_function_opts, is_method)
            self.in_progress.discard(name)
        return self.call_function(caller, self.functions[name], name, args, node)

    # -- jit form ---------------------------------------------------------------------------
    def check_recursion(self, caller, jit_fn, node):
        """A call of a @pl.jit function that is being parsed (it calls itself, directly or
        through others) is a ParseError naming the cycle (k -> k, k1 -> k2 -> k1)."""
        ids = [id(f) for f in self.jit_stack]
        if id(jit_fn) in ids:
            cycle = [f.__name__ for f in self.jit_stack[ids.index(id(jit_fn)):]] + [jit_fn.__name__]
            raise caller.error(node, f"recursive call of @pl.jit function '{jit_fn.__name__}': " + " -> ".join(cycle),
                               "pl functions are inlined or launched as kernels and cannot recurse: "
                               "write the repetition as a pl.range / while loop")

    def call_jit(self, caller, jit_fn, args, node):
        self.check_recursion(caller, jit_fn, node)
        self.jit_stack.append(jit_fn)
        try:
            return self._call_jit(caller, jit_fn, args, node)
        finally:
            self.jit_stack.pop()

    def _call_jit(self, caller, jit_fn, args, node):
        kind = jit_fn._pl_jit_kind
        entry_kind = self.entry._pl_jit_kind if self.entry is not None else "entry"
        if kind == "inline" or kind == "opaque" or (kind in ("entry", "host") and entry_kind == "host"):
            # Spliced into the caller: an .opaque function (and, from a .host entry, another
            # @pl.jit entry) runs its statements, loops and pl.at scopes in the caller's place.
            inline = FunctionParser(jit_fn.source(), self)
            # The spliced bodies of pld's collectives report (and run) at the user's call line.
            if getattr(caller, "splice_span", None) is not None:
                inline.splice_span = caller.splice_span
            elif getattr(jit_fn, "_pl_user_span", False):
                inline.splice_span = caller.span(node)
            return inline.parse_inline(args, node, caller)
        if kind in ("entry", "host"):
            raise caller.error(node, f"'{jit_fn.__name__}' is a @pl.jit entry and cannot be called from another "
                                     "plain @pl.jit entry",
                               "decorate the caller with @pl.jit.host (it calls other entries), or the callee with "
                               "@pl.jit.incore (a kernel), @pl.jit.inline or @pl.jit.opaque")
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
            opts = jit_options(jit_fn)
            fn = parser.parse(name, opts.type, [e.type for e in exprs], return_outs=True, opts=opts)
            self.functions[name] = fn
            self.kernels[key] = name
        fn = self.functions[self.kernels[key]]
        exprs = exprs + dimension_args(fn, exprs, caller, node)
        return ir.FuncCall(fn.name, exprs, call_type(fn, exprs), caller.span(node))

    def build_jit(self, entry_source, entry_name, arg_types, jitfn=None):
        self.entry = jitfn
        self.jit_stack = [jitfn] if jitfn is not None else []
        opts = jit_options(jitfn) if jitfn is not None else None
        func_type = opts.type if opts is not None else ir.FunctionType.Orchestration
        entry = FunctionParser(entry_source, self).parse(entry_name, func_type, arg_types, opts=opts)
        kernels = [f for f in self.functions.values() if f is not None]
        return warn_written_inputs(ir.Program(self.name, kernels + [entry]), self.window_params)

    def build_extern(self, jitfn, arg_types):
        """The program of a @pl.jit.extern function called directly: the function alone
        (compiling it reports that hand-written kernels cannot run here)."""
        opts = jit_options(jitfn)
        fn = FunctionParser(jitfn.source(), self).parse(jitfn.__name__, opts.type, arg_types, return_outs=True,
                                                        opts=opts)
        return ir.Program(self.name, [fn])


def jit_options(jitfn):
    """The FunctionOptions a @pl.jit kind gives its function."""
    o = jitfn.options
    kind = jitfn._pl_jit_kind
    if kind == "incore":
        return FunctionOptions(ir.FunctionType.InCore, level=o.get("level"))
    if kind == "host":
        return FunctionOptions(ir.FunctionType.Orchestration, level=ir.Level.HOST, role=ir.Role.Orchestrator,
                               auto_scope=o.get("auto_scope", True))
    if kind == "opaque":
        return FunctionOptions(ir.FunctionType.Opaque)
    if kind == "extern":
        sources = [o[k] for k in ("source", "aic_source", "aiv_source") if o.get(k) is not None]
        attrs = {"external_source": ", ".join(str(s) for s in sources), "core_type": o["core_type"]}
        if o.get("dual_aiv_dispatch"):
            attrs["dual_aiv_dispatch"] = True
        if o.get("include_dirs"):
            attrs["include_dirs"] = ", ".join(str(d) for d in o["include_dirs"])
        return FunctionOptions(_EXTERN_CORES[o["core_type"]], attrs=attrs)
    return FunctionOptions(ir.FunctionType.Orchestration, auto_scope=o.get("auto_scope", True))


def arg_spec_type(spec, index):
    """("tensor", shape, dtype) or ("scalar", dtype, value) -> the IR type of a jit argument."""
    if isinstance(spec, (tuple, list)) and len(spec) == 3 and spec[0] == "tensor":
        return ir.TensorType([ir.ConstInt(int(d)) for d in spec[1]], spec[2])
    if isinstance(spec, (tuple, list)) and len(spec) == 3 and spec[0] == "scalar":
        return ir.ScalarType(spec[1])
    if isinstance(spec, ir.Type):
        return spec
    raise TypeError(f"argument spec {index} must be ('tensor', shape, dtype) or ('scalar', dtype, value), got {spec!r}")



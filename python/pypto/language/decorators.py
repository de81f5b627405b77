"""The decorators of the DSL: `@pl.jit` (entry) and its kinds `.incore` (kernel), `.inline`
(spliced), `.host` (host orchestrator), `.opaque`, `.extern` (hand-written C++);
`@pl.program` + `@pl.function(type=...)` (class form; a module-level `@pl.function` is
added to the program that calls it); `@pl.inline`; and `pl.parse` / `pl.loads` for printed
DSL text. Bodies are parsed from source, never executed."""

import ast
import builtins
import functools
import difflib
import inspect
import linecache
import os
import sys
import warnings

from pypto import _driver
from pypto._core import ir
from pypto._traceback import api_boundary, user_errors

from .errors import parse_error
from .function_options import _EXTERN_CORES, FunctionOptions, _function_signature  # noqa: F401
from .function_parser import FunctionParser, Source
from .program_builder import ProgramBuilder, arg_spec_type


def _frame_locals(depth):
    """A snapshot of the locals of the frame `depth` levels above the caller (closure sizes)."""
    return dict(sys._getframe(depth + 1).f_locals)


def _caller_span(depth):
    """The Span of the frame `depth` levels above the caller (a decorator's line)."""
    frame = sys._getframe(depth + 1)
    return ir.Span(frame.f_code.co_filename, frame.f_lineno, 0)


# -- @pl.function ---------------------------------------------------------------------------
def function(func=None, **options):
    """`@pl.function(type=pl.FunctionType.InCore)`: a method of a `@pl.program` class, or a
    module-level function that a program calls (added to it once, under its name). Keywords:
    see `_function_signature` (an unknown one is a ParseError at the decorator's line)."""
    span = _caller_span(1)

    def error(message, fix):
        return parse_error(span, message, fix)

    opts = FunctionOptions.checked(error, **options)
    if options.get("attrs") is not None:
        warnings.warn("pl.function(attrs=...) is deprecated; write pl.func_attr({...}) as the first statement "
                      "of the function body", DeprecationWarning, stacklevel=2)

    def mark(f):
        if opts.level == ir.Level.HOST and opts.role in (None, ir.Role.Orchestrator) and "." not in f.__qualname__:
            # a module-level host orchestrator (pld): the same as @pl.jit.host
            return JitFunction(f, "host", _frame_locals(2), {"auto_scope": opts.auto_scope})
        if opts.level == ir.Level.HOST and opts.role == ir.Role.SubWorker:
            # a host callback (pld): a declaration whose body prepare(callbacks={...}) supplies; the
            # jit package (a layer above, reached through pypto._driver) owns what it becomes
            return _driver.jit().host_callback(f, span)
        f._pl_function_type = opts.type
        f._pl_function_opts = opts
        return f
    return mark(func) if func is not None else mark


function.__signature__ = inspect.signature(_function_signature)


def _decorator_options(evaluator, dec):
    """FunctionOptions of one `@pl.function` / `@pl.function(...)` decorator node."""
    if not isinstance(dec, ast.Call):
        return FunctionOptions()
    if dec.args:
        raise evaluator.error(dec, "pl.function takes keywords only",
                              "write @pl.function(type=pl.FunctionType.InCore)")
    kwargs = {kw.arg: evaluator.eval(kw.value) for kw in dec.keywords}
    return FunctionOptions.checked(lambda m, f: evaluator.error(dec, m, f), **kwargs)


def _class_methods(source, classdef):
    """{name: (FunctionDef, FunctionOptions)} of the @pl.function methods of a class node."""
    evaluator = FunctionParser(source, None, classdef)
    methods = {}
    for node in classdef.body:
        if isinstance(node, ast.FunctionDef):
            opts = None
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if evaluator.eval(target) is function:
                    opts = _decorator_options(evaluator, dec)
            if opts is None:
                raise evaluator.error(node, f"method '{node.name}' of a @pl.program class lacks @pl.function",
                                      "decorate it with @pl.function(type=pl.FunctionType.InCore) (or Orchestration)")
            methods[node.name] = (node, opts)
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) and not isinstance(node, ast.Pass):
            raise evaluator.error(node, "a @pl.program class may only contain @pl.function methods",
                                  "move other definitions out of the class")
    return methods


def _build_class(source, strict_ssa=False):
    builder = ProgramBuilder(source.node.name)
    builder.strict_ssa = strict_ssa
    builder.add_class(source, _class_methods(source, source.node))
    return builder.build_class()


def program(cls=None, *, strict_ssa=False):
    """`@pl.program class P:` or `@pl.program(strict_ssa=True)` -> the parsed `ir.Program`
    (parsed at decoration time). strict_ssa=True applies to every function of the class."""
    if not isinstance(strict_ssa, bool):
        raise parse_error(_caller_span(1), f"strict_ssa= of pl.program must be True or False, got {strict_ssa!r}",
                          "write @pl.program(strict_ssa=True)")
    if cls is None:
        def decorate(c):
            with user_errors():
                return _build_class(Source.of(c, _frame_locals(1)), strict_ssa)
        return decorate
    with user_errors():
        return _build_class(Source.of(cls, _frame_locals(1)), strict_ssa)


# -- @pl.jit ----------------------------------------------------------------------------------
class JitFunction:
    """A `@pl.jit` function (kind "entry"), or a `@pl.jit.incore` / `.inline` / `.host` /
    `.opaque` / `.extern` one. `options` are the decorator's keywords."""

    def __init__(self, func, kind, frame_locals, options=None):
        functools.update_wrapper(self, func)
        self.func = func
        self._pl_jit_kind = kind
        self._frame_locals = frame_locals
        self._source = None
        self.options = dict(options or {})

    @property
    def kind(self):
        return self._pl_jit_kind

    @property
    def _cache(self):
        """The compile cache of this function (one compiled program per argument signature);
        `f._cache.clear()` makes the next call compile again."""
        return _driver.jit().jit_cache(self)

    def source(self):
        if self._source is None:
            self._source = Source.of(self.func, self._frame_locals)
        return self._source

    def parse(self, arg_specs):
        """The Program of this entry specialised on `arg_specs`: one per parameter,
        ("tensor", shape, DataType) or ("scalar", DataType, value)."""
        types = [arg_spec_type(s, i) for i, s in enumerate(arg_specs)]
        if self._pl_jit_kind == "extern":  # compiling it reports that Ascend C cannot run here
            return ProgramBuilder(self.__name__).build_extern(self, types)
        if self._pl_jit_kind not in ("entry", "host", "opaque"):
            raise TypeError(f"{self.__name__} is a @pl.jit.{self._pl_jit_kind} function; call it from a @pl.jit entry "
                            "and run the entry")
        return ProgramBuilder(self.__name__).build_jit(self.source(), self.__name__, types, self)

    def annotated_specs(self):
        """The argument specs the parameter annotations give (for `f.compile()` with no
        arguments): each parameter needs a full pl.Tensor[[M, N], dtype] or pl.Scalar[dtype]."""
        from .types import DynDim, ScalarSpec, TensorSpec

        parser = FunctionParser(self.source(), None)
        specs = []
        for p, spec, _ in parser.param_specs(False):
            fix = (f"annotate it fully, e.g. `{p.arg}: pl.Tensor[[128, 128], pl.FP32]` or `{p.arg}: "
                   f"pl.Scalar[pl.INDEX]`, or compile with example arguments: {self.__name__}.compile(*arrays)")
            where = f"{self.__name__}.compile() without arguments takes shapes and dtypes from the annotations"
            if spec is None:
                raise parser.error(p, f"{where}; parameter '{p.arg}' has no annotation", fix)
            if isinstance(spec, ScalarSpec):
                specs.append(("scalar", spec.dtype, None))
                continue
            if not isinstance(spec, TensorSpec):
                raise parser.error(p, f"{where}; parameter '{p.arg}' is annotated {parser.text(p.annotation)}, "
                                      "which is not a tensor or scalar parameter type", fix)
            if spec.shape is None:
                raise parser.error(p, f"{where}; parameter '{p.arg}' is annotated bare pl.Tensor (no shape, no dtype)",
                                   fix)
            # A pl.dynamic dimension stays open (-1): the compiled program serves every extent.
            dims = [-1 if isinstance(d, DynDim) else d for d in spec.shape]
            if not all(isinstance(d, int) and not isinstance(d, bool) and (d > 0 or d == -1) for d in dims):
                raise parser.error(p, f"{where}; parameter '{p.arg}' has shape {list(spec.shape)}, not positive "
                                      "integers or pl.dynamic dimensions", fix)
            specs.append(("tensor", tuple(dims), spec.dtype))
        return specs

    def scalar_dtype(self, index):
        """The dtype a scalar parameter is annotated with (pl.RUNTIME arguments), or None."""
        from .types import ScalarSpec
        try:
            specs = FunctionParser(self.source(), None).param_specs(False)
        except Exception:  # noqa: BLE001 - an unparsable signature reports itself when parsed
            return None
        if index < len(specs) and isinstance(specs[index][1], ScalarSpec):
            return specs[index][1].dtype
        return None

    def signature(self):
        """inspect.signature of the decorated function, read once (every call binds its
        arguments to it)."""
        sig = self.__dict__.get("_signature")
        if sig is None:
            sig = self.__dict__["_signature"] = inspect.signature(self.func)
        return sig

    def _positional(self, args, kwargs, calling):
        """`args` and keyword arguments (by parameter name) as one positional tuple; omitted
        parameters with a pl.RUNTIME default stay pl.RUNTIME (compile) or are an error (call)."""
        from .types import RUNTIME
        if not args and not kwargs and not calling:
            return ()  # f.compile(): from the annotations
        try:
            sig = self.signature()
        except (TypeError, ValueError):
            return tuple(args)
        params = list(sig.parameters)
        rest = [sig.parameters[n] for n in params[len(args):]]
        if not kwargs and any(p.default is inspect.Parameter.empty for p in rest):
            return tuple(args)  # too few arguments: the runtime reports it with the parameter list
        if not kwargs and len(args) >= len(params):
            named = dict(zip(params, args))
            values = tuple(args)
        else:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as e:
                from pypto._traceback import call_site as _call_site  # the user's line of the call
                unknown = [k for k in kwargs if k not in params]
                near = difflib.get_close_matches(unknown[0], params, n=1) if unknown else []
                hint = f"did you mean '{near[0]}='? " if near else ""
                what = f"got an unexpected keyword argument '{unknown[0]}'" if unknown else str(e)
                raise TypeError(f"{_call_site()}: {self.__name__}(): {what}; fix: {hint}call it as "
                                f"{self.__name__}({', '.join(params)}) (by position or by these names; "
                                "config= is the run configuration)") from None
            bound.apply_defaults()
            named = dict(bound.arguments)
            values = tuple(named.values())
        if calling:
            missing = [n for n, v in named.items() if v is RUNTIME]
            if missing:
                raise TypeError(f"{self.__name__}(): parameter '{missing[0]}' is pl.RUNTIME and needs a value "
                                f"at each call; fix: pass {missing[0]}=<number>")
        return values

    def __call__(self, *args, config=None, **kwargs):
        with user_errors():
            if self._pl_jit_kind == "host":  # runs here, dispatching chip functions to rank processes (pld)
                return _driver.jit().host_call(self, args, kwargs, config)
            return _driver.jit().jit_call(self, self._positional(args, kwargs, True), config)

    def compile(self, *args, config=None, **kwargs):
        """The compiled program for these arguments (numpy arrays / torch tensors / numbers /
        pl.RUNTIME, by position or parameter name), or, with no arguments, for the shapes and
        dtypes of the annotations."""
        with user_errors():
            return _driver.jit().jit_compile(self, self._positional(args, kwargs, False), config)

    def lower(self, *args, config=None, **kwargs):
        """The IR after the pass pipeline for these arguments."""
        with user_errors():
            return _driver.jit().jit_lower(self, self._positional(args, kwargs, False), config)

    def __repr__(self):
        return f"<pl.jit{'' if self.kind == 'entry' else '.' + self.kind} function {self.__name__}>"


JITFunction = JitFunction  # PyPTO's spelling of the type


class InlineFunction(JitFunction):
    """A `@pl.inline` / `@pl.jit.inline` function: its body is spliced into each caller (no
    function of its own in the program)."""




def _jit_signature(**params):
    """The inspect.Signature of a pl.jit decorator: (self, func=None, *, <params>)."""
    P = inspect.Parameter
    return inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD), P("func", P.POSITIONAL_OR_KEYWORD, default=None)]
                             + [P(k, P.KEYWORD_ONLY, default=v) for k, v in params.items()])


class _Jit:
    """`pl.jit`: `@pl.jit`, `@pl.jit()`, `@pl.jit(auto_scope=False)`, and the kinds
    `.incore`, `.inline`, `.host`, `.opaque`, `.extern`."""

    _KEYWORDS = {
        "entry": {"auto_scope": True},
        "incore": {"level": None, "auto_scope": True},
        "inline": {"auto_scope": True},
        "host": {"auto_scope": True},
        "opaque": {},
        "extern": {"core_type": "aiv", "source": None, "aic_source": None, "aiv_source": None,
                   "dual_aiv_dispatch": False, "include_dirs": None},
    }

    def _decorate(self, func, kind, options):
        span = _caller_span(2)
        options = self._checked(kind, options, span)
        cls = InlineFunction if kind == "inline" else JitFunction
        if func is None:
            def decorator(f):
                return cls(f, kind, _frame_locals(1), options)
            return decorator
        return cls(func, kind, _frame_locals(2), options)

    def _checked(self, kind, options, span):
        name = "pl.jit" if kind == "entry" else f"pl.jit.{kind}"
        allowed = self._KEYWORDS[kind]
        for k in options:
            if k not in allowed:
                takes = ", ".join(f"{a}=" for a in allowed) or "no keywords"
                extra = " (it always runs at level=pl.Level.HOST)" if kind == "host" and k == "level" else ""
                raise parse_error(span, f"{name} has no keyword '{k}'{extra}", f"{name} takes {takes}; remove '{k}='")
        out = {**allowed, **options}

        def bad(k, want, fix):
            return parse_error(span, f"{k}= of {name} must be {want}, got {out[k]!r}", fix)
        if "auto_scope" in out and not isinstance(out["auto_scope"], bool):
            raise bad("auto_scope", "True or False", "write auto_scope=False")
        if kind == "incore" and out["auto_scope"] is False:
            raise parse_error(span, "auto_scope=False is for orchestration: pl.jit, pl.jit.host and pl.jit.inline "
                                    "take it, pl.jit.incore does not (a kernel has no AUTO scopes)",
                              "remove auto_scope= from @pl.jit.incore")
        if out.get("level") is not None and not isinstance(out["level"], ir.Level):
            raise bad("level", "a pl.Level", "write level=pl.Level.CORE_GROUP")
        if kind == "extern":
            if out["core_type"] not in _EXTERN_CORES:
                raise bad("core_type", "'aic', 'aiv' or 'mixed'", "write core_type='aiv'")
            if out["core_type"] == "mixed":
                if out["aic_source"] is None or out["aiv_source"] is None:
                    raise parse_error(span, "pl.jit.extern(core_type='mixed') needs aic_source= and aiv_source=",
                                      "write pl.jit.extern(core_type='mixed', aic_source='k_aic.cpp', "
                                      "aiv_source='k_aiv.cpp')")
            elif out["source"] is None:
                raise parse_error(span, f"pl.jit.extern(core_type='{out['core_type']}') needs source=",
                                  f"write pl.jit.extern(core_type='{out['core_type']}', source='kernel.cpp')")
            for k in ("source", "aic_source", "aiv_source"):
                if out[k] is not None and not isinstance(out[k], (str, os.PathLike)):
                    raise bad(k, "a file path", f"write {k}='kernel.cpp'")
            if not isinstance(out["dual_aiv_dispatch"], bool):
                raise bad("dual_aiv_dispatch", "True or False", "write dual_aiv_dispatch=True")
            if out["include_dirs"] is not None and not isinstance(out["include_dirs"], (list, tuple)):
                raise bad("include_dirs", "a list of directories", "write include_dirs=['include']")
        return out

    def __call__(self, func=None, **options):
        return self._decorate(func, "entry", options)

    def incore(self, func=None, **options):
        return self._decorate(func, "incore", options)

    def inline(self, func=None, **options):
        return self._decorate(func, "inline", options)

    def host(self, func=None, **options):
        return self._decorate(func, "host", options)

    def opaque(self, func=None, **options):
        return self._decorate(func, "opaque", options)

    def extern(self, func=None, **options):
        return self._decorate(func, "extern", options)


for _kind, _attr in (("entry", "__call__"), ("incore", "incore"), ("inline", "inline"), ("host", "host"),
                     ("opaque", "opaque"), ("extern", "extern")):
    getattr(_Jit, _attr).__signature__ = _jit_signature(**_Jit._KEYWORDS[_kind])

jit = _Jit()


def inline(func):
    """`@pl.inline`: the function's body is spliced into each caller (like @pl.jit.inline)."""
    return InlineFunction(func, "inline", _frame_locals(1), {"auto_scope": True})


# -- parsing printed text ---------------------------------------------------------------------
def _text_tree(code, filename):
    if isinstance(code, str) and not os.path.isfile(filename):
        # Error messages quote the text's lines (errors.source_excerpt reads them from linecache).
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        return ast.parse(code, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        line = getattr(e, "lineno", None) or 1
        raise parse_error(ir.Span(filename, line, 0), f"the text is not valid Python: {e}",
                          "pass text printed by pypto.ir.print_program, or a program in the @pl.program class form") from None


def _text_env():
    import pypto.language as pl
    # Printed programs need only `pl` and plain values: no other names (and so no callables
    # with effects) are reachable from parsed text.
    env = {name: getattr(builtins, name) for name in ("True", "False", "None", "range", "len", "min", "max", "abs",
                                                      "tuple", "float")}  # float('inf') / float('nan'): printed constants
    env["pl"] = pl
    return env


def _is_function_def(node):
    """A `@pl.function` definition of parsed text (where `pl` is the only name)."""
    return isinstance(node, ast.FunctionDef) and any(
        ast.unparse(dec.func if isinstance(dec, ast.Call) else dec) == "pl.function" for dec in node.decorator_list)


def _parse_function(node, filename, env):
    """A bare `@pl.function def f(...)` of parsed text -> its ir.Function."""
    source = Source(node, filename, 0, env)
    evaluator = FunctionParser(source, None, node)
    opts = None
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if evaluator.eval(target) is function:
            opts = _decorator_options(evaluator, dec)
    builder = ProgramBuilder(node.name)
    is_method = bool(node.args.args) and node.args.args[0].arg == "self"
    return builder.parse_function(source, node, node.name, opts, is_method)


@api_boundary
def parse(code, filename="<string>", source_map=None):
    """Parses DSL text: a `@pl.program` class (as printed by the IR printer) gives the
    Program; a bare `@pl.function` gives the Function. `source_map` (PyPTO: line mapping of
    generated text) is accepted; spans are the text's own lines."""
    del source_map
    tree = _text_tree(code, filename)
    env = _text_env()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            return _build_class(Source(node, filename, 0, env))
    for node in tree.body:
        if _is_function_def(node):
            return _parse_function(node, filename, env)
    raise parse_error(ir.Span(filename, 1, 0), "no @pl.program class and no @pl.function in the text",
                      "the text must hold `@pl.program class Name:` with @pl.function methods, or one @pl.function")


@api_boundary
def parse_program(code, filename="<string>"):
    """Parses DSL text holding one `@pl.program` class into its Program."""
    tree = _text_tree(code, filename)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            return _build_class(Source(node, filename, 0, _text_env()))
    raise parse_error(ir.Span(filename, 1, 0), "no @pl.program class in the text",
                      "the text must hold `@pl.program class Name:` with @pl.function methods (use pl.parse for "
                      "a single @pl.function)")


def loads(filepath):
    """Parses a file of DSL text (e.g. a pass dump): its Program, or its Function."""
    with open(filepath, encoding="utf-8") as f:
        return parse(f.read(), filename=str(filepath))


def loads_program(filepath):
    """Parses a file of DSL text holding a `@pl.program` class into its Program."""
    with open(filepath, encoding="utf-8") as f:
        return parse_program(f.read(), filename=str(filepath))

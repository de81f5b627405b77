"""The decorators of the DSL: `@pl.jit` (entry), `@pl.jit.incore` (kernel), `@pl.jit.inline`
(spliced), `@pl.program` + `@pl.function(type=...)` (class form), and `pl.parse` /
`pl.loads` for printed DSL text. Bodies are parsed from source, never executed."""

import ast
import builtins
import functools
import sys

from pypto._core import ir

from .errors import parse_error
from .function_parser import FunctionParser, Source
from .program_builder import ProgramBuilder, arg_spec_type


def _frame_locals(depth):
    """A snapshot of the locals of the frame `depth` levels above the caller (closure sizes)."""
    return dict(sys._getframe(depth + 1).f_locals)


class JitFunction:
    """A `@pl.jit` function (kind "entry"), or a `@pl.jit.incore` / `@pl.jit.inline` one."""

    def __init__(self, func, kind, frame_locals):
        functools.update_wrapper(self, func)
        self.func = func
        self._pl_jit_kind = kind
        self._frame_locals = frame_locals
        self._source = None

    @property
    def kind(self):
        return self._pl_jit_kind

    def source(self):
        if self._source is None:
            self._source = Source.of(self.func, self._frame_locals)
        return self._source

    def parse(self, arg_specs):
        """The Program of this entry specialised on `arg_specs`: one per parameter,
        ("tensor", shape, DataType) or ("scalar", DataType, value)."""
        if self._pl_jit_kind != "entry":
            raise TypeError(f"{self.__name__} is a @pl.jit.{self._pl_jit_kind} function; parse its @pl.jit entry")
        types = [arg_spec_type(s, i) for i, s in enumerate(arg_specs)]
        return ProgramBuilder(self.__name__).build_jit(self.source(), self.__name__, types)

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

    def __call__(self, *args, config=None):
        from pypto import runtime
        return runtime.jit_call(self, args, config)

    def compile(self, *args, config=None):
        """The compiled program for these arguments (numpy arrays / torch tensors / numbers),
        or, with no arguments, for the shapes and dtypes of the parameter annotations."""
        from pypto import runtime
        return runtime.jit_compile(self, args, config)

    def lower(self, *args):
        from pypto import runtime
        return runtime.jit_lower(self, args)

    def __repr__(self):
        return f"<pl.jit{'' if self.kind == 'entry' else '.' + self.kind} function {self.__name__}>"


class _Jit:
    """`pl.jit`: `@pl.jit`, `@pl.jit()`, `@pl.jit.incore`, `@pl.jit.inline`."""

    def _decorate(self, func, kind, options):
        if func is None:
            def decorator(f):
                return JitFunction(f, kind, _frame_locals(1))
            return decorator
        return JitFunction(func, kind, _frame_locals(2))

    def __call__(self, func=None, **options):
        return self._decorate(func, "entry", options)

    def incore(self, func=None, **options):
        return self._decorate(func, "incore", options)

    def inline(self, func=None, **options):
        return self._decorate(func, "inline", options)


jit = _Jit()


def function(func=None, *, type=None):
    """`@pl.function(type=pl.FunctionType.InCore)`: marks a method of a `@pl.program` class."""
    def mark(f):
        f._pl_function_type = type if type is not None else ir.FunctionType.Opaque
        return f
    return mark(func) if func is not None else mark


def _class_methods(source, classdef):
    """{name: (FunctionDef, FunctionType)} of the @pl.function methods of a class node."""
    evaluator = FunctionParser(source, None, classdef)
    methods = {}
    for node in classdef.body:
        if isinstance(node, ast.FunctionDef):
            func_type = None
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if evaluator.eval(target) is not function:
                    continue
                func_type = ir.FunctionType.Opaque
                for kw in getattr(dec, "keywords", []):
                    if kw.arg != "type":
                        raise evaluator.error(dec, f"pl.function has no keyword '{kw.arg}'",
                                              "write @pl.function(type=pl.FunctionType.InCore)")
                    func_type = evaluator.eval(kw.value)
                    if not isinstance(func_type, ir.FunctionType):
                        raise evaluator.error(dec, "type= of pl.function must be a pl.FunctionType",
                                              "write @pl.function(type=pl.FunctionType.InCore)")
            if func_type is None:
                raise evaluator.error(node, f"method '{node.name}' of a @pl.program class lacks @pl.function",
                                      "decorate it with @pl.function(type=pl.FunctionType.InCore) (or Orchestration)")
            methods[node.name] = (node, func_type)
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) and not isinstance(node, ast.Pass):
            raise evaluator.error(node, "a @pl.program class may only contain @pl.function methods",
                                  "move other definitions out of the class")
    return methods


def _build_class(source):
    builder = ProgramBuilder(source.node.name)
    builder.add_class(source, _class_methods(source, source.node))
    return builder.build_class()


def program(cls):
    """`@pl.program class P:` -> the parsed `ir.Program` (parsed at decoration time)."""
    source = Source.of(cls, _frame_locals(1))
    return _build_class(source)


def parse(text, filename="<string>"):
    """Parses DSL text holding one `@pl.program` class (as printed by the IR printer)."""
    import pypto.language as pl
    try:
        tree = ast.parse(text, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        line = getattr(e, "lineno", None) or 1
        raise parse_error(ir.Span(filename, line, 0), f"the text is not valid Python: {e}",
                          "pass text printed by pypto.ir.print_program, or a program in the @pl.program class form") from None
    # Printed programs need only `pl` and plain values: no other names (and so no callables
    # with effects) are reachable from parsed text.
    env = {name: getattr(builtins, name) for name in ("True", "False", "None", "range", "len", "min", "max", "abs",
                                                      "tuple", "float")}  # float('inf') / float('nan'): printed constants
    env["pl"] = pl
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            return _build_class(Source(node, filename, 0, env))
    raise parse_error(ir.Span(filename, 1, 0), "no @pl.program class in the text",
                      "the text must hold `@pl.program class Name:` with @pl.function methods")


def loads(path):
    """Parses a file of DSL text (e.g. a pass dump) into a Program."""
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), filename=str(path))

"""The keywords of `@pl.function(...)` (and of the @pl.jit kinds), checked: FunctionOptions.
Both the decorators and the program builder read them (this module imports neither)."""

import inspect
import os

from pypto._core import ir

_EXTERN_CORES = {"aic": ir.FunctionType.AIC, "aiv": ir.FunctionType.AIV, "mixed": ir.FunctionType.Group}


class FunctionOptions:
    """The keywords of `@pl.function(...)` (or of a `@pl.jit` kind), checked."""

    def __init__(self, type=ir.FunctionType.Opaque, level=None, role=None, attrs=None, auto_scope=True,
                 strict_ssa=False, external_source=None):
        self.type, self.level, self.role = type, level, role
        self.attrs = dict(attrs or {})
        self.auto_scope, self.strict_ssa, self.external_source = auto_scope, strict_ssa, external_source

    @staticmethod
    def checked(error, **kw):
        """FunctionOptions from `@pl.function` keywords; `error(message, fix)` builds the error."""
        fix = "write e.g. @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CORE_GROUP)"
        try:
            bound = inspect.signature(_function_signature).bind(None, **kw)
        except TypeError as e:
            raise error(f"pl.function: {e}", fix) from None
        args = dict(bound.arguments)
        args.pop("func", None)
        opts = FunctionOptions(**args)
        if not isinstance(opts.type, ir.FunctionType):
            raise error(f"type= of pl.function must be a pl.FunctionType, got {opts.type!r}", fix)
        if opts.level is not None and not isinstance(opts.level, ir.Level):
            raise error(f"level= of pl.function must be a pl.Level, got {opts.level!r}", fix)
        if opts.role is not None and not isinstance(opts.role, ir.Role):
            raise error(f"role= of pl.function must be a pl.Role (Orchestrator, SubWorker), got {opts.role!r}",
                        "write role=pl.Role.Orchestrator")
        if args.get("attrs") is not None and (not isinstance(args["attrs"], dict)
                                              or not all(isinstance(k, str) for k in args["attrs"])):
            raise error(f"attrs= of pl.function must be a dict with string keys, got {args['attrs']!r}",
                        'write pl.func_attr({"name": value}) as the first statement of the body')
        for name in ("auto_scope", "strict_ssa"):
            if not isinstance(getattr(opts, name), bool):
                raise error(f"{name}= of pl.function must be True or False, got {getattr(opts, name)!r}",
                            f"write {name}=True or {name}=False")
        if opts.external_source is not None:
            if not isinstance(opts.external_source, (str, os.PathLike)):
                raise error(f"external_source= of pl.function must be a file path, got {opts.external_source!r}",
                            'write external_source="kernels/my_kernel.cpp"')
            if opts.type not in (ir.FunctionType.AIC, ir.FunctionType.AIV):
                raise error(f"external_source= is for AIC or AIV functions, not {opts.type.name}",
                            "write @pl.function(type=pl.FunctionType.AIV, external_source=\"k.cpp\")")
            opts.external_source = os.fspath(opts.external_source)
        return opts


def _function_signature(func=None, *, type=ir.FunctionType.Opaque, level=None, role=None, attrs=None,
                        auto_scope=True, strict_ssa=False, external_source=None):
    """PyPTO's signature of pl.function."""

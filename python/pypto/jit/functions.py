"""Specialising, caching and calling @pl.jit functions: `arg_specs` (the shapes, dtypes and
scalar values of a call's arguments), `jit_compile` (the compiled program of a jit function
for those, cached per function), `jit_call` and `jit_lower`, and `compiled_of` (what any
runnable thing a user passes compiles to)."""

from __future__ import annotations

import inspect
import re
import weakref

from pypto import _core
from pypto.jit.compiled import CompiledProgram, _at_call_site, compile_cached, compile_program
from pypto.jit.config import RunConfig
from pypto.jit.tensors import as_scalar, is_tensor, scalar_argument
from pypto.jit.tensors import tensor_spec as _spec_of
from pypto.language.decorators import JitFunction
from pypto.language.types import RUNTIME


def _param_names(jitfn, n):
    """The entry's parameter names (for messages), padded with positions."""
    try:
        sig = jitfn.signature() if hasattr(jitfn, "signature") else inspect.signature(jitfn.func)
        names = list(sig.parameters)
    except (AttributeError, TypeError, ValueError):
        names = []
    return names + [f"argument {i}" for i in range(len(names), n)]


def _annotated_scalar(jitfn, index, fits, default):
    """The dtype a Python number argument takes: its parameter's annotation (pl.Scalar[pl.INT32]
    takes an int as INT32) when `fits` it, else `default` (INDEX for ints, FP32 for floats)."""
    if not hasattr(jitfn, "scalar_dtype"):
        return default
    cached = jitfn.__dict__.setdefault("_scalar_dtypes", {})
    if index not in cached:
        cached[index] = jitfn.scalar_dtype(index)
    dtype = cached[index]
    return dtype if dtype is not None and fits(dtype) else default


def arg_specs(jitfn, args):
    specs = []
    known = _param_names(jitfn, 0)  # empty when the signature cannot be read
    names = known + [f"argument {i}" for i in range(len(known), len(args))]
    if known and len(known) != len(args):
        fn = getattr(jitfn, "__name__", "jit function")
        raise TypeError(
            f"{fn}() takes {len(known)} arguments ({', '.join(known)}), got {len(args)}; "
            "fix: pass one array or number per parameter"
        )
    for i, a in enumerate(args):
        name = names[i]
        if a is RUNTIME:  # f.compile(x, pl.RUNTIME): a run-time scalar of the annotated dtype
            dtype = jitfn.scalar_dtype(i) if hasattr(jitfn, "scalar_dtype") else None
            specs.append(("scalar", dtype or _core.DataType.INDEX, None))
            continue
        annotated = _annotated_scalar(jitfn, i, lambda d: True, None)
        if annotated is not None and annotated.name != "TASK_ID" and not (is_tensor(a) and getattr(a, "ndim", 0) != 0):
            # pl.Scalar[pl.INT32] (any width): ints, numpy and torch scalars that fit convert to it
            fn = getattr(jitfn, "__name__", "jit function")
            specs.append(("scalar", annotated, scalar_argument(a, annotated.name, fn, name)))
            continue
        if not is_tensor(a) and as_scalar(a, False) is not None:
            a = as_scalar(a, False)  # a numpy scalar of an unannotated parameter: its Python value
        if is_tensor(a):
            shape, dtype = _spec_of(a, name)
            specs.append(("tensor", shape, getattr(_core.DataType, dtype)))
        elif isinstance(a, bool):
            specs.append(("scalar", _core.DataType.BOOL, a))
        elif isinstance(a, int):
            if not -(2**63) <= a < 2**63:
                raise TypeError(
                    f"{getattr(jitfn, '__name__', 'jit function')}(): argument '{name}' = {a} does not "
                    "fit in a 64-bit integer scalar; fix: pass a value between -2**63 and 2**63 - 1"
                )
            specs.append(("scalar", _annotated_scalar(jitfn, i, _core.ir.dtype_is_int, _core.DataType.INDEX), a))
        elif isinstance(a, float):
            specs.append(("scalar", _annotated_scalar(jitfn, i, _core.ir.dtype_is_float, _core.DataType.FP32), a))
        else:
            raise TypeError(
                f"{getattr(jitfn, '__name__', 'jit function')}(): argument '{name}' is a "
                f"{type(a).__name__}; fix: pass numpy arrays, torch tensors, ints or floats "
                f"(e.g. np.asarray({name}, dtype=np.float32))"
            )
    return specs


_jit_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def jit_cache(jitfn) -> dict:
    """The compile cache of one @pl.jit function (`f._cache`): clearing it forces a recompile."""
    return _jit_cache.setdefault(jitfn, {})


def _jit_key(specs, config):
    """The cache key of a jit function's compile: the argument specs and the compile fields
    of the one options object (RunConfig.compile_key)."""
    return (
        tuple((s[0], s[1], str(s[2])) if s[0] == "tensor" else (s[0], str(s[1])) for s in specs),
        config.compile_key(),
    )


def jit_compile(jitfn, args, config: RunConfig | None = None) -> CompiledProgram:
    """Specialises `jitfn` on the shapes/dtypes of `args` and compiles it (cached)."""
    config = config or RunConfig()
    if args or not _param_names(jitfn, 0):
        specs = arg_specs(jitfn, args)
    else:
        specs = jitfn.annotated_specs()  # f.compile(): shapes and dtypes from the annotations
    cache = jit_cache(jitfn)
    key = _jit_key(specs, config)
    compiled = cache.get(key)
    # A program with pl.dynamic dimensions serves every extent of them: look it up with
    # those dimensions left open.
    for dims in cache.get("dynamic", ()) if compiled is None else ():
        compiled = cache.get(_jit_key(_open_dims(specs, dims), config))
        if compiled is not None:
            break
    if compiled is None:
        compiled = cache[key] = compile_program(jitfn.parse(specs), config)
        if compiled.dynamic_dims:
            dims = frozenset(pos for where in compiled.dynamic_dims.values() for pos in where)
            cache.setdefault("dynamic", []).append(dims)
            cache[_jit_key(_open_dims(specs, dims), config)] = compiled
    return compiled


def _open_dims(specs, dims):
    """`specs` with the tensor dimensions at `dims` ((argument, axis) pairs) set to -1."""
    out = []
    for i, s in enumerate(specs):
        if s[0] == "tensor":
            s = ("tensor", tuple(-1 if (i, a) in dims else d for a, d in enumerate(s[1])), s[2])
        out.append(s)
    return out




_SITED = re.compile(r"^\S+:\d+: ")  # a message that starts at a line already


def jit_call(jitfn, args, config: RunConfig | None = None):
    """Runs `jitfn` on `args`, compiling it on first use for these shapes and dtypes."""
    config = RunConfig() if config is None else config
    if not isinstance(config, RunConfig):
        from pypto._traceback import call_site

        raise TypeError(
            f"{call_site()}: {getattr(jitfn, '__name__', 'jit function')}(config=...) must be a "
            f"pypto.runtime.RunConfig, got {type(config).__name__}; fix: pass config=RunConfig(...) "
            "(e.g. RunConfig(engine='sim'))"
        )
    try:
        compiled = jit_compile(jitfn, args, config)
        return compiled(*args, config=config)
    except (TypeError, ValueError) as e:
        if _SITED.match(str(e)):
            raise
        raise _at_call_site(e) from None
    except _core.PyptoError as e:
        # an error of the run itself (a cache directory, a platform) names the user's call
        if _SITED.match(str(e)):
            raise
        raise _at_call_site(e) from None


def jit_lower(jitfn, args, config: RunConfig | None = None):
    """The IR of `jitfn` after the pass pipeline, for these argument shapes and dtypes."""
    config = config or RunConfig()
    try:
        return jit_compile(jitfn, args, config).program
    except (TypeError, ValueError) as e:
        raise _at_call_site(e) from None


def program_kind(program) -> str:
    """What kind of runnable thing `program` is; the one place this is decided:
    "compiled" (a CompiledProgram), "result" (what pypto.runtime.run returns: it stands for its
    compiled program), "jit" (a @pl.jit entry function, specialised on the call's arguments),
    "program" (an ir.Program: a @pl.program class or parsed text), else "" (not runnable:
    a @pl.jit.incore / .inline / ... function, or anything else)."""
    if isinstance(program, CompiledProgram):
        return "compiled"
    if isinstance(getattr(program, "compiled", None), CompiledProgram):
        return "result"
    if isinstance(program, JitFunction):
        return "jit" if program.kind == "entry" else ""
    if isinstance(program, _core.ir.Program):
        return "program"
    return ""


def compiled_of(program, config: RunConfig | None = None, args=(), *, cached: bool = True,
                kinds=("program", "jit", "compiled", "result"), where: str = "run(program=...)"):
    """The CompiledProgram of `program` (see program_kind) for `config`: a compiled program as
    it is; a jit function compiled for `args` (from its annotations when there are none); an
    ir.Program compiled (once per structure when `cached`). A kind not in `kinds` is a
    TypeError naming `where`."""
    config = config or RunConfig()
    kind = program_kind(program)
    if kind not in kinds:
        takes = {"compiled": "a compiled program", "result": "run()'s result", "jit": "a @pl.jit function",
                 "program": "a @pl.program class"}
        names = [takes[k] for k in kinds]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        if isinstance(program, JitFunction):  # a kernel (or inline, extern, ...) function
            got = f"the @pl.jit.{program.kind} function '{program.__name__}'"
            fix = "run the @pl.jit entry function that calls it"
        else:
            got, fix = type(program).__name__, "decorate the class with @pl.program (or the function with @pl.jit)"
        raise TypeError(f"{where} takes {listed}, got {got}; fix: {fix}")
    if kind == "compiled":
        return program
    if kind == "result":
        return program.compiled
    if kind == "jit":
        return jit_compile(program, tuple(args), config)
    return compile_cached(program, config) if cached else compile_program(program, config)


def host_callback(func, span):
    """`@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)`: the declared host callback
    (pypto.jit.distributed.SubWorkerFunction) whose body prepare(callbacks=...) supplies."""
    from pypto.jit.distributed import SubWorkerFunction
    return SubWorkerFunction.declared(func, span)


def host_call(jitfn, args, kwargs, config=None):
    """Calls a @pl.jit.host function. With RunConfig(distributed_config=) (or when its body
    dispatches with device=) it runs here and dispatches chip functions to the rank processes
    (pypto.jit.distributed); otherwise it is a single-chip program calling other entries."""
    from pypto.jit import distributed
    if getattr(config, "distributed_config", None) is not None or distributed.dispatches_to_devices(jitfn):
        return distributed.host_call(jitfn, args, kwargs, config)
    return jit_call(jitfn, jitfn._positional(args, kwargs, True), config)

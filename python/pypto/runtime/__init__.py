"""Compiling and running PyPTO programs: RunConfig, run, and calls of @pl.jit functions."""

from __future__ import annotations

import inspect
import os
import sys
import weakref

import numpy as np

from pypto import _core
from pypto.runtime import artifacts
from pypto.runtime.config import RunConfig
from pypto.runtime.tensors import bind_tensor, is_tensor
from pypto.runtime.tensors import tensor_spec as _spec_of  # (pypto.runtime.tensor_spec is the module)


def _find_native_headers() -> None:
    """Points the native engine at the optimised library's headers: pypto/include in an
    installed wheel, else the source tree's include/ (development checkout)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for cand in (os.path.join(here, "include"), os.path.join(os.path.dirname(os.path.dirname(here)), "include")):
        if os.path.isfile(os.path.join(cand, "pypto", "isa", "optimized", "tile_ops.h")):
            _core.set_native_include_dir(cand)
            return


_find_native_headers()


def pto_isa_include_dir() -> str:
    """The include directory kernels are built against. PyPTO's is pto-isa's; here no pto-isa
    is needed: it is the optimised tile library's headers (pypto/isa/optimized/) that the
    native engine compiles kernels with."""
    return _core.native_include_dir()


def ensure_pto_isa_root() -> str:
    """PyPTO fetches pto-isa and sets PTO_ISA_ROOT; nothing is fetched here: returns the
    directory holding pto_isa_include_dir() (and sets PTO_ISA_ROOT to it when unset)."""
    root = os.path.dirname(os.path.abspath(pto_isa_include_dir()))
    os.environ.setdefault("PTO_ISA_ROOT", root)
    return root


_LOG_LEVELS = {"DEBUG": 10, "INFO": 20, "WARN": 30, "WARNING": 30, "ERROR": 40, "FATAL": 50, "CRITICAL": 50}


def configure_log(level, *, sync_pypto: bool = False) -> None:
    """Sets the level of the `pypto` logger (a logging level number or name: DEBUG, INFO,
    WARN, ERROR). `sync_pypto`: PyPTO also sets its C++ log level; our C++ side does not log
    (it raises errors), so the flag has no further effect."""
    import logging

    if isinstance(level, str):
        if level.upper() not in _LOG_LEVELS:
            raise ValueError(f"configure_log(level={level!r}): unknown level; use one of "
                             + ", ".join(repr(n) for n in ("DEBUG", "INFO", "WARN", "ERROR")))
        level = _LOG_LEVELS[level.upper()]
    elif not isinstance(level, int) or isinstance(level, bool):
        raise ValueError(f"configure_log(level={level!r}): give a level name such as 'INFO' or a logging level number")
    logging.getLogger("pypto").setLevel(level)


def log_level() -> int:
    """The effective level of the `pypto` logger (a logging level number)."""
    import logging

    return logging.getLogger("pypto").getEffectiveLevel()


__all__ = ["BenchmarkStats", "ChipWorker", "CompiledProgram", "DeviceTensor", "RegisteredProgram", "RegistrationHandle", "RunConfig",
           "RunResult", "ScalarSpec", "TensorSpec", "TraceInvocation", "TraceSpan", "Worker", "benchmark", "compile_program", "configure_log",
           "ensure_pto_isa_root", "execute_compiled", "jit_call", "jit_compile", "jit_lower", "log_level",
           "pto_isa_include_dir", "run"]


from pypto.ir.compiled_program import _PyptoCompiledProgramAPI  # noqa: E402


class CompiledProgram(_PyptoCompiledProgramAPI):
    """A compiled program: call it with arrays to run it again without recompiling.

    `platform`, `param_names` and `name` describe it; `output_dir` is its build directory
    (passes_dump/, kernels/ with .pto and native C++, memory_map.json, report.html),
    written when first asked for (or at compile time with dump_passes / save_kernels).
    A compiled program is os.PathLike: os.fspath(compiled) is its output_dir."""

    def _setup(self, compiled, config: RunConfig, source=None):
        self._compiled = compiled
        self._source = source  # the program before the passes (to redo them for passes_dump)
        self.config = config
        self.platform = compiled.platform
        self.param_names = list(compiled.param_names)
        self.name = compiled.entry
        self._output_dir = config.output_dir or os.path.join("build_output", self.name)
        self._artifacts_written = False
        self.modelled_cycles = None  # set by each run: cycles of the modelled timeline
        self.last_run_stats = None  # the task runtime's statistics of the latest call
        self.swimlane_path = None  # where the latest call wrote its swimlane, if it did
        self.dfx_dir = None  # <output_dir>/dfx_outputs when the latest call wrote DFX files
        self.dynamic_dims = self._dimension_params()
        self._write_requested_artifacts()

    @property
    def output_dir(self) -> str:
        """The build directory, with every artifact written (the first access writes them)."""
        if not self._artifacts_written:
            self.write_artifacts()
        return self._output_dir

    def __fspath__(self) -> str:
        return self.output_dir

    def _dimension_params(self) -> dict:
        """{index of a trailing INDEX parameter: [(tensor parameter, axis), ...]} for every
        pl.dynamic dimension of the entry: its value is read from those arguments' shapes."""
        entry = self._compiled.lowered.find(self.name)
        if entry is None:
            return {}
        params = list(entry.params)
        dims = {}
        for j in range(len(params) - 1, -1, -1):
            p = params[j]
            if not isinstance(p.type, _core.ir.ScalarType):
                break
            where = [(i, axis) for i, q in enumerate(params[:j]) if isinstance(q.type, _core.ir.TensorType)
                     for axis, d in enumerate(q.type.shape) if isinstance(d, _core.ir.Var) and d.name == p.name]
            if not where:
                break
            dims[j] = where
        return dims

    @property
    def program(self):
        """The IR after the whole pass pipeline."""
        return self._compiled.lowered

    @property
    def host_program(self):
        """A copy of the instruction streams the engines execute: editing it (to hand-test
        the race checker, say) leaves this compiled program's own streams as they were."""
        return _core.HostProgram(self._compiled.host)

    def pto(self) -> dict:
        """The `.pto` text of each kernel, by kernel name."""
        return {k.name: k.pto_text for k in self._compiled.host.kernels}

    def native_sources(self) -> dict:
        """The C++ the native engine compiles for each kernel ("" where a kernel runs on the
        reference library), by kernel name."""
        return dict(_core.native_kernel_sources(self._compiled.host, self.platform))

    def pass_results(self) -> list:
        """(NN_after_<Pass>, program) for each pass that changed the program; the pipeline is
        run again to record them when this program was compiled without dump_passes."""
        results = list(self._compiled.pass_results)
        if not results and self._source is not None:
            again = _core.compile(self._source, self.platform, True, self.config.verify != "off")
            results = list(again.pass_results)
        return results

    def kernel_pass_results(self) -> list:
        """(NN_after_<KernelPass>, kernel name, .pto text) for each kernel a kernel pass
        (InsertSync) changed; recorded again like pass_results() when compiled without them."""
        results = list(self._compiled.kernel_pass_results)
        if not results and self._source is not None:
            again = _core.compile(self._source, self.platform, True, self.config.verify != "off")
            results = list(again.kernel_pass_results)
        return results

    def memory_map(self) -> list:
        """Per kernel, where each tile lives and during which instructions it is used."""
        kernels = []
        for k in self._compiled.host.kernels:
            used: dict[int, list[int]] = {}
            for pc, instr in enumerate(k.code):
                for op in list(instr.outs) + list(instr.ins):
                    if op.kind.name == "Tile":
                        used.setdefault(op.index, []).append(pc)
            tiles = []
            for i, t in enumerate(k.tiles):
                pcs = used.get(i, [0])
                nbytes = t.rows * t.cols * _core.ir.dtype_bytes(getattr(_core.ir.DataType, t.dtype))
                tiles.append(
                    {
                        "name": t.name,
                        "memory": t.memory,
                        "addr": t.addr,
                        "bytes": nbytes,
                        "first": min(pcs),
                        "last": max(pcs),
                    }
                )
            kernels.append({"name": k.name, "instructions": len(k.code), "tiles": tiles})
        return kernels

    def _write_requested_artifacts(self):
        """What RunConfig(dump_passes=, save_kernels=) asks for, at compile time."""
        cfg = self.config
        if cfg.dump_passes or cfg.save_kernels:
            artifacts.write_memory_map(self._output_dir, self.memory_map())
        if cfg.dump_passes:
            artifacts.write_pass_dumps(self._output_dir, self._compiled.pass_results)
            artifacts.write_kernel_pass_dumps(self._output_dir, self._compiled.kernel_pass_results)
        if cfg.save_kernels:
            artifacts.write_kernels(cfg.save_kernels_dir or os.path.join(self._output_dir, "kernels"), self.pto())

    def write_artifacts(self, passes: bool = True) -> str:
        """Writes the build directory (see pypto.runtime.artifacts; `passes`: with
        passes_dump/); returns its path."""
        d = self._output_dir
        artifacts.write_memory_map(d, self.memory_map())
        if passes:
            artifacts.write_pass_dumps(d, self.pass_results())
            artifacts.write_kernel_pass_dumps(d, self.kernel_pass_results())
        artifacts.write_kernels(os.path.join(d, "kernels"), self.pto(),
                                _core.native_kernel_sources(self._compiled.host, self.platform))
        artifacts.write_report(d)
        self._write_manifest(d)
        self._artifacts_written = True
        return d

    def __call__(self, *args, config: RunConfig | None = None):
        return self._run(args, config, None)

    def _run(self, args, config, worker):
        """Runs on `args` in place: on a fresh task pool, or on `worker` (a ChipWorker's
        (core worker, handle))."""
        try:
            bound, cfg = self._bind(args, config)
        except (TypeError, ValueError) as e:
            raise _at_call_site(e) from None
        if cfg.codegen_only:
            return None
        host = self._compiled.host
        # enable_chip_swimlane writes the task swimlane (to trace_path if given); otherwise
        # trace_path records the modelled timeline (on the sim engine's cycle model).
        swimlane, trace = "", cfg.trace_path
        out_dir = cfg.output_dir or self._output_dir
        if cfg.enable_chip_swimlane:
            swimlane = cfg.trace_path or os.path.join(out_dir, "swimlane.json")
            os.makedirs(os.path.dirname(os.path.abspath(swimlane)), exist_ok=True)
            trace = None
        dfx = dict(dfx_dir=cfg.dfx_dir(out_dir), dump_args=cfg.enable_dump_args, dep_gen=bool(cfg.enable_dep_gen),
                   pmu=bool(cfg.enable_pmu), scope_stats=bool(cfg.enable_scope_stats))
        if worker is None:
            self.last_run_stats = _core.run_host_program(
                host, bound, cfg.platform, cfg.engine, cfg.num_workers, trace, cfg.ring_size, swimlane, **dfx
            )
        else:
            core_worker, handle = worker
            self.last_run_stats = core_worker.run(handle, bound, trace, cfg.ring_size, swimlane, **dfx)
        self.dfx_dir = dfx["dfx_dir"] if cfg.any_dfx_enabled() else None
        self.modelled_cycles = self.last_run_stats["modelled_cycles"]
        self.swimlane_path = swimlane or None
        rets = [args[i] if i < len(args) else None for i in host.returns]
        if not rets:
            return None
        return rets[0] if len(rets) == 1 else tuple(rets)

    def __repr__(self):
        return f"<CompiledProgram {self.name}({', '.join(self.param_names)}) for {self.platform}>"

    def _dimension_values(self, args, params, j, given=None):
        """The extent of dynamic dimension parameter j, read from the tensor arguments; every
        dimension of that name (and an explicitly passed value) must agree."""
        name = params[j].name
        seen = []
        for i, axis in self.dynamic_dims.get(j, []):
            if i < len(args) and is_tensor(args[i]):
                shape, _ = _spec_of(args[i], params[i].name)
                if axis < len(shape):
                    seen.append((params[i].name, axis, int(shape[axis])))
        if given is not None:
            seen.append((name, None, int(given)))
        if not seen:
            raise TypeError(
                f"{self.name}(): no tensor argument gives the dynamic dimension '{name}'; "
                f"fix: pass '{name}' explicitly"
            )
        first = seen[0]
        for other in seen[1:]:
            if other[2] != first[2]:
                where = lambda s: f"'{s[0]}'" + ("" if s[1] is None else f" (axis {s[1]})")
                raise ValueError(
                    f"{self.name}(): dynamic dimension '{name}' is {first[2]} in {where(first)} but {other[2]} in "
                    f"{where(other)}; fix: pass arrays whose '{name}' dimensions agree"
                )
        return first[2]

    def _bind(self, args, config):
        """The runtime's view of `args`, checked against the compiled parameters."""
        cfg = config or self.config
        host = self._compiled.host
        params = list(host.params)
        if len(args) < len(params) and len(params) - len(args) <= len(self.dynamic_dims):
            args = tuple(args) + tuple(self._dimension_values(args, params, j)
                                       for j in range(len(args), len(params)))
        if len(args) != len(params):
            names = ", ".join(self.param_names)
            raise TypeError(
                f"{self.name}() takes {len(params)} arguments ({names}), got {len(args)}; "
                "fix: pass one array or number per parameter"
            )
        for j, where in self.dynamic_dims.items():  # an explicitly passed extent must agree too
            self._dimension_values(args, params, j, given=args[j])
        bound = []
        for arg, p in zip(args, params):
            if p.is_tensor:
                if not is_tensor(arg):
                    raise TypeError(
                        f"{self.name}(): argument '{p.name}' must be a numpy array or torch "
                        f"tensor, got {type(arg).__name__}; fix: pass a numpy array or torch tensor "
                        "of the compiled shape and dtype"
                    )
                shape, dtype = _spec_of(arg, p.name)
                want = tuple(p.shape)
                fits = len(shape) == len(want) and all(w < 0 or s == w for s, w in zip(shape, want))
                if p.dtype in ("FP8E4M3FN", "FP8E5M2") and fp8_bits(arg, p.dtype) is not None:
                    bits = fp8_bits(arg, p.dtype)  # the FP8 values as their bytes (uint8, or ml_dtypes float8)
                    if tuple(bits.shape) != tuple(int(w) for w in p.shape) and not any(w < 0 for w in p.shape):
                        raise TypeError(
                            f"{self.name}(): argument '{p.name}' has shape {list(bits.shape)}, but the program "
                            f"was compiled for {list(p.shape)} {p.dtype}; fix: pass a matching array or recompile"
                        )
                    ptr, _, shp, strides, nm = bind_tensor(bits, p.name, p.dir in ("Out", "InOut"))
                    bound.append((ptr, p.dtype, shp, strides, nm))
                    continue
                if p.dtype in ("FP8E4M3FN", "FP8E5M2", "FP8E8M0", "HF8", "FP4", "HF4", "INT4", "UINT4"):
                    raise TypeError(
                        f"{self.name}(): parameter '{p.name}' is a {p.dtype} tensor; no host array carries "
                        f"{p.dtype} here (the narrow dtypes are accepted in annotations only); fix: declare the "
                        "parameter FP16, BF16 or FP32 and pass the data converted to that dtype"
                    )
                if not fits or dtype != p.dtype:
                    raise TypeError(
                        f"{self.name}(): argument '{p.name}' has shape {list(shape)} and dtype "
                        f"{dtype}, but the program was compiled for {list(want)} "
                        f"{p.dtype}; fix: pass a matching array or recompile"
                    )
                writable = p.dir in ("Out", "InOut")
                bound.append(bind_tensor(arg, p.name, writable))
            else:
                if is_tensor(arg):
                    raise TypeError(
                        f"{self.name}(): argument '{p.name}' is a scalar parameter, got an array; "
                        "fix: pass an int or a float"
                    )
                bound.append(arg)
        return bound, cfg


def _check_roundtrip(program, after: str):
    """Verification level "roundtrip": the printed program parses back to an equal one."""
    from pypto.language import parse

    text = _core.ir.print_program(program)
    try:
        again = parse(text, filename=f"<after {after}>")
    except Exception as e:
        raise _core.PyptoError(
            f"internal compiler error: the program after {after} does not parse back: {e}"
        ) from e
    if not _core.ir.structural_equal(program, again):
        raise _core.PyptoError(
            f"internal compiler error: the program after {after} prints to text that parses to a "
            "different program; please report it with the program"
        )


def _compile(program, config: RunConfig) -> CompiledProgram:
    roundtrip = config.verify == "roundtrip"
    if roundtrip:
        _check_roundtrip(program, "parsing")
    compiled = _core.compile(
        program, config.platform, config.dump_passes or roundtrip, config.verify != "off"
    )
    if roundtrip:
        for name, after in compiled.pass_results:
            _check_roundtrip(after, name.split("_after_", 1)[1])
    result = CompiledProgram._wrap(compiled, config, program)
    if config.compile_profiling:
        artifacts.write_pipeline_profile(result._output_dir, list(compiled.pass_times))
    return result


# Class-form programs are cached by structure: an equal program compiles once.
_program_cache: dict = {}


def fp8_bits(arg, dtype):
    """An FP8E4M3FN / FP8E5M2 argument as a uint8 numpy view of its bytes: a uint8 array holds
    the bit patterns, an ml_dtypes float8_e4m3fn / float8_e5m2 array the values; else None."""
    if not isinstance(arg, np.ndarray):
        return None
    if arg.dtype == np.uint8:
        return arg
    if arg.dtype.name == {"FP8E4M3FN": "float8_e4m3fn", "FP8E5M2": "float8_e5m2"}[dtype]:
        return arg.view(np.uint8)
    return None


def _compile_cached(program, config: RunConfig) -> CompiledProgram:
    """The CompiledProgram of a class-form program for `config` (compiled once per structure)."""
    key = (
        _core.ir.structural_hash(program),
        config.platform,
        config.dump_passes,
        config.save_kernels,
        config.save_kernels_dir,
        config.output_dir,
        config.verify,
        config.compile_profiling,
    )
    entries = _program_cache.setdefault(key, [])
    compiled = next((c for p, c in entries if _core.ir.structural_equal(p, program)), None)
    if compiled is None:
        compiled = _compile(program, config)
        entries.append((program, compiled))
    return compiled


def _param_names(jitfn, n):
    """The entry's parameter names (for messages), padded with positions."""
    try:
        names = list(inspect.signature(jitfn.func).parameters)
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


def _arg_specs(jitfn, args):
    specs = []
    names = _param_names(jitfn, len(args))
    if len(names) != len(args):
        fn = getattr(jitfn, "__name__", "jit function")
        raise TypeError(
            f"{fn}() takes {len(names)} arguments ({', '.join(names)}), got {len(args)}; "
            "fix: pass one array or number per parameter"
        )
    from pypto.language.types import RUNTIME
    for i, a in enumerate(args):
        name = names[i]
        if a is RUNTIME:  # f.compile(x, pl.RUNTIME): a run-time scalar of the annotated dtype
            dtype = jitfn.scalar_dtype(i) if hasattr(jitfn, "scalar_dtype") else None
            specs.append(("scalar", dtype or _core.DataType.INDEX, None))
            continue
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
    return (
        tuple((s[0], s[1], str(s[2])) if s[0] == "tensor" else (s[0], str(s[1])) for s in specs),
        config.platform,
        config.dump_passes,
        config.save_kernels,
        config.verify,
        config.save_kernels_dir,
        config.output_dir,
        config.compile_profiling,
    )


def jit_compile(jitfn, args, config: RunConfig | None = None) -> CompiledProgram:
    """Specialises `jitfn` on the shapes/dtypes of `args` and compiles it (cached)."""
    config = config or RunConfig()
    if args or not _param_names(jitfn, 0):
        specs = _arg_specs(jitfn, args)
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
        compiled = cache[key] = _compile(jitfn.parse(specs), config)
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


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _call_site() -> str:
    """`file:line` of the first caller outside pypto: where the user called the program."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "<unknown>"


def _at_call_site(error: Exception) -> Exception:
    """The same error with the user's call site in front of its message."""
    return type(error)(f"{_call_site()}: {error}")


def jit_call(jitfn, args, config: RunConfig | None = None):
    """Runs `jitfn` on `args`, compiling it on first use for these shapes and dtypes."""
    config = config or RunConfig()
    try:
        compiled = jit_compile(jitfn, args, config)
    except (TypeError, ValueError) as e:
        raise _at_call_site(e) from None
    return compiled(*args, config=config)


def jit_lower(jitfn, args, config: RunConfig | None = None):
    """The IR of `jitfn` after the pass pipeline, for these argument shapes and dtypes."""
    config = config or RunConfig()
    try:
        return jit_compile(jitfn, args, config).program
    except (TypeError, ValueError) as e:
        raise _at_call_site(e) from None


from pypto.runtime.worker import (ChipWorker, DeviceTensor, RegisteredProgram, RegistrationHandle,  # noqa: E402
                                  Worker)
from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec  # noqa: E402
from pypto.runtime.runner import (BenchmarkStats, RunResult, TraceInvocation, TraceSpan, benchmark,  # noqa: E402
                                  compile_program, execute_compiled, run)

"""The compiled program and the compile step of the jit package: `CompiledProgram` (what
`pypto.ir.compile`, `pypto.runtime.run` and a jit function's `.compile()` return: callable,
os.PathLike to its build directory), `compile_program` (the pass pipeline on an ir.Program,
with the RunConfig's verification), `compile_cached` (a class-form program compiled once per
structure and compile-relevant options) and `check_roundtrip`.

PyPTO's part of CompiledProgram's API sits in `_PyptoCompiledProgramAPI` (a base of it):
`from_dir`, `backend_type`, `validate_ir`, `build_orch_args`, `build_call_config`,
`output_indices`, `has_return`, `orchestration_names`, and PyPTO's constructor form
`CompiledProgram(program, output_dir, *, backend_type=..., platform=...)`.

The build directory describes itself: `compiled_program.json` (entry, platform, verify
level) and `program.py` (the program before the passes, re-parseable), from which
`CompiledProgram.from_dir(output_dir)` compiles the same program again."""

from __future__ import annotations

import dataclasses
import json
import os
import sys

import numpy as np

from pypto import _core
from pypto.backend import BackendType
from pypto.jit import artifacts
from pypto.jit.config import RunConfig
from pypto.jit.tensors import bind_tensor, is_tensor, scalar_argument
from pypto.jit.tensors import tensor_spec as _spec_of
from pypto.language import parse

def _find_native_headers() -> None:
    """Points the native engine at the optimised library's headers: pypto/include in an
    installed wheel, else the source tree's include/ (development checkout)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for cand in (os.path.join(here, "include"), os.path.join(os.path.dirname(os.path.dirname(here)), "include")):
        if os.path.isfile(os.path.join(cand, "pypto", "isa", "optimized", "tile_ops.h")):
            _core.set_native_include_dir(cand)
            return


_find_native_headers()

MANIFEST = "compiled_program.json"
SOURCE = "program.py"


def _backend_of_platform(platform: str):
    for b in BackendType:
        if platform in (b.value, b.value[: -len("sim")]):
            return b
    return None


class _PyptoCompiledProgramAPI:
    """PyPTO's methods of CompiledProgram (a base of it)."""

    def __init__(self, program, output_dir=None, *, backend_type=None, platform=None, _param_infos=None,
                 _output_indices=None, _return_types=None, _sub_chip_names=None):
        """PyPTO's constructor form: compiles `program` (an ir.Program) for `backend_type` /
        `platform` with its build directory at `output_dir`. The underscored parameters are
        PyPTO's internal metadata; ours comes from the compiled program itself."""
        if not isinstance(program, _core.ir.Program):
            raise TypeError(f"CompiledProgram(program=...) takes an ir.Program, got {type(program).__name__}; "
                            "fix: use pypto.ir.compile(program) or CompiledProgram.from_dir(output_dir)")
        cfg = RunConfig(platform=platform, backend_type=backend_type, output_dir=output_dir)
        other = compile_program(program, cfg)
        self.__dict__.update(other.__dict__)

    @classmethod
    def _wrap(cls, compiled, config, source=None):
        self = cls.__new__(cls)
        self._setup(compiled, config, source)
        return self

    # ---- the self-describing build directory ----
    def _write_manifest(self, output_dir: str) -> None:
        if self._source is None:
            return
        os.makedirs(output_dir, exist_ok=True)
        with open(os.path.join(output_dir, SOURCE), "w") as f:
            f.write(_core.ir.print_program(self._source))
        with open(os.path.join(output_dir, MANIFEST), "w") as f:
            json.dump({"format": 1, "entry": self.name, "platform": self.platform, "verify": self.config.verify,
                       "param_names": self.param_names, "source": SOURCE}, f, indent=1)

    @classmethod
    def from_dir(cls, output_dir, *, platform=None, backend_type=None):
        """The compiled program whose build directory is `output_dir` (written by
        pypto.ir.compile or by reading `.output_dir`): its program.py is parsed and compiled
        again, for `platform` / `backend_type` if given, else the platform it was built for."""
        output_dir = os.fspath(output_dir)
        manifest_path = os.path.join(output_dir, MANIFEST)
        if not os.path.isfile(manifest_path):
            raise FileNotFoundError(
                f"CompiledProgram.from_dir({output_dir!r}): no {MANIFEST} in the directory; fix: pass the output_dir "
                "of a program compiled by pypto.ir.compile (it writes the manifest)"
            )
        with open(manifest_path) as f:
            manifest = json.load(f)
        source_path = os.path.join(output_dir, manifest.get("source", SOURCE))
        with open(source_path) as f:
            program = parse(f.read(), filename=source_path)
        if platform is None and backend_type is None:
            platform = manifest["platform"]
        cfg = RunConfig(platform=platform, backend_type=backend_type, output_dir=output_dir,
                        verify=manifest.get("verify", "basic"))
        compiled = compile_program(program, cfg)
        compiled._artifacts_written = manifest.get("platform") == compiled.platform
        return compiled

    # ---- descriptions ----
    @property
    def platform(self) -> str:
        """The platform it was compiled for ("a2a3sim" / "a5sim")."""
        return self.__dict__.get("_platform")

    @platform.setter
    def platform(self, value):
        self.__dict__["_platform"] = value

    @property
    def param_names(self) -> list:
        """The entry's parameter names, in order."""
        return self.__dict__.get("_param_names")

    @param_names.setter
    def param_names(self, value):
        self.__dict__["_param_names"] = value

    @property
    def backend_type(self):
        """The pypto.backend.BackendType of the platform it was compiled for."""
        return _backend_of_platform(self.platform)

    @property
    def output_indices(self) -> list:
        """Positions of the parameters the program writes (Out / InOut)."""
        return [i for i, p in enumerate(self._compiled.host.params) if p.is_tensor and p.dir in ("Out", "InOut")]

    @property
    def has_return(self) -> bool:
        """True when a call returns values (the entry's returned tensors)."""
        return len(self._compiled.host.returns) > 0

    @property
    def orchestration_names(self) -> list:
        """The names of the program's Orchestration functions (the entry)."""
        return [f.name for f in self._compiled.lowered.functions.values()
                if f.func_type == _core.ir.FunctionType.Orchestration]

    # ---- calling ----
    def build_orch_args(self, *args, worker=None):
        """The runtime's view of `args` for one call (checked against the parameters, dynamic
        dimensions filled in): what `__call__` hands the task runtime. `worker` (a
        ChipWorker) is accepted: the view is the same on every worker."""
        bound, _ = self._bind(args, None)
        return bound

    def build_call_config(self, config=None, *, aicpu_thread_num=None, dfx_dir=None):
        """The RunConfig of a call: `config` (default: the compile's), with `dfx_dir` as the
        directory of the call's diagnostics (the swimlane of enable_chip_swimlane).
        `aicpu_thread_num` (PyPTO's scheduler threads on the device's AI CPU) is checked and
        accepted: our task runtime schedules on the host (RunConfig.num_workers sizes it)."""
        cfg = config or self.config
        if aicpu_thread_num is not None and (not isinstance(aicpu_thread_num, int) or aicpu_thread_num < 1):
            raise ValueError(f"build_call_config(aicpu_thread_num={aicpu_thread_num!r}): must be an int >= 1")
        if dfx_dir is not None:
            cfg = dataclasses.replace(cfg, output_dir=os.fspath(dfx_dir))
        return cfg

    def validate_ir(self, tensors, expected, *, rtol: float = 0.05, atol: float = 0.05) -> bool:
        """Runs the program on copies of `tensors` (one per parameter, or a dict by
        parameter name) on the reference interpreter (the sim engine) and compares each
        output with `expected` (a dict by parameter name, or one array per output in
        output_indices order). Returns True; raises AssertionError naming the first output
        that differs beyond rtol/atol."""
        if isinstance(tensors, dict):
            missing = [n for n in self.param_names if n not in tensors]
            if missing:
                raise ValueError(f"validate_ir(tensors=...): no value for {missing}; fix: give every parameter")
            args = [tensors[n] for n in self.param_names]
        else:
            args = list(tensors)
        args = [(a.clone() if hasattr(a, "clone") else a.copy()) if is_tensor(a) else a for a in args]
        cfg = dataclasses.replace(self.config, engine="sim")
        self(*args, config=cfg)
        outs = self.output_indices
        if isinstance(expected, dict):
            pairs = [(n, expected[n]) for n in expected]
        else:
            expected = list(expected)
            if len(expected) != len(outs):
                raise ValueError(f"validate_ir(expected=...): {len(expected)} arrays for {len(outs)} outputs "
                                 f"({[self.param_names[i] for i in outs]}); fix: give one per output or a dict")
            pairs = [(self.param_names[i], e) for i, e in zip(outs, expected)]
        for name, want in pairs:
            got = _as_numpy(args[self.param_names.index(name)])
            want = _as_numpy(want)
            if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
                err = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("nan")
                raise AssertionError(
                    f"validate_ir: output '{name}' differs from the expected values (max |diff| {err:g}, "
                    f"rtol={rtol}, atol={atol}, shapes {list(got.shape)} vs {list(want.shape)})"
                )
        return True


def _as_numpy(x):
    """An array or torch tensor as a float64 numpy array."""
    if hasattr(x, "detach"):  # torch
        x = x.detach().cpu().float().numpy()
    return np.asarray(x, dtype=np.float64)


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

    def native_report(self) -> dict:
        """What the native engine makes of each kernel, by kernel name: {"native": compiled
        at all, "fast": tile instructions with a fast path, "reference": those that call the
        reference library from the compiled code}."""
        return {name: {"native": native, "fast": list(fast), "reference": list(ref)}
                for name, native, fast, ref in _core.native_kernel_report(self._compiled.host, self.platform)}

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
        """Writes the build directory (see pypto.jit.artifacts; `passes`: with
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
        options = cfg.options()  # the one options object that crosses into C++
        paths = options.run_paths(self._output_dir)  # (enable_chip_swimlane: the swimlane's; DFX files)
        if worker is None:
            self.last_run_stats = _core.run_prepared(self._prepared_run(host, options), bound, options, self._output_dir)
        else:
            core_worker, handle = worker
            self.last_run_stats = core_worker.run(handle, bound, options, self._output_dir)
        self.dfx_dir = paths["dfx_dir"] if options.any_dfx() else None
        self.modelled_cycles = self.last_run_stats["modelled_cycles"]
        self.swimlane_path = paths["swimlane_path"] or None
        rets = [args[i] if i < len(args) else None for i in host.returns]
        if not rets:
            return None
        return rets[0] if len(rets) == 1 else tuple(rets)

    def _prepared_run(self, host, options):
        """This program prepared for runs under `options` (its platform, engine and the
        kernel-compile environment: _core.prepared_run_key), made on first use and kept: later
        runs skip validation, footprint analysis and finding the native kernels, and take an idle
        worker pool of the process instead of starting one."""
        runs = self.__dict__.setdefault("_prepared_runs", {})
        key = _core.prepared_run_key(options)
        run = runs.get(key)
        if run is None:
            run = runs[key] = _core.prepare_run(host, options)
        return run

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
                if is_tensor(arg) and getattr(arg, "ndim", 0) != 0:
                    raise TypeError(
                        f"{self.name}(): argument '{p.name}' is a scalar parameter, got an array; "
                        "fix: pass an int or a float"
                    )
                # ints, numpy and torch scalars that fit the parameter's dtype (else the range)
                bound.append(scalar_argument(arg, p.dtype, self.name, p.name))
        return bound, cfg


from pypto._traceback import call_site as _call_site  # noqa: E402  (one rule: the first frame outside pypto)


def _at_call_site(error: Exception) -> Exception:
    """The same error with the user's call site in front of its message."""
    return type(error)(f"{_call_site()}: {error}")


def check_roundtrip(program, after: str):
    """Verification level "roundtrip": the printed program parses back to an equal one."""
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


def compile_program(program, config: RunConfig) -> CompiledProgram:
    roundtrip = config.verify == "roundtrip"
    if roundtrip:
        check_roundtrip(program, "parsing")
    compiled = _core.compile(
        program, config.platform, config.dump_passes or roundtrip, config.verify != "off"
    )
    if roundtrip:
        for name, after in compiled.pass_results:
            check_roundtrip(after, name.split("_after_", 1)[1])
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


def compile_cached(program, config: RunConfig) -> CompiledProgram:
    """The CompiledProgram of a class-form program for `config` (compiled once per structure)."""
    key = (_core.ir.structural_hash(program), config.compile_key())
    entries = _program_cache.setdefault(key, [])
    compiled = next((c for p, c in entries if _core.ir.structural_equal(p, program)), None)
    if compiled is None:
        compiled = compile_program(program, config)
        entries.append((program, compiled))
    return compiled

"""`pypto.runtime.runner`: compile-and-run entry points (PyPTO's module of the same name).

    result = run(Program, a, b, c)                       # runs in place, returns a RunResult
    result = run(Program, TensorSpec("a", ...), ..., golden=ref)   # makes the arguments, checks outputs
    compiled = compile_program(Program, "build/add")     # compile to a directory ...
    execute_compiled("build/add", [a, b, c])             # ... and run from it
    stats = benchmark(compiled, [a, b, c], rounds=20)    # timed runs on one ChipWorker

A RunResult also stands for the compiled program of the run (calling it runs again without
recompiling; its attributes, e.g. modelled_cycles and output_dir, are the compiled program's)."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto import _core
from pypto._traceback import api_boundary
from pypto.jit import compiled_of
from pypto.jit.compiled import SOURCE as _PROGRAM_FILE  # program.py, the program as parsed
from pypto.jit.config import RunConfig, backend_platform, check_strategy
from pypto.jit.tensors import is_torch_tensor
from pypto.language import parse
from pypto.runtime import golden_writer
from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec
from pypto.runtime.worker import ChipWorker

__all__ = ["BenchmarkStats", "RunConfig", "RunResult", "ScalarSpec", "TensorSpec", "TraceInvocation", "TraceSpan",
           "benchmark", "compile_program", "execute_compiled", "run"]


@dataclass
class RunResult:
    """The outcome of run(): `passed` (the run finished and every output matched the golden,
    when one was given), `test_name`, `error` (the mismatch or failure, else None),
    `execution_time` (host wall seconds of the run itself, compilation excluded) and
    `profile` (the run's statistics: tasks, modelled_cycles, ...)."""

    passed: bool
    test_name: str = ""
    error: str | None = None
    execution_time: float = 0.0
    profile: dict | None = None
    compiled: Any = field(default=None, repr=False)

    # The compiled program of the run, for callers that keep run()'s result to call again.
    def __call__(self, *args, config: RunConfig | None = None):
        return self.compiled(*args, config=config)

    def __getattr__(self, name):
        compiled = self.__dict__.get("compiled")
        if compiled is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(compiled, name)

    def __fspath__(self) -> str:
        return os.fspath(self.compiled)


def _compiled_of(program, config: RunConfig, args=()):
    return compiled_of(program, config, args)


def _make_args(items, golden_dir):
    """The run's arguments from arrays, numbers, TensorSpecs and ScalarSpecs; specs named in
    <golden_dir>/in are loaded from there (and saved there when made)."""
    args, names, made = [], [], {}
    for item in items:
        if isinstance(item, TensorSpec):
            t = golden_writer.load_golden(golden_dir, "in", item.name) if golden_dir and not item.is_output else None
            if t is not None:
                if item._is_torch():
                    import torch

                    t = torch.from_numpy(t).view(item.dtype) if item.dtype == torch.bfloat16 else torch.from_numpy(t)
            else:
                t = item.create_tensor()
                if not item.is_output:
                    made[item.name] = t
            args.append(t)
            names.append(item.name)
        elif isinstance(item, ScalarSpec):
            args.append(item.arg())
            names.append(item.name)
        else:
            args.append(item)
            names.append(None)
    if golden_dir and made:
        golden_writer.write_golden(golden_dir, "in", made)
    return args, names


def _copy(x):
    return x.clone() if is_torch_tensor(x) else np.array(x, copy=True) if isinstance(x, np.ndarray) else x


def _as_float64(x):
    if is_torch_tensor(x):
        return x.detach().cpu().float().numpy().astype(np.float64)
    return np.asarray(x).astype(np.float64)


def _compare(name, got, want, rtol, atol):
    """None when `got` matches `want` (np.allclose), else a message naming the worst element."""
    g, w = _as_float64(got), _as_float64(want)
    if g.shape != w.shape:
        return f"output '{name}': shape {list(g.shape)}, golden {list(w.shape)}"
    close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    diff = np.where(close, 0, np.abs(g - w))
    worst = np.unravel_index(int(np.nanargmax(diff)) if np.isfinite(diff).any() else 0, g.shape)
    return (f"output '{name}': {int((~close).sum())} of {g.size} elements differ beyond rtol={rtol}, atol={atol}; "
            f"worst at {list(map(int, worst))}: got {g[worst]}, golden {w[worst]}")


@api_boundary
def run(program, *tensors, config: RunConfig | None = None, golden=None, test_name: str | None = None) -> RunResult:
    """Compiles `program` (a @pl.program class once per structure, a @pl.jit function per
    argument shapes, or a compiled program) and runs it on `tensors` in place.

    `tensors`: arrays / torch tensors / numbers, or TensorSpec / ScalarSpec (run() makes the
    arrays). `golden`: a function of {name: copy of each argument before the run} that
    returns (or writes into that dict) the expected outputs by name; each output (a
    TensorSpec with is_output=True, else each Out/InOut parameter) is compared with
    rtol/atol of the config, and `passed`/`error` report the result (a mismatch does not
    raise). With RunConfig(golden_data_dir=...) inputs and expected outputs are kept there
    (pypto.runtime.golden_writer) and reused by later runs. codegen_only=True compiles and
    skips the run. Compile errors and run errors raise as they do for a compiled call."""
    config = config or RunConfig()
    args, spec_names = _make_args(tensors, config.golden_data_dir if golden is not None else None)
    compiled = _compiled_of(program, config, args)
    name = test_name or compiled.name
    if config.codegen_only:
        return RunResult(True, name, None, 0.0, None, compiled)
    params = list(compiled._compiled.host.params)
    names = [n or (params[i].name if i < len(params) else f"arg{i}") for i, n in enumerate(spec_names)]
    before = {n: _copy(a) for n, a in zip(names, args)} if golden is not None else None
    t0 = time.perf_counter()
    compiled(*args, config=config)
    elapsed = time.perf_counter() - t0
    profile = dict(compiled.last_run_stats or {})
    if golden is None:
        return RunResult(True, name, None, elapsed, profile, compiled)
    outputs = [n for n, item in zip(names, tensors) if isinstance(item, TensorSpec) and item.is_output]
    if not any(isinstance(item, TensorSpec) for item in tensors):
        outputs = [p.name for p in params if p.is_tensor and p.dir in ("Out", "InOut")]
    got = dict(zip(names, args))
    expected = {}
    missing = [o for o in outputs if config.golden_data_dir is None
               or golden_writer.load_golden(config.golden_data_dir, "out", o) is None]
    if missing:
        returned = golden(before)
        table = returned if isinstance(returned, dict) else before
        for o in missing:
            if o not in table:
                raise KeyError(f"run(golden=...): the golden function gave no '{o}'; fix: return (or write into the "
                               f"dict it gets) every output by name: {', '.join(outputs)}")
            expected[o] = table[o]
        if config.golden_data_dir:
            golden_writer.write_golden(config.golden_data_dir, "out", expected)
    for o in outputs:
        if o not in expected:
            expected[o] = golden_writer.load_golden(config.golden_data_dir, "out", o)
    errors = [e for e in (_compare(o, got[o], expected[o], config.rtol, config.atol) for o in outputs) if e]
    return RunResult(not errors, name, "; ".join(errors) or None, elapsed, profile, compiled)


# -- compile to a directory, run from it ----------------------------------------------------

_CONFIG_FILE = "kernel_config.json"
_by_dir: dict = {}                # abspath(work_dir) -> (mtime of program.py, CompiledProgram)


def compile_program(program, work_dir, *, strategy=None, backend_type=None, dump_passes=False,
                    dump_ptoas_passes=False, diagnostic_phase=None, disabled_diagnostics=None, profiling=False,
                    analyze_auto_scopes_for_deps=False, memory_planner=None, enable_pypto_l0c_double_buffer=None,
                    platform=None):
    """Compiles `program` (a @pl.program class or a fully annotated @pl.jit function) into
    `work_dir`: the build directory (passes_dump/ with dump_passes, kernels/, memory_map.json,
    report/pipeline_profile.* with profiling), plus program.py (the program, re-parseable) and
    kernel_config.json (platform, entry) from which execute_compiled runs it. Returns the
    CompiledProgram. enable_pypto_l0c_double_buffer, diagnostic_phase and
    disabled_diagnostics are accepted hints (docs/runtime.md)."""
    check_strategy(strategy, "compile_program")
    platform = backend_platform(backend_type, platform, "compile_program", default_platform=None) or "a2a3sim"
    config = RunConfig(platform=platform, output_dir=os.fspath(work_dir), dump_passes=bool(dump_passes),
                       compile_profiling=bool(profiling), diagnostic_phase=diagnostic_phase,
                       disabled_diagnostics=disabled_diagnostics, memory_planner=memory_planner,
                       analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps,
                       dump_ptoas_passes=bool(dump_ptoas_passes))
    compiled = compiled_of(program, config, cached=False, kinds=("program", "jit"), where="compile_program(program=...)")
    d = compiled.write_artifacts(passes=bool(dump_passes))
    path = os.path.join(d, _PROGRAM_FILE)
    if compiled._source is None:  # else write_artifacts wrote it beside compiled_program.json
        with open(path, "w") as f:
            f.write(_core.ir.print_program(compiled.program))
    with open(os.path.join(d, _CONFIG_FILE), "w") as f:
        json.dump({"platform": platform, "entry": compiled.name, "params": compiled.param_names}, f, indent=1)
    _by_dir[os.path.abspath(d)] = (os.path.getmtime(path), compiled)
    return compiled


class _DfxOpts:
    """The DFX flags of execute_compiled(dfx=...): RunConfig's enable_* fields."""

    def __init__(self, enable_chip_swimlane=0, enable_dump_args=0, enable_pmu=0, enable_dep_gen=False,
                 enable_scope_stats=False):
        self.enable_chip_swimlane, self.enable_dump_args, self.enable_pmu = enable_chip_swimlane, enable_dump_args, enable_pmu
        self.enable_dep_gen, self.enable_scope_stats = enable_dep_gen, enable_scope_stats


def _load_compiled(work_dir, platform):
    d = os.path.abspath(os.fspath(work_dir))
    path = os.path.join(d, _PROGRAM_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"execute_compiled: '{d}' holds no {_PROGRAM_FILE}; fix: compile into it first with "
                                "pypto.runtime.compile_program(program, work_dir)")
    with open(os.path.join(d, _CONFIG_FILE)) as f:
        meta = json.load(f)
    if platform not in (None, meta["platform"]):
        raise ValueError(f"execute_compiled: '{d}' was compiled for platform '{meta['platform']}', not '{platform}'; "
                         f"fix: pass platform='{meta['platform']}' or compile for '{platform}'")
    known = _by_dir.get(d)
    if known is not None and known[0] == os.path.getmtime(path):
        return known[1]
    with open(path) as f:
        program = parse(f.read(), filename=path)
    compiled = compiled_of(program, RunConfig(platform=meta["platform"], output_dir=d))
    _by_dir[d] = (os.path.getmtime(path), compiled)
    return compiled


def execute_compiled(work_dir, args, *, platform=None, device_id=0, dfx=None, level=2, aicpu_thread_num=None,
                     analyze_auto_scopes_for_deps=False):
    """Runs the program compile_program wrote to `work_dir` on `args` (a list, in place) and
    returns the CompiledProgram. In this process the compiled program is reused; elsewhere
    program.py is parsed and compiled again (the same program). `dfx`: a _DfxOpts (or any
    object with RunConfig's enable_* attributes), its files under <work_dir>/dfx_outputs."""
    compiled = _load_compiled(work_dir, platform)
    dfx = dfx or _DfxOpts()
    config = RunConfig(platform=compiled.platform, device_id=device_id, output_dir=os.path.abspath(os.fspath(work_dir)),
                       aicpu_thread_num=aicpu_thread_num, analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps,
                       **{k: getattr(dfx, k) for k in ("enable_chip_swimlane", "enable_dump_args", "enable_pmu",
                                                       "enable_dep_gen", "enable_scope_stats") if hasattr(dfx, k)})
    compiled(*list(args), config=config)
    return compiled


# -- benchmark ------------------------------------------------------------------------------

@dataclass
class TraceSpan:
    """One timed span of a benchmark invocation: `name`, start `ts` and duration `dur` in
    microseconds, `depth` in the invocation's tree (0 = the call), `attrs` (the run's
    statistics on the device span). pid 0 / tid 0 is the host, tid 1 the device."""

    pid: int
    tid: int
    inv: int
    hid: int
    depth: int
    name: str
    ts: float
    dur: float
    attrs: dict = field(default_factory=dict)

    def is_device(self) -> bool:
        return self.tid == 1

    def dur_us(self) -> float:
        return self.dur


@dataclass
class TraceInvocation:
    """One measured round of benchmark(): the host span of the call (root) and the device
    span of the run (modelled on sim, measured on native)."""

    pid: int
    inv: int
    hid: int
    spans: list

    def root(self) -> TraceSpan:
        return next(s for s in self.spans if s.depth == 0)

    def by_name(self) -> dict:
        out: dict = {}
        for s in self.spans:
            out.setdefault(s.name, []).append(s)
        return out

    def task(self) -> TraceSpan:
        return next(s for s in self.spans if s.is_device())

    def task_name(self) -> str:
        return self.task().name

    def device_wall_us(self) -> float:
        return self.task().dur

    def host_wall_us(self) -> float:
        return self.root().dur

    def effective_us(self) -> float:
        return self.device_wall_us() or self.host_wall_us()

    def format_tree(self, *, us=True, value_fn=None) -> str:
        k, unit = (1.0, "us") if us else (1e-3, "ms")
        value = value_fn or (lambda span: f"{span.dur * k:.3f} {unit}")
        return "\n".join("  " * s.depth + f"{s.name}: {value(s)}" for s in sorted(self.spans, key=lambda s: s.depth))

@dataclass
class BenchmarkStats:
    """Timings of benchmark(): per measured round, `host_wall_us` (the host wall time of the
    call, measured) and `device_wall_us` (the chip's time: on the sim engine the modelled
    cycles of the run / the chip clock; the native engine has no device clock, so there it is
    the measured wall time of the run itself, the same as host_wall_us)."""

    device_wall_us: list
    host_wall_us: list
    rounds: int
    warmup: int
    invocations: list = field(default_factory=list)   # per round: a TraceInvocation
    rounds_dispatches: list = field(default_factory=list)  # per round: dispatches (one program run each)
    fallback_flattened: bool = False
    unstable_dispatch_slots: list = field(default_factory=list)
    modelled: bool = False   # device times come from the cycle model

    def samples(self, metric: str = "device") -> list:
        return list(self.device_wall_us if metric == "device" else self.host_wall_us)

    def _stat(self, fn, metric="device"):
        s = self.samples(metric)
        return fn(s) if s else 0.0

    def device_us_min(self):
        return self._stat(min)

    def device_us_median(self):
        return self._stat(statistics.median)

    def device_us_mean(self):
        return self._stat(statistics.fmean)

    def device_us_max(self):
        return self._stat(max)

    def device_us_stdev(self):
        return self._stat(lambda s: statistics.stdev(s) if len(s) > 1 else 0.0)

    device_wall_us_min = device_us_min
    device_wall_us_median = device_us_median
    device_wall_us_mean = device_us_mean
    device_wall_us_max = device_us_max
    device_wall_us_stdev = device_us_stdev

    def all_zero_device(self) -> bool:
        return all(v == 0 for v in self.device_wall_us)

    def per_round(self, metric: str = "device") -> list:
        return self.samples(metric)

    def per_dispatch(self, metric: str = "device") -> list:
        """One dispatch (one program run) per round on a chip: the rounds' samples."""
        return [[v] for v in self.samples(metric)]

    def per_rank(self, metric: str = "device") -> dict:
        """One chip (rank 0): {0: the rounds' samples}."""
        return {0: self.samples(metric)}

    def dispatch_groups(self) -> list:
        return [list(range(self.rounds))]

    def dispatch_tasks(self) -> list:
        """Tasks of each round's dispatch."""
        return [inv.task().attrs.get("tasks", 0) for inv in self.invocations]

    def mean_invocation(self, *, pid=None, slot=None) -> dict:
        """The mean of each numeric run statistic over the rounds, with the mean times."""
        stats = [inv.task().attrs for inv in self.invocations]
        keys = {k for st in stats for k, v in st.items() if isinstance(v, (int, float))}
        n = max(len(stats), 1)
        out = {k: sum(st.get(k, 0) for st in stats) / n for k in sorted(keys)}
        out["device_wall_us"], out["host_wall_us"] = self.device_us_mean(), self._stat(statistics.fmean, "host")
        return out

    def format_tree(self, launch=None, *, us=True) -> str:
        rounds = range(self.rounds) if launch is None else [launch]
        unit, k = ("us", 1.0) if us else ("ms", 1e-3)
        lines = []
        for r in rounds:
            tasks = self.invocations[r].task().attrs.get("tasks", 0) if r < len(self.invocations) else 0
            lines.append(f"round {r}: host {self.host_wall_us[r] * k:.3f} {unit}, device {self.device_wall_us[r] * k:.3f} "
                         f"{unit}{' (modelled)' if self.modelled else ''}")
            lines.append(f"  run: {tasks} tasks")
        return "\n".join(lines)

    def print_tree(self, launch=None, *, us=True, file=None) -> None:
        print(self.format_tree(launch, us=us), file=file or sys.stdout)

    def format_mean_tree(self, *, us=True, spread="stdev", pid=None, slot=None) -> str:
        unit, k = ("us", 1.0) if us else ("ms", 1e-3)
        fn = statistics.stdev if spread == "stdev" else (lambda s: max(s) - min(s))
        def line(label, metric):
            s = [v * k for v in self.samples(metric)]
            sp = fn(s) if len(s) > 1 else 0.0
            return f"{label}: {statistics.fmean(s) if s else 0:.3f} {unit} ± {sp:.3f} ({spread}, {len(s)} rounds)"
        return "\n".join([line("host", "host"), line("device" + (" (modelled)" if self.modelled else ""), "device")])

    def print_mean_tree(self, *, us=True, spread="stdev", pid=None, slot=None, file=None) -> None:
        print(self.format_mean_tree(us=us, spread=spread), file=file or sys.stdout)


def benchmark(compiled, args, *, rounds=100, warmup=3, platform=None, device_id=None, config=None, persistent=False,
              reset_persistent_windows=None) -> BenchmarkStats:
    """Runs `compiled` on `args` `warmup` times unmeasured, then `rounds` times measured, on
    one ChipWorker (the program prepared once). See BenchmarkStats for what is timed."""
    if not isinstance(rounds, int) or rounds < 1 or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"benchmark(rounds={rounds!r}, warmup={warmup!r}): rounds must be an int >= 1, warmup >= 0")
    config = config or getattr(compiled, "config", None) or RunConfig()
    if platform is not None and platform != config.platform:
        import dataclasses

        config = dataclasses.replace(config, platform=platform)
    compiled = _compiled_of(compiled, config, args)
    clock = _core.chip_clock_ghz(compiled.platform)
    host, device, invocations = [], [], []
    modelled = config.engine == "sim"
    start = time.perf_counter()
    with ChipWorker(config=config) as worker:
        f = worker.register(compiled)
        for i in range(warmup + rounds):
            t0 = time.perf_counter()
            f(*args)
            us = (time.perf_counter() - t0) * 1e6
            if i < warmup:
                continue
            stats = dict(compiled.last_run_stats or {})
            host.append(us)
            cycles = stats.get("modelled_cycles", 0) or 0
            device.append(cycles / clock / 1e3 if modelled else us)
            r, ts = i - warmup, (t0 - start) * 1e6
            invocations.append(TraceInvocation(0, r, 0, [
                TraceSpan(0, 0, r, 0, 0, "call", ts, us, {}),
                TraceSpan(0, 1, r, 0, 1, compiled.name, ts, device[-1], stats)]))
    return BenchmarkStats(device, host, rounds, warmup, invocations, [1] * rounds, modelled=modelled)

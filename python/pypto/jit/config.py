"""RunConfig: how a program is compiled and run (PyPTO's fields plus ours), and the
checks of the compile options it shares with pypto.ir.compile and PassManager."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pypto import _core
from pypto.backend import BackendType, default_platform

# The defaults of RunConfig's fields: the C++ options struct's (include/pypto/runtime/run_config.h).
_DEFAULTS = _core.RunConfig()


def _default(name):
    return getattr(_DEFAULTS, name)


class OptimizationStrategy(Enum):
    """Accepted for compatibility; pypto runs its one default pipeline for every strategy
    (PyPTO's name: pypto.ir.pass_manager.OptimizationStrategy)."""

    Default = "default"

ENGINES = ("native", "sim")
VERIFY_LEVELS = ("off", "basic", "roundtrip")


def check_strategy(strategy, where: str):
    """`strategy=` must be None or a pypto.ir.pass_manager.OptimizationStrategy (or its name)."""
    if strategy is None or isinstance(strategy, OptimizationStrategy):
        return strategy
    if isinstance(strategy, str) and strategy in OptimizationStrategy.__members__:
        return OptimizationStrategy[strategy]
    raise ValueError(
        f"{where}(strategy={strategy!r}): unknown optimisation strategy; use one of "
        + ", ".join(f"OptimizationStrategy.{n}" for n in OptimizationStrategy.__members__)
        + " (from pypto.ir.pass_manager import OptimizationStrategy)"
    )


def backend_platform(backend_type, platform, where: str, default_platform: str = "a2a3sim") -> str:
    """The platform of `backend_type=` (a pypto.backend.BackendType or its name) together with
    `platform=`: the backend's simulated chip unless the platform names the same chip family."""
    if backend_type is None:
        return platform
    if isinstance(backend_type, str) and backend_type in BackendType.__members__:
        backend_type = BackendType[backend_type]
    if not isinstance(backend_type, BackendType):
        raise ValueError(
            f"{where}(backend_type={backend_type!r}): unknown backend; use one of "
            + ", ".join(f"BackendType.{n}" for n in BackendType.__members__)
            + " (from pypto.backend import BackendType)"
        )
    chip = backend_type.value  # the simulated platform, e.g. "a2a3sim"
    if platform in (None, default_platform) or platform in (chip, chip[: -len("sim")]):
        return chip if platform in (None, default_platform) else platform
    raise ValueError(
        f"{where}(platform={platform!r}, backend_type=BackendType.{backend_type.name}): the backend is the "
        f"'{chip}' chip but the platform names another; give one of them, or matching ones"
    )


def default_engine() -> str:
    """The engine of a RunConfig that names none: $PYPTO_ENGINE, else the C++ default ("native")."""
    return os.environ.get("PYPTO_ENGINE") or _default("engine")


@dataclass
class DistributedConfig:
    """PyPTO's distributed configuration: one rank per entry of `device_ids` (a rank process
    each, here). `num_sub_workers`: the driver threads that run host callbacks following each
    other with no dispatch between (0 or 1: one after the other on the driver's thread).
    `runtime` and `aicpu_thread_num` are accepted; the embedded transport ignores them.
    `timeout_s`: how long a signal wait may block before it fails (ours; the deadlock watchdog
    fires sooner when every rank waits)."""

    device_ids: list = field(default_factory=lambda: [0, 1])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"
    aicpu_thread_num: int = 0
    timeout_s: float = 60.0

    def __post_init__(self):
        ids = list(self.device_ids) if self.device_ids is not None else []
        if not ids or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in ids):
            raise ValueError(f"DistributedConfig(device_ids={self.device_ids!r}): device_ids must be a non-empty list "
                             "of device numbers; fix: write DistributedConfig(device_ids=[0, 1])")
        if len(set(ids)) != len(ids):
            raise ValueError(f"DistributedConfig(device_ids={ids!r}): a device is listed twice; fix: list each once")
        if len(ids) > 64:
            raise ValueError(f"DistributedConfig(device_ids=...): {len(ids)} ranks, more than the 64 the embedded "
                             "transport holds; fix: use at most 64 devices")
        self.device_ids = ids
        n = self.num_sub_workers
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"DistributedConfig(num_sub_workers={n!r}): the number of host-callback threads is an "
                             "int >= 0; fix: write DistributedConfig(device_ids=[0, 1], num_sub_workers=1)")

    @property
    def world_size(self) -> int:
        return len(self.device_ids)



@dataclass
class RunConfig:
    """Options of one compile-and-run.

    PyPTO's fields are accepted as they are; `engine`, `trace_path`, `num_workers`,
    `ring_size`, `output_dir` and `verify` are ours. `enable_chip_swimlane=1` writes the
    task swimlane (Chrome-trace JSON) to `trace_path`, else <output_dir>/swimlane.json;
    `ring_size` bounds the tasks in flight (submission blocks when the ring is full). `verify` is the check run between passes: "off",
    "basic" (structural invariants) or "roundtrip" (also print -> parse -> equal). Real-hardware platforms ("a2a3", "a5") fail with a clear
    message because no NPU is present; "a2a3sim" (default) and "a5sim" run here.

    PyPTO's DFX flags write under <output_dir>/dfx_outputs/: enable_dump_args (1: tensors
    tagged by pl.dump_tag / dumps=, 2: every tensor argument, before and after each task ->
    args_dump/), enable_dep_gen (deps.json), enable_pmu (pmu.csv, modelled pipe cycles on the
    sim engine), enable_scope_stats (scope_stats/scope_stats.jsonl); any of them forces
    save_kernels. compile_profiling writes report/pipeline_profile.{txt,json}. The sizing and
    planner fields are checked as PyPTO checks them (docs/runtime.md says what each does here).
    """

    platform: str | None = _default("platform")  # None: the backend of pypto.backend.set_backend_type (default a2a3sim)
    device_id: int = _default("device_id")
    rtol: float = _default("rtol")
    atol: float = _default("atol")
    dump_passes: bool = _default("dump_passes")
    save_kernels: bool = _default("save_kernels")
    save_kernels_dir: str | None = _default("save_kernels_dir")
    codegen_only: bool = _default("codegen_only")
    enable_chip_swimlane: int = _default("enable_chip_swimlane")
    strategy: Any = None
    backend_type: Any = None
    engine: str = field(default_factory=default_engine)
    trace_path: str | None = _default("trace_path")
    num_workers: int = _default("num_workers")
    ring_size: int = _default("ring_size")
    output_dir: str | None = _default("output_dir")
    verify: str = _default("verify")
    # PyPTO's DFX, profiling and runtime-sizing fields (docs/runtime.md, "RunConfig"):
    enable_dump_args: int = _default("enable_dump_args")
    enable_pmu: int = _default("enable_pmu")
    enable_dep_gen: bool = _default("enable_dep_gen")
    enable_scope_stats: bool = _default("enable_scope_stats")
    dfx_dir: str | None = _default("dfx_dir")  # ours: where the DFX files go (None: <output_dir>/dfx_outputs)
    compile_profiling: bool = _default("compile_profiling")
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    golden_data_dir: str | None = _default("golden_data_dir")
    aicpu_thread_num: int | None = _default("aicpu_thread_num")
    ring_task_window: Any = None
    ring_heap: Any = None
    ring_dep_pool: Any = None
    distributed_config: Any = None
    analyze_auto_scopes_for_deps: bool = _default("analyze_auto_scopes_for_deps")
    memory_planner: Any = None
    dump_ptoas_passes: bool = _default("dump_ptoas_passes")

    def __post_init__(self):
        try:
            self._check()
        except (TypeError, ValueError) as e:
            from pypto._traceback import call_site

            # the user's RunConfig(...) line in front (once: a nested replace() keeps one)
            if re.match(r"^\S+:\d+: ", str(e)):
                raise
            raise type(e)(f"{call_site()}: {e}") from None

    def _check(self):
        # PyPTO programs may name the chip family through backend_type instead of platform.
        self.strategy = check_strategy(self.strategy, "RunConfig")
        self.platform = backend_platform(self.backend_type, self.platform, "RunConfig", None) or default_platform()
        if not isinstance(self.platform, str) or not (
            self.platform in _core.simulated_platforms() or _core.is_hardware_platform(self.platform)
        ):
            raise ValueError(
                f"RunConfig(platform={self.platform!r}): unknown platform; fix: use one of "
                + ", ".join(repr(p) for p in _core.simulated_platforms())
            )
        if self.engine not in ENGINES:
            raise ValueError(
                f"RunConfig(engine={self.engine!r}): unknown engine; fix: use one of "
                + ", ".join(repr(e) for e in ENGINES)
            )
        if not isinstance(self.num_workers, int) or self.num_workers < 0:
            raise ValueError(
                f"RunConfig(num_workers={self.num_workers!r}): must be an int >= 0 "
                "(0 = one worker per host CPU); fix: pass e.g. num_workers=0"
            )
        if not isinstance(self.ring_size, int) or self.ring_size < 0:
            raise ValueError(
                f"RunConfig(ring_size={self.ring_size!r}): must be an int >= 0 (tasks in flight at "
                "most; 0 = unbounded); fix: pass e.g. ring_size=0"
            )
        self._check_dfx()
        if self.verify not in VERIFY_LEVELS:
            raise ValueError(
                f"RunConfig(verify={self.verify!r}): unknown verification level; fix: use one of "
                + ", ".join(repr(v) for v in VERIFY_LEVELS)
            )

        if self.any_dfx_enabled():
            self.save_kernels = True  # as in PyPTO: a DFX run keeps its build directory

    def options(self):
        """This config as the C++ options struct (pypto._core.RunConfig), the one object
        that crosses into C++: its fields are RunConfig's scalar fields."""
        o = _core.RunConfig()
        for name, _, _ in _FIELDS:
            setattr(o, name, _as_field(_default(name), getattr(self, name), name))
        return o

    def compile_key(self) -> str:
        """The fields the compile step reads (the C++ field table says which), printed: the
        jit cache key's part of the options. Changing any of them compiles again; the
        run-only fields (engine, trace_path, the DFX flags, ...) reuse the compiled program."""
        return self.options().compile_key()

    def any_dfx_enabled(self) -> bool:
        """True when a DFX output is asked for (chip swimlane, args dump, PMU, dependency
        graph, scope statistics); such a run keeps its kernels (save_kernels=True)."""
        return self.options().any_dfx()

    def enable_l2_swimlane(self, value=1) -> RunConfig:
        """Deprecated alias of enable_chip_swimlane (PyPTO's older name): sets it and returns
        this config."""
        import warnings

        warnings.warn("RunConfig.enable_l2_swimlane is deprecated; use enable_chip_swimlane", DeprecationWarning,
                      stacklevel=2)
        self.enable_chip_swimlane = 4 if value is True else int(value)
        if self.any_dfx_enabled():
            self.save_kernels = True
        return self

    def _check_dfx(self):
        def bad(name, value, want):
            raise ValueError(f"RunConfig({name}={value!r}): {want}")

        def level(name, allowed):
            v = getattr(self, name)
            if isinstance(v, bool):
                v = int(v)
            if not isinstance(v, int) or v not in allowed:
                bad(name, getattr(self, name), "must be one of " + ", ".join(map(str, allowed)))
            setattr(self, name, v)

        level("enable_dump_args", (0, 1, 2))
        if self.enable_chip_swimlane is True:
            self.enable_chip_swimlane = 4
        level("enable_chip_swimlane", (0, 1, 2, 3, 4))
        if isinstance(self.enable_pmu, bool):
            self.enable_pmu = 2 if self.enable_pmu else 0
        if not isinstance(self.enable_pmu, int) or self.enable_pmu < 0:
            bad("enable_pmu", self.enable_pmu, "must be 0 (off) or a PMU event type such as 2 (pipe use) or 4 (memory)")
        for name in ("enable_dep_gen", "enable_scope_stats", "compile_profiling", "analyze_auto_scopes_for_deps",
                     "dump_ptoas_passes"):
            if not isinstance(getattr(self, name), (bool, int)):
                bad(name, getattr(self, name), "must be True or False")
        if self.aicpu_thread_num is not None and (not isinstance(self.aicpu_thread_num, int)
                                                  or isinstance(self.aicpu_thread_num, bool)
                                                  or self.aicpu_thread_num < 1):
            bad("aicpu_thread_num", self.aicpu_thread_num, "must be None or an int >= 1")
        pow2 = lambda v: v > 0 and v & (v - 1) == 0
        self.ring_task_window = _ring_value(self.ring_task_window, "ring_task_window",
                                            lambda v: pow2(v) and v >= 4, "a power of two >= 4")
        self.ring_heap = _ring_value(self.ring_heap, "ring_heap", lambda v: pow2(v) and v >= 1024,
                                     "a power of two >= 1024 (bytes)")
        self.ring_dep_pool = _ring_value(self.ring_dep_pool, "ring_dep_pool", lambda v: 4 <= v <= 2**31 - 1,
                                         "an int in [4, 2147483647]")
        if self.ring_task_window is not None:  # our one task ring: the largest window given
            window = self.ring_task_window if isinstance(self.ring_task_window, int) else max(self.ring_task_window)
            if window:
                self.ring_size = window
        if self.memory_planner is not None:
            name = getattr(self.memory_planner, "name", self.memory_planner)
            if str(name).upper() not in MEMORY_PLANNERS:
                bad("memory_planner", self.memory_planner, "must be None or one of " + ", ".join(map(repr, MEMORY_PLANNERS)))
        if self.distributed_config is not None:
            if not isinstance(self.distributed_config, DistributedConfig):
                bad("distributed_config", self.distributed_config,
                    "must be a pypto.runtime.DistributedConfig(device_ids=[0, 1, ...])")


MEMORY_PLANNERS = ("PYPTO", "DSA_RP", "PTOAS")

# (name, read by the compile step, description) of each field of the C++ options struct.
_FIELDS = _core.RunConfig.fields()


def _as_field(default, value, name):
    """`value` of RunConfig field `name` in the C++ field's type (the default's type)."""
    if value is None:
        return None
    if isinstance(default, bool):
        return bool(value)
    if isinstance(default, int):
        return int(value)
    if isinstance(default, float):
        return float(value)
    if isinstance(value, int):  # an optional int (aicpu_thread_num)
        return int(value)
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def _ring_value(value, name, ok, want):
    """A ring size: None, a scalar, or a list of 4 (one per ring level; 0 = the default)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if not ok(value):
            raise ValueError(f"RunConfig({name}={value!r}): must be {want}")
        return value
    if isinstance(value, (list, tuple)) and len(value) == 4 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        for v in value:
            if v != 0 and not ok(v):
                raise ValueError(f"RunConfig({name}={list(value)!r}): entry {v} must be {want} (or 0 for the default)")
        return list(value)
    raise ValueError(f"RunConfig({name}={value!r}): must be None, an int ({want}) or a list of 4 such ints "
                     "(0 = the default)")

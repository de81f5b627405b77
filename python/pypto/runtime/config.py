"""RunConfig: how a program is compiled and run (PyPTO's fields plus ours)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

ENGINES = ("native", "sim")
VERIFY_LEVELS = ("off", "basic", "roundtrip")


def check_strategy(strategy, where: str):
    """`strategy=` must be None or a pypto.ir.pass_manager.OptimizationStrategy (or its name)."""
    from pypto.ir.pass_manager import OptimizationStrategy

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
    from pypto.backend import BackendType

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
    """The engine of a RunConfig that names none: $PYPTO_ENGINE, else "native"."""
    return os.environ.get("PYPTO_ENGINE") or "native"


@dataclass
class RunConfig:
    """Options of one compile-and-run.

    PyPTO's fields are accepted as they are; `engine`, `trace_path`, `num_workers`,
    `ring_size`, `output_dir` and `verify` are ours. `enable_chip_swimlane=1` writes the
    task swimlane (Chrome-trace JSON) to `trace_path`, else <output_dir>/swimlane.json;
    `ring_size` bounds the tasks in flight (submission blocks when the ring is full). `verify` is the check run between passes: "off",
    "basic" (structural invariants) or "roundtrip" (also print -> parse -> equal). Real-hardware platforms ("a2a3", "a5") fail with a clear
    message because no NPU is present; "a2a3sim" (default) and "a5sim" run here.
    """

    platform: str | None = None  # None: the backend of pypto.backend.set_backend_type (default a2a3sim)
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    dump_passes: bool = False
    save_kernels: bool = False
    save_kernels_dir: str | None = None
    codegen_only: bool = False
    enable_chip_swimlane: int = 0
    strategy: Any = None
    backend_type: Any = None
    engine: str = field(default_factory=default_engine)
    trace_path: str | None = None
    num_workers: int = 0
    ring_size: int = 1024
    output_dir: str | None = None
    verify: str = "basic"

    def __post_init__(self):
        # PyPTO programs may name the chip family through backend_type instead of platform.
        self.strategy = check_strategy(self.strategy, "RunConfig")
        from pypto.backend import default_platform

        self.platform = backend_platform(self.backend_type, self.platform, "RunConfig", None) or default_platform()
        if self.engine not in ENGINES:
            raise ValueError(
                f"RunConfig(engine={self.engine!r}): unknown engine; available: "
                + ", ".join(repr(e) for e in ENGINES)
            )
        if not isinstance(self.num_workers, int) or self.num_workers < 0:
            raise ValueError(
                f"RunConfig(num_workers={self.num_workers!r}): must be an int >= 0 "
                "(0 = one worker per host CPU)"
            )
        if not isinstance(self.ring_size, int) or self.ring_size < 0:
            raise ValueError(
                f"RunConfig(ring_size={self.ring_size!r}): must be an int >= 0 (tasks in flight at "
                "most; 0 = unbounded)"
            )
        if self.verify not in VERIFY_LEVELS:
            raise ValueError(
                f"RunConfig(verify={self.verify!r}): unknown verification level; use one of "
                + ", ".join(repr(v) for v in VERIFY_LEVELS)
            )

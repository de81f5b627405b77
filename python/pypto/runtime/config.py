"""RunConfig: how a program is compiled and run (PyPTO's fields plus ours)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Optional

ENGINES = ("native", "sim")


def default_engine() -> str:
    """The engine of a RunConfig that names none: $PYPTO_ENGINE, else "native"."""
    return os.environ.get("PYPTO_ENGINE") or "native"


@dataclass
class RunConfig:
    """Options of one compile-and-run.

    PyPTO's fields are accepted as they are; `engine`, `trace_path`, `num_workers` and
    `output_dir` are ours. Real-hardware platforms ("a2a3", "a5") fail with a clear
    message because no NPU is present; "a2a3sim" (default) and "a5sim" run here.
    """

    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    dump_passes: bool = False
    save_kernels: bool = False
    save_kernels_dir: Optional[str] = None
    codegen_only: bool = False
    enable_chip_swimlane: int = 0
    strategy: Any = None
    backend_type: Any = None
    engine: str = field(default_factory=default_engine)
    trace_path: Optional[str] = None
    num_workers: int = 0
    output_dir: Optional[str] = None

    def __post_init__(self):
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

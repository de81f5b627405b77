"""PyPTO's pass-context names (`pypto.ir.PassContext`, `VerificationLevel`, ...).

A `with PassContext([...], verification_level=...)` block sets how the compiles inside it
run: `verification_level` is our verify level (NONE -> "off", BASIC -> "basic",
ROUNDTRIP -> "roundtrip"), and an instrument from `make_roundtrip_instrument()` asks for
the round-trip check after every pass. The other settings (diagnostic phase and checks,
memory planner, L0C double buffering, runtime kind) are hints: our one pipeline, one
memory planner and one task runtime serve every value; they are kept and returned by the
getters."""

from __future__ import annotations

__all__ = ["DiagnosticCheck", "DiagnosticCheckSet", "DiagnosticPhase", "MemoryPlanner", "PassContext", "RuntimeKind",
           "VerificationLevel", "VerificationMode", "make_roundtrip_instrument"]

import threading
from enum import Enum


class VerificationLevel(Enum):
    """What is checked between passes."""

    NONE = "off"
    BASIC = "basic"
    ROUNDTRIP = "roundtrip"


class VerificationMode(Enum):
    """When a verification instrument checks: before, after or around each pass (our checks
    run after each pass; every mode is accepted)."""

    NONE = 0
    BEFORE = 1
    AFTER = 2
    BEFORE_AND_AFTER = 3


class DiagnosticPhase(Enum):
    """When PyPTO's lint-style diagnostics run (a hint: our compiler reports errors, no lints)."""

    NONE = 0
    PRE_PIPELINE = 1
    POST_PASS = 2
    POST_PIPELINE = 3


class DiagnosticCheck(Enum):
    """PyPTO's lint-style diagnostics (a hint here: none of them is reported)."""

    UnusedVariable = "UnusedVariable"
    UnusedControlFlowResult = "UnusedControlFlowResult"
    TileInnermostDimGranularity = "TileInnermostDimGranularity"
    OutParamWriteDropped = "OutParamWriteDropped"


class MemoryPlanner(Enum):
    """Which memory planner places tiles (a hint: ours, PlanMemory, always does)."""

    PYPTO = "pypto"
    PTOAS = "ptoas"


class RuntimeKind(Enum):
    """PyPTO's task runtimes (a hint: our one task runtime serves every kind)."""

    TENSORMAP_AND_RINGBUFFER = "tensormap_and_ringbuffer"
    HOST_BUILD_GRAPH = "host_build_graph"
    AICPU_BUILD_GRAPH = "aicpu_build_graph"


class DiagnosticCheckSet:
    """A set of DiagnosticCheck values."""

    def __init__(self, checks=()):
        self._checks = set()
        for c in checks:
            self.insert(c)

    @staticmethod
    def _check(check):
        if isinstance(check, DiagnosticCheck):
            return check
        if isinstance(check, str) and check in DiagnosticCheck.__members__:
            return DiagnosticCheck[check]
        raise ValueError(
            f"DiagnosticCheckSet: {check!r} is not a diagnostic check; fix: use one of "
            + ", ".join(f"DiagnosticCheck.{n}" for n in DiagnosticCheck.__members__)
        )

    def insert(self, check):
        self._checks.add(self._check(check))

    def remove(self, check):
        self._checks.discard(self._check(check))

    def contains(self, check) -> bool:
        return self._check(check) in self._checks

    __contains__ = contains

    def empty(self) -> bool:
        return not self._checks

    def difference(self, other) -> "DiagnosticCheckSet":
        return DiagnosticCheckSet(self._checks - set(other.to_list()))

    def union_with(self, other) -> "DiagnosticCheckSet":
        return DiagnosticCheckSet(self._checks | set(other.to_list()))

    def to_list(self) -> list:
        return sorted(self._checks, key=lambda c: list(DiagnosticCheck).index(c))

    def __len__(self):
        return len(self._checks)

    def __eq__(self, other):
        return isinstance(other, DiagnosticCheckSet) and self._checks == other._checks

    def __repr__(self):
        return "DiagnosticCheckSet([" + ", ".join(f"DiagnosticCheck.{c.name}" for c in self.to_list()) + "])"


class RoundtripInstrument:
    """Checks after every pass that the printed program parses back to an equal program
    (our verification level "roundtrip")."""

    mode = VerificationMode.AFTER

    def __repr__(self):
        return "RoundtripInstrument()"


def make_roundtrip_instrument() -> RoundtripInstrument:
    """An instrument for PassContext: the print -> parse -> equal check after each pass."""
    return RoundtripInstrument()


def coerce_verification_level(level, where: str):
    """A VerificationLevel (or its name, or our "off"/"basic"/"roundtrip") as our verify level."""
    if level is None:
        return None
    if isinstance(level, VerificationLevel):
        return level.value
    if isinstance(level, str):
        if level.upper() in VerificationLevel.__members__:
            return VerificationLevel[level.upper()].value
        if level in ("off", "basic", "roundtrip"):
            return level
    raise ValueError(
        f"{where}(verification_level={level!r}): unknown verification level; use one of "
        + ", ".join(f"VerificationLevel.{n}" for n in VerificationLevel.__members__)
    )


def _coerce_enum(enum_cls, value, where: str, name: str):
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, str) and value in enum_cls.__members__:
        return enum_cls[value]
    raise ValueError(
        f"{where}({name}={value!r}): unknown value; use one of "
        + ", ".join(f"{enum_cls.__name__}.{n}" for n in enum_cls.__members__)
    )


_state = threading.local()


class PassContext:
    """The settings of the compiles run inside `with PassContext(...):` (innermost wins)."""

    def __init__(self, instruments=(), verification_level=VerificationLevel.BASIC,
                 diagnostic_phase=DiagnosticPhase.PRE_PIPELINE, disabled_diagnostics=None,
                 memory_planner=MemoryPlanner.PYPTO, enable_pypto_l0c_double_buffer=False,
                 runtime=RuntimeKind.TENSORMAP_AND_RINGBUFFER):
        where = "PassContext"
        self._instruments = list(instruments or ())
        self._verify = coerce_verification_level(verification_level, where)
        self._diagnostic_phase = _coerce_enum(DiagnosticPhase, diagnostic_phase, where, "diagnostic_phase")
        if disabled_diagnostics is None:
            disabled_diagnostics = DiagnosticCheckSet()
        elif not isinstance(disabled_diagnostics, DiagnosticCheckSet):
            disabled_diagnostics = DiagnosticCheckSet(disabled_diagnostics)
        self._disabled = disabled_diagnostics
        self._memory_planner = _coerce_enum(MemoryPlanner, memory_planner, where, "memory_planner")
        if not isinstance(enable_pypto_l0c_double_buffer, bool):
            raise TypeError(f"PassContext(enable_pypto_l0c_double_buffer={enable_pypto_l0c_double_buffer!r}): "
                            "must be True or False")
        self._l0c_double_buffer = enable_pypto_l0c_double_buffer
        self._runtime = _coerce_enum(RuntimeKind, runtime, where, "runtime")

    def __enter__(self):
        stack = getattr(_state, "stack", None)
        if stack is None:
            stack = _state.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _state.stack.pop()
        return False

    @staticmethod
    def current():
        """The innermost active PassContext, or None outside every `with PassContext(...)`."""
        stack = getattr(_state, "stack", None)
        return stack[-1] if stack else None

    def get_verification_level(self) -> VerificationLevel:
        return VerificationLevel(self._verify)

    def get_diagnostic_phase(self) -> DiagnosticPhase:
        return self._diagnostic_phase

    def get_disabled_diagnostics(self) -> DiagnosticCheckSet:
        return self._disabled

    def get_memory_planner(self) -> MemoryPlanner:
        return self._memory_planner

    def get_runtime(self) -> RuntimeKind:
        return self._runtime

    def get_enable_pypto_l0c_double_buffer(self) -> bool:
        return self._l0c_double_buffer

    def get_instruments(self) -> list:
        return list(self._instruments)

    def verify_level(self) -> str:
        """Our verify level for compiles in this context ("roundtrip" with a round-trip instrument)."""
        if any(isinstance(i, RoundtripInstrument) for i in self._instruments) and self._verify != "off":
            return "roundtrip"
        return self._verify

"""PyPTO's launch vocabulary: `pl.Role`, `pl.SplitMode`, `pl.ScopeMode`, the optimisation
hints `pl.split(mode, slot_num=None)` / `pl.cross_core_slot(slot_num=N)` of
`pl.at(..., optimizations=[...])`, and `pl.system.task_dummy` / `pl.system.task_invalid`.
The parser (control_flow.py, scopes.py) turns them into the task info of a launch
(`ir.ScopeStmt.hints` / `ir.FuncCall.hints`); docs/language.md "Scopes and launches" says
what each does here."""

import enum

from pypto._core import ir


# `pl.at(level, role)` / `@pl.function(role=)`: the role at a level (kept in the IR, printed);
# one enum, the IR's.
Role = ir.Role


class SplitMode(enum.IntEnum):
    """How the vector work of a mixed task is divided between its two AIV parts."""

    NONE = 0
    UP_DOWN = 1  # rows: AIV 0 the upper half, AIV 1 the lower half
    LEFT_RIGHT = 2  # columns: AIV 0 the left half, AIV 1 the right half


class ScopeMode(enum.IntEnum):
    """`pl.scope(mode=...)`: AUTO tracks dependencies, MANUAL leaves every edge to deps=."""

    AUTO = 0
    MANUAL = 1


class adir(enum.IntEnum):
    """`pl.adir.*`: per-argument directions of a launch, `attrs={"arg_directions": [...]}` on
    pl.submit. `no_dep` is pl.no_dep(t) for that argument; the others are what the runtime
    derives from the kernel's parameters already (kept as given, not used)."""

    input = 0
    output = 1
    output_existing = 2
    inout = 3
    no_dep = 4
    scalar = 5


class SplitHint:
    """`pl.split(mode, slot_num=None)` in optimizations=[...]."""

    def __init__(self, mode, slot_num):
        self.mode, self.slot_num = mode, slot_num

    def __repr__(self):
        return f"pl.split({self.mode!r}" + (f", slot_num={self.slot_num}" if self.slot_num else "") + ")"


class CrossCoreSlot:
    """`pl.cross_core_slot(slot_num=N)` in optimizations=[...]."""

    def __init__(self, slot_num):
        self.slot_num = slot_num

    def __repr__(self):
        return f"pl.cross_core_slot(slot_num={self.slot_num})"


def _positive(what, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return value


def split(mode, *, slot_num=None):
    """An optimisation hint of pl.at: divide the vector work of a mixed task between its two
    AIV parts by rows (UP_DOWN) or columns (LEFT_RIGHT); NONE: no split. `slot_num=` is the
    deprecated spelling of pl.cross_core_slot(slot_num=)."""
    if not isinstance(mode, SplitMode):
        raise TypeError(f"pl.split takes a pl.SplitMode (NONE, UP_DOWN, LEFT_RIGHT), got {mode!r}")
    return SplitHint(mode, None if slot_num is None else _positive("slot_num of pl.split", slot_num))


def cross_core_slot(*, slot_num):
    """An optimisation hint of pl.at: the depth (slots per direction) of a mixed task's cross-core FIFO."""
    return CrossCoreSlot(_positive("slot_num of pl.cross_core_slot", slot_num))

"""`pypto.ir.pass_manager`: the pass pipeline as PyPTO's PassManager.

Every strategy runs our one pipeline (src/passes/pipeline.cpp): `PassManager.get_strategy()
.run_passes(program)` returns the program `pypto.ir.compile` lowers (CompiledProgram.program),
and `pass_names()` lists the pipeline's passes in order."""

from __future__ import annotations

import os
from enum import Enum

from pypto import _core
from pypto.backend import default_platform
from pypto.ir._nodes import python_print
from pypto.ir.pass_context import PassContext
from pypto.jit.config import OptimizationStrategy, check_strategy


class PassDumpLevel(Enum):
    """How much `dump_passes` writes: NONE nothing; CONCISE and EXPLICIT the program after
    every pass that changed it (our printer has one form, with every annotation)."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2


def coerce_dump_level(dump_passes) -> PassDumpLevel:
    """`dump_passes=` as a PassDumpLevel: False -> NONE, True -> EXPLICIT, a level as it is."""
    if isinstance(dump_passes, PassDumpLevel):
        return dump_passes
    if isinstance(dump_passes, bool):
        return PassDumpLevel.EXPLICIT if dump_passes else PassDumpLevel.NONE
    if isinstance(dump_passes, str) and dump_passes.upper() in PassDumpLevel.__members__:
        return PassDumpLevel[dump_passes.upper()]
    raise TypeError(
        f"dump_passes={dump_passes!r}: must be True, False or a PassDumpLevel "
        "(from pypto.ir import PassDumpLevel)"
    )


class Pass:
    """One pass of the pipeline: `pass_(program)` runs it (with the current verify level)."""

    def __init__(self, name: str, doc: str):
        self.name, self.doc = name, doc

    def get_name(self) -> str:
        return self.name

    def __call__(self, program, platform: str | None = None, verify: bool = True):
        return _core.run_pass(program, self.name, platform or default_platform(), verify)

    def __repr__(self):
        return f"<Pass {self.name}>"


class _PassFactory:
    """`PassFactory.<Name>()`: the pipeline pass of that name, for each pass of the pipeline."""

    def __getattr__(self, name):
        for n, doc in _core.pipeline_passes():
            if n == name:
                return lambda: Pass(n, doc)
        raise AttributeError(f"PassFactory has no pass {name!r}; the pipeline's passes: "
                             + ", ".join(n for n, _ in _core.pipeline_passes()))

    def __dir__(self):
        return [n for n, _ in _core.pipeline_passes()]


PassFactory = _PassFactory()


def _strategy(strategy):
    return check_strategy(strategy, "PassManager") or OptimizationStrategy.Default


class PassManager:
    """The passes one strategy runs, in order (every strategy: our one pipeline)."""

    def __init__(self, strategy=OptimizationStrategy.Default, *, analyze_auto_scopes_for_deps: bool = False):
        self.strategy = _strategy(strategy)
        # A hint: our dependency analysis covers every scope, asked or not.
        self.analyze_auto_scopes_for_deps = bool(analyze_auto_scopes_for_deps)
        self._passes = [Pass(n, doc) for n, doc in _core.pipeline_passes()]

    @classmethod
    def get_strategy(cls, strategy=OptimizationStrategy.Default, *, analyze_auto_scopes_for_deps: bool = False):
        return cls(strategy, analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)

    def passes(self) -> list:
        return list(self._passes)

    def pass_names(self) -> list:
        return [p.name for p in self._passes]

    get_pass_names = pass_names

    def run_passes(self, input_ir, dump_ir: bool = False, output_dir: str | None = None, prefix: str = "pl",
                   *, platform: str | None = None):
        """Runs the pipeline on `input_ir` (an ir.Program); returns the program after it.
        dump_ir writes output_dir/passes_dump/NN_after_<Pass>.py for each pass that changed
        the program (as pypto.ir.compile does), printed with the module named `prefix`."""
        if not isinstance(input_ir, _core.ir.Program):
            raise TypeError(f"PassManager.run_passes(input_ir=...) takes an ir.Program, got {type(input_ir).__name__}; "
                            "fix: pass a @pl.program class")
        if dump_ir and output_dir is None:
            raise ValueError("PassManager.run_passes(dump_ir=True) needs output_dir; fix: pass output_dir='some/dir'")
        ctx = PassContext.current()
        level = ctx.verify_level() if ctx is not None else "basic"
        verify = level != "off"
        platform = platform or default_platform()
        _core.check_platform(platform)
        current = input_ir
        dumps = []
        for i, p in enumerate(self._passes, 1):
            after = _core.run_pass(current, p.name, platform, verify)
            if level == "roundtrip":
                from pypto.jit.compiled import check_roundtrip  # (loads the parser: on first use)

                check_roundtrip(after, p.name)
            if not _core.ir.structural_equal(after, current):
                dumps.append((f"{i:02d}_after_{p.name}", after))
            current = after
        if dump_ir:
            d = os.path.join(output_dir, "passes_dump")
            os.makedirs(d, exist_ok=True)
            for name, prog in dumps:
                with open(os.path.join(d, name + ".py"), "w") as f:
                    f.write(python_print(prog, prefix=prefix))
        return current

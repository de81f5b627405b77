"""`pypto.ir.compile(program, ...)`: PyPTO's compile entry point. Compiles a `@pl.program`
class (an `ir.Program`) or a `@pl.jit` function with fully annotated parameters, writes the
build directory and returns the compiled program (a pypto.ir.CompiledProgram: callable;
os.PathLike to its output_dir)."""

from __future__ import annotations

from pypto import _core
from pypto._traceback import api_boundary
from pypto.backend import default_platform
from pypto.ir.pass_context import (
    DiagnosticCheckSet,
    DiagnosticPhase,
    MemoryPlanner,
    PassContext,
    RuntimeKind,
    _coerce_enum,
    coerce_verification_level,
)
from pypto.ir.pass_manager import PassDumpLevel, coerce_dump_level
from pypto.jit.config import RunConfig, backend_platform, check_strategy

_UNSET = object()


def _check_bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"pypto.ir.compile({name}={value!r}): must be True or False")


@api_boundary
def compile(  # noqa: A001
    program,
    output_dir: str | None = None,
    strategy=None,
    dump_passes=True,
    backend_type=None,
    skip_ptoas: bool = False,
    verification_level=None,
    diagnostic_phase=None,
    disabled_diagnostics=None,
    memory_planner=None,
    enable_pypto_l0c_double_buffer=None,
    profiling: bool = False,
    platform: str | None = None,
    distributed_config=None,
    analyze_auto_scopes_for_deps: bool = False,
    emit_source_loc=None,
    dump_ptoas_passes: bool = False,
    runtime=None,
    verify: str | None = None,
):
    """Runs the pass pipeline on `program` and returns its CompiledProgram.

    output_dir: build directory (default build_output/<entry>): passes_dump/ (when
    dump_passes), kernels/ (.pto and native C++), memory_map.json, report.html,
    compiled_program.json + program.py (CompiledProgram.from_dir reloads it).
    strategy: a pypto.ir.OptimizationStrategy (one pipeline serves all).
    dump_passes: True / False or a pypto.ir.PassDumpLevel (NONE: no passes_dump/).
    backend_type: a pypto.backend.BackendType, or platform: "a2a3sim" / "a5sim"; with
    neither, the backend of pypto.backend.set_backend_type (default Ascend910B -> a2a3sim).
    verification_level: a pypto.ir.VerificationLevel (NONE / BASIC / ROUNDTRIP; our `verify`
    "off" / "basic" / "roundtrip"); default: the enclosing PassContext's, else BASIC.
    Hints with no effect on the simulated chip (checked, then accepted): skip_ptoas and
    dump_ptoas_passes (no ptoas assembler runs here: the .pto text is written either way),
    diagnostic_phase / disabled_diagnostics (no lint diagnostics are reported), memory_planner
    (PlanMemory always places tiles), enable_pypto_l0c_double_buffer, profiling (every run
    records its statistics; RunConfig(enable_chip_swimlane=1) writes the swimlane),
    analyze_auto_scopes_for_deps (dependencies of every scope are always analysed),
    emit_source_loc (errors always name the source line), runtime (one task runtime).
    distributed_config: multi-chip programs are not supported yet (must be None).
    """
    from pypto.jit import compiled_of  # (loads the parser and the compiler: on first use)

    where = "pypto.ir.compile"
    check_strategy(strategy, where)
    dump_level = coerce_dump_level(dump_passes)
    for name, value in (("skip_ptoas", skip_ptoas), ("profiling", profiling),
                        ("analyze_auto_scopes_for_deps", analyze_auto_scopes_for_deps),
                        ("dump_ptoas_passes", dump_ptoas_passes)):
        _check_bool(value, name)
    for name, value in (("enable_pypto_l0c_double_buffer", enable_pypto_l0c_double_buffer),
                        ("emit_source_loc", emit_source_loc)):
        if value is not None:
            _check_bool(value, name)
    if diagnostic_phase is not None:
        _coerce_enum(DiagnosticPhase, diagnostic_phase, where, "diagnostic_phase")
    if disabled_diagnostics is not None and not isinstance(disabled_diagnostics, DiagnosticCheckSet):
        DiagnosticCheckSet(disabled_diagnostics)
    if memory_planner is not None:
        _coerce_enum(MemoryPlanner, memory_planner, where, "memory_planner")
    if runtime is not None:
        _coerce_enum(RuntimeKind, runtime, where, "runtime")
    if distributed_config is not None:  # a @pl.jit.host program: its rank processes compile their chip functions
        from pypto.jit.distributed import DistributedCompiledProgram, DistributedConfig
        if not isinstance(distributed_config, DistributedConfig):
            raise TypeError(f"{where}(distributed_config={distributed_config!r}): not a DistributedConfig; fix: pass "
                            "pypto.runtime.DistributedConfig(device_ids=[0, 1])")
        if getattr(program, "_pl_jit_kind", None) != "host":
            raise TypeError(f"{where}(distributed_config=...): the program must be a @pl.jit.host function (it "
                            "dispatches chip functions with device=r); fix: compile the host function")
        return DistributedCompiledProgram(program, distributed_config)
    level = coerce_verification_level(verification_level, where)
    if verify is not None and level is not None and verify != level:
        raise ValueError(f"{where}(verify={verify!r}, verification_level={verification_level!r}): they disagree; "
                         "fix: give one of them")
    level = level or verify
    if level is None:
        ctx = PassContext.current()
        level = ctx.verify_level() if ctx is not None else "basic"
    platform = backend_platform(backend_type, platform, where, default_platform=None) or default_platform()
    _core.check_platform(platform)
    config = RunConfig(platform=platform, output_dir=output_dir, verify=level)
    compiled = compiled_of(program, config, cached=False, kinds=("program", "jit"), where=f"{where}(program=...)")
    compiled.write_artifacts(passes=dump_level is not PassDumpLevel.NONE)
    return compiled

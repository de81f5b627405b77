"""`pypto.ir.compile(program, ...)`: PyPTO's compile entry point. Compiles a `@pl.program`
class (an `ir.Program`) or a `@pl.jit` function with fully annotated parameters, writes the
build directory and returns the compiled program (callable; os.PathLike to its output_dir)."""

from __future__ import annotations


def compile(
    program,
    output_dir: str | None = None,
    strategy=None,
    dump_passes: bool = True,
    backend_type=None,
    platform: str | None = None,
    verify: str = "basic",
):
    """Runs the pass pipeline on `program` and returns its CompiledProgram.

    output_dir: build directory (default build_output/<entry>): passes_dump/ (when
    dump_passes), kernels/ (.pto and native C++), memory_map.json, report.html.
    strategy: a pypto.ir.pass_manager.OptimizationStrategy (one pipeline serves all).
    backend_type: a pypto.backend.BackendType, or platform: "a2a3sim" (default) / "a5sim".
    """
    from pypto import _core
    from pypto.language.decorators import JitFunction
    from pypto.runtime import RunConfig, _compile, jit_compile
    from pypto.runtime.config import backend_platform, check_strategy

    check_strategy(strategy, "pypto.ir.compile")
    if not isinstance(dump_passes, bool):
        raise TypeError(f"pypto.ir.compile(dump_passes={dump_passes!r}): must be True or False")
    platform = backend_platform(backend_type, platform, "pypto.ir.compile", default_platform=None) or "a2a3sim"
    _core.check_platform(platform)
    config = RunConfig(platform=platform, output_dir=output_dir, verify=verify)
    if isinstance(program, JitFunction) and program.kind == "entry":
        compiled = jit_compile(program, (), config)
    elif isinstance(program, _core.ir.Program):
        compiled = _compile(program, config)
    else:
        raise TypeError(
            f"pypto.ir.compile(program=...) takes a @pl.program class (an ir.Program) or a @pl.jit function, "
            f"got {type(program).__name__}; fix: decorate the class with @pl.program"
        )
    compiled.write_artifacts(passes=dump_passes)
    return compiled

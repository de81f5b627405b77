"""Debugging tools of pypto. debug_kernel: the instruction-level debugger of @pto.kernel
programs (step, inspect_l1, breakpoints, instruction timeline). torch_codegen: a program as
an equivalent, runnable PyTorch script."""

from pypto.lanes.debugger import DebugContext, Race, TimelineEntry, WarpDebugContext, debug_kernel

__all__ = ["DebugContext", "Race", "TimelineEntry", "WarpDebugContext", "debug_kernel", "torch_codegen"]


def torch_codegen(program, *args, path=None) -> str:
    """The PyTorch script equivalent to `program` (emitted by the C++ code generator,
    src/codegen/torch_codegen.cpp): a `@pl.program` class (ir.Program) as parsed, a compiled
    program after its passes, or a `@pl.jit` function specialised on `args` (numpy arrays /
    torch tensors / numbers) or, without args, on its parameter annotations. The script
    defines one function per function of the program and `ENTRY` (the orchestration);
    `ENTRY(*tensors)` computes what the program computes, writing outputs in place.
    `path`: also write the script there."""
    from pypto import _core
    from pypto.jit import arg_specs, program_kind

    kind = program_kind(program)
    if kind == "jit":
        specs = arg_specs(program, args) if args else program.annotated_specs()
        program = program.parse(specs)
    elif kind in ("compiled", "result"):
        program = program.program  # a RunResult: its compiled program's
    elif args:
        raise TypeError("torch_codegen(program, *args): example arguments are only for @pl.jit functions")
    if not isinstance(program, _core.ir.Program):
        raise TypeError(
            f"torch_codegen takes a @pl.program class, a compiled program or a @pl.jit function, got "
            f"{type(program).__name__}"
        )
    text = _core.torch_codegen(program)
    if path is not None:
        with open(path, "w") as f:
            f.write(text)
    return text

"""`pypto.ir.compiled_program.CompiledProgram`: what `pypto.ir.compile`, `pypto.runtime.run`
and a jit function's `.compile()` return. It is the jit package's (pypto.jit.compiled), under
PyPTO's name; MANIFEST and SOURCE name the files of its self-describing build directory."""

from pypto.jit.compiled import MANIFEST, SOURCE, CompiledProgram, _PyptoCompiledProgramAPI  # noqa: F401

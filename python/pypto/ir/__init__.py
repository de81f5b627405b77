"""Python face of the IR: re-exports the node classes, enums, printer and structural
equality of `pypto._core.ir`, PyPTO's node accessors (pypto.ir._nodes), `compile`,
`CompiledProgram`, the pass manager and pass-context names, and IRVisitor / IRMutator."""

from pypto._core.ir import *
from pypto._core.ir import print_program, structural_equal, structural_hash  # noqa: F401
from pypto.ir import directions, op  # noqa: F401
from pypto.ir._nodes import FunctionMap, GlobalVar, TensorView, TileView, python_print  # noqa: F401
from pypto.ir.compiler import compile  # noqa: F401
from pypto.ir.directions import inout, input, no_dep, output, output_existing, scalar_dir  # noqa: F401
from pypto.ir.make import make_call  # noqa: F401
from pypto.ir.pass_context import *  # noqa: F401,F403 - the pass-context names (its __all__)
from pypto.ir.pass_manager import OptimizationStrategy, PassDumpLevel, PassManager  # noqa: F401


def __getattr__(name):
    # CompiledProgram is the jit package's (one class); loaded on first use.
    if name == "CompiledProgram":
        from pypto.jit.compiled import CompiledProgram

        return CompiledProgram
    # The builder and the walkers load on first use: `import pypto.language` (which installs
    # the node accessors through this package) does not pay for them.
    if name == "IRBuilder":
        from pypto.ir.builder import IRBuilder

        return IRBuilder
    if name in ("IRVisitor", "IRMutator"):
        from pypto.ir import visitor

        return getattr(visitor, name)
    raise AttributeError(f"module 'pypto.ir' has no attribute {name!r}")

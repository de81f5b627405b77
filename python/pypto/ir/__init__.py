"""Python face of the IR: re-exports the node classes, enums, printer and structural
equality of `pypto._core.ir`, and `compile` (PyPTO's compile entry point)."""

from pypto._core.ir import *
from pypto._core.ir import print_program, structural_equal, structural_hash  # noqa: F401
from pypto.ir.compiler import compile  # noqa: F401

"""Python face of the IR: re-exports the node classes, enums, printer and structural
equality of `pypto._core.ir`."""

from pypto._core.ir import *
from pypto._core.ir import print_program, structural_equal, structural_hash  # noqa: F401

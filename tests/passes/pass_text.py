"""MLIR-style pass tests: a program as DSL text in, one pass, the expected program text out.
The expected text is written by hand; it must also parse back to the program the pass built."""

import textwrap

import pypto.language as pl
from pypto import _core, ir

HEADER = "import pypto.language as pl\n\n\n"

T128 = "pl.Tensor[[128, 128], pl.FP32]"
VEC64 = "pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec]"


def program_text(body: str) -> str:
    """Full printed-program text for a class written (indented or not) in a test."""
    return HEADER + textwrap.dedent(body).strip("\n") + "\n"


def run_pass(name: str, before: str, platform: str = "a2a3sim"):
    return _core.run_pass(pl.parse(program_text(before)), name, platform)


def check_pass(name: str, before: str, after: str, platform: str = "a2a3sim"):
    """Runs pass `name` on `before`; the result must print exactly as `after`."""
    result = run_pass(name, before, platform)
    got = ir.print_program(result)
    want = program_text(after)
    assert got == want, f"after {name}:\n{got}\n--- expected ---\n{want}"
    assert ir.structural_equal(result, pl.parse(want))
    return result

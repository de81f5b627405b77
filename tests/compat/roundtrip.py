"""The printer round trip the compat tests check on every program they run."""

import pypto.language as pl
from pypto import _core
from pypto.runtime import _arg_specs


def round_trip(kernel, *args):
    """The parsed program prints, parses back and is structurally equal; returns the text."""
    prog = kernel.parse(_arg_specs(kernel, args))
    text = _core.ir.print_program(prog)
    assert _core.ir.structural_equal(pl.parse(text), prog), text
    return text

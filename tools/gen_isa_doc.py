"""Regenerates docs/isa.md from the instruction table (run after changing instructions.cpp)."""

import pathlib

from pypto import isa

path = pathlib.Path(__file__).resolve().parent.parent / "docs" / "isa.md"
path.write_text(isa.table_markdown())
print("wrote", path)

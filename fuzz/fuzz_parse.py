#!/usr/bin/env python3
"""Fuzz target (atheris, libFuzzer for Python) for the IR text parser `pl.parse` and the
compiler behind it: any text must parse or raise pypto.PyptoError; a program that parses
must print back to text that parses to an equal program, and must compile or raise
PyptoError. Never another exception, a crash (the C++ core may be the sanitized build) or
a hang.

    python fuzz/fuzz_parse.py -max_total_time=60 fuzz/corpus/parse

Byte-level mutations of Python text mostly make syntax errors, so half of the mutations
are structure-aware (see `mutate`): they delete, duplicate, swap or re-indent lines,
replace numbers with boundary values and names with other names of the text or of `pl`,
which keeps most inputs valid Python and drives them deep into the parser and the passes.
A finding is written by libFuzzer as crash-<sha1>; the input goes into fuzz/corpus/parse
and its error into tests/errors/test_fuzz_regressions.py.
"""

import random
import re
import sys
import warnings

import atheris

with atheris.instrument_imports():
    import pypto.language as pl
    from pypto import PyptoError, _core
    from pypto import ir as pir

NUMBERS = ["0", "1", "-1", "2", "3", "7", "15", "16", "17", "31", "32", "33", "63", "64", "65", "127", "128",
           "129", "255", "256", "1024", "4096", "65536", "2147483647", "2147483648", "-2147483648",
           "9223372036854775807", "-9223372036854775808", "18446744073709551616", "0.5", "-0.0", "1e30",
           "1e-45", "3.4e38", "1e400"]
NAMES = ["pl.FP32", "pl.FP16", "pl.BF16", "pl.INT32", "pl.INT8", "pl.UINT8", "pl.BOOL", "pl.INDEX",
         "pl.Mem.Vec", "pl.Mem.Mat", "pl.Mem.Left", "pl.Mem.Right", "pl.Mem.Acc", "pl.Mem.Bias", "pl.Mem.DDR",
         "pl.FunctionType.InCore", "pl.FunctionType.Orchestration", "pl.FunctionType.AIC", "pl.FunctionType.AIV",
         "pl.tile.load", "pl.tile.store", "pl.tile.add", "pl.tile.mul", "pl.tile.matmul", "pl.tile.move",
         "pl.tile.row_max", "pl.tile.exp", "pl.tile.cast", "pl.tile.reshape", "pl.range", "pl.parallel",
         "pl.yield_", "pl.create_tensor", "pl.tensor.dim", "self", "None", "True", "False"]
TOKEN = re.compile(r"[A-Za-z_][\w.]*|-?\d+(?:\.\d+)?(?:e-?\d+)?")


def mutate_lines(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    if not lines:
        return text
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    op = rng.randrange(8)
    if op == 0 and len(lines) > 1:
        del lines[i]
    elif op == 1:
        lines.insert(j, lines[i])
    elif op == 2:
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 3:  # re-indent
        stripped = lines[i].lstrip(" ")
        lines[i] = " " * (4 * rng.randrange(4)) + stripped
    elif op == 4:  # truncate a line
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    else:  # replace one token by a boundary number or another name
        tokens = list(TOKEN.finditer(lines[i]))
        if tokens:
            t = rng.choice(tokens)
            if t.group()[0].isdigit() or t.group()[0] == "-":
                new = rng.choice(NUMBERS)
            else:
                pool = NAMES + [m.group() for m in TOKEN.finditer(text) if not m.group()[0].isdigit()]
                new = rng.choice(pool)
            lines[i] = lines[i][: t.start()] + new + lines[i][t.end():]
    return "\n".join(lines)


def mutate(data: bytes, max_size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    if rng.randrange(2):
        return atheris.Mutate(data, max_size)
    text = data.decode("utf-8", errors="replace")
    for _ in range(1 + rng.randrange(3)):
        text = mutate_lines(text, rng)
    return text.encode("utf-8")[:max_size]


def check(text: str) -> None:
    try:
        program = pl.parse(text, filename="fuzz.py")
    except PyptoError:
        return
    printed = pir.print_program(program)
    again = pl.parse(printed, filename="<printed>")  # the printer's text always parses back
    assert pir.structural_equal(program, again), "printed program parses to a different program"
    try:
        _core.compile(program, "a2a3sim", False, True)
    except PyptoError:
        pass


def test_one_input(data: bytes) -> None:
    check(data.decode("utf-8", errors="replace"))


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    warnings.simplefilter("ignore")  # SyntaxWarnings of malformed literals are expected
    atheris.Setup(sys.argv, test_one_input, custom_mutator=mutate)
    atheris.Fuzz()

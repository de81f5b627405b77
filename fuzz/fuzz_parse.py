"""Fuzz target (atheris, libFuzzer for Python) for the IR text parser `pl.parse`: any text
must parse or raise pypto.PyptoError; never another exception, a crash or a hang.

    python fuzz/fuzz_parse.py -max_total_time=60 fuzz/corpus/parse
"""

import sys
import warnings

import atheris

with atheris.instrument_imports():
    import pypto.language as pl
    from pypto import PyptoError


def test_one_input(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    try:
        pl.parse(text, filename="fuzz.py")
    except PyptoError:
        pass


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    warnings.simplefilter("ignore")  # SyntaxWarnings of malformed literals are expected
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()

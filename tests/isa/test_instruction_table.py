"""The instruction table: required mnemonics, pipes, and cost formulas checked by hand
against chip-model.md."""

import math
import pathlib
import re

import pytest
from pypto import _core

REQUIRED = [
    "TLOAD",
    "TSTORE",
    "TMOV",
    "TADD",
    "TSUB",
    "TMUL",
    "TDIV",
    "TMAX",
    "TMIN",
    "TADDS",
    "TSUBS",
    "TMULS",
    "TDIVS",
    "TMAXS",
    "TMINS",
    "TABS",
    "TNEG",
    "TRELU",
    "TEXP",
    "TLOG",
    "TSQRT",
    "TRSQRT",
    "TRECIP",
    "TCVT",
    "TROWSUM",
    "TROWMAX",
    "TROWMIN",
    "TROWPROD",
    "TCOLSUM",
    "TCOLMAX",
    "TCOLMIN",
    "TCOLPROD",
    "TROWEXPAND",
    "TROWEXPANDADD",
    "TROWEXPANDSUB",
    "TROWEXPANDMUL",
    "TROWEXPANDDIV",
    "TROWEXPANDMAX",
    "TROWEXPANDMIN",
    "TROWEXPANDEXPDIF",
    "TCOLEXPAND",
    "TCOLEXPANDADD",
    "TCOLEXPANDSUB",
    "TCOLEXPANDMUL",
    "TCOLEXPANDDIV",
    "TCOLEXPANDMAX",
    "TCOLEXPANDMIN",
    "TCOLEXPANDEXPDIF",
    "TMATMUL",
    "TMATMUL_ACC",
    "TMATMUL_BIAS",
    "TCMP",
    "TCMPS",
    "TSEL",
    "TEXPANDS",
    "TFILLPAD",
    "TTRANS",
    "TREM",
    "TAND",
    "TOR",
    "TXOR",
    "TSHL",
    "TSHR",
    "TNOT",
    "TAXPY",
    "TLRELU",
    "TPRELU",
]


def test_every_required_mnemonic_is_in_the_table():
    names = set(_core.instruction_names())
    assert not [n for n in REQUIRED if n not in names]


@pytest.mark.parametrize(
    "name,pipe",
    [
        ("TLOAD", "MTE2"),
        ("TSTORE", "MTE3"),
        ("TADD", "V"),
        ("TROWSUM", "V"),
        ("TCVT", "V"),
        ("TMATMUL", "M"),
        ("TMATMUL_ACC", "M"),
        ("TMOV", "MTE1"),
    ],
)
def test_pipes(name, pipe):
    assert _core.instruction_pipe(name) == pipe


def test_unknown_instruction_is_a_user_error():
    with pytest.raises(_core.PyptoError, match="unknown PTO instruction 'TFOO'"):
        _core.instruction_pipe("TFOO")


def test_vector_cost_tadd_fp32_64x64():
    # 64*64*4 B = 16384 B = 64 repeats of 256 B; a row is 256 B (whole): 2.11*64 + 24
    assert _core.instruction_cost("TADD", "FP32", 64, 64) == pytest.approx(159.04)


def test_vector_cost_ragged_rows_add_16():
    # 16x40 fp32 = 2560 B = 10 repeats; a 160-byte row is not whole: 2.11*10 + 24 + 16
    assert _core.instruction_cost("TADD", "FP32", 16, 40) == pytest.approx(61.1)


@pytest.mark.parametrize(
    "name,slope,head",
    [
        ("TMAX", 2.01, 23),
        ("TMUL", 2.3, 25),
        ("TMULS", 1.0, 24),
        ("TRELU", 1.0, 24),
        ("TRSQRT", 1.07, 24),
        ("TEXP", 2.0, 31),
        ("TLOG", 2.0, 33),
        ("TDIV", 4.03, 31),
    ],
)
def test_published_vector_fits(name, slope, head):
    assert _core.instruction_cost(name, "FP32", 32, 64) == pytest.approx(slope * 32 + head)


def test_int16_tand_fit():
    # 32x128 int16 = 8192 B = 32 repeats, 256-byte rows
    assert _core.instruction_cost("TAND", "INT16", 32, 128) == pytest.approx(2.03 * 32 + 20)


def test_cube_cost_fp16_128_cube():
    # 6 + ceil(128/16) * ceil(128/16) * ceil(128/16), K0 = 16 for fp16
    assert _core.instruction_cost("TMATMUL", "FP16", 128, 128, 128) == pytest.approx(518)


def test_cube_cost_fp32_and_int8():
    # fp32: K0 = 8 and the block term doubles; int8: K0 = 32
    assert _core.instruction_cost("TMATMUL", "FP32", 64, 32, 64) == pytest.approx(
        6 + 2 * (4 * 8 * 2)
    )
    assert _core.instruction_cost("TMATMUL", "INT8", 64, 32, 64) == pytest.approx(6 + 4 * 2 * 2)


def test_transfer_cost_tload():
    nbytes = 64 * 64 * 4
    expected = nbytes / (100.9 * 2**30) * 1.85e9 + 30
    assert _core.instruction_cost("TLOAD", "FP32", 64, 64) == pytest.approx(expected)
    assert math.isclose(
        _core.instruction_cost("TSTORE", "FP32", 64, 64), nbytes / (188.5 * 2**30) * 1.85e9 + 30
    )


def test_signature_lists_operands_and_dtypes():
    outs, ins, dtypes, summary = _core.instruction_signature("TLOAD")
    assert (outs, ins) == ("T", "GL")
    assert "FP32" in dtypes and summary


def test_every_instruction_has_a_reference_test():
    """Every mnemonic of the table is run by a test in tests/isa/test_reference_*.py or
    test_packed_mask.py (which compare the reference library with numpy over the table's
    dtypes and several shapes). Adding an instruction without such a test fails here."""
    here = pathlib.Path(__file__).resolve().parent
    files = sorted(here.glob("test_reference_*.py")) + [here / "test_packed_mask.py"]
    text = "".join(p.read_text() for p in files)
    named = set(re.findall(r'"([A-Z][A-Z0-9_]*)"', text))
    missing = [n for n in _core.instruction_names() if n not in named]
    assert not missing, f"instructions without a reference test: {missing}"

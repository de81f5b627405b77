"""Packed masks: TCMP / TCMPS write one bit per element and TSEL / TSELS read it, against
numpy. The independent reference for a mask is np.packbits(bools, axis=1,
bitorder="little") over the valid region (element (r, c) is bit c % 8 of byte (r, c / 8),
ceil(cols / 8) bytes a row); TSEL against np.where. The full matrix of dtypes, shapes and
modes runs on the reference library (engine "sim"); the round trip and the errors also on the
native engine, and tests/isa/test_native_differential.py holds the optimised library to the
reference (and to numpy) over dtypes and shapes."""

import numpy as np
import pytest
from pypto import PyptoError, _core, isa

ENGINES = ["sim", "native"]
# (tile shape, valid shape or None): square, non-square, columns not a multiple of 8, a
# single row, and valid regions smaller than the tile (also ragged in the last mask byte).
CASES = [
    ((8, 8), None),
    ((16, 32), None),
    ((5, 19), None),
    ((1, 70), None),
    ((12, 40), (7, 21)),
    ((9, 13), (9, 5)),
]
DTYPES = ["FP32", "FP16", "BF16", "INT32", "INT16", "INT8", "UINT8"]
STORAGE = {"FP32": np.float32, "FP16": np.float16, "BF16": np.uint16, "INT32": np.int32, "INT16": np.int16,
           "INT8": np.int8, "UINT8": np.uint8}
CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
       "GE": np.greater_equal}
SENTINEL = 0xA5  # bytes of the mask the instruction must not touch keep this value


def mask_bytes(cols):
    return (cols + 7) // 8


def operand(rng, shape, dtype):
    """(storage array, float64 values) with small values so that equal elements occur."""
    if dtype == "BF16":  # bf16 bit patterns of quarter-steps in [-2, 2] (exact in bf16)
        v = rng.integers(-8, 9, size=shape) / 4
        return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16), v
    if dtype in ("FP32", "FP16"):
        v = rng.integers(-8, 9, size=shape) / 4
        return v.astype(STORAGE[dtype]), v
    lo = 0 if dtype == "UINT8" else -5
    v = rng.integers(lo, lo + 11, size=shape)
    return v.astype(STORAGE[dtype]), v.astype(np.float64)


def packed(bools):
    return np.packbits(bools, axis=1, bitorder="little")


def expected_mask(bools, tile_shape, valid):
    r, c = valid or tile_shape
    want = np.full((tile_shape[0], mask_bytes(tile_shape[1])), SENTINEL, np.uint8)
    want[:r, : mask_bytes(c)] = packed(bools[:r, :c])
    return want


def execute(mnemonic, outs, ins, dtypes, valid, engine, attrs=None):
    _core.isa_execute(mnemonic, outs, ins, attrs or {}, valid_shape=valid and list(valid), dtypes=dtypes,
                      engine=engine)
    return outs[0]


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tcmp_and_tcmps_write_packed_bits(rng, shape, valid, dtype):
    engine = "sim"
    a, av = operand(rng, shape, dtype)
    b, bv = operand(rng, shape, dtype)
    s = 1 if dtype.startswith(("INT", "UINT")) else 0.5
    for cmp in CMP:
        mask = np.full((shape[0], mask_bytes(shape[1])), SENTINEL, np.uint8)
        got = execute("TCMP", [mask], [a, b], ["UINT8", dtype, dtype], valid, engine, {"cmp": cmp})
        np.testing.assert_array_equal(got, expected_mask(CMP[cmp](av, bv), shape, valid), err_msg=f"TCMP {cmp}")
        mask = np.full((shape[0], mask_bytes(shape[1])), SENTINEL, np.uint8)
        got = execute("TCMPS", [mask], [a, s], ["UINT8", dtype], valid, engine, {"cmp": cmp})
        np.testing.assert_array_equal(got, expected_mask(CMP[cmp](av, s), shape, valid), err_msg=f"TCMPS {cmp}")


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tsel_and_tsels_read_packed_bits(rng, shape, valid, dtype):
    engine = "sim"
    bools = rng.integers(0, 2, size=shape).astype(bool)
    mask = packed(bools)
    a, _ = operand(rng, shape, dtype)
    b, _ = operand(rng, shape, dtype)
    r, c = valid or shape
    fill = np.full(shape, 7, STORAGE[dtype])
    got = execute("TSEL", [fill.copy()], [mask, a, b], [dtype, "UINT8", dtype, dtype], valid, engine)
    want = fill.copy()
    want[:r, :c] = np.where(bools, a, b)[:r, :c]
    np.testing.assert_array_equal(got, want)
    s = 0.75 if dtype in ("FP32", "FP16", "BF16") else 3
    s_stored = np.array(0x3F40, np.uint16) if dtype == "BF16" else np.array(s, STORAGE[dtype])  # bf16 0.75
    got = execute("TSELS", [fill.copy()], [mask, a, s], [dtype, "UINT8", dtype], valid, engine)
    want = fill.copy()
    want[:r, :c] = np.where(bools, a, s_stored)[:r, :c]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_compare_then_select_round_trip(rng, engine):
    """pl.cmp followed by pl.sel at the instruction level: np.where(a < b, a, b)."""
    a = rng.standard_normal((16, 44)).astype(np.float32)
    b = rng.standard_normal((16, 44)).astype(np.float32)
    mask = np.zeros((16, 6), np.uint8)
    _core.isa_execute("TCMP", [mask], [a, b], {"cmp": "LT"}, engine=engine)
    out = np.zeros_like(a)
    _core.isa_execute("TSEL", [out], [mask, a, b], engine=engine)
    np.testing.assert_array_equal(out, np.minimum(a, b))


def test_mask_row_stride_is_the_mask_tiles_columns(rng):
    """A mask tile wider than ceil(cols / 8) keeps its own row stride; the extra bytes stay."""
    a = rng.standard_normal((4, 10)).astype(np.float32)
    mask = np.full((4, 5), SENTINEL, np.uint8)
    _core.isa_execute("TCMPS", [mask], [a, 0.0], {"cmp": "GT"})
    np.testing.assert_array_equal(mask[:, :2], packed(a > 0))
    assert (mask[:, 2:] == SENTINEL).all()
    out = np.zeros_like(a)
    _core.isa_execute("TSELS", [out], [mask, a, 0.0])
    np.testing.assert_array_equal(out, np.where(a > 0, a, 0))


@pytest.mark.parametrize("engine", ENGINES)
def test_mask_must_be_packed_uint8(engine):
    a = np.zeros((4, 16), np.float32)
    with pytest.raises(PyptoError, match=r"TCMP: destination 'out0' is the packed mask and must be UINT8.*got BOOL"):
        _core.isa_execute("TCMP", [np.zeros((4, 16), np.bool_)], [a, a], {"cmp": "EQ"}, engine=engine)
    with pytest.raises(PyptoError, match=r"TSEL: input 0 'in0' is the packed mask and must be UINT8.*got BOOL"):
        _core.isa_execute("TSEL", [a.copy()], [np.zeros((4, 16), np.bool_), a, a], engine=engine)
    with pytest.raises(PyptoError, match=r"mask tile 'out0' \(4x1 bytes\) is smaller than the 4x2 bytes"):
        _core.isa_execute("TCMPS", [np.zeros((4, 1), np.uint8)], [a, 1.0], {"cmp": "EQ"}, engine=engine)
    with pytest.raises(PyptoError, match=r"mask tile 'in0' \(3x2 bytes\) is smaller than the 4x2 bytes"):
        _core.isa_execute("TSEL", [a.copy()], [np.zeros((3, 2), np.uint8), a, a], engine=engine)


def test_instruction_table_states_the_layout():
    md = isa.table_markdown()
    assert "Element (r, c) is bit c % 8 (bit 0 = least significant) of byte (r, c / 8)" in md
    assert 'np.packbits(m, axis=1, bitorder="little")' in md
    row = next(line for line in md.splitlines() if line.startswith("| TCMP |"))
    assert "mask tile (UINT8, packed)" in row
    row = next(line for line in md.splitlines() if line.startswith("| TSEL |"))
    assert "mask tile (UINT8, packed), tile, tile" in row

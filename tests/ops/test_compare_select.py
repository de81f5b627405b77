"""pl.cmp / pl.cmps make packed masks (UINT8, one bit per element: element (r, c) is bit
c % 8 of byte (r, c / 8), rows padded to 32 bytes) and pl.sel consumes them, end to end
against numpy: np.packbits(..., axis=1, bitorder="little") for stored masks, np.where for
selections. Several dtypes, non-square tiles, columns not a multiple of 8 valid, and a valid
region smaller than the tile. Every test runs on both engines (tests/ops/conftest.py)."""

import re

import numpy as np
import pypto.language as pl
import pytest
from pypto.runtime import RunConfig

rng = np.random.default_rng(11)


def packed(bools):
    return np.packbits(bools, axis=1, bitorder="little")


@pl.jit
def k_store_mask(a: pl.Tensor, b: pl.Tensor, m: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 72])
        tb = pl.load(b, [0, 0], [16, 72])
        pl.store(pl.cmp(ta, tb, cmp_type="LE"), [0, 0], m)
    return m


def test_mask_bytes_are_packbits():
    """The stored mask of a 16x72 compare is 16 rows of ceil(72 / 8) = 9 bytes."""
    a = rng.integers(-3, 4, size=(16, 72)).astype(np.float32)
    b = rng.integers(-3, 4, size=(16, 72)).astype(np.float32)
    m = np.full((16, 9), 0xEE, np.uint8)
    k_store_mask(a, b, m, config=RunConfig())
    np.testing.assert_array_equal(m, packed(a <= b))


@pl.jit
def k_ragged(a: pl.Tensor, n: pl.Scalar[pl.INDEX], m: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [8, 64], valid_shape=[5, n])
        pos = pl.cmps(t, 0.0, cmp_type="GT")
        pl.store(pos, [0, 0], m)
        pl.store(pl.sel(pos, t, pl.muls(t, 0.5)), [0, 0], c)
    return m


@pytest.mark.parametrize("n", [21, 8, 3])
def test_partly_valid_tile(n):
    """A 5 x n valid region of an 8x64 tile: the mask covers ceil(n / 8) bytes of 5 rows, with
    zero bits past column n; sel writes only the valid region."""
    a = rng.standard_normal((8, 64)).astype(np.float32)
    m = np.full((8, 8), 0xEE, np.uint8)
    c = np.full((8, 64), -9.0, np.float32)
    k_ragged(a, n, m, c, config=RunConfig())
    want_m = np.full((8, 8), 0xEE, np.uint8)
    want_m[:5, : (n + 7) // 8] = packed(a[:5, :n] > 0)
    np.testing.assert_array_equal(m, want_m)
    want_c = np.full((8, 64), -9.0, np.float32)
    want_c[:5, :n] = np.where(a[:5, :n] > 0, a[:5, :n], a[:5, :n] * np.float32(0.5))
    np.testing.assert_array_equal(c, want_c)


def make_select(dtype, rows, cols):
    @pl.jit
    def k_select(a: pl.Tensor, b: pl.Tensor, m: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, 0], [rows, cols])
            tb = pl.load(b, [0, 0], [rows, cols])
            ne = pl.cmp(ta, tb, cmp_type="NE")
            pl.store(ne, [0, 0], m)
            big = pl.cmps(ta, 2, cmp_type="GE")
            pl.store(pl.sel(big, ta, pl.sel(ne, tb, ta)), [0, 0], c)
        return c

    return k_select


@pytest.mark.parametrize(
    "dtype,rows,cols",
    [(np.float32, 32, 32), (np.float16, 8, 48), (np.int32, 4, 40), (np.int16, 24, 16), (np.float32, 2, 256)],
)
def test_select_over_dtypes_and_shapes(dtype, rows, cols):
    a = rng.integers(-4, 5, size=(rows, cols)).astype(dtype)
    b = rng.integers(-4, 5, size=(rows, cols)).astype(dtype)
    m = np.zeros((rows, (cols + 7) // 8), np.uint8)
    c = np.zeros((rows, cols), dtype)
    make_select(dtype, rows, cols)(a, b, m, c, config=RunConfig())
    np.testing.assert_array_equal(m, packed(a != b))
    np.testing.assert_array_equal(c, np.where(a >= 2, a, np.where(a != b, b, a)))


@pl.jit
def k_loaded_mask(bits: pl.Tensor, a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        m = pl.load(bits, [0, 0], [16, 32], valid_shape=[16, 5])
        ta = pl.load(a, [0, 0], [16, 40])
        tb = pl.load(b, [0, 0], [16, 40])
        pl.store(pl.sel(m, ta, tb), [0, 0], c)
    return c


def test_select_by_a_mask_packed_in_numpy():
    """A mask packed by numpy, loaded as a UINT8 tile (rows padded to 32 bytes), drives sel."""
    want = rng.integers(0, 2, size=(16, 40)).astype(bool)
    bits = np.zeros((16, 32), np.uint8)
    bits[:, :5] = packed(want)
    a = rng.standard_normal((16, 40)).astype(np.float32)
    b = rng.standard_normal((16, 40)).astype(np.float32)
    c = np.zeros_like(a)
    k_loaded_mask(bits, a, b, c, config=RunConfig())
    np.testing.assert_array_equal(c, np.where(want, a, b))


def test_mask_tile_type_text_and_memory():
    """The mask of a 16x72 FP32 tile is a 16x32 UINT8 tile (one 32-byte Vec row a row, 9
    bytes valid) in the `.pto` text, and memory planning gives it 16 * 32 bytes."""
    a = np.zeros((16, 72), np.float32)
    m = np.zeros((16, 9), np.uint8)
    compiled = k_store_mask.compile(a, a, m)
    (text,) = compiled.pto().values()
    tcmp = next(line for line in text.splitlines() if "pto.tcmp " in line)
    assert re.search(r"outs\(%\w+ : !pto\.tile<vec, u8, 16x32, [^>]*valid=\[16, 9\]", tcmp), tcmp
    (kernel,) = compiled.memory_map()
    masks = [t for t in kernel["tiles"] if t["bytes"] == 16 * 32]
    assert len(masks) == 1 and masks[0]["memory"] == "Vec"


def test_sel_rejects_an_unpacked_mask():
    @pl.jit
    def bad(a: pl.Tensor, bools: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 32])
            m = pl.load(bools, [0, 0], [16, 32])
            pl.store(pl.sel(m, t, t), [0, 0], c)
        return c

    a = np.zeros((16, 32), np.float32)
    with pytest.raises(Exception) as err:
        bad(a, np.zeros((16, 32), np.bool_), a.copy(), config=RunConfig())
    msg = str(err.value)
    assert "pl.tile.sel: 'mask' must be the packed mask of a [16, 32] tile" in msg
    assert "a UINT8 tile of 16 rows and at least 4 columns (one bit per element), got" in msg
    assert "build the mask with pl.cmp or pl.cmps on a tile of lhs's shape (it is [16, 32] UINT8)" in msg

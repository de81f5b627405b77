"""Bitwise ops and shifts (TAND TOR TXOR TNOT TSHL TSHR and the scalar forms TANDS TORS TXORS
TSHLS TSHRS) end to end against numpy, on every integer dtype of the instruction table, on a
valid region smaller than the tile, at tensor level, and the type errors for misuse."""

import numpy as np
import pypto.language as pl
import pytest
from pypto.runtime import RunConfig

rng = np.random.default_rng(23)

INT_DTYPES = [np.int32, np.int16, np.int8, np.uint8]


def ints(dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def shift_counts(dtype, shape):
    return rng.integers(0, np.iinfo(dtype).bits, size=shape).astype(dtype)


@pl.jit
def k_tile_tile(a: pl.Tensor, b: pl.Tensor, s: pl.Tensor, o_and: pl.Out[pl.Tensor], o_or: pl.Out[pl.Tensor],
                o_xor: pl.Out[pl.Tensor], o_not: pl.Out[pl.Tensor], o_shl: pl.Out[pl.Tensor], o_shr: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        ts = pl.load(s, [0, 0], [16, 32])
        pl.store(pl.and_(ta, tb), [0, 0], o_and)
        pl.store(pl.or_(ta, tb), [0, 0], o_or)
        pl.store(pl.tile.xor(ta, tb), [0, 0], o_xor)
        pl.store(pl.not_(ta), [0, 0], o_not)
        pl.store(pl.shl(ta, ts), [0, 0], o_shl)
        pl.store(pl.tile.shr(ta, ts), [0, 0], o_shr)
    return o_and


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_tile_tile_forms(dtype):
    a, b, s = ints(dtype, (16, 32)), ints(dtype, (16, 32)), shift_counts(dtype, (16, 32))
    outs = [np.zeros((16, 32), dtype) for _ in range(6)]
    k_tile_tile(a, b, s, *outs, config=RunConfig())
    refs = [a & b, a | b, a ^ b, ~a, np.left_shift(a, s), np.right_shift(a, s)]
    for name, got, ref in zip(["and_", "or_", "xor", "not_", "shl", "shr"], outs, refs):
        np.testing.assert_array_equal(got, ref.astype(dtype), err_msg=name)


@pl.jit
def k_scalar(a: pl.Tensor, o: pl.Out[pl.Tensor], o_shift: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 32])
        x = pl.ors(pl.and_(t, 0x5A), 0x21)  # a Python int on the right selects the scalar form
        x = pl.xors(x, 0x0F)
        pl.store(x, [0, 0], o)
        pl.store(pl.shrs(pl.shl(t, 2), 1), [0, 0], o_shift)
    return o


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_scalar_forms(dtype):
    a = ints(dtype, (16, 32))
    o, o_shift = np.zeros_like(a), np.zeros_like(a)
    k_scalar(a, o, o_shift, config=RunConfig())
    np.testing.assert_array_equal(o, (((a & 0x5A) | 0x21) ^ 0x0F).astype(dtype))
    np.testing.assert_array_equal(o_shift, np.right_shift(np.left_shift(a, 2).astype(dtype), 1).astype(dtype))


@pl.jit
def k_ragged(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 32], valid_shape=[11, 20])
        tb = pl.load(b, [0, 0], [16, 32], valid_shape=[11, 20])
        pl.store(pl.xor(pl.not_(ta), pl.shls(tb, 3)), [0, 0], c)
    return c


def test_valid_region_smaller_than_the_tile():
    a, b = ints(np.int32, (11, 20)), ints(np.int32, (11, 20))
    c = np.full((16, 32), 7, np.int32)
    k_ragged(a, b, c, config=RunConfig())
    np.testing.assert_array_equal(c[:11, :20], ~a ^ (b << 3))
    np.testing.assert_array_equal(c[11:, :], 7)  # only the valid region is stored
    np.testing.assert_array_equal(c[:, 20:], 7)


@pl.jit
def k_tensor_level(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.or_(pl.shr(pl.and_(a, b), 3), pl.xors(pl.not_(a), 0x1234))
    return c


def test_tensor_level_forms_are_tiled():
    a, b = ints(np.int32, (200, 72)), ints(np.int32, (200, 72))
    c = np.zeros_like(a)
    k_tensor_level(a, b, c, config=RunConfig())
    np.testing.assert_array_equal(c, ((a & b) >> 3) | (~a ^ 0x1234))


def error_of(fn, *args):
    with pytest.raises(Exception) as err:
        fn(*args, config=RunConfig())
    return str(err.value)


def test_bitwise_on_float_tiles_is_rejected():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 32])
            pl.store(pl.and_(t, t), [0, 0], c)
        return c

    z = np.zeros((16, 32), np.float32)
    msg = error_of(bad, z, z.copy())
    assert "pl.tile.and_: argument 'lhs' is FP32; TAND accepts INT32, INT16, INT8, UINT8" in msg
    assert "pl.cast(lhs, pl.INT32)" in msg
    assert "test_bitwise.py:" in msg


def test_float_scalar_of_a_bitwise_op_is_rejected():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 32])
            pl.store(pl.shl(t, 1.5), [0, 0], c)
        return c

    z = np.zeros((16, 32), np.int32)
    assert "pl.tile.shls: argument 'scalar' must be an integer scalar, got FP32" in error_of(bad, z, z.copy())


def test_not_of_a_float_tile_and_mixed_dtypes_are_rejected():
    @pl.jit
    def bad_not(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.not_(pl.load(a, [0, 0], [16, 32])), [0, 0], c)
        return c

    @pl.jit
    def bad_mix(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.or_(pl.load(a, [0, 0], [16, 32]), pl.load(b, [0, 0], [16, 32])), [0, 0], c)
        return c

    f = np.zeros((16, 32), np.float16)
    assert "pl.tile.not_: argument 'tile' is FP16; TNOT accepts INT32, INT16, INT8, UINT8" in error_of(bad_not, f, f.copy())
    i32, i16 = np.zeros((16, 32), np.int32), np.zeros((16, 32), np.int16)
    msg = error_of(bad_mix, i32, i16, i32.copy())
    assert "argument 'rhs' has dtype INT16 but 'lhs' has INT32" in msg

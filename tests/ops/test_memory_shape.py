"""Movement and shape ops: partial loads (valid_shape), fillpad, slice, assemble, concat,
transpose, set_validshape, compare/select, full, tensor.dim and tensor.read, against numpy."""

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

rng = np.random.default_rng(5)


@pl.jit
def k_offsets(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [32, 64], [32, 64])
        pl.store(t, [0, 0], c)
    return c


@pl.jit
def k_ragged_row_max(a: pl.Tensor, n: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64], valid_shape=[16, n])
        full_t = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
        m = pl.row_max(full_t)
        pl.store(pl.reshape(m, [1, 16]), [0, 0], c)
    return c


@pl.jit
def k_slice_assemble(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        left = pl.slice(t, [32, 32], [0, 0])
        right = pl.slice(t, [32, 32], [0, 32])
        swapped = pl.tile.assemble(t, right, [0, 0])
        swapped = pl.tile.assemble(swapped, left, [0, 32])
        pl.store(swapped, [0, 0], c)
    return c


@pl.jit
def k_concat_transpose(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [32, 16])
        y = pl.load(a, [0, 16], [32, 16])
        j = pl.concat(y, x)
        pl.store(pl.transpose(j), [0, 0], c)
    return c


@pl.jit
def k_cmp_sel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 32])
        tb = pl.load(b, [0, 0], [32, 32])
        m = pl.cmp(ta, tb, cmp_type="LT")
        picked = pl.sel(m, ta, tb)
        pos = pl.cmps(picked, 0.0, cmp_type="GT")
        zero = pl.full([32, 32], dtype=pl.FP32, value=0.0)
        pl.store(pl.sel(pos, picked, zero), [0, 0], c)
    return c


@pl.jit
def k_dim_read(a: pl.Tensor, s: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = pl.tensor.dim(a, 0)
        scale = pl.tensor.read(s, [1])
        t = pl.load(a, [rows - 32, 0], [32, 32])
        pl.store(pl.muls(t, scale), [0, 0], c)
    return c


@pl.jit
def k_set_validshape(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 32])
        v = pl.tile.set_validshape(t, [8, 32])
        pl.store(pl.adds(v, 1.0), [0, 0], c)
    return c


def test_load_store_at_offsets():
    a = rng.standard_normal((64, 128)).astype(np.float32)
    c = np.zeros((32, 64), np.float32)
    k_offsets(a, c, config=RunConfig())
    np.testing.assert_array_equal(c, a[32:64, 64:128])


def test_ragged_tail_sees_the_pad_value():
    a = rng.standard_normal((16, 64)).astype(np.float32)
    a[:, 40:] = 100.0  # outside the valid columns: must not win the max
    c = np.zeros((1, 16), np.float32)
    k_ragged_row_max(a, 40, c, config=RunConfig())
    np.testing.assert_array_equal(c[0], a[:, :40].max(axis=1))


def test_slice_and_assemble_swap_halves():
    a = rng.standard_normal((32, 64)).astype(np.float32)
    c = np.zeros_like(a)
    k_slice_assemble(a, c, config=RunConfig())
    np.testing.assert_array_equal(c, np.concatenate([a[:, 32:], a[:, :32]], axis=1))


def test_concat_then_transpose():
    a = rng.standard_normal((32, 32)).astype(np.float32)
    c = np.zeros((32, 32), np.float32)
    k_concat_transpose(a, c, config=RunConfig())
    np.testing.assert_array_equal(c, np.concatenate([a[:, 16:], a[:, :16]], axis=1).T)


def test_compare_and_select():
    a = rng.standard_normal((32, 32)).astype(np.float32)
    b = rng.standard_normal((32, 32)).astype(np.float32)
    c = np.zeros_like(a)
    k_cmp_sel(a, b, c, config=RunConfig())
    picked = np.where(a < b, a, b)
    np.testing.assert_array_equal(c, np.where(picked > 0, picked, 0))


def test_tensor_read_scales():
    a = rng.standard_normal((64, 32)).astype(np.float32)
    s = np.array([0.0, 3.0, 0.0], np.float32)
    c = np.zeros((32, 32), np.float32)
    k_dim_read(a, s, c, config=RunConfig())
    np.testing.assert_allclose(c, a[32:] * 3.0, rtol=1e-6)


def test_set_validshape_limits_the_store():
    a = rng.standard_normal((16, 32)).astype(np.float32)
    c = np.full((16, 32), -7.0, np.float32)
    k_set_validshape(a, c, config=RunConfig())
    np.testing.assert_allclose(c[:8], a[:8] + 1.0, rtol=1e-6)
    np.testing.assert_array_equal(c[8:], -7.0)

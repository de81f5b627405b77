"""Row/column reductions and broadcast-fused ops (softmax building blocks) against numpy."""

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

rng = np.random.default_rng(11)


@pl.jit
def k_row_reduce(a: pl.Tensor, s: pl.Out[pl.Tensor], mx: pl.Out[pl.Tensor], mn: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        tmp = pl.create_tile([32, 64], dtype=pl.FP32)
        rs = pl.row_sum(t, tmp)
        rmax: pl.Tile[[32, 1], pl.FP32] = pl.row_max(t, tmp)
        rmin = pl.row_min(t)
        pl.store(pl.reshape(rs, [1, 32]), [0, 0], s)
        pl.store(pl.reshape(rmax, [1, 32]), [0, 0], mx)
        pl.store(pl.reshape(rmin, [1, 32]), [0, 0], mn)
    return s


@pl.jit
def k_col_reduce(a: pl.Tensor, s: pl.Out[pl.Tensor], mx: pl.Out[pl.Tensor], p: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        pl.store(pl.col_sum(t), [0, 0], s)
        pl.store(pl.col_max(t), [0, 0], mx)
        pl.store(pl.col_prod(t), [0, 0], p)
    return s


@pl.jit
def k_softmax(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        m = pl.row_max(t)
        e = pl.row_expand_expdif(t, m)
        s = pl.row_sum(e)
        pl.store(pl.row_expand_div(e, s), [0, 0], c)
    return c


@pl.jit
def k_col_expand(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        v = pl.load(b, [0, 0], [1, 64])
        x = pl.col_expand_mul(t, v)
        y = pl.col_expand(t, v)
        pl.store(pl.add(x, y), [0, 0], c)
    return c


def test_row_reductions():
    a = rng.uniform(-1, 1, (32, 64)).astype(np.float32)
    s, mx, mn = (np.zeros((1, 32), np.float32) for _ in range(3))
    k_row_reduce(a, s, mx, mn, config=RunConfig())
    np.testing.assert_allclose(s[0], a.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mx[0], a.max(axis=1))
    np.testing.assert_array_equal(mn[0], a.min(axis=1))


def test_col_reductions():
    a = rng.uniform(0.9, 1.1, (16, 64)).astype(np.float32)
    s, mx, p = (np.zeros((1, 64), np.float32) for _ in range(3))
    k_col_reduce(a, s, mx, p, config=RunConfig())
    np.testing.assert_allclose(s[0], a.sum(axis=0), rtol=1e-5)
    np.testing.assert_array_equal(mx[0], a.max(axis=0))
    np.testing.assert_allclose(p[0], a.prod(axis=0), rtol=1e-4)


def test_softmax_rows():
    a = rng.uniform(-3, 3, (32, 64)).astype(np.float32)
    c = np.zeros_like(a)
    k_softmax(a, c, config=RunConfig())
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(c, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_col_expand_forms():
    a = rng.uniform(-1, 1, (32, 64)).astype(np.float32)
    b = rng.uniform(-1, 1, (1, 64)).astype(np.float32)
    c = np.zeros_like(a)
    k_col_expand(a, b, c, config=RunConfig())
    np.testing.assert_allclose(c, a * b + np.broadcast_to(b, a.shape), rtol=1e-6)

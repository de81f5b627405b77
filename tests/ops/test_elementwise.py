"""Elementwise tile ops (tile-tile, tile-scalar, unary, cast) run end to end against numpy."""

import numpy as np
import pypto.language as pl
import pytest
from pypto.runtime import RunConfig

rng = np.random.default_rng(7)


def rand(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


@pl.jit
def k_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [0, 0], [64, 64])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def k_sub_mul_div(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [0, 0], [64, 64])
        t = pl.div(pl.mul(pl.sub(ta, tb), ta), tb)
        pl.store(t, [0, 0], c)
    return c


@pl.jit
def k_max_min(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [0, 0], [64, 64])
        pl.store(pl.sub(pl.maximum(ta, tb), pl.minimum(ta, tb)), [0, 0], c)
    return c


@pl.jit
def k_scalar_forms(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 64])
        t = pl.add(t, 1.5)
        t = pl.mul(t, 2.0)
        t = pl.sub(t, 0.25)
        t = pl.div(t, 4.0)
        t = pl.maxs(t, -0.5)
        t = pl.mins(t, 0.75)
        pl.store(t, [0, 0], c)
    return c


@pl.jit
def k_unary(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 64])
        x = pl.abs(pl.neg(t))
        y = pl.sqrt(pl.add(x, 1.0))
        z = pl.add(pl.rsqrt(pl.add(x, 1.0)), pl.recip(pl.add(x, 2.0)))
        w = pl.add(pl.exp(pl.relu(t)), pl.log(pl.add(x, 1.0)))
        pl.store(pl.add(pl.add(y, z), w), [0, 0], c)
    return c


@pl.jit
def k_cast_roundtrip(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 64])
        h = pl.cast(t, pl.BF16, mode="rint")
        pl.store(pl.cast(h, target_type=pl.FP32), [0, 0], c)
    return c


def test_add():
    a, b = rand(64, 64), rand(64, 64)
    c = np.zeros((64, 64), np.float32)
    k_add(a, b, c, config=RunConfig())
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


def test_sub_mul_div():
    a, b = rand(64, 64), rand(64, 64, lo=0.5, hi=2.0)
    c = np.zeros((64, 64), np.float32)
    k_sub_mul_div(a, b, c, config=RunConfig())
    np.testing.assert_allclose(c, (a - b) * a / b, rtol=1e-5, atol=1e-6)


def test_maximum_minimum():
    a, b = rand(64, 64), rand(64, 64)
    c = np.zeros((64, 64), np.float32)
    k_max_min(a, b, c, config=RunConfig())
    np.testing.assert_allclose(c, np.abs(a - b), rtol=1e-6)


def test_scalar_forms():
    a = rand(64, 64)
    c = np.zeros((64, 64), np.float32)
    k_scalar_forms(a, c, config=RunConfig())
    ref = np.minimum(np.maximum(((a + 1.5) * 2.0 - 0.25) / 4.0, -0.5), 0.75)
    np.testing.assert_allclose(c, ref, rtol=1e-6)


def test_unary():
    a = rand(64, 64)
    c = np.zeros((64, 64), np.float32)
    k_unary(a, c, config=RunConfig())
    x = np.abs(a)
    ref = (
        np.sqrt(x + 1) + 1 / np.sqrt(x + 1) + 1 / (x + 2) + np.exp(np.maximum(a, 0)) + np.log(x + 1)
    )
    np.testing.assert_allclose(c, ref, rtol=1e-5)


def test_cast_bf16_roundtrip():
    torch = pytest.importorskip("torch")
    a = rand(64, 64)
    c = np.zeros((64, 64), np.float32)
    k_cast_roundtrip(a, c, config=RunConfig())
    ref = torch.from_numpy(a).to(torch.bfloat16).to(torch.float32).numpy()
    np.testing.assert_array_equal(c, ref)

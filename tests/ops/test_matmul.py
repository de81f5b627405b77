"""Cube ops: matmul, matmul_acc over K tiles, matmul_bias; dtype pairs; against numpy."""

import numpy as np
import pypto.language as pl
import pytest
from pypto.runtime import RunConfig

rng = np.random.default_rng(3)


@pl.jit
def k_matmul(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
        b = pl.load(w, [0, 0], [32, 48], target_memory=pl.MemorySpace.Mat)
        l = pl.move(a, target_memory=pl.MemorySpace.Left)
        r = pl.move(b, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(l, r)
        pl.store(acc, [0, 0], y)
    return y


@pl.jit
def k_matmul_acc(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        b = pl.load(w, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(
            pl.move(a, target_memory=pl.MemorySpace.Left),
            pl.move(b, target_memory=pl.MemorySpace.Right),
        )
        for k in pl.range(1, 4):
            a2 = pl.load(x, [0, k * 32], [32, 32], target_memory=pl.MemorySpace.Mat)
            b2 = pl.load(w, [k * 32, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(
                acc,
                pl.move(a2, target_memory=pl.MemorySpace.Left),
                pl.move(b2, target_memory=pl.MemorySpace.Right),
            )
        pl.store(acc, [0, 0], y)
    return y


@pl.jit
def k_matmul_bias(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.move(
            pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
            target_memory=pl.MemorySpace.Left,
        )
        b = pl.move(
            pl.load(w, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
            target_memory=pl.MemorySpace.Right,
        )
        bb = pl.move(
            pl.load(bias, [0, 0], [1, 32], target_memory=pl.MemorySpace.Mat),
            target_memory=pl.MemorySpace.Bias,
        )
        pl.store(pl.matmul_bias(a, b, bb), [0, 0], y)
    return y


@pl.jit
def k_matmul_then_vec(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.move(
            pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
            target_memory=pl.MemorySpace.Left,
        )
        b = pl.move(
            pl.load(w, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
            target_memory=pl.MemorySpace.Right,
        )
        acc = pl.matmul(a, b)
        v = pl.move(acc, target_memory=pl.MemorySpace.Vec)
        pl.store(pl.relu(v), [0, 0], y)
    return y


def test_matmul_fp32():
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((32, 48)).astype(np.float32)
    y = np.zeros((64, 48), np.float32)
    k_matmul(x, w, y, config=RunConfig())
    np.testing.assert_allclose(y, x @ w, rtol=1e-4, atol=1e-4)


def test_matmul_fp16_inputs_fp32_result():
    x = rng.standard_normal((64, 32)).astype(np.float16)
    w = rng.standard_normal((32, 48)).astype(np.float16)
    y = np.zeros((64, 48), np.float32)
    k_matmul(x, w, y, config=RunConfig())
    np.testing.assert_allclose(y, x.astype(np.float32) @ w.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_matmul_acc_over_k():
    x = rng.standard_normal((32, 128)).astype(np.float32)
    w = rng.standard_normal((128, 32)).astype(np.float32)
    y = np.zeros((32, 32), np.float32)
    k_matmul_acc(x, w, y, config=RunConfig())
    np.testing.assert_allclose(y, x @ w, rtol=1e-4, atol=1e-4)


def test_matmul_bias():
    x = rng.standard_normal((32, 32)).astype(np.float32)
    w = rng.standard_normal((32, 32)).astype(np.float32)
    bias = rng.standard_normal((1, 32)).astype(np.float32)
    y = np.zeros((32, 32), np.float32)
    k_matmul_bias(x, w, bias, y, config=RunConfig())
    np.testing.assert_allclose(y, x @ w + bias, rtol=1e-4, atol=1e-4)


def test_matmul_then_vector_op():
    x = rng.standard_normal((32, 32)).astype(np.float32)
    w = rng.standard_normal((32, 32)).astype(np.float32)
    y = np.zeros((32, 32), np.float32)
    k_matmul_then_vec(x, w, y, config=RunConfig())
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)


def test_matmul_from_vec_is_rejected_with_the_move_fix():
    @pl.jit
    def bad(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [0, 0], [32, 32])
            pl.store(pl.matmul(a, a), [0, 0], y)
        return y

    x = np.zeros((32, 32), np.float32)
    with pytest.raises(Exception) as err:
        bad(x, np.zeros_like(x), config=RunConfig())
    msg = str(err.value)
    assert "pl.tile.matmul" in msg and "Left" in msg
    assert "pl.move(t, target_memory=pl.MemorySpace.Left)" in msg

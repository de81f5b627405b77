"""Cube ops: matmul, matmul_acc over K tiles, matmul_bias; dtype pairs; against numpy."""

import numpy as np
import pypto.language as pl
import pytest
from pypto import ir
from pypto.runtime import RunConfig, jit_compile

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


def test_matmul_without_moves_gets_its_memories_inferred():
    # Default loads used only by the cube land in Mat and move to Left/Right; the Acc result
    # read by a vector op is moved to Vec (pass InferMemory).
    @pl.jit
    def implicit(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [0, 0], [32, 64])
            k = pl.load(w, [0, 0], [64, 32])
            y = pl.store(pl.relu(pl.add(pl.matmul(a, k), pl.load(b, [0, 0], [32, 32]))), [0, 0], y)
        return y

    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((32, 64), dtype=np.float32), rng.standard_normal((64, 32), dtype=np.float32)
    b = rng.standard_normal((32, 32), dtype=np.float32)
    y = np.zeros((32, 32), np.float32)
    implicit(x, w, b, y, config=RunConfig())
    np.testing.assert_allclose(y, np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)
    text = ir.print_program(jit_compile(implicit, (x, w, b, y)).program)
    assert text.count("target_memory=pl.Mem.Mat)") == 2  # both operand loads go to Mat
    assert "pl.tile.move(a, pl.Mem.Left)" in text and "pl.tile.move(k, pl.Mem.Right)" in text
    assert "pl.tile.move(matmul, pl.Mem.Vec)" in text  # the Acc result moved to Vec for the add


def test_a_vector_result_feeds_the_cube_through_mat():
    # exp(x) is computed in Vec; the cube reads it through Vec -> Mat -> Left.
    @pl.jit
    def vec_to_cube(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            e = pl.exp(pl.load(x, [0, 0], [32, 32]))
            y = pl.store(pl.matmul(e, pl.load(w, [0, 0], [32, 32])), [0, 0], y)
        return y

    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((32, 32), dtype=np.float32), rng.standard_normal((32, 32), dtype=np.float32)
    y = np.zeros((32, 32), np.float32)
    vec_to_cube(x, w, y, config=RunConfig())
    np.testing.assert_allclose(y, np.exp(x) @ w, rtol=1e-4, atol=1e-4)

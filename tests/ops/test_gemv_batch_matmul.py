"""Cube ops of tier 2: gemv / gemv_acc / gemv_bias (TGEMV, TGEMV_ACC, TGEMV_BIAS: a [1, K] row
times a [K, N] matrix) and batch_matmul on 3-D tensors (one blocked matmul per batch), against
numpy on the cube's dtype pairs, with explicit moves and with InferMemory placing operands,
valid shapes smaller than the tile, and the errors for misuse."""

import numpy as np
import pypto.language as pl
import pytest
from pypto.runtime import RunConfig

rng = np.random.default_rng(61)


def operand(dtype, shape):
    if dtype == np.int8:
        return rng.integers(-8, 8, size=shape).astype(np.int8)
    return rng.uniform(-1, 1, size=shape).astype(dtype)


def product(a, b):
    acc = np.int64 if a.dtype == np.int8 else np.float64
    return np.matmul(a.astype(acc), b.astype(acc))


def out_dtype(dtype):
    return np.int32 if dtype == np.int8 else np.float32


@pl.jit
def k_gemv(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.move(pl.load(x, [0, 0], [1, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        b = pl.move(pl.load(w, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        pl.store(pl.gemv(a, b), [0, 0], y)
    return y


@pl.jit
def k_gemv_int8(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.gemv(pl.load(x, [0, 0], [1, 64]), pl.load(w, [0, 0], [64, 32]), out_dtype=pl.INT32), [0, 0], y)
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8], ids=lambda d: np.dtype(d).name)
def test_gemv(dtype):
    x, w = operand(dtype, (1, 64)), operand(dtype, (64, 32))
    y = np.zeros((1, 32), out_dtype(dtype))
    (k_gemv_int8 if dtype == np.int8 else k_gemv)(x, w, y, config=RunConfig())
    np.testing.assert_allclose(y, product(x, w), rtol=1e-5, atol=1e-5)


@pl.jit
def k_gemv_acc_bias(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        # No pl.move: InferMemory loads the operands into Mat and moves them to Left/Right/Bias.
        acc = pl.gemv(pl.load(x, [0, 0], [1, 32]), pl.load(w, [0, 0], [32, 64]))
        for k in pl.range(1, 4):
            acc = pl.tile.gemv_acc(acc, pl.load(x, [0, k * 32], [1, 32]), pl.load(w, [k * 32, 0], [32, 64]))
        pl.store(acc, [0, 0], y)
        pl.store(pl.gemv_bias(pl.load(x, [0, 0], [1, 32]), pl.load(w, [0, 0], [32, 64]), pl.load(bias, [0, 0], [1, 64])),
                 [0, 0], z)
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: np.dtype(d).name)
def test_gemv_acc_over_k_and_gemv_bias(dtype):
    x, w = operand(dtype, (1, 128)), operand(dtype, (128, 64))
    bias = rng.uniform(-1, 1, size=(1, 64)).astype(np.float32)
    y, z = np.zeros((1, 64), np.float32), np.zeros((1, 64), np.float32)
    k_gemv_acc_bias(x, w, bias, y, z, config=RunConfig())
    np.testing.assert_allclose(y, product(x, w), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z, product(x[:, :32], w[:32]) + bias, rtol=1e-5, atol=1e-5)


@pl.jit
def k_gemv_ragged(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat, valid_shape=[1, 32])
        b = pl.load(w, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat, valid_shape=[32, 40])
        pl.store(pl.gemv(a, b), [0, 0], y)
    return y


def test_gemv_of_a_one_row_valid_region_of_a_taller_left_tile():
    x, w = operand(np.float16, (16, 32)), operand(np.float16, (32, 64))
    y = np.full((1, 64), 3.0, np.float32)
    k_gemv_ragged(x, w, y, config=RunConfig())
    np.testing.assert_allclose(y[:, :40], product(x[:1], w[:, :40]), rtol=1e-5, atol=1e-5)
    assert (y[:, 40:] == 3).all()  # the result is valid over [1, 40]


@pl.jit
def k_bmm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.batch_matmul(a, b)
    return c


@pl.jit
def k_bmm_int8(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.batch_matmul(a, b, out_dtype=pl.INT32)
    return c


@pytest.mark.parametrize("dtype,batch,m,k,n,shared", [
    (np.float16, 3, 32, 64, 48, False),
    (np.float32, 2, 130, 96, 200, False),  # several output blocks, ragged edges
    (np.float16, 4, 16, 512, 16, True),  # K walked in blocks (matmul_acc), rhs shared by every batch
    (np.int8, 2, 32, 64, 32, False),
], ids=["fp16", "fp32-blocks", "fp16-shared-rhs", "int8"])
def test_batch_matmul(dtype, batch, m, k, n, shared):
    a = operand(dtype, (batch, m, k))
    b = operand(dtype, (k, n) if shared else (batch, k, n))
    c = np.zeros((batch, m, n), out_dtype(dtype))
    (k_bmm_int8 if dtype == np.int8 else k_bmm)(a, b, c, config=RunConfig())
    np.testing.assert_allclose(c, product(a, b), rtol=1e-5, atol=1e-4)


@pl.jit
def k_bmm_tensor_form(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[1:3, 0:32, 0:16] = pl.tensor.batch_matmul(a, b)
    return c


def test_batch_matmul_written_into_a_window_of_the_output():
    a, b = operand(np.float16, (2, 32, 32)), operand(np.float16, (2, 32, 16))
    c = np.full((4, 40, 16), -1.0, np.float32)
    k_bmm_tensor_form(a, b, c, config=RunConfig())
    np.testing.assert_allclose(c[1:3, :32], product(a, b), rtol=1e-5, atol=1e-5)
    assert (c[0] == -1).all() and (c[3] == -1).all() and (c[1:3, 32:] == -1).all()


def error_of(fn, *args):
    with pytest.raises(Exception) as err:
        fn(*args, config=RunConfig())
    return str(err.value)


def test_gemv_of_several_rows_is_rejected():
    @pl.jit
    def bad(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.gemv(pl.load(x, [0, 0], [16, 32]), pl.load(w, [0, 0], [32, 32])), [0, 0], y)
        return y

    msg = error_of(bad, np.zeros((16, 32), np.float16), np.zeros((32, 32), np.float16), np.zeros((1, 32), np.float32))
    assert "pl.tile.gemv: gemv multiplies one row: 'lhs' is Tile[[16, 32], FP16, Vec] with 16 valid rows, not 1" in msg
    assert "use pl.matmul" in msg


def test_gemv_acc_needs_a_matching_accumulator():
    @pl.jit
    def bad(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            a, b = pl.load(x, [0, 0], [1, 32]), pl.load(w, [0, 0], [32, 32])
            acc = pl.gemv(a, b)
            pl.store(pl.gemv_acc(acc, a, pl.load(w, [0, 0], [32, 16])), [0, 0], y)
        return y

    msg = error_of(bad, np.zeros((1, 32), np.float16), np.zeros((32, 32), np.float16), np.zeros((1, 32), np.float32))
    assert "pl.tile.gemv_acc: argument 'acc' is Tile[[1, 32], FP32, Acc] but lhs @ rhs gives [1, 16] FP32" in msg


def test_batch_matmul_misuse():
    @pl.jit
    def on_tiles(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 16])
            pl.store(pl.batch_matmul(t, t), [0, 0], y)
        return y

    @pl.jit
    def batches_differ(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:] = pl.batch_matmul(a, b)
        return c

    z = np.zeros((16, 16), np.float16)
    msg = error_of(on_tiles, z, z.astype(np.float32))
    assert "argument 'lhs' is a tile; batch_matmul multiplies 3-D tensors [B, M, K] @ [B, K, N]" in msg
    assert "call pl.matmul on the [M, K] and [K, N] tiles of each batch" in msg
    msg = error_of(batches_differ, np.zeros((2, 16, 16), np.float16), np.zeros((3, 16, 16), np.float16),
                   np.zeros((2, 16, 16), np.float32))
    assert "pl.tensor.batch_matmul: batch sizes differ" in msg

"""Codegen of whole programs: loops with carried tiles and scalars, branches, several
kernels called from one orchestration with intermediates, and the saved `.pto` text."""

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

rng = np.random.default_rng(13)


@pl.jit
def k_loop_sum(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([32, 32], dtype=pl.FP32, value=0.0)
        for i in pl.range(4):
            t = pl.load(a, [0, i * 32], [32, 32])
            acc = pl.add(acc, t)
        pl.store(acc, [0, 0], c)
    return c


@pl.jit
def k_loop_iter_args(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        init = pl.full([32, 32], dtype=pl.FP32, value=1.0)
        for i, (acc,) in pl.range(0, 4, 2, init_values=(init,)):
            t = pl.load(a, [0, i * 32], [32, 32])
            acc2 = pl.yield_(pl.mul(acc, t))
        pl.store(acc2, [0, 0], c)
    return c


@pl.jit
def k_branch(a: pl.Tensor, flag: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 32])
        if flag > 0:
            r = pl.yield_(pl.muls(t, 2.0))
        else:
            r = pl.yield_(pl.neg(t))
        pl.store(r, [0, 0], c)
    return c


@pl.jit
def k_scalar_loop(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = 0.0
        for i in pl.range(5):
            s = s + 1.5
        t = pl.load(a, [0, 0], [32, 32])
        pl.store(pl.adds(t, s), [0, 0], c)
    return c


@pl.jit.incore
def scale_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [32, 32])
    y = pl.store(pl.muls(t, 3.0), [0, 0], y)
    return y


@pl.jit.incore
def add_kernel(x: pl.Tensor, z: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.add(pl.load(x, [0, 0], [32, 32]), pl.load(z, [0, 0], [32, 32]))
    y = pl.store(t, [0, 0], y)
    return y


@pl.jit
def two_kernels(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([32, 32], dtype=pl.FP32)
    tmp = scale_kernel(a, tmp)
    out = add_kernel(tmp, a, out)
    return out


@pl.jit
def kernels_in_a_loop(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([32, 32], dtype=pl.FP32)
    tmp = scale_kernel(a, tmp)
    for i in pl.range(2):
        tmp = scale_kernel(tmp, tmp)
    out = add_kernel(tmp, a, out)
    return out


def test_loop_with_rebinding():
    a = rng.standard_normal((32, 128)).astype(np.float32)
    c = np.zeros((32, 32), np.float32)
    k_loop_sum(a, c, config=RunConfig())
    np.testing.assert_allclose(c, a.reshape(32, 4, 32).sum(axis=1), rtol=1e-5, atol=1e-6)


def test_loop_with_init_values_and_step():
    a = rng.uniform(0.5, 1.5, (32, 128)).astype(np.float32)
    c = np.zeros((32, 32), np.float32)
    k_loop_iter_args(a, c, config=RunConfig())
    np.testing.assert_allclose(c, a[:, 0:32] * a[:, 64:96], rtol=1e-6)


def test_branch_on_a_scalar_parameter():
    a = rng.standard_normal((32, 32)).astype(np.float32)
    c = np.zeros_like(a)
    k_branch(a, 1, c, config=RunConfig())
    np.testing.assert_allclose(c, a * 2.0, rtol=1e-6)
    k_branch(a, 0, c, config=RunConfig())
    np.testing.assert_allclose(c, -a, rtol=1e-6)


def test_scalar_carried_through_a_loop():
    a = rng.standard_normal((32, 32)).astype(np.float32)
    c = np.zeros_like(a)
    k_scalar_loop(a, c, config=RunConfig())
    np.testing.assert_allclose(c, a + 7.5, rtol=1e-6)


def test_orchestration_with_an_intermediate():
    a = rng.standard_normal((32, 32)).astype(np.float32)
    out = np.zeros_like(a)
    two_kernels(a, out, config=RunConfig())
    np.testing.assert_allclose(out, 4.0 * a, rtol=1e-6)


def test_kernel_calls_in_a_loop_thread_the_same_tensor():
    a = rng.standard_normal((32, 32)).astype(np.float32)
    out = np.zeros_like(a)
    kernels_in_a_loop(a, out, config=RunConfig())
    np.testing.assert_allclose(out, 27.0 * a + a, rtol=1e-5)


def test_saved_pto_text(tmp_path):
    a = rng.standard_normal((32, 32)).astype(np.float32)
    out = np.zeros_like(a)
    two_kernels(a, out, config=RunConfig(save_kernels=True, save_kernels_dir=str(tmp_path)))
    texts = [p.read_text() for p in tmp_path.rglob("*.pto")]
    assert len(texts) >= 2
    joined = "\n".join(texts)
    assert "pto.tmuls" in joined and "pto.tadd" in joined
    assert "!pto.tile<vec, f32, 32x32" in joined
    assert "AIV (vector core)" in joined

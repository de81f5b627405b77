"""Regression: tile.matmul's a_trans/b_trans used to be silently ignored by the cube (wrong
results); now they are rejected with a fix, and pl.transpose_view gives A @ B^T."""

import numpy as np
import pypto.language as pl
import pytest


@pl.jit
def abt_flag(q: pl.Tensor, k: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ql = pl.move(pl.load(q, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        kr = pl.move(pl.load(k, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        o = pl.store(pl.matmul(ql, kr, b_trans=True), [0, 0], o)
    return o


@pl.jit
def abt_view(q: pl.Tensor, k: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ql = pl.move(pl.load(q, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        kt = pl.transpose_view(pl.load(k, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat))
        o = pl.store(pl.matmul(ql, pl.move(kt, target_memory=pl.MemorySpace.Right)), [0, 0], o)
    return o


def test_b_trans_flag_is_rejected_with_a_fix():
    q = np.ones((64, 64), np.float32)
    with pytest.raises(Exception, match=r"b_trans=True is not supported(.|\n)*fix: .*pl.transpose_view"):
        abt_flag(q, q, np.zeros((64, 64), np.float32))


def test_transpose_view_gives_a_times_b_transposed():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((64, 64), dtype=np.float32)
    k = rng.standard_normal((32, 64), dtype=np.float32)
    o = np.zeros((64, 32), np.float32)
    abt_view(q, k, o)
    np.testing.assert_allclose(o, q @ k.T, rtol=1e-4, atol=1e-4)

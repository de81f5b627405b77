"""Unroll and Simplify: pass text in, pass text out, plus an unrolled loop run end to end
against numpy and the errors for loops that cannot be unrolled."""

import numpy as np
import pypto.language as pl
import pytest
from pass_text import check_pass, run_pass
from pypto import _core


def test_unroll_copies_the_body_and_threads_the_carried_tile():
    before = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 128], pl.FP32], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
                z: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([64, 32], dtype=pl.FP32, value=0.0)
                for j, (acc,) in pl.unroll(0, 3, 1, init_values=(z,)):
                    t: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, j * 32], [64, 32], target_memory=pl.Mem.Vec)
                    acc_1: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, t)
                    acc_2 = pl.yield_(acc_1)
                c_1: pl.Tensor[[64, 32], pl.FP32] = pl.tile.store(acc_2, [0, 0], c)
                return c_1"""
    after = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 128], pl.FP32], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
                z: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([64, 32], dtype=pl.FP32, value=0.0)
                t: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Vec)
                acc_1: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, t)
                t_1: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 32], [64, 32], target_memory=pl.Mem.Vec)
                acc_1_1: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc_1, t_1)
                t_2: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 64], [64, 32], target_memory=pl.Mem.Vec)
                acc_1_2: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc_1_1, t_2)
                c_1: pl.Tensor[[64, 32], pl.FP32] = pl.tile.store(acc_1_2, [0, 0], c)
                return c_1"""
    check_pass("Unroll", before, after)


def test_simplify_folds_constants_and_drops_dead_pure_values():
    before = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 128], pl.FP32], n: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
                unused: pl.Scalar[pl.INDEX] = n * 2
                dead: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([64, 32], dtype=pl.FP32, value=1.0)
                t: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0 * 64 + n * 1, 2 * 16 + 0], [64, 32], target_memory=pl.Mem.Vec)
                c_1: pl.Tensor[[64, 32], pl.FP32] = pl.tile.store(t, [0, 0], c)
                return c_1"""
    after = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 128], pl.FP32], n: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
                t: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [n, 32], [64, 32], target_memory=pl.Mem.Vec)
                c_1: pl.Tensor[[64, 32], pl.FP32] = pl.tile.store(t, [0, 0], c)
                return c_1"""
    check_pass("Simplify", before, after)


def test_unroll_needs_compile_time_bounds():
    text = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, n: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
                for j in pl.unroll(0, n, 1):
                    t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
                return c
        """
    with pytest.raises(_core.PyptoError, match="pl.unroll needs bounds known at compile time"):
        run_pass("Unroll", text)


@pl.jit
def prefix_sums(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([16, 32], dtype=pl.FP32, value=0.0)
        for j in pl.unroll(4):
            acc = pl.add(acc, pl.load(x, [0, j * 32], [16, 32]))
            y = pl.store(acc, [0, j * 32], y)
    return y


def test_unrolled_loop_end_to_end():
    x = np.random.default_rng(3).standard_normal((16, 128), dtype=np.float32)
    y = np.zeros_like(x)
    prefix_sums(x, y)
    want = np.cumsum(x.reshape(16, 4, 32), axis=1).reshape(16, 128)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    lowered = prefix_sums.lower(x, y)
    assert "pl.unroll" not in str(lowered) and "pl.range" not in str(lowered)

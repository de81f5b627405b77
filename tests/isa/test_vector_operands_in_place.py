"""Vector-instruction sources read in place (native_codegen.cpp plan_direct): a Vec tile written
only by plain TLOADs is not copied; the TLOAD records the tensor window and the elementwise,
scalar, reduce, broadcast and expand fast paths read it with the tensor's row stride. A reader
without such a path (a TSTORE, a TMOV, the reference library), a window that does not hold the
whole tile (a partial last block), a window that is not row-contiguous (a transposed view) and
a tensor sharing bytes with one the kernel writes all take the copy the TLOAD would have made.
Each case is checked against numpy on the native target and the forced portable one, and the
generated source is inspected for the in-place reads."""

import glob
import re

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig

R, C, RB = 64, 256, 8


def sources(cache):
    return "".join(open(f).read() for f in glob.glob(str(cache / "**" / "*.cpp"), recursive=True))


NATIVE = RunConfig(engine="native")


@pl.jit
def add_rows(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(R // RB):
            ta = pl.load(a, [i * RB, 0], [RB, C])
            tb = pl.load(b, [i * RB, 0], [RB, C])
            c = pl.store(pl.add(ta, tb), [i * RB, 0], c)
    return c


@pl.jit
def softmax_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(R // RB):
            t = pl.load(x, [i * RB, 0], [RB, C])
            tmp = pl.create_tile([RB, C], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            e = pl.exp(pl.row_expand_sub(t, pl.row_max(t, tmp_tile=tmp)))
            y = pl.store(pl.row_expand_div(e, pl.row_sum(e, tmp_tile=tmp)), [i * RB, 0], y)
    return y


@pl.jit
def rmsnorm_rows(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        wt = pl.load(w, [0, 0], [1, C])
        for i in pl.range(R // RB):
            t = pl.load(x, [i * RB, 0], [RB, C])
            tmp = pl.create_tile([RB, C], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            ms = pl.muls(pl.row_sum(pl.mul(t, t), tmp_tile=tmp), 1.0 / C)
            r = pl.rsqrt(pl.adds(ms, 1e-6))
            y = pl.store(pl.col_expand_mul(pl.row_expand_mul(t, r), wt), [i * RB, 0], y)
    return y


@pl.jit
def add_then_copy(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    """ta is read in place by TADD, then stored as it is (TSTORE has no in-place read: the copy)."""
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(R // RB):
            ta = pl.load(a, [i * RB, 0], [RB, C])
            tb = pl.load(b, [i * RB, 0], [RB, C])
            c = pl.store(pl.add(ta, tb), [i * RB, 0], c)
            d = pl.store(ta, [i * RB, 0], d)
    return c, d


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_elementwise_sources_read_in_place(kernel_cache, dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((R, C), dtype=np.float32).astype(dtype)
    b = rng.standard_normal((R, C), dtype=np.float32).astype(dtype)
    c = np.zeros_like(a)
    add_rows(a, b, c, config=NATIVE)
    np.testing.assert_array_equal(c, a + b)
    src = sources(kernel_cache)
    assert src.count("pto_opt::tensor_window(") == 2, src
    assert "dp1 = gp" in src and "dp2 = gp" in src, src


def test_softmax_reads_its_rows_in_place(kernel_cache):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((R, C), dtype=np.float32)
    y = np.zeros_like(x)
    softmax_rows(x, y, config=NATIVE)
    want = torch.softmax(torch.from_numpy(x), dim=-1).numpy()
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-7)
    src = sources(kernel_cache)
    assert "dp1 = gp" in src, src
    # exp's result reuses the rows' bytes once they are dead: the window is dropped, not copied.
    assert re.search(r"/\* TEXP \*/[^\n]*\n(?:[^\n]*\n){0,4}?  gp\d+ = nullptr;\n", src), src


def test_rmsnorm_reads_its_rows_in_place(kernel_cache):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((R, C), dtype=np.float32), rng.standard_normal((1, C), dtype=np.float32)
    y = np.zeros_like(x)
    rmsnorm_rows(x, w, y, config=NATIVE)
    want = x / np.sqrt((x.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    src = sources(kernel_cache)
    # mul(t, t) reads the one window twice; row_expand_mul reads it again.
    assert src.count("dp1 = gp") >= 2 and "dp2 = gp" in src, src


def test_store_of_a_tile_read_in_place_takes_the_copy(kernel_cache):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((R, C), dtype=np.float32), rng.standard_normal((R, C), dtype=np.float32)
    c, d = np.zeros_like(a), np.zeros_like(a)
    add_then_copy(a, b, c, d, config=NATIVE)
    np.testing.assert_array_equal(c, a + b)
    np.testing.assert_array_equal(d, a)


def test_transposed_view_takes_the_copy(kernel_cache):
    """a viewed transposed (column stride R): no row-contiguous window, the TLOAD copies."""
    rng = np.random.default_rng(5)
    base = torch.from_numpy(rng.standard_normal((C, R), dtype=np.float32))
    a = base.t()
    b = torch.from_numpy(rng.standard_normal((R, C), dtype=np.float32))
    c = torch.zeros(R, C)
    add_rows(a, b, c, config=NATIVE)
    assert torch.equal(c, a + b)


def test_source_sharing_bytes_with_the_output_takes_the_copy(kernel_cache):
    """a and c are column views of one buffer (their rows interleave): a is not read in place,
    and every row of c is a + b of the values a had before the kernel wrote c."""
    rng = np.random.default_rng(6)
    buf = torch.zeros(R, 2 * C)
    buf[:, :C] = torch.from_numpy(rng.standard_normal((R, C), dtype=np.float32))
    a, c = buf[:, :C], buf[:, C:]
    b = torch.from_numpy(rng.standard_normal((R, C), dtype=np.float32))
    a0 = a.clone()
    add_rows(a, b, c, config=NATIVE)
    assert torch.equal(c, a0 + b) and torch.equal(a, a0)


def test_in_place_update_of_the_source_takes_the_copy(kernel_cache):
    """c is a itself: each block is read, then overwritten; the reads must see the old values."""
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((R, C), dtype=np.float32), rng.standard_normal((R, C), dtype=np.float32)
    want = a + b
    add_rows(a, b, a, config=NATIVE)
    np.testing.assert_array_equal(a, want)


@pl.jit
def add_tail(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    """The last block holds n - i * RB valid rows (a window smaller than the tile: the copy)."""
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range((n + RB - 1) // RB):
            v = pl.min(RB, n - i * RB)
            ta = pl.load(a, [i * RB, 0], [RB, C], valid_shape=[v, C])
            tb = pl.load(b, [i * RB, 0], [RB, C], valid_shape=[v, C])
            c = pl.store(pl.add(ta, tb), [i * RB, 0], c)
    return c


def test_partial_last_block_takes_the_copy(kernel_cache):
    rng = np.random.default_rng(8)
    n = R - 3
    a, b = rng.standard_normal((n, C), dtype=np.float32), rng.standard_normal((n, C), dtype=np.float32)
    c = np.full((n, C), 7.0, np.float32)
    add_tail(a, b, c, n, config=NATIVE)
    np.testing.assert_array_equal(c, a + b)


@pl.jit
def reshaped_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """r is a reshape of ta (the same bytes, no copy): reading r needs ta's bytes."""
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            ta = pl.load(a, [i * 8, 0], [8, 256])
            r = pl.reshape(ta, [16, 128])
            tb = pl.load(b, [i * 16, 0], [16, 128])
            c = pl.store(pl.add(r, tb), [i * 16, 0], c)
    return c


def test_alias_of_a_tile_read_in_place_reads_its_copy(kernel_cache):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((32, 256), dtype=np.float32)
    b = rng.standard_normal((64, 128), dtype=np.float32)
    c = np.zeros((64, 128), np.float32)
    reshaped_add(a, b, c, config=NATIVE)
    np.testing.assert_array_equal(c, a.reshape(64, 128) + b)
    src = sources(kernel_cache)
    assert "dp2 = gp" in src, src  # tb read in place
    assert "if (gp0) { f->support->copy_region" in src, src  # ta copied before r is read



@pl.jit
def branch_and_reuse(a: pl.Tensor, b: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor], flag: pl.Scalar[pl.INDEX]):
    """wt is loaded once before the loop and read in place by every iteration; t comes from a or
    b by a branch (two TLOADs write it)."""
    with pl.at(level=pl.Level.CORE_GROUP):
        wt = pl.load(w, [0, 0], [RB, C])
        for i in pl.range(R // RB):
            if flag > 0:
                t = pl.load(a, [i * RB, 0], [RB, C])
            else:
                t = pl.load(b, [i * RB, 0], [RB, C])
            c = pl.store(pl.mul(pl.add(t, wt), wt), [i * RB, 0], c)
    return c


@pytest.mark.parametrize("flag", [1, 0])
def test_branch_loaded_and_loop_invariant_sources(kernel_cache, flag):
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((R, C), dtype=np.float32), rng.standard_normal((R, C), dtype=np.float32)
    w = rng.standard_normal((RB, C), dtype=np.float32)
    c = np.zeros_like(a)
    branch_and_reuse(a, b, w, c, flag, config=NATIVE)
    src = a if flag else b
    np.testing.assert_array_equal(c, ((src.reshape(-1, RB, C) + w) * w).reshape(R, C))
    if flag:  # the first call compiled the kernel into this cache
        assert sources(kernel_cache).count("pto_opt::tensor_window(") == 3

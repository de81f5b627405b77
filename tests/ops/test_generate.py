"""Tiles made from scalars and shapes: expands (TEXPANDS), expand_clone (TROWEXPAND /
TCOLEXPAND / TMOV, a single element through both broadcasts), tri (TTRI) and arange (TCI),
end to end against numpy on several dtypes and valid shapes, plus the errors for misuse."""

import numpy as np
import pypto.language as pl
import pytest
from pypto.runtime import RunConfig

rng = np.random.default_rng(41)


@pl.jit
def k_expands(a: pl.Tensor, s: pl.Scalar[pl.FP32], c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 32])
        pl.store(pl.expands(t, 2.5), [0, 0], c)
        pl.store(pl.add(t, pl.tile.expands(t, s)), [0, 0], d)
    return c


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8], ids=lambda d: np.dtype(d).name)
def test_expands_fills_a_tile_shaped_like_the_target(dtype):
    a = rng.integers(-5, 5, size=(16, 32)).astype(dtype)
    c, d = np.zeros_like(a), np.zeros_like(a)
    k_expands(a, 3.0, c, d, config=RunConfig())
    np.testing.assert_array_equal(c, np.full_like(a, 2.5 if np.issubdtype(dtype, np.floating) else 2))
    np.testing.assert_array_equal(d, a + dtype(3))


@pl.jit
def k_expands_ragged(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[5, 12])
        pl.store(pl.expands(t, -1.0), [0, 0], c)
    return c


def test_expands_keeps_the_targets_valid_shape():
    c = np.zeros((16, 32), np.float32)
    k_expands_ragged(np.ones((16, 32), np.float32), c, config=RunConfig())
    assert (c[:5, :12] == -1).all() and (c[5:] == 0).all() and (c[:, 12:] == 0).all()


@pl.jit
def k_expand_clone(a: pl.Tensor, row: pl.Out[pl.Tensor], col: pl.Out[pl.Tensor], one: pl.Out[pl.Tensor],
                   same: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        mx = pl.row_max(t)  # [16, 1]
        cs = pl.col_sum(t)  # [1, 64]
        pl.store(pl.expand_clone(mx, [16, 64]), [0, 0], row)
        pl.store(pl.tile.expand_clone(cs, [16, 64]), [0, 0], col)
        pl.store(pl.expand_clone(pl.row_min(cs), [16, 64]), [0, 0], one)  # [1, 1] -> both broadcasts
        pl.store(pl.expand_clone(t, [16, 64]), [0, 0], same)
    return row


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16], ids=lambda d: np.dtype(d).name)
def test_expand_clone_broadcasts_rows_columns_and_one_element(dtype):
    a = rng.integers(-50, 50, size=(16, 64)).astype(dtype)
    outs = [np.zeros_like(a) for _ in range(4)]
    k_expand_clone(a, *outs, config=RunConfig())
    col_sum = a.sum(axis=0, dtype=np.float64).astype(dtype)
    np.testing.assert_array_equal(outs[0], np.broadcast_to(a.max(axis=1, keepdims=True), a.shape))
    np.testing.assert_array_equal(outs[1], np.broadcast_to(col_sum, a.shape))
    np.testing.assert_array_equal(outs[2], np.full(a.shape, col_sum.min(), dtype))
    np.testing.assert_array_equal(outs[3], a)


@pl.jit
def k_expand_clone_ragged(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[6, 32])
        pl.store(pl.expand_clone(pl.row_max(t), [16, 32]), [0, 0], c)  # [16, 1] valid [6, 1]
    return c


def test_expand_clone_of_a_partial_column_keeps_its_valid_rows():
    a = rng.uniform(-1, 1, size=(16, 32)).astype(np.float32)
    c = np.zeros((16, 32), np.float32)
    k_expand_clone_ragged(a, c, config=RunConfig())
    np.testing.assert_array_equal(c[:6], np.broadcast_to(a[:6].max(axis=1, keepdims=True), (6, 32)))
    assert (c[6:] == 0).all()


@pl.jit
def k_tri(lo: pl.Out[pl.Tensor], up: pl.Out[pl.Tensor], lo_i: pl.Out[pl.Tensor], ragged: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.tri(shape=[16, 32], dtype=pl.FP32), [0, 0], lo)
        pl.store(pl.tile.tri(shape=[16, 32], dtype=pl.FP32, diagonal=2, upper=True), [0, 0], up)
        pl.store(pl.tri(shape=[16, 32], dtype=pl.INT8, diagonal=-3), [0, 0], lo_i)
        pl.store(pl.tri(shape=[16, 32], dtype=pl.FP16, diagonal=1, valid_shape=[10, 20]), [0, 0], ragged)
    return lo


def test_tri_masks_match_numpy_tril_triu():
    lo, up = np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32)
    lo_i, ragged = np.zeros((16, 32), np.int8), np.full((16, 32), 7, np.float16)
    k_tri(lo, up, lo_i, ragged, config=RunConfig())
    ones = np.ones((16, 32))
    np.testing.assert_array_equal(lo, np.tril(ones))
    np.testing.assert_array_equal(up, np.triu(ones, 2))
    np.testing.assert_array_equal(lo_i, np.tril(ones, -3))
    np.testing.assert_array_equal(ragged[:10, :20], np.tril(np.ones((10, 20)), 1))
    assert (ragged[10:] == 7).all() and (ragged[:, 20:] == 7).all()


@pl.jit
def k_tri_runtime(x: pl.Tensor, k: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 32])
        pl.store(pl.mul(t, pl.tri(shape=[32, 32], dtype=pl.FP32, diagonal=k)), [0, 0], c)
    return c


def test_tri_with_a_run_time_diagonal_masks_attention_scores():
    x = rng.uniform(-1, 1, size=(32, 32)).astype(np.float32)
    for k in (0, -5):
        c = np.zeros_like(x)
        k_tri_runtime(x, k, c, config=RunConfig())
        np.testing.assert_array_equal(c, np.tril(x, k))


@pl.jit
def k_arange(a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor], f: pl.Out[pl.Tensor], ragged: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.arange(0, [16, 32]), [0, 0], a)
        pl.store(pl.tile.arange(100, [16, 32], dtype=pl.INT16), [0, 0], b)
        pl.store(pl.arange(-2.5, [8, 64], dtype=pl.FP32), [0, 0], f)
        pl.store(pl.arange(7, [16, 32], dtype=pl.INT32, valid_shape=[3, 10]), [0, 0], ragged)
    return a


def test_arange_counts_in_row_major_order_over_the_valid_shape():
    a, b = np.zeros((16, 32), np.int32), np.zeros((16, 32), np.int16)
    f, ragged = np.zeros((8, 64), np.float32), np.full((16, 32), -1, np.int32)
    k_arange(a, b, f, ragged, config=RunConfig())
    np.testing.assert_array_equal(a, np.arange(512).reshape(16, 32))
    np.testing.assert_array_equal(b, np.arange(100, 612).reshape(16, 32))
    np.testing.assert_array_equal(f, np.arange(512, dtype=np.float32).reshape(8, 64) - 2.5)
    # Over a [3, 10] valid region the row stride is the valid column count.
    np.testing.assert_array_equal(ragged[:3, :10], np.arange(7, 37).reshape(3, 10))
    assert (ragged[3:] == -1).all() and (ragged[:, 10:] == -1).all()


@pl.jit
def k_arange_gather(x: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [1, 64])
        rev = pl.muls(pl.arange(-63, [1, 64]), -1)  # 63, 62, ..., 0
        pl.store(pl.gather(t, rev), [0, 0], c)
    return c


def test_arange_builds_gather_indices():
    x = rng.uniform(-1, 1, size=(1, 64)).astype(np.float32)
    c = np.zeros_like(x)
    k_arange_gather(x, c, config=RunConfig())
    np.testing.assert_array_equal(c, x[:, ::-1])


def error_of(fn, *args):
    with pytest.raises(Exception) as err:
        fn(*args, config=RunConfig())
    return str(err.value)


def test_expand_clone_of_a_non_broadcastable_shape_is_rejected():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.expand_clone(pl.load(a, [0, 0], [8, 32]), [16, 32]), [0, 0], c)
        return c

    msg = error_of(bad, np.zeros((8, 32), np.float32), np.zeros((16, 32), np.float32))
    assert "pl.tile.expand_clone: cannot broadcast a [8, 32] tile to [16, 32]: dimension 0 is 8, neither 1 nor 16" in msg


def test_generators_check_dtype_alignment_and_scalars():
    @pl.jit
    def bad_dtype(c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.arange(0, [4, 32], dtype=pl.BOOL), [0, 0], c)
        return c

    @pl.jit
    def bad_diag(c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.tri(shape=[16, 32], diagonal=0.5), [0, 0], c)
        return c

    @pl.jit
    def bad_valid(c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.tri(shape=[16, 32], valid_shape=[17, 4]), [0, 0], c)
        return c

    assert "dtype BOOL is not one TCI writes" in error_of(bad_dtype, np.zeros((4, 32), np.bool_))
    assert "pl.tile.tri: argument 'diagonal' must be an integer scalar, got FP32" in error_of(
        bad_diag, np.zeros((16, 32), np.float32))
    assert "valid_shape[0] = 17 is outside 0..16" in error_of(bad_valid, np.zeros((16, 32), np.float32))

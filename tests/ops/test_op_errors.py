"""User errors raised by op verification: each names the op, the argument, what was
expected, and the fix; the wording is pinned here."""

import numpy as np
import pypto.language as pl
import pytest
from pypto.runtime import RunConfig


def error_of(fn, *args):
    with pytest.raises(Exception) as err:
        fn(*args, config=RunConfig())
    return str(err.value)


def z(*shape):
    return np.zeros(shape, np.float32)


def test_load_into_left_is_rejected():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Left)
            pl.store(t, [0, 0], c)
        return c

    msg = error_of(bad, z(32, 32), z(32, 32))
    assert "pl.tile.load: a load lands only in Vec or Mat, not Left" in msg
    assert "load into Mat, then pl.move" in msg
    assert "test_op_errors.py:" in msg


def test_offsets_must_match_rank():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(a, [0], [32, 32]), [0, 0], c)
        return c

    assert "'offsets' has 1 entries but the tensor has rank 2" in error_of(
        bad, z(32, 32), z(32, 32)
    )


def test_load_outside_the_tensor():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(a, [16, 0], [32, 32]), [0, 0], c)
        return c

    msg = error_of(bad, z(32, 32), z(32, 32))
    assert "elements 16..47 of dimension 0, but the tensor has only 32" in msg
    assert "valid_shape" in msg


def test_elementwise_shape_mismatch():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            x = pl.load(a, [0, 0], [32, 32])
            y = pl.load(a, [0, 0], [16, 32])
            pl.store(pl.add(x, y), [0, 0], c)
        return c

    msg = error_of(bad, z(32, 32), z(32, 32))
    assert "pl.tile.add: argument 'rhs' has shape [16, 32] but 'lhs' has [32, 32]" in msg


def test_store_dtype_mismatch():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(a, [0, 0], [32, 32]), [0, 0], c)
        return c

    msg = error_of(bad, z(32, 32), np.zeros((32, 32), np.float16))
    assert "pl.tile.store: the tile is FP32 but the tensor is FP16" in msg
    assert "pl.cast(tile, pl.FP16)" in msg


def test_illegal_move_lists_legal_targets():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [32, 32])
            pl.store(pl.move(t, target_memory=pl.MemorySpace.Left), [0, 0], c)
        return c

    msg = error_of(bad, z(32, 32), z(32, 32))
    assert "cannot move a Vec tile to Left" in msg
    assert "pl.MemorySpace.Vec, pl.MemorySpace.Mat" in msg


def test_matmul_inner_dimension():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            l = pl.move(
                pl.load(a, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat),
                target_memory=pl.MemorySpace.Left,
            )
            r = pl.move(
                pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
                target_memory=pl.MemorySpace.Right,
            )
            pl.store(pl.matmul(l, r), [0, 0], c)
        return c

    msg = error_of(bad, z(32, 32), z(32, 32))
    assert "inner dimensions differ" in msg and "K = 16" in msg and "K = 32" in msg


def test_reshape_changes_element_count():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [32, 32])
            pl.store(pl.reshape(t, [16, 32]), [0, 0], c)
        return c

    msg = error_of(bad, z(32, 32), z(16, 32))
    assert "cannot reshape [32, 32] (1024 elements) to [16, 32] (512 elements)" in msg


def test_cast_mode_is_checked():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [32, 32])
            pl.store(pl.cast(t, pl.FP32, mode="sideways"), [0, 0], c)
        return c

    msg = error_of(bad, z(32, 32), z(32, 32))
    assert 'mode "sideways" is not a rounding mode' in msg


def test_row_expand_vector_shape():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [32, 32])
            pl.store(pl.row_expand_sub(t, pl.col_max(t)), [0, 0], c)
        return c

    msg = error_of(bad, z(32, 32), z(32, 32))
    assert "argument 'row_vec' has shape [1, 32]; for a [32, 32] tile it must be [32, 1]" in msg

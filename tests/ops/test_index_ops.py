"""Index ops end to end against numpy: arg-reductions (TROWARGMAX/ARGMIN, TCOLARGMAX/ARGMIN,
INT32 results), gather/scatter along rows (TGATHER/TSCATTER) and through global memory
(MGATHER/MSCATTER), the tensor-level gather/scatter, and sorting (TSORT32 per 32-element
block, TMRGSORT merging two sorted rows), with several dtypes, valid regions smaller than
the tile, and the errors for misuse."""

import numpy as np
import pypto.language as pl
import pytest
from pypto import ir
from pypto.runtime import RunConfig

rng = np.random.default_rng(53)


def values(dtype, shape, lo=-100, hi=100):
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(lo, hi, size=shape).astype(dtype)
    return rng.integers(lo, hi, size=shape).astype(dtype)


@pl.jit
def k_arg(a: pl.Tensor, rmax: pl.Out[pl.Tensor], rmin: pl.Out[pl.Tensor], cmax: pl.Out[pl.Tensor],
          cmin: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        r: pl.Tile[[16, 1], pl.INT32] = pl.row_argmax(t)
        pl.store(pl.reshape(r, [1, 16]), [0, 0], rmax)
        pl.store(pl.reshape(pl.row_argmin(t), [1, 16]), [0, 0], rmin)
        pl.store(pl.col_argmax(t), [0, 0], cmax)
        pl.store(pl.tile.col_argmin(t), [0, 0], cmin)
    return rmax


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8], ids=lambda d: np.dtype(d).name)
def test_arg_reductions(dtype):
    a = values(dtype, (16, 64), -5, 5)  # integers take few distinct values: ties pick the first index
    rmax, rmin = np.zeros((1, 16), np.int32), np.zeros((1, 16), np.int32)
    cmax, cmin = np.zeros((1, 64), np.int32), np.zeros((1, 64), np.int32)
    k_arg(a, rmax, rmin, cmax, cmin, config=RunConfig())
    np.testing.assert_array_equal(rmax[0], a.argmax(axis=1))
    np.testing.assert_array_equal(rmin[0], a.argmin(axis=1))
    np.testing.assert_array_equal(cmax[0], a.argmax(axis=0))
    np.testing.assert_array_equal(cmin[0], a.argmin(axis=0))


@pl.jit
def k_arg_ragged(a: pl.Tensor, rmax: pl.Out[pl.Tensor], cmin: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64], valid_shape=[10, 37])
        tmp = pl.create_tile([16, 64], dtype=pl.FP32)
        pl.store(pl.reshape(pl.row_argmax(t, tmp), [1, 16]), [0, 0], rmax)
        pl.store(pl.col_argmin(t, tmp), [0, 0], cmin)
    return rmax


def test_arg_reductions_see_only_the_valid_region():
    a = values(np.float32, (16, 64))
    a[:, 37:] = 1e6  # outside the valid columns: never the max
    a[10:, :] = -1e6  # outside the valid rows: never the min
    rmax, cmin = np.full((1, 16), -7, np.int32), np.full((1, 64), -7, np.int32)
    k_arg_ragged(a, rmax, cmin, config=RunConfig())
    np.testing.assert_array_equal(rmax[0, :10], a[:10, :37].argmax(axis=1))
    np.testing.assert_array_equal(cmin[0, :37], a[:10, :37].argmin(axis=0))
    assert (rmax[0, 10:] == -7).all() and (cmin[0, 37:] == -7).all()


@pl.jit
def k_gather_scatter(a: pl.Tensor, gi: pl.Tensor, si: pl.Tensor, g: pl.Out[pl.Tensor], s: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        idx = pl.load(gi, [0, 0], [16, 32])
        gathered = pl.gather(t, idx)
        pl.store(gathered, [0, 0], g)
        pl.store(pl.scatter(t, pl.load(si, [0, 0], [16, 32]), gathered), [0, 0], s)
    return g


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int16], ids=lambda d: np.dtype(d).name)
def test_gather_and_scatter_along_rows(dtype):
    a = values(dtype, (16, 64))
    gi = rng.integers(0, 64, size=(16, 32)).astype(np.int32)
    si = np.stack([rng.permutation(64)[:32] for _ in range(16)]).astype(np.int32)  # distinct per row
    g, s = np.zeros((16, 32), dtype), np.zeros((16, 64), dtype)
    k_gather_scatter(a, gi, si, g, s, config=RunConfig())
    ref_g = np.take_along_axis(a, gi, axis=1)
    ref_s = a.copy()
    np.put_along_axis(ref_s, si, ref_g, axis=1)
    np.testing.assert_array_equal(g, ref_g)
    np.testing.assert_array_equal(s, ref_s)


@pl.jit
def k_gather_ragged(a: pl.Tensor, gi: pl.Tensor, g: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64], valid_shape=[16, 40])
        idx = pl.load(gi, [0, 0], [16, 32], valid_shape=[7, 19])
        pl.store(pl.gather(t, idx), [0, 0], g)
    return g


def test_gather_over_a_partial_index_tile():
    a = values(np.float32, (16, 64))
    gi = rng.integers(0, 40, size=(16, 32)).astype(np.int32)
    g = np.full((16, 32), 5.0, np.float32)
    k_gather_ragged(a, gi, g, config=RunConfig())
    np.testing.assert_array_equal(g[:7, :19], np.take_along_axis(a[:7], gi[:7, :19], axis=1))
    assert (g[7:] == 5).all() and (g[:, 19:] == 5).all()


def test_gather_index_outside_the_valid_columns_fails_at_run_time():
    a = values(np.float32, (16, 64))
    gi = np.zeros((16, 32), np.int32)
    gi[2, 3] = 45  # src is valid over 40 columns
    with pytest.raises(Exception, match=r"index 45 at \(2, 3\).*outside the source row \(size 40\)"):
        k_gather_ragged(a, gi, np.zeros((16, 32), np.float32), config=RunConfig())


@pl.jit
def k_global(table: pl.Tensor, ii: pl.Tensor, g: pl.Out[pl.Tensor], dst: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        idx = pl.load(ii, [0, 0], [8, 32])
        rows = pl.tile.mgather(table, idx)
        pl.store(rows, [0, 0], g)
        pl.tile.mscatter(pl.muls(rows, 2), idx, dst)
    return g


def test_gather_from_and_scatter_to_global_memory_by_flat_index():
    table = values(np.float32, (64, 48))
    ii = rng.permutation(64 * 48)[:256].reshape(8, 32).astype(np.int32)
    g, dst = np.zeros((8, 32), np.float32), np.zeros((64, 48), np.float32)
    k_global(table, ii, g, dst, config=RunConfig())
    np.testing.assert_array_equal(g, table.ravel()[ii])
    ref = np.zeros(64 * 48, np.float32)
    ref[ii.ravel()] = 2 * table.ravel()[ii.ravel()]
    np.testing.assert_array_equal(dst.ravel(), ref)


@pl.jit
def k_tensor_gather_scatter(x: pl.Tensor, gi: pl.Tensor, si: pl.Tensor, src: pl.Tensor, g: pl.Out[pl.Tensor],
                            s: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g[:] = pl.adds(pl.gather(x, -1, gi), 1.0)
        s[:] = pl.tensor.scatter(x, -1, si, src)
    return g


@pytest.mark.parametrize("m,n,k", [(64, 96, 40), (300, 200, 64)])
def test_tensor_level_gather_and_scatter_walk_whole_rows(m, n, k):
    x = values(np.float32, (m, n))
    gi = rng.integers(0, n, size=(m, k)).astype(np.int32)
    si = np.stack([rng.permutation(n)[:k] for _ in range(m)]).astype(np.int32)
    src = values(np.float32, (m, k))
    g, s = np.zeros((m, k), np.float32), np.zeros((m, n), np.float32)
    k_tensor_gather_scatter(x, gi, si, src, g, s, config=RunConfig())
    np.testing.assert_array_equal(g, np.take_along_axis(x, gi, axis=1) + 1)
    ref = x.copy()
    np.put_along_axis(ref, si, src, axis=1)
    np.testing.assert_array_equal(s, ref)


@pl.jit
def k_sort(a: pl.Tensor, v: pl.Out[pl.Tensor], i: pl.Out[pl.Tensor], mv: pl.Out[pl.Tensor], mi: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [8, 64])
        vals, idx = pl.sort32(t)
        pl.store(vals, [0, 0], v)
        pl.store(idx, [0, 0], i)
        merged = pl.tile.mrgsort(pl.slice(vals, [8, 32], [0, 0]), pl.slice(idx, [8, 32], [0, 0]),
                                 pl.slice(vals, [8, 32], [0, 32]), pl.slice(idx, [8, 32], [0, 32]))
        pl.store(merged[0], [0, 0], mv)
        pl.store(merged[1], [0, 0], mi)
    return v


def descending(a):
    return np.argsort(-a.astype(np.float64), axis=-1, kind="stable")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int16], ids=lambda d: np.dtype(d).name)
def test_sort32_then_mrgsort_sorts_each_row(dtype):
    a = values(dtype, (8, 64), -20, 20)  # repeated values: both sorts are stable
    v, mv = np.zeros_like(a), np.zeros_like(a)
    i, mi = np.zeros((8, 64), np.int32), np.zeros((8, 64), np.int32)
    k_sort(a, v, i, mv, mi, config=RunConfig())
    blocks = a.reshape(8, 2, 32)
    order = descending(blocks)
    np.testing.assert_array_equal(v, np.take_along_axis(blocks, order, axis=2).reshape(8, 64))
    np.testing.assert_array_equal(i, (order + np.array([0, 32])[None, :, None]).reshape(8, 64))
    full = descending(a)
    np.testing.assert_array_equal(mv, np.take_along_axis(a, full, axis=1))
    np.testing.assert_array_equal(mi, full)


@pl.jit
def k_sort_ragged(a: pl.Tensor, v: pl.Out[pl.Tensor], i: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [8, 64], valid_shape=[5, 50])
        vals, idx = pl.sort32(t)
        pl.store(vals, [0, 0], v)
        pl.store(idx, [0, 0], i)
    return v


def test_sort32_on_a_partial_tile_sorts_the_short_last_block():
    a = values(np.float32, (8, 64))
    v, i = np.full((8, 64), 9.0, np.float32), np.full((8, 64), -1, np.int32)
    k_sort_ragged(a, v, i, config=RunConfig())
    head, tail = a[:5, :32], a[:5, 32:50]
    np.testing.assert_array_equal(v[:5, :32], np.take_along_axis(head, descending(head), axis=1))
    np.testing.assert_array_equal(v[:5, 32:50], np.take_along_axis(tail, descending(tail), axis=1))
    np.testing.assert_array_equal(i[:5, 32:50], descending(tail) + 32)
    assert (v[5:] == 9).all() and (v[:, 50:] == 9).all()


@pl.jit
def k_topk(a: pl.Tensor, v: pl.Out[pl.Tensor], i: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [1, 128])
        vals, idx = pl.sort32(t)
        # Merge the four sorted blocks pairwise, then the two halves.
        lo_v, lo_i = pl.mrgsort(pl.slice(vals, [1, 32], [0, 0]), pl.slice(idx, [1, 32], [0, 0]),
                                pl.slice(vals, [1, 32], [0, 32]), pl.slice(idx, [1, 32], [0, 32]))
        hi_v, hi_i = pl.mrgsort(pl.slice(vals, [1, 32], [0, 64]), pl.slice(idx, [1, 32], [0, 64]),
                                pl.slice(vals, [1, 32], [0, 96]), pl.slice(idx, [1, 32], [0, 96]))
        all_v, all_i = pl.mrgsort(lo_v, lo_i, hi_v, hi_i)
        pl.store(pl.slice(all_v, [1, 16], [0, 0]), [0, 0], v)
        pl.store(pl.slice(all_i, [1, 16], [0, 0]), [0, 0], i)
    return v


def test_top_k_of_a_row_by_sort32_and_merges():
    a = values(np.float32, (1, 128), -1000, 1000)
    v, i = np.zeros((1, 16), np.float32), np.zeros((1, 16), np.int32)
    k_topk(a, v, i, config=RunConfig())
    order = descending(a)[:, :16]
    np.testing.assert_array_equal(i, order)
    np.testing.assert_array_equal(v, np.take_along_axis(a, order, axis=1))


def error_of(fn, *args):
    with pytest.raises(Exception) as err:
        fn(*args, config=RunConfig())
    return str(err.value)


def test_gather_with_float_indices_is_rejected():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 32])
            pl.store(pl.gather(t, t), [0, 0], c)
        return c

    z = np.zeros((16, 32), np.float32)
    msg = error_of(bad, z, z.copy())
    assert "pl.tile.gather: argument 'indices' holds indices and must be an integer tile, got FP32" in msg
    assert "pl.cast(indices, pl.INT32)" in msg


def test_scatter_index_shape_must_match_src():
    @pl.jit
    def bad(a: pl.Tensor, ii: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 32])
            pl.store(pl.scatter(t, pl.load(ii, [0, 0], [16, 16]), t), [0, 0], c)
        return c

    z = np.zeros((16, 32), np.float32)
    msg = error_of(bad, z, np.zeros((16, 16), np.int32), z.copy())
    assert "pl.tile.scatter: 'indices' is [16, 16] but 'src' is [16, 32]" in msg


def test_arg_reduction_of_bool_and_mrgsort_with_wrong_indices_are_rejected():
    @pl.jit
    def bad_arg(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.col_argmax(pl.load(a, [0, 0], [16, 32])), [0, 0], c)
        return c

    @pl.jit
    def bad_merge(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [4, 32])
            v, _i = pl.mrgsort(t, t, t, t)
            pl.store(v, [0, 0], c)
        return c

    msg = error_of(bad_arg, np.zeros((16, 32), np.bool_), np.zeros((1, 32), np.int32))
    assert "pl.tile.col_argmax: argument 'tile' is BOOL; TCOLARGMAX accepts" in msg
    msg = error_of(bad_merge, np.zeros((4, 32), np.float32), np.zeros((4, 64), np.float32))
    assert "'a_indices' must be the INT32 indices of 'a_values' ([4, 32]), got Tile[[4, 32], FP32, Vec]" in msg
    assert "pass the (values, indices) pair that pl.sort32 or pl.mrgsort gave" in msg


def test_sort32_result_unpacked_into_the_wrong_number_of_names():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            v, _i, _extra = pl.sort32(pl.load(a, [0, 0], [4, 32]))
            pl.store(v, [0, 0], c)
        return c

    z = np.zeros((4, 32), np.float32)
    assert "the call returns 2 values, not 3" in error_of(bad, z, z.copy())


@pl.jit
def k_sort_rows_pipelined(a: pl.Tensor, v: pl.Out[pl.Tensor], i: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.pipeline(6, stage=2):
            vals, idx = pl.sort32(pl.load(a, [r * 4, 0], [4, 32]))
            v = pl.store(vals, [r * 4, 0], v)
            i = pl.store(idx, [r * 4, 0], i)
    return v


def test_sort32_in_a_software_pipelined_loop(tmp_path):
    """Each stage copy gets its own (values, indices) block; every pass dump re-parses."""
    a = values(np.float32, (24, 32))
    v, i = np.zeros_like(a), np.zeros((24, 32), np.int32)
    k_sort_rows_pipelined(a, v, i, config=RunConfig(dump_passes=True, output_dir=str(tmp_path)))
    order = descending(a)
    np.testing.assert_array_equal(i, order)
    np.testing.assert_array_equal(v, np.take_along_axis(a, order, axis=1))
    dumps = sorted((tmp_path / "passes_dump").iterdir())
    assert any("PipelineLoops" in d.name for d in dumps)
    for path in dumps:
        assert ir.print_program(pl.loads(path)) == path.read_text()
    stages = (tmp_path / "passes_dump" / next(d.name for d in dumps if "PipelineLoops" in d.name)).read_text()
    blocks = {line.split("pl.Addr(")[1].split(")")[0] for line in stages.splitlines() if "= pl.tile.sort32(" in line}
    assert len(blocks) == 2  # one (values, indices) block per stage copy


def test_tensor_level_gather_and_scatter_misuse():
    @pl.jit
    def computed_src(x: pl.Tensor, gi: pl.Tensor, g: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            g[:] = pl.gather(pl.exp(x), 1, gi)
        return g

    @pl.jit
    def wide_rows(x: pl.Tensor, si: pl.Tensor, src: pl.Tensor, s: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            s[:] = pl.tensor.scatter(x, 1, si, src)
        return s

    x = np.zeros((16, 64), np.float32)
    msg = error_of(computed_src, x, np.zeros((16, 8), np.int32), np.zeros((16, 8), np.float32))
    assert "pl.tensor.gather: 'src' must be a tensor, not a computed value" in msg
    wide = np.zeros((8, 1024), np.float32)
    msg = error_of(wide_rows, wide, np.zeros((8, 8), np.int32), np.zeros((8, 8), np.float32), wide.copy())
    assert "a scatter needs whole rows of the target (1024 columns)" in msg
    assert "use pl.tile.scatter on row blocks you load yourself" in msg

"""Issue 14, item 7 and the N-D part of item 5.

Reduction order (docs/isa.md, "Reduction order"): a tile reduction given a scratch tile
(PyPTO's tmp_tile) sums in a binary tree, one without it sums sequentially, and tensor
reductions are sequential; fp16 / bf16 sums accumulate in the dtype, every step rounded.
Each result is checked bit for bit against a numpy model of the same order (a hand-written
loop in float16, or in float32 rounded to bf16 after each step), on both engines; fp32
against numpy's sum within a tolerance.

N-D tiles (docs/language.md, "PyPTO compatibility: N-D tiles"): rank-3 tiles loaded from
and stored to rank-3 tensors, elementwise ops and last-axis row reductions on them, and
tensor-level ops on rank-3 tensors inside kernels, against numpy on both engines."""

import re

import numpy as np
import pypto.language as pl
import pytest
import torch
from pypto import _core
from pypto.runtime import RunConfig, _arg_specs

from .roundtrip import round_trip

ENGINES = ["native", "sim"]
rng = np.random.default_rng(1414)


def run(kernel, *args, engine):
    kernel(*args, config=RunConfig(engine=engine))




# ---- numpy models of the chip's orders ------------------------------------------------------

def bf16_round(x):
    """float32 values rounded to bf16 (nearest even), as float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


def stepper(dtype):
    """One rounded addition in the dtype: float16 arithmetic, or float32 rounded to bf16."""
    if dtype == "BF16":
        return lambda a, b: bf16_round(a.astype(np.float32) + b.astype(np.float32))
    return lambda a, b: (a + b).astype(np.float16 if dtype == "FP16" else np.float32)


def sequential_sum(x, axis, dtype):
    """acc = x[0]; acc = acc + x[k] for k = 1.. in index order, each step rounded."""
    step, v = stepper(dtype), np.moveaxis(x, axis, 0)
    acc = v[0].copy()
    for k in range(1, v.shape[0]):
        acc = step(acc, v[k])
    return acc


def tree_sum(x, axis, dtype):
    """The binary tree: while n > 1, v[i] = v[i] + v[i + ceil(n/2)] for i < n // 2, n = ceil(n/2)."""
    step, v = stepper(dtype), np.moveaxis(x, axis, 0).copy()
    n = v.shape[0]
    while n > 1:
        keep, h = (n + 1) // 2, n // 2
        for i in range(h):
            v[i] = step(v[i], v[i + keep])
        n = keep
    return v[0]


def data(shape, dtype):
    """Values whose fp16 / bf16 sums round at many steps (mixed magnitudes)."""
    x = rng.uniform(-4, 4, shape) * 2.0 ** rng.integers(-6, 6, shape)
    if dtype == "BF16":
        return bf16_round(x.astype(np.float32))
    return x.astype(np.float16 if dtype == "FP16" else np.float32)


def as_arg(x, dtype):
    return torch.from_numpy(x).to(torch.bfloat16) if dtype == "BF16" else x


def as_np(t):
    return t.float().numpy() if isinstance(t, torch.Tensor) else t.astype(np.float32)


DT = {"FP16": pl.FP16, "BF16": pl.BF16, "FP32": pl.FP32}
R, C = 16, 96  # C: not a power of two, more than one vector of lanes


def tile_kernels(dtype):
    """Tile row / column sums with and without a scratch tile."""
    T = DT[dtype]

    @pl.jit
    def k(x: pl.Tensor[[R, C], T], rs: pl.Out[pl.Tensor[[R, 1], T]], rt: pl.Out[pl.Tensor[[R, 1], T]],
          cs: pl.Out[pl.Tensor[[1, C], T]], ct: pl.Out[pl.Tensor[[1, C], T]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [R, C])
            tmp = pl.create_tile([R, C], dtype=T, target_memory=pl.MemorySpace.Vec)
            rs = pl.store(pl.tile.row_sum(t), [0, 0], rs)               # no scratch: sequential
            rt = pl.store(pl.row_sum(t, tmp_tile=tmp), [0, 0], rt)       # scratch: binary tree
            cs = pl.store(pl.tile.col_sum(t), [0, 0], cs)
            ct = pl.store(pl.tile.col_sum(t, tmp_tile=tmp), [0, 0], ct)
        return rs
    return k


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dtype", ["FP16", "BF16"])
def test_half_tile_sums_follow_the_selected_order_bit_for_bit(engine, dtype):
    x = data((R, C), dtype)
    outs = [np.zeros(s, np.float32) for s in [(R, 1), (R, 1), (1, C), (1, C)]]
    outs = [torch.zeros(o.shape, dtype=torch.bfloat16) if dtype == "BF16" else o.astype(np.float16) for o in outs]
    run(tile_kernels(dtype), as_arg(x, dtype), *outs, engine=engine)
    rs, rt, cs, ct = (as_np(o) for o in outs)
    np.testing.assert_array_equal(rs[:, 0], sequential_sum(x, 1, dtype).astype(np.float32))
    np.testing.assert_array_equal(rt[:, 0], tree_sum(x, 1, dtype).astype(np.float32))
    np.testing.assert_array_equal(cs[0], sequential_sum(x, 0, dtype).astype(np.float32))
    np.testing.assert_array_equal(ct[0], tree_sum(x, 0, dtype).astype(np.float32))
    # The orders are observable: on these values at least one result differs between them,
    # and from a sum accumulated in fp32 and rounded once.
    assert (rs != rt).any() and (cs != ct).any()
    once = x.astype(np.float32).sum(1)
    once = bf16_round(once) if dtype == "BF16" else once.astype(np.float16).astype(np.float32)
    assert (rs[:, 0] != once).any()


@pytest.mark.parametrize("engine", ENGINES)
def test_fp32_tile_sums_match_numpy_within_tolerance_and_the_order_exactly(engine):
    x = data((R, C), "FP32")
    outs = [np.zeros(s, np.float32) for s in [(R, 1), (R, 1), (1, C), (1, C)]]
    run(tile_kernels("FP32"), x, *outs, engine=engine)
    rs, rt, cs, ct = outs
    for got, axis in ((rs[:, 0], 1), (rt[:, 0], 1), (cs[0], 0), (ct[0], 0)):
        np.testing.assert_allclose(got, x.astype(np.float64).sum(axis), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(rs[:, 0], sequential_sum(x, 1, "FP32"))
    np.testing.assert_array_equal(rt[:, 0], tree_sum(x, 1, "FP32"))
    np.testing.assert_array_equal(ct[0], tree_sum(x, 0, "FP32"))


@pl.jit
def tensor_row_sum_fp16(x: pl.Tensor[[R, C], pl.FP16], s: pl.Out[pl.Tensor[[R, 1], pl.FP16]],
                        c: pl.Out[pl.Tensor[[1, C], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s[:] = pl.row_sum(x)
        c[:] = pl.col_sum(x)
    return s


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_reductions_are_sequential(engine):
    x = data((R, C), "FP16")
    s, c = np.zeros((R, 1), np.float16), np.zeros((1, C), np.float16)
    run(tensor_row_sum_fp16, x, s, c, engine=engine)
    np.testing.assert_array_equal(s[:, 0], sequential_sum(x, 1, "FP16"))
    np.testing.assert_array_equal(c[0], sequential_sum(x, 0, "FP16"))


# ---- N-D tiles -----------------------------------------------------------------------------

B, S, D = 3, 8, 32


@pl.jit
def nd_tiles(x: pl.Tensor[[B, S, D], pl.FP32], y: pl.Tensor[[B, S, D], pl.FP32],
             out: pl.Out[pl.Tensor[[B, S, D], pl.FP32]], rs: pl.Out[pl.Tensor[[B, S, 1], pl.FP32]],
             rm: pl.Out[pl.Tensor[[B, S, 1], pl.FP32]], part: pl.Out[pl.Tensor[[B, S, D], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0], [B, S, D])                 # [3, 8, 32] -> a [24, 32] tile
        u = pl.load(y, [0, 0, 0], [B, S, D])
        e = pl.add(pl.exp(t), pl.muls(u, 2.0))
        out = pl.store(e, [0, 0, 0], out)
        tmp = pl.create_tile([B, S, D], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        rs = pl.store(pl.row_sum(t, tmp_tile=tmp), [0, 0, 0], rs)   # last-axis reduction: [24, 1]
        rm = pl.store(pl.row_max(u, tmp_tile=tmp), [0, 0, 0], rm, shapes=[B, S, 1])
        one = pl.load(x, [1, 2, 0], [1, 4, D])               # leading extent 1: any rows of one batch
        part = pl.store(pl.neg(one), [2, 4, 0], part)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_nd_tiles_load_compute_reduce_store(engine):
    x, y = rng.uniform(-1, 1, (B, S, D)).astype(np.float32), rng.uniform(-1, 1, (B, S, D)).astype(np.float32)
    out, part = np.zeros_like(x), np.zeros_like(x)
    rs, rm = np.zeros((B, S, 1), np.float32), np.zeros((B, S, 1), np.float32)
    run(nd_tiles, x, y, out, rs, rm, part, engine=engine)
    np.testing.assert_allclose(out, np.exp(x) + 2 * y, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(rs[..., 0], tree_sum(x, 2, "FP32"))   # the binary tree over each row
    np.testing.assert_allclose(rs[..., 0], x.sum(-1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(rm[..., 0], y.max(-1))
    want = np.zeros_like(x)
    want[2, 4:8] = -x[1, 2:6]
    np.testing.assert_array_equal(part, want)
    if engine == "native":  # the merged rows take the native fast path (dense leading axes)
        (source,) = [t for t in nd_tiles.compile(x, y, out, rs, rm, part).native_sources().values() if t]
        instrs = re.findall(r"/\* (T[A-Z_]+) \*/ (\{|FB)", source)
        assert [m for m, how in instrs if how == "FB" and m in ("TLOAD", "TSTORE")] == []
        assert re.search(r"f->support->tload\(.*, true, -1, -1\);", source) and re.search(r"f->support->tstore\(.*, true, -1, -1\);", source)
    text = round_trip(nd_tiles, x, y, out, rs, rm, part)
    assert "pl.Tile[[24, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [3, 8, 32]" in text, text


H = 4


@pl.jit
def nd_fp16_rows(x: pl.Tensor[[2, H, S, D], pl.FP16], s: pl.Out[pl.Tensor[[2, H, S, 1], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [1, 0, 0, 0], [1, H, S, D])           # rank 4: batch 1, every head
        s = pl.store(pl.tile.row_sum(t), [1, 0, 0, 0], s)     # sequential in fp16
    return s


@pytest.mark.parametrize("engine", ENGINES)
def test_rank4_tile_rows_sum_in_fp16(engine):
    x = data((2, H, S, D), "FP16")
    s = np.zeros((2, H, S, 1), np.float16)
    run(nd_fp16_rows, x, s, engine=engine)
    want = np.zeros_like(s)
    want[1, ..., 0] = sequential_sum(x[1].reshape(H * S, D), 1, "FP16").reshape(H, S)
    np.testing.assert_array_equal(s, want)


@pl.jit
def nd_tensor_ops(x: pl.Tensor[[B, S, D], pl.FP32], y: pl.Tensor[[B, S, D], pl.FP32],
                  out: pl.Out[pl.Tensor[[B, S, D], pl.FP32]], rs: pl.Out[pl.Tensor[[B, S, 1], pl.FP32]],
                  sm: pl.Out[pl.Tensor[[B, S, D], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.exp(pl.sub(x, y))
        rs[:] = pl.row_sum(x)
        sm[:] = pl.row_expand_div(pl.exp(x), pl.row_sum(pl.exp(x)))   # softmax over the last axis
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_level_ops_on_rank3_tensors(engine):
    x, y = rng.uniform(-1, 1, (B, S, D)).astype(np.float32), rng.uniform(-1, 1, (B, S, D)).astype(np.float32)
    out, sm, rs = np.zeros_like(x), np.zeros_like(x), np.zeros((B, S, 1), np.float32)
    run(nd_tensor_ops, x, y, out, rs, sm, engine=engine)
    np.testing.assert_allclose(out, np.exp(x - y), rtol=1e-6)
    np.testing.assert_array_equal(rs[..., 0], sequential_sum(x, 2, "FP32"))
    e = np.exp(x)
    np.testing.assert_allclose(sm, e / e.sum(-1, keepdims=True), rtol=1e-5)
    round_trip(nd_tensor_ops, x, y, out, rs, sm)


BIG_S, BIG_D = 96, 1024  # each batch is several blocks of rows and of columns (UB holds a few)


@pl.jit
def nd_tensor_big(x: pl.Tensor[[2, BIG_S, BIG_D], pl.FP16], n: pl.Tensor[[2, 8, 512], pl.FP16],
                  out: pl.Out[pl.Tensor[[2, BIG_S, BIG_D], pl.FP16]], rs: pl.Out[pl.Tensor[[2, BIG_S, 1], pl.FP16]],
                  rn: pl.Out[pl.Tensor[[2, 8, 1], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.muls(pl.abs(x), 0.5)
        rs[:] = pl.row_sum(x)
        rn[:] = pl.row_sum(n)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_level_ops_on_large_rank3_tensors(engine):
    x, n = data((2, BIG_S, BIG_D), "FP16"), data((2, 8, 512), "FP16")
    out, rs, rn = np.zeros_like(x), np.zeros((2, BIG_S, 1), np.float16), np.zeros((2, 8, 1), np.float16)
    run(nd_tensor_big, x, n, out, rs, rn, engine=engine)
    np.testing.assert_array_equal(out, (np.abs(x) * np.float16(0.5)).astype(np.float16))
    # 8 rows of 512 fp16 are one block of the lowering: sequential in fp16, bit for bit
    np.testing.assert_array_equal(rn[..., 0], sequential_sum(n, 2, "FP16"))
    # 96 such rows are walked in blocks of columns; the sum still runs sequentially across them
    np.testing.assert_array_equal(rs[..., 0], sequential_sum(x, 2, "FP16"))


# ---- errors --------------------------------------------------------------------------------

def test_nd_tile_must_be_one_contiguous_band():
    @pl.jit
    def k(x: pl.Tensor[[B, S, D], pl.FP32], out: pl.Out[pl.Tensor[[B, S, D], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0, 0], [2, 4, D])            # 2 batches of half their rows: two bands
            out = pl.store(t, [0, 0, 0], out)
        return out

    x = np.zeros((B, S, D), np.float32)
    with pytest.raises(Exception) as e:
        run(k, x, np.zeros_like(x), engine="sim")
    msg = str(e.value)
    assert "test_nd_and_order.py" in msg and "contiguous band" in msg and "axis 1" in msg and "fix:" in msg, msg


def test_nd_tile_rank_must_match_the_tensor():
    @pl.jit
    def k(x: pl.Tensor[[2, B, S, D], pl.FP32], out: pl.Out[pl.Tensor[[2, B, S, D], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0, 0, 0], [B, S, D])
            out = pl.store(t, [0, 0, 0, 0], out)
        return out

    x = np.zeros((2, B, S, D), np.float32)
    with pytest.raises(Exception) as e:
        run(k, x, np.zeros_like(x), engine="sim")
    assert "one extent per tensor dimension" in str(e.value) and "fix:" in str(e.value), str(e.value)


def test_tensor_level_op_mixing_2d_and_3d_operands_is_refused():
    @pl.jit
    def k(x: pl.Tensor[[B, S, D], pl.FP32], y: pl.Tensor[[S, D], pl.FP32], out: pl.Out[pl.Tensor[[B, S, D], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(x, y)
        return out

    x = np.zeros((B, S, D), np.float32)
    with pytest.raises(Exception) as e:
        run(k, x, np.zeros((S, D), np.float32), np.zeros_like(x), engine="sim")
    assert "is 2-D but" in str(e.value) and "fix:" in str(e.value), str(e.value)


def _error_of(kernel, *args):
    with pytest.raises(Exception) as e:
        run(kernel, *args, engine="sim")
    msg = str(e.value)
    assert "test_nd_and_order.py" in msg and "fix:" in msg, msg
    return msg


def test_nd_store_of_rows_that_do_not_fold_whole():
    @pl.jit
    def k(x: pl.Tensor[[24, 32], pl.FP32], out: pl.Out[pl.Tensor[[B, S, D], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.store(pl.load(x, [0, 0], [12, 32]), [0, 0, 0], out)   # 12 rows: 1.5 of the 8-row axis
        return out

    msg = _error_of(k, np.zeros((24, 32), np.float32), np.zeros((B, S, D), np.float32))
    assert "not a whole number" in msg, msg


def test_nd_valid_shape_cuts_only_the_last_axis():
    @pl.jit
    def k(x: pl.Tensor[[B, S, D], pl.FP32], out: pl.Out[pl.Tensor[[B, S, D], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.store(pl.load(x, [0, 0, 0], [B, S, D], valid_shape=[2, S, D]), [0, 0, 0], out)
        return out

    x = np.zeros((B, S, D), np.float32)
    assert "may cut only its last axis" in _error_of(k, x, np.zeros_like(x))


@pl.jit
def nd_valid_last(x: pl.Tensor[[B, S, D], pl.FP32], out: pl.Out[pl.Tensor[[B, S, D], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0], [B, S, D], valid_shape=[B, S, 20])
        out = pl.store(pl.adds(t, 1.0), [0, 0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_nd_valid_shape_on_the_last_axis(engine):
    x = rng.uniform(-1, 1, (B, S, D)).astype(np.float32)
    out = np.full_like(x, 7.0)
    run(nd_valid_last, x, out, engine=engine)
    want = np.full_like(x, 7.0)
    want[..., :20] = x[..., :20] + 1
    np.testing.assert_array_equal(out, want)


def test_tensor_column_reduction_of_a_3d_tensor_is_refused():
    @pl.jit
    def k(x: pl.Tensor[[B, S, D], pl.FP32], out: pl.Out[pl.Tensor[[B, 1, D], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.col_sum(x)
        return out

    assert "2-D tensors" in _error_of(k, np.zeros((B, S, D), np.float32), np.zeros((B, 1, D), np.float32))


# ---- the instructions: TLOAD / TSTORE with fold_rows --------------------------------------

@pytest.mark.parametrize("engine", ENGINES)
def test_fold_rows_walks_the_merged_leading_axes(engine):
    """Row r of the tile is row f0 + r of the tensor's leading axes merged row-major (f0:
    the merged index of the offsets), across a batch boundary; past the end is an error."""
    g = rng.uniform(-1, 1, (3, 8, 40)).astype(np.float32)
    tile = np.zeros((12, 32), np.float32)
    _core.isa_execute("TLOAD", [tile], [g, [0, 4, 8]], {"fold_rows": True}, engine=engine)
    np.testing.assert_array_equal(tile, g.reshape(24, 40)[4:16, 8:40])
    with pytest.raises(_core.PyptoError) as e:  # 14 + 12 rows > 24
        _core.isa_execute("TSTORE", [np.zeros_like(g)], [tile, [1, 6, 0]], {"fold_rows": True}, engine=engine)
    assert "goes past the tensor's shape" in str(e.value)
    out = np.zeros_like(g)
    _core.isa_execute("TSTORE", [out], [tile, [1, 0, 0]], {"fold_rows": True}, engine=engine)
    want = np.zeros_like(g)
    want.reshape(24, 40)[8:20, 0:32] = tile
    np.testing.assert_array_equal(out, want)
    with pytest.raises(_core.PyptoError):  # without fold_rows the rows must fit axis 1
        _core.isa_execute("TLOAD", [tile], [g, [0, 4, 8]], engine=engine)


# ---- LowerTensorOps on 3-D tensors (Before / After) --------------------------------------

def test_lower_tensor_ops_writes_3d_values_batch_by_batch():
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "passes"))
    from pass_text import check_pass

    x, s = "pl.Tensor[[2, 8, 64], pl.FP32]", "pl.Tensor[[2, 8, 1], pl.FP32]"
    tile = "pl.Tile[[8, 64], pl.FP32, pl.Mem.Vec]"
    check_pass("LowerTensorOps", f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {x}, out: pl.Out[{x}], s: pl.Out[{s}]) -> {x}:
        out[:] = pl.exp(x)
        s[:] = pl.row_sum(x)
        return out
""", f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {x}, out: pl.Out[{x}], s: pl.Out[{s}]) -> {x}:
        for batch, (out_1,) in pl.range(0, 2, 1, init_values=(out,)):
            x_tile: {tile} = pl.tile.load(x, [batch, 0, 0], [8, 64], target_memory=pl.Mem.Vec)
            exp: {tile} = pl.tile.exp(x_tile)
            out_2: {x} = pl.tile.store(exp, [batch, 0, 0], out_1)
            out_3 = pl.yield_(out_2)
        for batch_1, (s_1,) in pl.range(0, 2, 1, init_values=(s,)):
            x_tile_1: {tile} = pl.tile.load(x, [batch_1, 0, 0], [8, 64], target_memory=pl.Mem.Vec)
            row_sum: pl.Tile[[8, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(x_tile_1)
            s_2: {s} = pl.tile.store(row_sum, [batch_1, 0, 0], s_1)
            s_3 = pl.yield_(s_2)
        return out_3
""")


@pl.jit
def tensor_long_reductions(x: pl.Tensor[[1024, 64], pl.FP16], c: pl.Out[pl.Tensor[[1, 64], pl.FP16]],
                           p: pl.Tensor[[16, 3000], pl.FP32], rp: pl.Out[pl.Tensor[[16, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.col_sum(x)       # rows walked in blocks
        rp[:] = pl.row_prod(p)     # columns walked in blocks, a ragged last one
    return c


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_reductions_stay_sequential_across_blocks(engine):
    x = data((1024, 64), "FP16")
    p = rng.uniform(0.999, 1.001, (16, 3000)).astype(np.float32)
    c, rp = np.zeros((1, 64), np.float16), np.zeros((16, 1), np.float32)
    run(tensor_long_reductions, x, c, p, rp, engine=engine)
    np.testing.assert_array_equal(c[0], sequential_sum(x, 0, "FP16"))
    want = p[:, 0].copy()
    for k in range(1, p.shape[1]):
        want = (want * p[:, k]).astype(np.float32)
    np.testing.assert_array_equal(rp[:, 0], want)

"""LowerTensorOps: tensor-level compute inside InCore scopes becomes tile loops. Checked end
to end against numpy on shapes that need several blocks, ragged edges, reductions walked in
blocks, broadcasts and matmuls walked along K; plus the IR shape and the user errors."""

import re

import numpy as np
import pypto.language as pl
import pytest
from pass_text import check_pass
from pypto import _core, ir

RNG = np.random.default_rng(5)


def rand(*shape):
    return RNG.standard_normal(shape, dtype=np.float32)


@pl.jit
def fused(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.add(x, y)
        out[:] = pl.relu(pl.mul(pl.sub(t, 0.5), t))
    return out


@pytest.mark.parametrize("shape", [(64, 64), (512, 1024), (200, 96), (33, 1000)])
def test_elementwise_chain_matches_numpy(shape):
    x, y = rand(*shape), rand(*shape)
    out = np.zeros(shape, np.float32)
    fused(x, y, out)
    t = x + y
    np.testing.assert_allclose(out, np.maximum((t - 0.5) * t, 0), rtol=1e-6, atol=1e-6)


@pl.jit
def unary_and_scalar(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.sqrt(pl.adds(pl.exp(pl.neg(x)), 1.0))
    return out


def test_unary_and_scalar_forms():
    x = rand(128, 256)
    out = np.zeros_like(x)
    unary_and_scalar(x, out)
    np.testing.assert_allclose(out, np.sqrt(np.exp(-x) + 1), rtol=1e-5)


@pl.jit
def reductions(x: pl.Tensor, rs: pl.Out[pl.Tensor], cm: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rs[:] = pl.row_sum(x)
        cm[:] = pl.col_max(x)
    return rs, cm


@pytest.mark.parametrize("shape", [(64, 128), (300, 2000)])
def test_row_and_column_reductions_walk_blocks(shape):
    x = rand(*shape)
    rs = np.zeros((shape[0], 1), np.float32)
    cm = np.zeros((1, shape[1]), np.float32)
    reductions(x, rs, cm)
    np.testing.assert_allclose(rs, x.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(cm, x.max(axis=0, keepdims=True), rtol=1e-6)


@pl.jit
def softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        e = pl.exp(pl.row_expand_sub(x, pl.row_max(x)))
        y[:] = pl.row_expand_div(e, pl.row_sum(e))
    return y


def test_softmax_from_tensor_ops_with_ragged_columns():
    x = rand(96, 1000) * 3
    y = np.zeros_like(x)
    softmax(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pl.jit
def col_centre(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:] = pl.col_expand_sub(x, pl.col_min(x))
    return y


def test_column_broadcast():
    x = rand(160, 64)
    y = np.zeros_like(x)
    col_centre(x, y)
    np.testing.assert_allclose(y, x - x.min(axis=0, keepdims=True), rtol=1e-6)


@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, b)
    return c


@pytest.mark.parametrize("mkn", [(64, 64, 64), (256, 512, 384), (100, 96, 40)])
def test_matmul_walks_k_into_acc(mkn):
    m, k, n = mkn
    a, b = rand(m, k), rand(k, n)
    c = np.zeros((m, n), np.float32)
    mm(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


@pl.jit
def mm_bias_relu(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.relu(pl.col_expand_add(pl.matmul(a, b), bias))
    return c


def test_matmul_feeds_vector_ops():
    a, b, bias = rand(128, 64), rand(64, 96), rand(1, 96)
    c = np.zeros((128, 96), np.float32)
    mm_bias_relu(a, b, bias, c)
    np.testing.assert_allclose(c, np.maximum(a @ b + bias, 0), rtol=1e-4, atol=1e-3)


@pl.jit
def halves(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[0:64, :] = pl.mul(x, 2.0)
        out[64:128, :] = x
    return out


def test_writes_at_offsets_and_copies():
    x = rand(64, 128)
    out = np.zeros((128, 128), np.float32)
    halves(x, out)
    np.testing.assert_allclose(out[:64], 2 * x)
    np.testing.assert_allclose(out[64:], x)


def test_tensor_ops_infer_tensor_types():
    p = pl.parse(
        "import pypto.language as pl\n\n\n@pl.program\nclass p:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[64, 32], pl.FP16], b: pl.Tensor[[32, 48], pl.FP16],"
        " c: pl.Out[pl.Tensor[[64, 48], pl.FP32]]) -> pl.Tensor[[64, 48], pl.FP32]:\n"
        "        m: pl.Tensor[[64, 48], pl.FP32] = pl.tensor.matmul(a, b, out_dtype=pl.FP32)\n"
        "        r: pl.Tensor[[64, 1], pl.FP32] = pl.tensor.row_sum(m)\n"
        "        c_1: pl.Tensor[[64, 48], pl.FP32] = pl.tensor.assemble(c, pl.tensor.row_expand_sub(m, r), [0, 0])\n"
        "        return c_1\n"
    )
    assert "pl.tensor.row_expand_sub" in ir.print_program(p)


def test_mismatched_shapes_are_a_user_error():
    with pytest.raises(_core.PyptoError, match=r"pl.tensor.add: argument 'rhs' has shape \[64, 32\]"):
        pl.parse(
            "import pypto.language as pl\n\n\n@pl.program\nclass p:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],"
            " c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
            "        c_1: pl.Tensor[[64, 64], pl.FP32] = pl.tensor.assemble(c, pl.tensor.add(a, b), [0, 0])\n"
            "        return c_1\n"
        )


@pl.jit
def misuse(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.mul(x, x)
        out = pl.store(pl.load(t, [0, 0], [16, 16]), [0, 0], out)
    return out


def test_tensor_value_loaded_as_a_tile_is_that_block():
    # PyPTO's meaning inside a kernel: pl.load of a tensor-level value is its block, computed.
    x = rand(32, 32)
    out = np.zeros_like(x)
    misuse(x, out)
    want = np.zeros_like(x)
    want[:16, :16] = x[:16, :16] * x[:16, :16]
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_elementwise_write_becomes_block_loops():
    # 64x1024 FP32 with two tiles per block (x, x*x): 512-column blocks (2 KiB rows), 16 rows
    # each so that the block's tiles fit UB a few times over; the loops carry the target.
    before = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 1024], pl.FP32], out: pl.Out[pl.Tensor[[64, 1024], pl.FP32]]) -> pl.Tensor[[64, 1024], pl.FP32]:
                out_1: pl.Tensor[[64, 1024], pl.FP32] = pl.tensor.assemble(out, pl.tensor.mul(x, x), [0, 0])
                return out_1"""
    after = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 1024], pl.FP32], out: pl.Out[pl.Tensor[[64, 1024], pl.FP32]]) -> pl.Tensor[[64, 1024], pl.FP32]:
                for bi, (out_1,) in pl.range(0, 4, 1, init_values=(out,)):
                    for bj, (out_2,) in pl.range(0, 2, 1, init_values=(out_1,)):
                        x_tile: pl.Tile[[16, 512], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [bi * 16, bj * 512], [16, 512], target_memory=pl.Mem.Vec)
                        mul: pl.Tile[[16, 512], pl.FP32, pl.Mem.Vec] = pl.tile.mul(x_tile, x_tile)
                        out_3: pl.Tensor[[64, 1024], pl.FP32] = pl.tile.store(mul, [bi * 16, bj * 512], out_2)
                        out_4 = pl.yield_(out_3)
                    out_5 = pl.yield_(out_4)
                return out_5"""
    check_pass("LowerTensorOps", before, after)


def test_row_reduction_is_computed_before_the_column_loop():
    # y = x * rsqrt(mean(x^2)) over 2048 columns (four 512-column blocks): the row sum is
    # walked once per row block, before the column loop that writes y, not once per block.
    before = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[8, 2048], pl.FP32], y: pl.Out[pl.Tensor[[8, 2048], pl.FP32]]) -> pl.Tensor[[8, 2048], pl.FP32]:
                y_1: pl.Tensor[[8, 2048], pl.FP32] = pl.tensor.assemble(y, pl.tensor.row_expand_mul(x, pl.tensor.rsqrt(pl.tensor.row_max(x))), [0, 0])
                return y_1"""
    after = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[8, 2048], pl.FP32], y: pl.Out[pl.Tensor[[8, 2048], pl.FP32]]) -> pl.Tensor[[8, 2048], pl.FP32]:
                x_tile: pl.Tile[[8, 512], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [8, 512], target_memory=pl.Mem.Vec)
                row_max: pl.Tile[[8, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_max(x_tile)
                for rj, (partial,) in pl.range(1, 4, 1, init_values=(row_max,)):
                    x_tile_1: pl.Tile[[8, 512], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, rj * 512], [8, 512], target_memory=pl.Mem.Vec)
                    row_max_1: pl.Tile[[8, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_max(x_tile_1)
                    partial_next: pl.Tile[[8, 1], pl.FP32, pl.Mem.Vec] = pl.tile.maximum(partial, row_max_1)
                    reduced = pl.yield_(partial_next)
                rsqrt: pl.Tile[[8, 1], pl.FP32, pl.Mem.Vec] = pl.tile.rsqrt(reduced)
                for bj, (y_1,) in pl.range(0, 4, 1, init_values=(y,)):
                    x_tile_2: pl.Tile[[8, 512], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, bj * 512], [8, 512], target_memory=pl.Mem.Vec)
                    row_expand_mul: pl.Tile[[8, 512], pl.FP32, pl.Mem.Vec] = pl.tile.row_expand_mul(x_tile_2, rsqrt)
                    y_2: pl.Tensor[[8, 2048], pl.FP32] = pl.tile.store(row_expand_mul, [0, bj * 512], y_1)
                    y_3 = pl.yield_(y_2)
                return y_3"""
    check_pass("LowerTensorOps", before, after)


def _loop_bodies(text, var):
    """The lines of each `for <var>` loop's body in printed IR (`var`, `var_1`, ...)."""
    lines, bodies = text.splitlines(), []
    for i, line in enumerate(lines):
        if re.match(rf"for {var}(_\d+)?,", line.lstrip()):
            indent = len(line) - len(line.lstrip())
            body = []
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                body.append(nxt)
            bodies.append("\n".join(body))
    return bodies


def test_wide_softmax_reduces_each_row_block_a_fixed_number_of_times():
    # 8192 columns are 16 blocks: the row max nested in the row sum's walk and both reductions
    # inside the column loop made the work grow with the square of the blocks (31 ms against
    # 1.7 ms for this shape). Now no reduction runs inside the column loop, and the row sum's
    # walk holds no row max.
    x = rand(32, 8192) * 4
    y = np.zeros_like(x)
    text = str(softmax.lower(x, y))  # the softmax program above, on wider rows
    (columns,) = _loop_bodies(text, "bj")
    assert "row_max" not in columns and "row_sum" not in columns, columns
    walks = [b for b in _loop_bodies(text, "rj") if "row_sum" in b]
    assert walks and all("row_max" not in b for b in walks), walks
    softmax(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-9)  # sums of 8192 terms


@pl.jit
def normalise_rows_in_place(x: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x[:] = pl.row_expand_div(x, pl.row_sum(x))
    return x


@pytest.mark.parametrize("engine", ["native", "sim"])
def test_in_place_write_reads_the_rows_before_it_writes_them(engine):
    # `x[:] = x / row_sum(x)` over several column blocks: the sum is of x as it was (torch's
    # meaning). It was recomputed for every column block after the earlier blocks had been
    # overwritten (a 2e-3 error here).
    from pypto.runtime import RunConfig

    x0 = RNG.uniform(1, 2, (8, 4096)).astype(np.float32)
    x = x0.copy()
    normalise_rows_in_place(x, config=RunConfig(engine=engine))
    np.testing.assert_allclose(x, x0 / x0.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-9)


@pl.jit
def one_head_attention(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.mul(pl.matmul(q, k, b_trans=True, out_dtype=pl.FP32), 0.125)
        e = pl.exp(pl.row_expand_sub(s, pl.row_max(s)))
        o[:] = pl.matmul(pl.cast(pl.row_expand_div(e, pl.row_sum(e)), pl.FP16), v, out_dtype=pl.FP32)
    return o


def test_computed_matmul_operand_reduces_its_rows_before_the_k_walk():
    # p @ v with p = softmax(q k^T) made block by block along K (the 1024 keys): the row max and
    # row sum over all keys are computed before the K walk, not again for every K block (the
    # 8 x 4096 x 128 case took 312 ms, now 3.5). Q K^T blocks live on the cube side and move
    # with the reductions that read them.
    q, k, v = (RNG.uniform(-1, 1, s).astype(np.float16) for s in ((8, 64), (1024, 64), (1024, 64)))
    o = np.zeros((8, 64), np.float32)
    text = str(one_head_attention.lower(q, k, v, o))
    walks = [b for b in _loop_bodies(text, "kk") if "v_tile" in b]
    assert walks and all("row_max" not in b and "row_sum" not in b for b in walks), walks
    one_head_attention(q, k, v, o)
    s = q.astype(np.float32) @ k.astype(np.float32).T * 0.125
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p = (p / p.sum(axis=1, keepdims=True)).astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(o, p @ v.astype(np.float32), rtol=1e-3, atol=1e-4)


@pl.jit
def norm_then_project(x: pl.Tensor, g: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    for nb in pl.parallel(0, 2):
        with pl.at(level=pl.Level.CORE_GROUP):
            inv = pl.rsqrt(pl.add(pl.mul(pl.row_sum(pl.mul(x, x)), 1.0 / 1024), 1e-6))
            xn = pl.cast(pl.col_expand_mul(pl.row_expand_mul(x, inv), g), pl.FP16)
            out[:, nb * 128:(nb + 1) * 128] = pl.matmul(xn, w[:, nb * 128:(nb + 1) * 128], out_dtype=pl.FP32)
    return out


def test_computed_lhs_takes_k_blocks_sized_by_its_own_rows():
    # RMSNorm(x) @ w with x [16, 1024]: the computed lhs blocks are [16, k], so k is sized by
    # the 16 rows, not by the 128 output columns (which gave k = 16: 64 cube calls per block).
    x = rand(16, 1024)
    g = rand(1, 1024)
    w = RNG.uniform(-0.05, 0.05, (1024, 256)).astype(np.float16)
    out = np.zeros((16, 256), np.float32)
    text = str(norm_then_project.lower(x, g, w, out))
    (walk,) = re.findall(r"for kk, \(acc_1,\) in pl\.range\(1, (\d+), 1", text)
    assert int(walk) <= 1024 // 64, text
    norm_then_project(x, g, w, out)
    xn = (x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * g).astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(out, xn @ w.astype(np.float32), rtol=2e-3, atol=2e-3)


@pl.jit
def normalise_cols_in_place(x: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x[:] = pl.col_expand_div(x, pl.col_sum(x))
    return x


@pytest.mark.parametrize("engine", ["native", "sim"])
@pytest.mark.parametrize("shape", [(512, 64), (1024, 2048), (300, 1000)])
def test_column_reductions_run_before_the_rows_are_written(engine, shape):
    # `x[:] = x / col_sum(x)` in row blocks (and column blocks for the wider shapes): the column
    # sums ran inside the row loop, each over every row, after the earlier row blocks had been
    # overwritten (4e-2 off for [4096, 256]) and in time growing with the square of the rows.
    # Columns are now the outer loop and each column block's sum runs before its rows.
    from pypto.runtime import RunConfig

    x0 = RNG.uniform(1, 2, shape).astype(np.float32)
    x = x0.copy()
    normalise_cols_in_place(x, config=RunConfig(engine=engine))
    np.testing.assert_allclose(x, x0 / x0.sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-9)
    text = str(normalise_cols_in_place.lower(x0))
    assert all("col_sum" not in body for body in _loop_bodies(text, "bi")), text

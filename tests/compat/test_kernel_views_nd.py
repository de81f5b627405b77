"""Kernel-side views of any two root dims and N-D tensors in kernels (issue 14 leftovers,
kernel side). A view whose last two axes walk root dims r and c other than the root's last two
(the paged-attention idiom key_cache[blk, :, kvh, :] inside a kernel) is a strided 2-D box of
the root: tile.load / tile.store carry dims=[r, c] and step the root's strides of those dims.
Checked against numpy on both engines, through the printer round trip after every pass."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import _core
from pypto.runtime import RunConfig

ENGINES = ["native", "sim"]
RNG = np.random.default_rng(1414)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def cfg(engine, roundtrip=True):
    return RunConfig(engine=engine, verify="roundtrip" if roundtrip else "basic")


NBLK, BLK, NKVH, D, G, MAXB = 6, 16, 2, 64, 8, 3


# Paged decode scores inside one kernel: blk read from the block table in the kernel, the kv
# head's block the view key_cache[blk, :, kvh, :] (rows step root dim 1 by NKVH * D, columns
# dim 3), the matmul operand loaded into Mat as that strided box.
@pl.jit
def paged_scores_in_kernel(q: pl.Tensor[[NKVH * G, D], pl.FP32], key_cache: pl.Tensor[[NBLK, BLK, NKVH, D], pl.FP32],
                           block_table: pl.Tensor[[MAXB], pl.INT32],
                           scores: pl.Out[pl.Tensor[[NKVH * G, MAXB * BLK], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for kvh in pl.range(NKVH):
            for j in pl.range(MAXB):
                blk = pl.tensor.read(block_table, [j])
                k = key_cache[blk, :, kvh, :]
                scores[kvh * G:(kvh + 1) * G, j * BLK:(j + 1) * BLK] = pl.matmul(q[kvh * G:(kvh + 1) * G, :], k,
                                                                                  b_trans=True)
    return scores


@pytest.mark.parametrize("engine", ENGINES)
def test_paged_scores_with_kernel_side_cache_views(engine):
    q, kc = rand(NKVH * G, D), rand(NBLK, BLK, NKVH, D)
    bt = np.array([4, 0, 5], np.int32)
    sc = np.zeros((NKVH * G, MAXB * BLK), np.float32)
    paged_scores_in_kernel(q, kc, bt, sc, config=cfg(engine))
    for h in range(NKVH):
        k = kc[bt, :, h, :].reshape(-1, D)
        np.testing.assert_allclose(sc[h * G:(h + 1) * G], q[h * G:(h + 1) * G] @ k.T, rtol=1e-4, atol=1e-4)


# Tile-level access of such views: pl.load in Vec, elementwise ops, pl.store and a slice
# assignment of a tile into views of an output with the same layout; run-time blk and kvh.
@pl.jit
def tiles_of_cache_views(kc: pl.Tensor[[NBLK, BLK, NKVH, D], pl.FP32], bt: pl.Tensor[[MAXB], pl.INT32],
                         out: pl.Out[pl.Tensor[[MAXB, BLK, NKVH, D], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for j in pl.range(MAXB):
            blk = pl.tensor.read(bt, [j])
            o = out[j, :, 0, :]
            o = pl.store(pl.exp(pl.load(kc[blk, :, 0, :], [0, 0], [BLK, D])), [0, 0], o)
            for h in pl.range(1, NKVH):
                t = pl.load(kc[blk, :, h, :], [0, 0], [BLK, D])
                out[j, :, h, :] = pl.mul(t, 2.0)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_load_and_store_tiles_of_strided_views(engine):
    kc = rand(NBLK, BLK, NKVH, D)
    bt = np.array([3, 5, 1], np.int32)
    out = np.zeros((MAXB, BLK, NKVH, D), np.float32)
    tiles_of_cache_views(kc, bt, out, config=cfg(engine))
    np.testing.assert_allclose(out[:, :, 0, :], np.exp(kc[bt, :, 0, :]), rtol=1e-5)
    np.testing.assert_allclose(out[:, :, 1, :], kc[bt, :, 1, :] * 2.0, rtol=1e-6)


# Tensor-level ops on such views (tiled like any tensor): elementwise, a row reduction and a
# broadcast, written through a view of the output; a view whose columns walk dim 2 (not the
# last) and a transposed one (rows step dim 3, columns dim 1).
@pl.jit
def tensor_ops_on_strided_views(x: pl.Tensor[[2, BLK, NKVH, D], pl.FP32], h: pl.Scalar[pl.INDEX],
                                y: pl.Out[pl.Tensor[[2, BLK, NKVH, D], pl.FP32]],
                                rs: pl.Out[pl.Tensor[[BLK, 1], pl.FP32]],
                                cols: pl.Out[pl.Tensor[[BLK, NKVH], pl.FP32]],
                                tr: pl.Out[pl.Tensor[[D, BLK], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        v = x[1, :, h, :]
        y[0, :, h, :] = pl.row_expand_sub(v, pl.row_max(v))
        rs[:] = pl.row_sum(v)
        cols[:] = pl.exp(x[0, :, :, 5])
        tr[:] = pl.transpose(x[1, :, 0, :], 0, 1)
    return y, rs, cols, tr


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_level_ops_on_strided_views(engine):
    x = rand(2, BLK, NKVH, D)
    y = np.zeros_like(x)
    rs, cols, tr = np.zeros((BLK, 1), np.float32), np.zeros((BLK, NKVH), np.float32), np.zeros((D, BLK), np.float32)
    tensor_ops_on_strided_views(x, 1, y, rs, cols, tr, config=cfg(engine, roundtrip=False))
    v = x[1, :, 1, :]
    np.testing.assert_allclose(y[0, :, 1, :], v - v.max(1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(y[0, :, 0, :], 0)
    np.testing.assert_array_equal(y[1], 0)
    np.testing.assert_allclose(rs, v.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cols, np.exp(x[0, :, :, 5]), rtol=1e-6)
    np.testing.assert_allclose(tr, x[1, :, 0, :].T)


# Tensor-level ops on rank-4 and rank-5 tensors in kernels: the value is written batch by
# batch over its merged leading axes (batch b is the leading index (b / inner) % extent of
# each axis); elementwise, a row reduction, a row broadcast, a view of a rank-5 tensor and a
# rank-4 batch_matmul.
@pl.jit
def nd_tensor_ops(x: pl.Tensor[[2, 3, 16, 64], pl.FP32], z: pl.Tensor[[3, 2, 2, 8, 32], pl.FP32],
                  y: pl.Out[pl.Tensor[[2, 3, 16, 64], pl.FP32]], r: pl.Out[pl.Tensor[[2, 3, 16, 1], pl.FP32]],
                  w: pl.Out[pl.Tensor[[2, 2, 2, 8, 32], pl.FP32]], m: pl.Out[pl.Tensor[[2, 3, 16, 16], pl.FP32]],
                  b: pl.Tensor[[2, 3, 64, 16], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:] = pl.row_expand_sub(pl.exp(x), pl.row_max(x))
        r[:] = pl.row_sum(x)
        w[:] = pl.add(pl.mul(z[1:3], 2.0), z[0:2])
        m[:] = pl.batch_matmul(x, b)
    return y, r, w, m


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_level_ops_on_rank4_and_rank5_tensors(engine):
    x, z = rand(2, 3, 16, 64), rand(3, 2, 2, 8, 32)
    y, r, w = np.zeros_like(x), np.zeros((2, 3, 16, 1), np.float32), np.zeros((2, 2, 2, 8, 32), np.float32)
    b, m = rand(2, 3, 64, 16), np.zeros((2, 3, 16, 16), np.float32)
    nd_tensor_ops(x, z, y, r, w, m, b, config=cfg(engine, roundtrip=False))
    np.testing.assert_allclose(m, x @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y, np.exp(x) - x.max(-1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r, x.sum(-1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w, z[1:3] * 2.0 + z[0:2], rtol=1e-6)


def lower_error(params, body):
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, {params}) -> pl.Tensor[[64, 64], pl.FP32]:
{body}
        return out
'''
    with pytest.raises(_core.PyptoError) as e:
        _core.run_pass(pl.parse(src), "LowerTensorOps", "a2a3sim")
    return str(e.value)


def test_a_tile_over_a_merged_axis_of_other_dims_is_refused():
    # The transposed merge of [4, 8, 64] as [32, 64]: the tile's columns would walk two dims.
    text = lower_error("x: pl.Tensor[[4, 8, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]",
                       "        v = pl.transpose(pl.reshape(x, [32, 64]), 0, 1)\n"
                       "        t = pl.load(v, [0, 0], [16, 32])\n"
                       "        out = pl.store(t, [0, 0], out)")
    assert "a load of the view 'v': its last two axes walk dimensions 2 and -2" in text, text
    assert "fix:" in text and ":9:" in text, text


@pytest.mark.parametrize("call, message", [
    ("pl.tile.load(x, [0, 0, 0], [16, 32], dims=[1, 1])", "dims=[1, 1] must name two different dimensions"),
    ("pl.tile.load(x, [0, 0, 0], [16, 32], dims=[0, 3])", "dims=[0, 3] must name two different dimensions"),
    ("pl.tile.load(x, [0, 0, 0], [2, 16, 32], dims=[0, 2])", "places a 2-D tile"),
    ("pl.tile.load(x, [0, 0, 0], [16, 32], dims=[0, 2])", "of dimension 0, but the tensor has only 4"),
])
def test_bad_box_dims_are_errors(call, message):
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 8, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = {call}
        out = pl.store(t, [0, 0], out)
        return out
'''
    with pytest.raises(Exception) as e:
        pl.parse(src)
    assert message in str(e.value) and "fix:" in str(e.value), str(e.value)


def test_bad_drop_dims_of_assemble_is_an_error():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[4, 16, 2, 32], pl.FP32]]) -> pl.Tensor[[4, 16, 2, 32], pl.FP32]:
        out = pl.tensor.assemble(out, x, [0, 0, 1, 0], drop_dims=[2])
        return out
'''
    with pytest.raises(Exception) as e:
        pl.parse(src)
    assert "drop_dims=[2] must name, in increasing order, the 2 target axes" in str(e.value), str(e.value)


def test_torch_codegen_of_strided_boxes():
    # pypto.debug.torch_codegen of the lowered program spells dims= loads and stores as boxes.
    torch = pytest.importorskip("torch")
    from pypto import debug as dbg
    from pypto import runtime as rt
    kc = torch.from_numpy(rand(NBLK, BLK, NKVH, D))
    bt = torch.tensor([3, 5, 1], dtype=torch.int32)
    args = (kc, bt, torch.zeros(MAXB, BLK, NKVH, D))
    text = dbg.torch_codegen(rt.jit_compile(tiles_of_cache_views, args))
    assert "dims=" in text or "[1, 3]" in text, text
    namespace = {}
    exec(compile(text, "<torch script>", "exec"), namespace)
    out = torch.zeros(MAXB, BLK, NKVH, D)
    namespace["ENTRY"](kc, bt, out)
    want = np.zeros((MAXB, BLK, NKVH, D), np.float32)
    want[:, :, 0, :] = np.exp(kc.numpy()[bt.numpy(), :, 0, :])
    want[:, :, 1, :] = kc.numpy()[bt.numpy(), :, 1, :] * 2.0
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)


# The same spelling in the orchestration: out[1, :, h, :] = t (drop_dims) is the window of out
# with axes 0 and 2 dropped (PyPTO's name alias of t's creation, or a copy).
@pl.jit
def orchestration_write_of_inner_dims(x: pl.Tensor[[BLK, D], pl.FP32],
                                      out: pl.Out[pl.Tensor[[MAXB, BLK, NKVH, D], pl.FP32]]):
    for h in pl.range(NKVH):
        t = pl.create_tensor([BLK, D], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            t[:] = pl.mul(x, h + 1.0)
        out[1, :, h, :] = t
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_orchestration_write_into_inner_dims(engine):
    x = rand(BLK, D)
    out = np.zeros((MAXB, BLK, NKVH, D), np.float32)
    orchestration_write_of_inner_dims(x, out, config=cfg(engine))
    want = np.zeros_like(out)
    want[1, :, 0, :], want[1, :, 1, :] = x, 2 * x
    np.testing.assert_allclose(out, want, rtol=1e-6)

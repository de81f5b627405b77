"""Valid regions of tensor views inside kernels (issue 14, item 1, part 2): a kernel
`pl.slice(t, shape, offset, valid_shape=[...])` or `clamp=True` (cut at the source's edge)
keeps the view's valid region until LowerTensorOps folds the view into the loads of its
tensor: every load of the view reads only the valid part (the loaded tile's valid shape is
cut to it), the rest is the tile's pad. Each program is checked against numpy on both
engines and round-trips through the printer after every pass."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import _core
from pypto.language.errors import ParseError
from pypto.runtime import RunConfig

ENGINES = ["native", "sim"]
RNG = np.random.default_rng(1408)


def rand(*shape):
    return RNG.standard_normal(shape, dtype=np.float32)


def cfg(engine):
    return RunConfig(engine=engine, verify="roundtrip")


@pl.jit
def ragged_block(k: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        blk = pl.slice(k, [16, 64], [16, 0], valid_shape=[5, 64])  # a ragged last KV block
        t = pl.load(blk, [0, 0], [16, 64])
        z = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
        pl.store(z, [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_slice_valid_shape_narrows_the_load(engine):
    k = rand(32, 64)
    out = np.full((16, 64), 7.0, np.float32)
    ragged_block(k, out, config=cfg(engine))
    want = np.zeros((16, 64), np.float32)
    want[:5] = k[16:21]
    np.testing.assert_array_equal(out, want)


@pl.jit
def ragged_block_runtime(k: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        blk = k[16:32, :]
        part = pl.slice(blk, [16, 64], [0, 0], valid_shape=[n, 64])  # run-time valid rows
        t = pl.load(part, [0, 0], [16, 64])
        m = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
        pl.store(pl.row_max(m), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("n", [3, 16])
def test_runtime_valid_rows_then_pad_min(engine, n):
    k = rand(32, 64)
    out = np.zeros((16, 1), np.float32)
    ragged_block_runtime(k, n, out, config=cfg(engine))
    want = np.full((16, 1), -np.inf, np.float32)
    want[:n, 0] = k[16:16 + n].max(1)
    np.testing.assert_array_equal(out[:n], want[:n])
    assert np.all(out[n:] <= np.finfo(np.float32).min)  # the pad: min (the dtype's lowest or -inf)


@pl.jit
def clamped_tail(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tail = pl.slice(x, [16, 64], [48, 0], clamp=True)  # rows 48..63 of a 60-row tensor: 12 valid
        z = pl.tile.fillpad(pl.load(tail, [0, 0], [16, 64]), pad_value=pl.PadValue.zero)
        pl.store(z, [0, 0], out)
        inner = tail[8:16, 32:64]  # a slice of the clamped view: rows 56..63, 4 of them valid
        w = pl.tile.fillpad(pl.load(inner, [0, 0], [8, 32]), pad_value=pl.PadValue.zero)
        pl.store(w, [16, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_clamp_cuts_at_the_source_edge(engine):
    x = rand(60, 64)
    out = np.full((24, 64), 7.0, np.float32)
    clamped_tail(x, out, config=cfg(engine))
    want = np.zeros((16, 64), np.float32)
    want[:12] = x[48:60]
    np.testing.assert_array_equal(out[:16], want)
    w = np.zeros((8, 32), np.float32)
    w[:4] = x[56:60, 32:64]
    np.testing.assert_array_equal(out[16:24, :32], w)
    np.testing.assert_array_equal(out[16:24, 32:], 7.0)


@pl.jit
def row_sum_of_ragged_view(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        v = pl.slice(x, [8, 64], [0, 0], valid_shape=[8, 40])
        t = pl.tile.fillpad(pl.load(v, [0, 0], [8, 64]), pad_value=pl.PadValue.zero)
        pl.store(pl.row_sum(t), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_valid_columns(engine):
    x = rand(8, 64)
    out = np.zeros((8, 1), np.float32)
    row_sum_of_ragged_view(x, out, config=cfg(engine))
    np.testing.assert_allclose(out[:, 0], x[:, :40].sum(1), rtol=1e-5, atol=1e-5)


def lower_error(body):
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
{body}
        return out
'''
    with pytest.raises(_core.PyptoError) as e:
        _core.run_pass(pl.parse(src), "LowerTensorOps", "a2a3sim")
    return str(e.value)


def test_reshape_of_a_narrowed_slice_is_refused_with_the_fix():
    text = lower_error("        a = pl.slice(x, [64, 64], [0, 0], valid_shape=[60, 64])\n"
                       "        b = pl.reshape(a, [32, 128])\n        out[0:32, 0:128] = pl.exp(b)")
    assert ":9:" in text and "'a'" in text and "a valid region is carried through slices and transposes only" in text
    assert "fix:" in text, text


def test_a_partly_valid_leading_axis_is_refused_at_the_load():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        a = pl.slice(x, [4, 16, 64], [0, 0, 0], valid_shape=[2, 16, 64])
        t = pl.load(a, [1, 0, 0], [16, 64])
        out = pl.store(t, [0, 0], out)
        return out
'''
    with pytest.raises(_core.PyptoError) as e:
        _core.run_pass(pl.parse(src), "LowerTensorOps", "a2a3sim")
    text = str(e.value)
    assert ":9:" in text and "'a'" in text and "axis 0 is only partly valid" in text and "fix:" in text, text


@pl.jit
def exp_of_ragged_view(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.slice(x, [64, 64], [0, 0], valid_shape=[60, 40])
        out[0:64, 0:64] = pl.exp(a)  # tiled: each block reads and writes only the valid part
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_level_op_on_a_narrowed_view_writes_the_valid_part(engine):
    x = rand(64, 128)
    out = np.full((64, 128), 7.0, np.float32)
    exp_of_ragged_view(x, out, config=cfg(engine))
    want = np.full((64, 128), 7.0, np.float32)
    want[:60, :40] = np.exp(x[:60, :40])
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pl.jit
def add_tile_to_ragged_view(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.slice(x, [16, 64], [8, 0], valid_shape=[5, 64])
        s = pl.add(a, pl.load(y, [0, 0], [16, 64]))  # the view used as a tile: loaded whole, 5 rows valid
        pl.store(s, [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_view_used_as_tile_keeps_its_valid_rows(engine):
    x, y = rand(32, 64), rand(16, 64)
    out = np.full((16, 64), 7.0, np.float32)
    add_tile_to_ragged_view(x, y, out, config=cfg(engine))
    want = np.full((16, 64), 7.0, np.float32)
    want[:5] = x[8:13] + y[:5]
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pl.jit
def transposed_ragged_view(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.slice(x, [16, 32], [0, 32], valid_shape=[16, 10])
        at = pl.transpose(a, 0, 1)  # [32, 16], rows 0..9 valid
        z = pl.tile.fillpad(pl.load(at, [0, 0], [32, 16]), pad_value=pl.PadValue.zero)
        pl.store(z, [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_transpose_swaps_the_valid_extents(engine):
    x = rand(16, 64)
    out = np.full((32, 16), 7.0, np.float32)
    transposed_ragged_view(x, out, config=cfg(engine))
    want = np.zeros((32, 16), np.float32)
    want[:10] = x[:, 32:42].T
    np.testing.assert_array_equal(out, want)


@pl.jit
def set_validshape_in_kernel(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.tensor.set_validshape(x[16:32, :], n, 48)  # metadata: valid [n, 48] of the [16, 64] view
        z = pl.tile.fillpad(pl.load(a, [0, 0], [16, 64]), pad_value=pl.PadValue.zero)
        pl.store(z, [0, 0], out)
        b = pl.set_validshape(x[0:16, :], 16, 64)  # the full region: the view itself
        pl.store(pl.load(b, [0, 0], [16, 64]), [16, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_set_validshape(engine):
    x = rand(32, 64)
    out = np.full((32, 64), 7.0, np.float32)
    set_validshape_in_kernel(x, 6, out, config=cfg(engine))
    want = np.zeros((16, 64), np.float32)
    want[:6, :48] = x[16:22, :48]
    np.testing.assert_array_equal(out[:16], want)
    np.testing.assert_array_equal(out[16:], x[:16])


def test_set_validshape_checks():
    with pytest.raises(ParseError, match=r"valid_rows = 20 is outside 0..16"):
        pl.parse('''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        a = pl.tensor.set_validshape(x, 20, 64)
        out = pl.store(pl.load(a, [0, 0], [16, 64]), [0, 0], out)
        return out
''')


@pl.jit
def narrowed_in_orchestration(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    a = pl.tensor.set_validshape(x, 8, 64)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(a, [0, 0], [16, 64]), [0, 0], out)
    return out


def test_set_validshape_in_the_orchestration_reaches_the_kernel():
    # the scope's load reads the 8 valid rows; the store writes the tile's valid rows only
    # (tests/compat/test_views_host_valid.py has the rest)
    x = rand(16, 64)
    out = np.full((16, 64), -1.0, np.float32)
    narrowed_in_orchestration(x, out)
    want = np.full_like(out, -1.0)
    want[:8] = x[:8]
    np.testing.assert_array_equal(out, want)


@pl.jit
def tensor_view_valid_shape(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.tensor.view(x[1], [16, 64], valid_shape=[4, 32])  # the [16, 64] view, valid [4, 32]
        z = pl.tile.fillpad(pl.load(a, [0, 0], [16, 64]), pad_value=pl.PadValue.zero)
        pl.store(z, [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_view_valid_shape(engine):
    x = rand(2, 16, 64)
    out = np.full((16, 64), 7.0, np.float32)
    tensor_view_valid_shape(x, out, config=cfg(engine))
    want = np.zeros((16, 64), np.float32)
    want[:4, :32] = x[1, :4, :32]
    np.testing.assert_array_equal(out, want)


def test_lowered_load_carries_the_cut_valid_shape():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 128], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        a = pl.slice(x, [32, 64], [16, 64], valid_shape=[n, 40])
        t = pl.load(a, [8, 0], [16, 64])
        out = pl.store(t, [0, 0], out)
        return out
'''
    text = _core.ir.print_program(_core.run_pass(pl.parse(src), "LowerTensorOps", "a2a3sim"))
    # the tile at view row 8 of a [32, 64] view whose first min(32, n) rows are valid: the tile's rows
    # from there on, at most 16; 40 columns
    assert ("pl.tile.load(x, [24, 64], [16, 64], valid_shape=[pl.min(16, pl.max(0, pl.min(32, n) - 8)), 40]"
            in text), text
    assert "pl.slice" not in text, text

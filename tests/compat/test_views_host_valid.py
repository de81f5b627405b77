"""A valid region on an orchestration view passed to a kernel (issue 14; docs/language.md
"Tensor views in orchestration", docs/passes.md PassValidRegions): pl.slice(...,
valid_shape=[...]) with run-time extents and pl.slice(..., clamp=True) in the host code give
the kernel the static window with that valid region; the kernel's loads of the parameter read
only the valid part and its stores write only the valid part. Every program runs on both
engines against numpy; rows outside the valid region of an Out view must stay untouched."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import runtime
from pypto.runtime import RunConfig

rng = np.random.default_rng(1402)
T, C = 64, 128
SENTINEL = -7.0


@pytest.fixture(params=["native", "sim"])
def engine(request):
    return request.param


def run(program, *args, engine, **cfg):
    runtime.run(program, *args, config=RunConfig(engine=engine, verify="roundtrip", **cfg))


@pl.program
class Ragged:
    """The ragged last block of x: x[r0:r0 + 64, :] with valid_shape=[rows, 128], rows read from
    a tensor at run time, and the same window of out."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[T, C], pl.FP32], o: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        t = pl.load(x, [0, 0], [T, C])
        o = pl.store(pl.adds(pl.muls(t, 2.0), 1.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4 * T, C], pl.FP32], n: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[4 * T, C], pl.FP32]]) -> pl.Tensor[[4 * T, C], pl.FP32]:
        rows = pl.tensor.read(n, [0])
        r0 = 2 * T
        xv = pl.slice(x, [T, C], [r0, 0], valid_shape=[rows, C])
        ov = pl.slice(out, [T, C], [r0, 0], valid_shape=[rows, C])
        ov = self.scale(xv, ov)
        return out


@pytest.mark.parametrize("rows", [0, 1, 37, 64])
def test_run_time_valid_shape_on_a_window(engine, rows):
    x = rng.standard_normal((4 * T, C)).astype(np.float32)
    out = np.full((4 * T, C), SENTINEL, np.float32)
    run(Ragged, x, np.array([rows], np.int32), out, engine=engine)
    want = np.full_like(out, SENTINEL)
    want[2 * T:2 * T + rows] = 2 * x[2 * T:2 * T + rows] + 1
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pl.program
class InOnly:
    """Only the input is narrowed: the tile's rows past the valid region are not stored, so
    the rows of a whole Out past it stay as they were."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[T, C], pl.FP32], o: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        o = pl.store(pl.muls(pl.load(x, [0, 0], [T, C]), 3.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2 * T, C], pl.FP32], n: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[2 * T, C], pl.FP32]]) -> pl.Tensor[[2 * T, C], pl.FP32]:
        rows = pl.tensor.read(n, [0])
        o0 = out[0:T, :]
        o0 = self.scale(pl.slice(x, [T, C], [0, 0], valid_shape=[rows, C]), o0)  # narrowed
        o1 = out[T:2 * T, :]
        o1 = self.scale(x[T:2 * T, :], o1)  # the same kernel given a whole window
        return out


def test_valid_input_whole_output_and_a_second_whole_launch(engine):
    x = rng.standard_normal((2 * T, C)).astype(np.float32)
    out = np.full((2 * T, C), SENTINEL, np.float32)
    run(InOnly, x, np.array([20], np.int32), out, engine=engine)
    want = np.full_like(out, SENTINEL)
    want[:20] = 3 * x[:20]
    want[T:] = 3 * x[T:]
    np.testing.assert_allclose(out, want, rtol=1e-6)


R = 100  # rows of the clamped tensors: the window 64:128 runs 28 rows off the end


@pl.program
class Clamped:
    """clamp=True on windows that run off the end of the tensor: the valid part is cut at the edge."""

    @pl.function(type=pl.FunctionType.InCore)
    def neg(self, x: pl.Tensor[[T, C], pl.FP32], o: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        o = pl.store(pl.neg(pl.load(x, [0, 0], [T, C])), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        for b in pl.range(2):
            r0 = b * T
            ov = pl.slice(out, [T, C], [r0, 0], clamp=True)
            ov = self.neg(pl.slice(x, [T, C], [r0, 0], clamp=True), ov)
        return out


def test_clamp_cuts_the_valid_region_at_the_edge(engine):
    x = rng.standard_normal((R, C)).astype(np.float32)
    out = np.full((R, C), SENTINEL, np.float32)
    run(Clamped, x, out, engine=engine)
    np.testing.assert_allclose(out, -x, rtol=1e-6)


@pl.program
class Scope:
    """A pl.at scope reading and writing narrowed views (tensor-level ops in the kernel)."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2 * T, C], pl.FP32], n: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[2 * T, C], pl.FP32]]) -> pl.Tensor[[2 * T, C], pl.FP32]:
        rows = pl.tensor.read(n, [0])
        xv = pl.slice(x, [T, C], [T, 0], valid_shape=[rows, C])
        ov = pl.slice(out, [T, C], [T, 0], valid_shape=[rows, C])
        with pl.at(level=pl.Level.CORE_GROUP):
            ov[:] = pl.exp(xv)
        return out


def test_scope_with_narrowed_views(engine):
    x = rng.standard_normal((2 * T, C)).astype(np.float32)
    out = np.full((2 * T, C), SENTINEL, np.float32)
    run(Scope, x, np.array([45], np.int32), out, engine=engine)
    want = np.full_like(out, SENTINEL)
    want[T:T + 45] = np.exp(x[T:T + 45])
    np.testing.assert_allclose(out, want, rtol=1e-5)


@pl.program
class SetValid:
    """pl.tensor.set_validshape on an orchestration window with run-time rows and columns."""

    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[T, C], pl.FP32], o: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        o = pl.store(pl.muls(pl.load(x, [0, 0], [T, C]), 2.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[T, C], pl.FP32], n: pl.Tensor[[2], pl.INT32],
             out: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        r = pl.tensor.read(n, [0])
        c = pl.tensor.read(n, [1])
        ov = pl.tensor.set_validshape(out, r, c)
        ov = self.twice(x, ov)
        return out


def test_set_validshape_in_the_orchestration_narrows_the_store(engine):
    x = rng.standard_normal((T, C)).astype(np.float32)
    out = np.full((T, C), SENTINEL, np.float32)
    run(SetValid, x, np.array([33, 64], np.int32), out, engine=engine)
    want = np.full_like(out, SENTINEL)
    want[:33, :64] = 2 * x[:33, :64]
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_reshape_of_a_narrowed_view_is_refused():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[C, T], pl.FP32], o: pl.Out[pl.Tensor[[C, T], pl.FP32]]) -> pl.Tensor[[C, T], pl.FP32]:
            o = pl.store(pl.load(a, [0, 0], [C, T]), [0, 0], o)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[T, C], pl.FP32], o: pl.Out[pl.Tensor[[C, T], pl.FP32]]) -> pl.Tensor[[C, T], pl.FP32]:
            v = pl.slice(x, [T, C], [0, 0], valid_shape=[8, C])
            o = self.copy(pl.reshape(v, [C, T]), o)
            return o

    with pytest.raises(Exception, match=r"(?s)test_views_host_valid.py:\d+.*valid region smaller than its shape.*fix: "):
        runtime.run(Bad, np.zeros((T, C), np.float32), np.zeros((C, T), np.float32), config=RunConfig(engine="sim"))


# -- an input partly overlapping an output at call time (issue 18 item 3) ---------------------

B = 16


@pl.program
class Shift:
    """c = a + 1, row block by row block: with a = buf[0:64] and c = buf[16:80] a block written
    would be read by the next block (a cascade) unless the input is read from a copy."""

    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, a: pl.Tensor[[T, C], pl.FP32], c: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        for i in pl.range(T // B):
            t = pl.load(a, [i * B, 0], [B, C])
            c = pl.store(pl.adds(t, 1.0), [i * B, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[T, C], pl.FP32], c: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        c = self.inc(a, c)
        return c


@pytest.mark.parametrize("shift", [16, -16, 1])
def test_partly_overlapping_input_is_read_from_a_copy(engine, shift):
    buf = rng.standard_normal((T + 16, C)).astype(np.float32)
    want = buf.copy()
    lo = 16 if shift < 0 else 0
    a, c = buf[lo:lo + T], buf[lo + shift:lo + shift + T]
    want[lo + shift:lo + shift + T] = buf[lo:lo + T] + 1
    run(Shift, a, c, engine=engine)
    np.testing.assert_allclose(buf, want, rtol=1e-6)


def test_exact_alias_is_in_place(engine):
    buf = rng.standard_normal((T, C)).astype(np.float32)
    want = buf + 1
    run(Shift, buf, buf, engine=engine)
    np.testing.assert_allclose(buf, want, rtol=1e-6)


def test_partly_overlapping_column_windows(engine):
    buf = rng.standard_normal((T, 2 * C)).astype(np.float32)
    want = buf.copy()
    want[:, 64:64 + C] = buf[:, 0:C] + 1
    run(Shift, buf[:, 0:C], buf[:, 64:64 + C], engine=engine)
    np.testing.assert_allclose(buf, want, rtol=1e-6)


def test_partly_overlapping_torch_views(engine):
    torch = pytest.importorskip("torch")
    buf = torch.randn(T + 16, C)
    want = buf.clone()
    want[16:16 + T] = buf[0:T] + 1
    run(Shift, buf[0:T], buf[16:16 + T], engine=engine)
    torch.testing.assert_close(buf, want)


R2 = 200  # 3 whole blocks of 64 rows and a ragged one of 8


@pl.program
class Blocks:
    """A loop over row blocks; the last window x[192:256] runs past the 200 rows, its valid
    region [8, 128] (valid_shape= from pl.min) stays inside: only that must lie in x."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[T, C], pl.FP32], o: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        o = pl.store(pl.muls(pl.load(x, [0, 0], [T, C]), 0.5), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R2, C], pl.FP32], out: pl.Out[pl.Tensor[[R2, C], pl.FP32]]) -> pl.Tensor[[R2, C], pl.FP32]:
        for b in pl.range(4):
            r0 = b * T
            rows = pl.min(T, R2 - r0)
            ov = pl.slice(out, [T, C], [r0, 0], valid_shape=[rows, C])
            ov = self.scale(pl.slice(x, [T, C], [r0, 0], valid_shape=[rows, C]), ov)
        return out


def test_ragged_blocks_of_a_loop(engine):
    x = rng.standard_normal((R2, C)).astype(np.float32)
    out = np.full((R2, C), SENTINEL, np.float32)
    run(Blocks, x, out, engine=engine)
    np.testing.assert_allclose(out, 0.5 * x, rtol=1e-6)


@pl.program
class OffEnd:
    """A valid region that itself runs off the tensor is still a run-time error."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[T, C], pl.FP32], o: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        o = pl.store(pl.muls(pl.load(x, [0, 0], [T, C]), 0.5), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R2, C], pl.FP32], n: pl.Tensor[[2], pl.INT32],
             out: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        rows = pl.tensor.read(n, [0])
        r0 = pl.tensor.read(n, [1])
        out = self.scale(pl.slice(x, [T, C], [r0, 0], valid_shape=[rows, C]), out)
        return out


def test_a_valid_region_off_the_tensor_is_a_run_time_error():
    x = np.zeros((R2, C), np.float32)
    with pytest.raises(Exception, match=r"(?s)test_views_host_valid.py:\d+.*\(valid \[9, 128\]\).*lies off it: dimension 0 "
                                        r"spans 192:201 of 0:200.*fix: .*clamp=True"):
        runtime.run(OffEnd, x, np.array([9, 3 * T], np.int32), np.zeros((T, C), np.float32), config=RunConfig(engine="sim"))


@pl.program
class LoopStores:
    """A kernel storing row blocks into its Out parameter in a loop (the parameter carried by
    the loop) given a narrowed view: blocks past the valid rows store nothing, the block
    holding the edge stores its valid rows."""

    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, a: pl.Tensor[[T, C], pl.FP32], c: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        for i in pl.range(T // B):
            t = pl.load(a, [i * B, 0], [B, C])
            c = pl.store(pl.adds(t, 1.0), [i * B, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[T, C], pl.FP32], n: pl.Tensor[[1], pl.INT32],
             c: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        rows = pl.tensor.read(n, [0])
        cv = pl.slice(c, [T, C], [0, 0], valid_shape=[rows, C])
        cv = self.inc(a, cv)
        return c


@pytest.mark.parametrize("rows", [37, 16, 0])
def test_loop_of_stores_into_a_narrowed_out(engine, rows):
    a = rng.standard_normal((T, C)).astype(np.float32)
    c = np.full((T, C), SENTINEL, np.float32)
    run(LoopStores, a, np.array([rows], np.int32), c, engine=engine)
    want = np.full_like(c, SENTINEL)
    want[:rows] = a[:rows] + 1
    np.testing.assert_allclose(c, want, rtol=1e-6)


def test_dropping_an_axis_that_may_be_invalid_is_refused():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[C], pl.FP32], o: pl.Out[pl.Tensor[[C], pl.FP32]]) -> pl.Tensor[[C], pl.FP32]:
            o = pl.store(pl.load(a, [0], [1, C]), [0], o)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[T, C], pl.FP32], n: pl.Tensor[[1], pl.INT32],
                 o: pl.Out[pl.Tensor[[C], pl.FP32]]) -> pl.Tensor[[C], pl.FP32]:
            rows = pl.tensor.read(n, [0])
            v = pl.slice(x, [T, C], [0, 0], valid_shape=[rows, C])
            o = self.copy(v[5], o)  # row 5 of a view whose valid rows are known only at run time
            return o

    with pytest.raises(Exception, match=r"(?s)test_views_host_valid.py:\d+.*a slice of 'v' drops axis 0, whose valid extent may be smaller "
                                        r"than 1.*fix: "):
        runtime.run(Bad, np.zeros((T, C), np.float32), np.array([1], np.int32), np.zeros(C, np.float32),
                    config=RunConfig(engine="sim"))


def test_partly_overlapping_device_tensors(engine):
    from pypto.runtime import ChipWorker
    from pypto.runtime.worker import DeviceTensor
    host = rng.standard_normal((T + 16, C)).astype(np.float32)
    want = host.copy()
    want[16:16 + T] = host[0:T] + 1
    with ChipWorker(config=RunConfig(engine=engine), level=2, enable_sdma=False) as w:
        buf = w.alloc_tensor([T + 16, C], pl.FP32, init=host)
        a = DeviceTensor(buf.data_ptr, [T, C], pl.FP32, buffer=buf)
        c = DeviceTensor(buf.data_ptr + 16 * C * 4, [T, C], pl.FP32, buffer=buf)
        f = w.register(runtime.run(Shift, host[0:T].copy(), np.zeros((T, C), np.float32),
                                   config=RunConfig(engine=engine)).compiled)
        f(a, c)
        np.testing.assert_allclose(buf.numpy(), want, rtol=1e-6)


@pl.program
class Padded:
    """A view narrowed on its columns at run time: the kernel's tile holds the valid columns,
    pl.tile.fillpad fills the rest (the pad rule of tiles), and the filled tile is stored whole."""

    @pl.function(type=pl.FunctionType.InCore)
    def pad(self, x: pl.Tensor[[T, C], pl.FP32], o: pl.Out[pl.Tensor[[T, C], pl.FP32]],
            p: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> tuple[pl.Tensor[[T, C], pl.FP32], pl.Tensor[[T, C], pl.FP32]]:
        t = pl.load(x, [0, 0], [T, C])
        o = pl.store(pl.tile.fillpad(t, pad_value=pl.PadValue.zero), [0, 0], o)
        p = pl.store(pl.tile.fillpad(t, pad_value=pl.PadValue.max), [0, 0], p)
        return o, p

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[T, 2 * C], pl.FP32], n: pl.Tensor[[1], pl.INT32],
             o: pl.Out[pl.Tensor[[T, C], pl.FP32]], p: pl.Out[pl.Tensor[[T, C], pl.FP32]]) -> pl.Tensor[[T, C], pl.FP32]:
        cols = pl.tensor.read(n, [0])
        r = self.pad(pl.slice(x, [T, C], [0, C], valid_shape=[T, cols]), o, p)
        return o


def test_the_pad_of_a_narrowed_view_follows_fillpad(engine):
    x = rng.standard_normal((T, 2 * C)).astype(np.float32)
    o = np.full((T, C), SENTINEL, np.float32)
    p = np.full((T, C), SENTINEL, np.float32)
    run(Padded, x, np.array([40], np.int32), o, p, engine=engine)
    want = np.zeros((T, C), np.float32)
    want[:, :40] = x[:, C:C + 40]
    np.testing.assert_array_equal(o, want)
    want[:, 40:] = np.finfo(np.float32).max
    np.testing.assert_array_equal(p, want)

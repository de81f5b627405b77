"""Tensor views in the orchestration (issue 14, docs/language.md "Tensor views in
orchestration", docs/runtime.md "Orchestration views"): a view made by the host code
(x[a:b, c:d], x[i], pl.transpose, pl.reshape, pl.tensor.view, pl.reinterpret_view) is a
task argument with its parent's strides; writes through it land in the parent; the task
graph compares views of one tensor in the tensor's index space; a window off its parent is
a run-time error at the user's line. Every program runs on both engines against numpy."""

import json

import numpy as np
import pytest

import pypto.language as pl
from pypto import runtime
from pypto.runtime import RunConfig

rng = np.random.default_rng(14)
HALF = 32


@pytest.fixture(params=["native", "sim"])
def engine(request):
    return request.param


def run(program, *args, engine, **cfg):
    runtime.run(program, *args, config=RunConfig(engine=engine, verify="roundtrip", **cfg))


@pl.program
class Rope:
    """The rope row of a run-time position: cos[pos:pos + 1, 0:HALF] passed to a kernel,
    pos read from a tensor (pl.tensor.read) and given as a Scalar parameter."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, c: pl.Tensor[[1, HALF], pl.FP32], o: pl.Out[pl.Tensor[[1, HALF], pl.FP32]]) -> pl.Tensor[[1, HALF], pl.FP32]:
        o = pl.store(pl.muls(pl.load(c, [0, 0], [1, HALF]), 2.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, rope_cos: pl.Tensor[[64, 2 * HALF], pl.FP32], positions: pl.Tensor[[2], pl.INT32],
             pos: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[3, HALF], pl.FP32]]) -> pl.Tensor[[3, HALF], pl.FP32]:
        p0 = pl.tensor.read(positions, [0])
        p1 = pl.tensor.read(positions, [1])
        o0 = out[0:1, :]
        o0 = self.scale(rope_cos[p0:p0 + 1, 0:HALF], o0)
        o1 = out[1:2, :]
        o1 = self.scale(rope_cos[p1:p1 + 1, HALF:2 * HALF], o1)
        o2 = out[2:3, :]
        o2 = self.scale(rope_cos[pos:pos + 1, 0:HALF], o2)
        return out


def test_runtime_offset_views_are_kernel_arguments(engine):
    cos = rng.standard_normal((64, 2 * HALF)).astype(np.float32)
    out = np.zeros((3, HALF), np.float32)
    run(Rope, cos, np.array([5, 63], np.int32), 17, out, engine=engine)
    np.testing.assert_allclose(out, 2 * np.stack([cos[5, :HALF], cos[63, HALF:], cos[17, :HALF]]), rtol=1e-6)


def test_window_off_the_parent_is_a_runtime_error_naming_the_line(engine):
    cos = rng.standard_normal((64, 2 * HALF)).astype(np.float32)
    out = np.zeros((3, HALF), np.float32)
    with pytest.raises(Exception) as e:
        run(Rope, cos, np.array([5, 64], np.int32), 0, out, engine=engine)
    text = str(e.value)
    line = next(i for i, s in enumerate(open(__file__), 1) if "rope_cos[p1:p1 + 1" in s)
    assert f"test_views_host.py:{line}:" in text, text
    assert "the window at offsets [64, 32] with extents [1, 32] of 'rope_cos'[64, 64] FP32 lies off it" in text, text
    assert "dimension 0 spans 64:65 of 0:64" in text, text
    assert "fix:" in text, text
    np.testing.assert_array_equal(out[1:], 0)  # nothing was written through the bad window


N = 32


@pl.program
class Shapes:
    """Views with other strides: x[1] drops an axis, pl.transpose swaps strides, pl.reshape
    of a contiguous tensor; each is loaded by a kernel that copies it."""

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[N, 2 * N], pl.FP32], o: pl.Out[pl.Tensor[[N, 2 * N], pl.FP32]]) -> pl.Tensor[[N, 2 * N], pl.FP32]:
        o = pl.store(pl.load(a, [0, 0], [N, 2 * N]), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def copy_t(self, a: pl.Tensor[[2 * N, N], pl.FP32], o: pl.Out[pl.Tensor[[2 * N, N], pl.FP32]]) -> pl.Tensor[[2 * N, N], pl.FP32]:
        o = pl.store(pl.load(a, [0, 0], [2 * N, N]), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3, N, 2 * N], pl.FP32], o1: pl.Out[pl.Tensor[[N, 2 * N], pl.FP32]],
             o2: pl.Out[pl.Tensor[[2 * N, N], pl.FP32]], o3: pl.Out[pl.Tensor[[N, 2 * N], pl.FP32]],
             o4: pl.Out[pl.Tensor[[2 * N, N], pl.FP32]], o5: pl.Out[pl.Tensor[[2 * N, N], pl.FP32]]):
        o1 = self.copy(x[1], o1)
        o2 = self.copy_t(pl.transpose(x[2], 0, 1), o2)
        flat = pl.reshape(x, [3 * N, 2 * N])
        o3 = self.copy(flat[N // 2:N // 2 + N, :], o3)
        o4t = pl.transpose(o4, 0, 1)  # a write through a transposed view of an output
        o4t = self.copy(x[0], o4t)
        o5 = self.copy_t(pl.tensor.view(x[1], [2 * N, N]), o5)  # a window of whole rows is contiguous
        return o1, o2, o3, o4, o5


def test_dropped_axis_transpose_and_reshape_views(engine):
    x = rng.standard_normal((3, N, 2 * N)).astype(np.float32)
    o1, o3 = np.zeros((N, 2 * N), np.float32), np.zeros((N, 2 * N), np.float32)
    o2, o4 = np.zeros((2 * N, N), np.float32), np.zeros((2 * N, N), np.float32)
    o5 = np.zeros((2 * N, N), np.float32)
    run(Shapes, x, o1, o2, o3, o4, o5, engine=engine)
    np.testing.assert_array_equal(o1, x[1])
    np.testing.assert_array_equal(o2, x[2].T)
    np.testing.assert_array_equal(o3, x.reshape(3 * N, 2 * N)[N // 2:N // 2 + N])
    np.testing.assert_array_equal(o4, x[0].T)
    np.testing.assert_array_equal(o5, x[1].reshape(2 * N, N))


@pl.program
class Reinterpret:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[16, 32], pl.INT32], o: pl.Out[pl.Tensor[[16, 32], pl.INT32]]) -> pl.Tensor[[16, 32], pl.INT32]:
        o = pl.store(pl.load(a, [0, 0], [16, 32]), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP16], o: pl.Out[pl.Tensor[[16, 32], pl.INT32]]) -> pl.Tensor[[16, 32], pl.INT32]:
        bits = pl.reinterpret_view(x[8:24, :], pl.INT32)  # a strided window: rows keep their stride
        o = self.copy(bits, o)
        return o


def test_reinterpret_view_of_a_window(engine):
    x = rng.standard_normal((32, 64)).astype(np.float16)
    o = np.zeros((16, 32), np.int32)
    run(Reinterpret, x, o, engine=engine)
    np.testing.assert_array_equal(o, np.ascontiguousarray(x[8:24]).view(np.int32))


def test_reshape_of_a_strided_window_is_a_runtime_error():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[N, 2 * N], pl.FP32], o: pl.Out[pl.Tensor[[N, 2 * N], pl.FP32]]) -> pl.Tensor[[N, 2 * N], pl.FP32]:
            o = pl.store(pl.load(a, [0, 0], [N, 2 * N]), [0, 0], o)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[2 * N, 2 * N], pl.FP32], o: pl.Out[pl.Tensor[[N, 2 * N], pl.FP32]]) -> pl.Tensor[[N, 2 * N], pl.FP32]:
            w = x[:, 0:N]
            o = self.copy(pl.reshape(w, [N, 2 * N]), o)
            return o

    with pytest.raises(Exception, match=r"(?s)test_views_host.py:\d+.*which is not contiguous \(strides \[64, 1\].*fix: "):
        runtime.run(Bad, np.zeros((2 * N, 2 * N), np.float32), np.zeros((N, 2 * N), np.float32), config=RunConfig(engine="sim"))


# -- the task graph: windows of one tensor compared in its index space ------------------------

R, C = 32, 128


@pl.program
class Columns:
    """Three tasks write column windows of y: 0:64 and 64:128 are disjoint (no edge), 32:96
    overlaps both (an edge from each); a fourth reads the row window 0:16 of y (RAW edges
    from the writers of its columns, all three)."""

    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[R, 64], pl.FP32], y: pl.Out[pl.Tensor[[R, 64], pl.FP32]]) -> pl.Tensor[[R, 64], pl.FP32]:
        y = pl.store(pl.adds(pl.load(x, [0, 0], [R, 64]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def head(self, y: pl.Tensor[[16, C], pl.FP32], o: pl.Out[pl.Tensor[[16, C], pl.FP32]]) -> pl.Tensor[[16, C], pl.FP32]:
        o = pl.store(pl.muls(pl.load(y, [0, 0], [16, C]), 3.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
             o: pl.Out[pl.Tensor[[16, C], pl.FP32]]):
        left = y[:, 0:64]
        left = self.fill(x[:, 0:64], left)
        right = y[:, 64:128]
        right = self.fill(x[:, 64:128], right)
        mid = y[:, 32:96]
        mid = self.fill(x[:, 0:64], mid)
        o = self.head(y[0:16, :], o)
        return y, o


def test_disjoint_view_writers_run_concurrently_overlapping_ones_are_ordered(engine, tmp_path):
    x = rng.standard_normal((R, C)).astype(np.float32)
    y, o = np.zeros((R, C), np.float32), np.zeros((16, C), np.float32)
    run(Columns, x, y, o, engine=engine, enable_dep_gen=True, output_dir=str(tmp_path))
    edges = json.load(open(tmp_path / "dfx_outputs" / "deps.json"))["edges"]
    assert [0, 1] not in edges, edges
    assert [0, 2] in edges and [1, 2] in edges, edges
    assert [2, 3] in edges, edges  # the reader of y[0:16, :] waits for the last writer
    want = x + 1
    want[:, 32:96] = x[:, 0:64] + 1
    np.testing.assert_allclose(y, want, rtol=1e-6)
    np.testing.assert_allclose(o, 3 * want[0:16], rtol=1e-6)


# -- orchestration-level writes: y[a:b, :] = t ------------------------------------------------

@pl.program
class Assemble:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        y = pl.store(pl.adds(pl.load(x, [0, 0], [16, 64]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], r: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[3, 32, 64], pl.FP32]]) -> pl.Tensor[[3, 32, 64], pl.FP32]:
        t = pl.create_tensor([16, 64], dtype=pl.FP32)
        t = self.inc(x[16:32, :], t)
        out[0, 0:16, :] = t            # an alias: inc wrote out[0, 0:16, :]; a lower-rank value fills the trailing axes
        u = pl.create_tensor([16, 64], dtype=pl.FP32)
        u = self.inc(t, u)
        out[1, r + 1:r + 17, :] = u    # an alias at a run-time offset
        v = self.inc(out[1, r + 1:r + 17, :], out[2, 0:16, :])  # a RAW edge on the task that wrote u
        w = pl.create_tensor([16, 64], dtype=pl.FP32, init_value=5.0)
        w = self.inc(x[0:16, :], w)
        out[2, 16:32, :] = w           # a filled tensor: copied (the fill is not the window's)
        return out


def test_orchestration_assemble_aliases_a_created_tensor_else_copies(engine, tmp_path):
    x = rng.standard_normal((32, 64)).astype(np.float32)
    out = np.zeros((3, 32, 64), np.float32)
    run(Assemble, x, 6, out, engine=engine, enable_dep_gen=True, output_dir=str(tmp_path))
    want = np.zeros_like(out)
    want[0, 0:16] = x[16:32] + 1
    want[1, 7:23] = x[16:32] + 2
    want[2, 0:16] = x[16:32] + 3
    want[2, 16:32] = x[0:16] + 1
    np.testing.assert_allclose(out, want, rtol=1e-6)
    edges = json.load(open(tmp_path / "dfx_outputs" / "deps.json"))["edges"]
    assert [0, 1] in edges and [1, 2] in edges, edges  # the writers of t and u wrote out's windows
    kinds = [str(i.kind).rsplit(".", 1)[-1] for i in runtime.compile_program(Assemble, tmp_path / "c").host_program.code]
    assert kinds.count("AllocTensor") == 1 and kinds.count("TensorCopy") == 1, kinds


def test_orchestration_assemble_in_a_loop_aliases_each_block(engine):
    @pl.program
    class Rows:
        @pl.function(type=pl.FunctionType.InCore)
        def inc(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            y = pl.store(pl.adds(pl.load(x, [0, 0], [16, 64]), 1.0), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            for i in pl.range(4):
                t = pl.create_tensor([16, 64], dtype=pl.FP32)
                t = self.inc(x[i * 16:i * 16 + 16, :], t)
                out[(3 - i) * 16:(3 - i) * 16 + 16, :] = t
            return out

    x = rng.standard_normal((64, 64)).astype(np.float32)
    out = np.zeros_like(x)
    run(Rows, x, out, engine=engine)
    np.testing.assert_allclose(out, x.reshape(4, 16, 64)[::-1].reshape(64, 64) + 1, rtol=1e-6)
    if engine == "sim":
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            kinds = [str(i.kind).rsplit(".", 1)[-1] for i in runtime.compile_program(Rows, d).host_program.code]
        assert "TensorCopy" not in kinds and "AllocTensor" not in kinds, kinds


def test_paged_attention_example_sequences_share_no_edges(tmp_path):
    """examples/advanced/01_paged_attention_views.py: the tasks of one sequence form a chain
    through its state; the sequences read views of the shared caches and q and write disjoint
    row windows of o, so no edge joins two sequences."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "advanced" / "01_paged_attention_views.py"
    spec = importlib.util.spec_from_file_location("paged_attention_views", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    lens = [70, 32, 5, 200]
    inputs = ex.BASE.make_inputs(np.random.default_rng(3), lens)
    o = np.zeros_like(inputs[0])
    ex.paged_attention_views(*inputs, o, config=RunConfig(engine="sim", enable_dep_gen=True, output_dir=str(tmp_path)))
    np.testing.assert_allclose(o, ex.BASE.reference(*inputs), rtol=1e-4, atol=1e-4)
    seq = [b for b, n in enumerate(lens) for _ in range(2 + (n + ex.BS - 1) // ex.BS)]  # init, blocks, final
    edges = json.load(open(tmp_path / "dfx_outputs" / "deps.json"))["edges"]
    assert edges and all(seq[a] == seq[b] for a, b in edges), edges
    for b in range(len(lens)):  # each sequence is one chain
        tasks = [t for t, s in enumerate(seq) if s == b]
        assert all([t, u] in edges for t, u in zip(tasks, tasks[1:])), (b, edges)


def test_paged_attention_batch_above_its_state_rows_is_a_runtime_error():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "advanced" / "01_paged_attention_views.py"
    spec = importlib.util.spec_from_file_location("paged_attention_views", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    lens = [3] * (ex.MAX_SEQS + 1)
    inputs = ex.BASE.make_inputs(np.random.default_rng(4), lens)
    o = np.zeros_like(inputs[0])
    with pytest.raises(Exception, match=r"(?s)01_paged_attention_views.py:\d+: the window at offsets \[128, 0\] with extents "
                                        r"\[16, 80\] of 'states'\[128, 80\] FP32 lies off it.*fix: "):
        ex.paged_attention_views(*inputs, o, config=RunConfig(engine="sim"))


def test_atomic_assemble_in_orchestration_is_refused():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def inc(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            y = pl.store(pl.adds(pl.load(x, [0, 0], [16, 64]), 1.0), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
            t = pl.create_tensor([16, 64], dtype=pl.FP32)
            t = self.inc(x, t)
            out = pl.assemble(out, t, [0, 0], atomic=pl.AtomicType.Add)
            return out

    with pytest.raises(Exception, match=r"(?s)test_views_host.py:\d+: pl.assemble\(..., atomic=add\) in the orchestration.*fix: "):
        runtime.run(Bad, np.zeros((16, 64), np.float32), np.zeros((32, 64), np.float32), config=RunConfig(engine="sim"))

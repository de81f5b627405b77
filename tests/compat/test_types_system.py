"""PyPTO compatibility: enums, dtypes, layout/view annotations, pl.system, pl.prefetch,
pl.array.get_element/update_element and the cross-core keywords (split=, id=, the pipe
setup ops). Programs run on both engines and are checked against numpy; printed programs
parse back structurally equal (verify="roundtrip"); user errors are pinned."""

import threading

import numpy as np
import pytest

import pypto.ir as pir
import pypto.language as pl
from pypto import PyptoError, _core
from pypto.runtime import RunConfig, run

ENGINES = ["native", "sim"]
rng = np.random.default_rng(13)
FP32 = pl.FP32
Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right


def randn(*shape):
    return rng.standard_normal(shape, dtype=np.float32)


def run_with_timeout(fn, seconds=120):
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            box["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"the run did not finish within {seconds} s (a hang)"
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- enums, dtypes, constants ---------------------------------------------------------------

def test_enum_members_and_aliases():
    for m in ("CHIP_DIE", "CLUSTER_0", "CLUSTER_1", "CLUSTER_2", "GLOBAL", "L2CACHE", "PROCESSOR", "UMA", "NODE",
              "POD", "CLOS1", "CLOS2"):
        assert hasattr(pl.Level, m), m
    assert pl.Level.L2CACHE == pl.Level.CHIP_DIE and pl.Level.PROCESSOR == pl.Level.CHIP
    assert pl.Level.UMA == pl.Level.HOST and pl.Level.CLOS2 == pl.Level.GLOBAL
    for m in ("LeftScale", "RightScale", "ScalarLocal"):
        assert getattr(pl.Mem, m) == getattr(pl.MemorySpace, m)
    assert [p.value for p in pl.PipeType] == ["MTE1", "MTE2", "MTE3", "M", "V", "S", "FIX", "ALL"]
    assert [m.value for m in pl.TensorLayout] == ["ND", "DN", "NZ", "MX_A_ZZ", "MX_B_NN"]
    assert (pl.ND, pl.DN, pl.NZ) == (pl.TensorLayout.ND, pl.TensorLayout.DN, pl.TensorLayout.NZ)
    assert [m.value for m in pl.TileLayout] == ["none_box", "row_major", "col_major"]
    assert [m.value for m in pl.CompactMode] == ["null", "normal"]
    assert pl.ForKind.Sequential == pir.ForKind.Range and pl.ForKind.Pipeline == pir.ForKind.Pipeline
    assert pl.AUTO == pl.system.AUTO == -1
    assert pl.TaskId == pl.TASK_ID


@pytest.mark.parametrize("name,bits", [("FP8E4M3FN", 8), ("FP8E5M2", 8), ("FP8E8M0", 8), ("HF8", 8), ("FP4", 4),
                                       ("HF4", 4), ("INT4", 4), ("UINT4", 4)])
def test_narrow_dtypes_sizes_and_names(name, bits):
    dt = getattr(pl, name)
    assert _core.ir.dtype_bits(dt) == bits
    assert _core.ir.dtype_storage_only(dt) == (name not in ("FP8E4M3FN", "FP8E5M2"))
    assert str(dt).endswith(name)


@pl.program
class NarrowParams:
    """A narrow-dtype tensor parameter is accepted and printed (it is passed through, not computed on)."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 64], FP32], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        out = pl.store(pl.mul(pl.load(x, [0, 0], [16, 64]), 2.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], FP32], s: pl.Tensor[[16, 64], pl.HF8, pl.ND],
             w: pl.Tensor[[16, 64], pl.FP4], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        out = self.scale(x, out)
        return out


def test_narrow_dtype_annotations_print_and_parse_back():
    text = pir.print_program(NarrowParams)
    assert "s: pl.Tensor[[16, 64], pl.HF8]" in text and "w: pl.Tensor[[16, 64], pl.FP4]" in text
    assert pir.structural_equal(pl.parse(text), NarrowParams)


def test_a_narrow_dtype_argument_is_explained_at_the_call():
    x, out = randn(16, 64), np.zeros((16, 64), np.float32)
    with pytest.raises(TypeError) as e:
        run(NarrowParams, x, np.zeros((16, 64), np.uint8), np.zeros((16, 64), np.uint8), out)
    assert "parameter 's' is a HF8 tensor; no host array carries HF8 here" in str(e.value)
    assert "fix:" in str(e.value)


def test_an_op_on_a_narrow_dtype_is_refused():
    with pytest.raises(PyptoError) as e:
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 64], pl.FP8E8M0], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
                out = pl.store(pl.cast(pl.load(x, [0, 0], [16, 64]), FP32), [0, 0], out)
                return out
    msg = str(e.value)
    assert "test_types_system.py:" in msg
    assert "pl.tile.load: argument 'tensor' has dtype FP8E8M0" in msg
    assert "no op of this chip model computes on" in msg and "fix:" in msg


def test_cast_to_a_narrow_dtype_is_refused():
    with pytest.raises(PyptoError) as e:
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 64], FP32], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
                t = pl.cast(pl.load(x, [0, 0], [16, 64]), pl.HF8)
                out = pl.store(pl.cast(t, FP32), [0, 0], out)
                return out
    assert "argument 'target_type' has dtype HF8" in str(e.value)


# -- views and layouts ------------------------------------------------------------------------

def test_tile_view_valid_shape_is_the_tile_valid_shape():
    spec = pl.Tile[[16, 64], FP32, pl.Mem.Vec, pl.TileView(valid_shape=[8, 64], blayout=pl.TileLayout.row_major,
                                                            slayout=pl.TileLayout.none_box, fractal=512,
                                                            pad=pl.PadValue.zero, compact=pl.CompactMode.null)]
    assert spec.valid_shape == [8, 64] and spec.pad == pl.PadValue.zero and spec.memory == pl.Mem.Vec
    spec = pl.Tile[[16, 64], FP32, pl.Mem.Vec, pl.MemRef(128, 4096, 0)]
    assert spec.addr == 128


def test_packed_nd_tensor_views_are_accepted():
    spec = pl.Tensor[[16, 64], FP32, pl.TensorView(stride=[64, 1], layout=pl.TensorLayout.ND)]
    assert spec.shape == [16, 64]
    assert pl.Tensor[[16, 64], FP32, pl.ND].dtype == FP32


@pytest.mark.parametrize("make,expect", [
    (lambda: pl.Tensor[[16, 64], FP32, pl.DN], "pl.Tensor[..., pl.DN] (a transposed tensor) is not accepted"),
    (lambda: pl.Tensor[[16, 64], FP32, pl.NZ], "pl.NZ is the cube's fractal layout of tiles"),
    (lambda: pl.Tensor[[16, 64], FP32, pl.TensorView(stride=[128, 1, 1], layout=pl.ND)],
     "has 3 entries for the 2 dims"),
    (lambda: pl.TensorView(stride=[64, 1]), "pl.TensorView needs layout= with any other field"),
    (lambda: pl.Tile[[16, 64], FP32, pl.MemRef("buf")], "must name its memory space"),
    (lambda: pl.Tile[[16, 64], FP32, pl.TileView(blayout=pl.TileLayout.col_major)], "tiles are row-major here"),
])
def test_view_errors(make, expect):
    with pytest.raises(TypeError) as e:
        make()
    assert expect in str(e.value) and "fix:" in str(e.value)


@pl.program
class TileViewAnnotation:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], FP32, pl.TensorView(stride=[64, 1], layout=pl.ND)],
          out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        t: pl.Tile[[16, 64], FP32, pl.Mem.Vec, pl.TileView(valid_shape=[16, 64])] = pl.load(x, [0, 0], [16, 64])
        out = pl.store(pl.add(t, 1.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], FP32], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        out = self.k(x, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_view_annotations_compute(engine):
    x, out = randn(16, 64), np.zeros((16, 64), np.float32)
    run(TileViewAnnotation, x, out, config=RunConfig(engine=engine, verify="roundtrip"))
    np.testing.assert_allclose(out, x + 1.0, rtol=1e-6)


# -- pl.system --------------------------------------------------------------------------------

@pl.program
class Barriers:
    """out = (x + 1) * 2 with every barrier, flag, fence and cache op of pl.system between the steps."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 64], FP32], ws: pl.Tensor[[16], pl.INT32], out: pl.Out[pl.Tensor[[32, 64], FP32]]):
        pl.system.set_ffts(ws)
        pl.system.cacheinvalid()
        t = pl.load(x, [0, 0], [32, 64])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=3)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=3)
        u = pl.add(t, 1.0)
        pl.system.bar_v()
        v = pl.mul(u, 2.0)
        pl.system.bar_m()
        pl.system.bar_all()
        pl.system.sync_set(0, pipe=pl.PipeType.MTE3, core_type="aiv")
        pl.system.sync_wait(0, pipe=pl.PipeType.MTE3)
        out = pl.store(v, [0, 0], out)
        pl.system.fence()
        pl.system.syncall()
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], FP32], ws: pl.Tensor[[16], pl.INT32],
             out: pl.Out[pl.Tensor[[32, 64], FP32]]):
        out = self.k(x, ws, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_barriers_keep_the_values_and_the_pto_text(engine):
    x, ws, out = randn(32, 64), np.zeros(16, np.int32), np.zeros((32, 64), np.float32)
    compiled = run(Barriers, x, ws, out, config=RunConfig(engine=engine, verify="roundtrip"))
    np.testing.assert_allclose(out, (x + 1.0) * 2.0, rtol=1e-6)
    pto = compiled.pto()["k"]
    for s in ("pto.pipe_barrier[PIPE_V]", "pto.pipe_barrier[PIPE_M]", "pto.pipe_barrier[PIPE_ALL]",
              "pto.set_flag[PIPE_MTE2, PIPE_V, EVENT_ID3]", "pto.wait_flag[PIPE_MTE2, PIPE_V, EVENT_ID3]", "pto.fence",
              "pto.cacheinvalid", "pto.set_ffts", 'pto.syncall {core_type = "mix", mode = "hard"}', "pto.sync_set",
              "pto.sync_wait"):
        assert s in pto, s


def test_barriers_print_and_parse_back():
    text = pir.print_program(Barriers)
    assert "pl.system.bar_v()" in text and "pl.system.syncall(core_type='mix', mode='hard')" in text
    assert "pl.system.sync_src(set_pipe='MTE2', wait_pipe='V', event_id=3)" in text
    assert pir.structural_equal(pl.parse(text), Barriers)


@pl.jit
def two_blocks(x: pl.Tensor[[64, 64], FP32], y: pl.Tensor[[64, 64], FP32], out: pl.Out[pl.Tensor[[64, 64], FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [32, 64])
        out = pl.store(pl.add(a, 1.0), [0, 0], out)
        b = pl.load(y, [32, 0], [32, 64])
        out = pl.store(pl.add(b, 1.0), [32, 0], out)
    return out


@pl.jit
def two_blocks_barrier(x: pl.Tensor[[64, 64], FP32], y: pl.Tensor[[64, 64], FP32],
                       out: pl.Out[pl.Tensor[[64, 64], FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [32, 64])
        out = pl.store(pl.add(a, 1.0), [0, 0], out)
        pl.system.bar_all()
        b = pl.load(y, [32, 0], [32, 64])
        out = pl.store(pl.add(b, 1.0), [32, 0], out)
    return out


def test_bar_all_waits_for_every_pipe_in_the_sim_cycle_model():
    """A PIPE_ALL barrier joins the pipes: the second load cannot overlap the first block."""
    def cycles(fn):
        x, y, out = randn(64, 64), randn(64, 64), np.zeros((64, 64), np.float32)
        cfg = RunConfig(engine="sim")
        compiled = fn.compile(x, y, out, config=cfg)
        compiled(x, y, out, config=cfg)
        np.testing.assert_allclose(out, np.concatenate([x[:32] + 1, y[32:] + 1]), rtol=1e-6)
        return compiled.modelled_cycles
    assert cycles(two_blocks_barrier) > cycles(two_blocks)


@pytest.mark.parametrize("kwargs,expect", [
    (dict(mode="soft"), "gm_workspace is missing"),
    (dict(mode="hard", used_cores=4), "used_cores is an argument of the soft barrier"),
    (dict(mode="fast"), "mode = 'fast' names no barrier"),
    (dict(core_type="vec"), "core_type = 'vec' names no participant set"),
])
def test_syncall_arguments_are_checked(kwargs, expect):
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    src = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        pl.system.syncall({args})
        out = pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], out)
        return out
"""
    with pytest.raises(PyptoError) as e:
        pl.parse(src)
    assert expect in str(e.value) and "fix:" in str(e.value)


def test_soft_syncall_needs_used_cores_and_an_int32_workspace():
    with pytest.raises(PyptoError) as e:
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, ws: pl.Tensor[[8], pl.INT32], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
                pl.system.syncall(mode="soft", gm_workspace=ws, used_cores=2)
                return out
    assert "needs an INT32 tensor of at least 16 elements" in str(e.value)


def test_syncall_in_a_multi_block_spmd_launch_is_refused():
    @pl.jit
    def k(x: pl.Tensor[[64, 64], FP32], out: pl.Out[pl.Tensor[[64, 64], FP32]]):
        with pl.spmd(4):
            i = pl.get_block_idx()
            out = pl.store(pl.add(pl.load(x, [i * 16, 0], [16, 64]), 1.0), [i * 16, 0], out)
            pl.system.syncall(core_type="aiv_only")
        return out

    with pytest.raises(PyptoError) as e:
        k(randn(64, 64), np.zeros((64, 64), np.float32))
    msg = str(e.value)
    assert "runs 4 blocks that are not held at a barrier on this runtime" in msg and "fix:" in msg


def test_barriers_in_the_orchestration_are_refused():
    @pl.jit
    def k(x: pl.Tensor[[16, 64], FP32], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        pl.system.bar_all()
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], out)
        return out

    with pytest.raises(PyptoError) as e:
        k(randn(16, 64), np.zeros((16, 64), np.float32))
    assert "orders the pipes of one core, but it is called in the orchestration" in str(e.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_chip_counts_prefetch_and_array_spellings(engine):
    """available_aiv_count() is the chip's; prefetch hints change nothing; get_element /
    update_element are arr[i] and arr[i] = v."""
    @pl.jit
    def k(x: pl.Tensor[[1, 64], FP32], out: pl.Out[pl.Tensor[[1, 64], FP32]]):
        ctx = pl.prefetch.make_context()
        evt = pl.prefetch.async_prefetch(x, ctx)
        sess = pl.prefetch.session(ctx)
        done = pl.prefetch.wait(evt, sess)
        arr = pl.array.create(2, pl.FP32)
        arr = pl.array.update_element(arr, 1, pl.system.available_aiv_count())
        n = pl.array.get_element(arr, 1)
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.store(pl.add(pl.load(x, [0, 0], [1, 64]), n), [0, 0], out)
        return out

    x, out = randn(1, 64), np.zeros((1, 64), np.float32)
    k(x, out, config=RunConfig(engine=engine, verify="roundtrip"))
    np.testing.assert_allclose(out, x + 48, rtol=1e-6)  # a2a3sim: 48 vector cores
    k(x, out, config=RunConfig(engine=engine, platform="a5sim"))
    np.testing.assert_allclose(out, x + 72, rtol=1e-6)  # a5sim: 72


def test_prefetch_source_must_be_one_row():
    @pl.jit
    def k(x: pl.Tensor[[4, 64], FP32], out: pl.Out[pl.Tensor[[4, 64], FP32]]):
        ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(x, ctx)
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.store(pl.load(x, [0, 0], [4, 64]), [0, 0], out)
        return out

    with pytest.raises(PyptoError) as e:
        k(randn(4, 64), np.zeros((4, 64), np.float32))
    assert "a prefetch source has every dimension 1 but the last" in str(e.value)


# -- cross-core: split=, id=, pipe setup --------------------------------------------------------

M, K, N = 32, 64, 64


def make_split_program(split):
    """The cube's [M, N] result is pushed once with split=; each vector core pops its half
    (rows for 1, columns for 2), adds the bias and stores it at its offset."""
    hr, hc = (M // 2, N) if split == 1 else (M, N // 2)

    @pl.program
    class Split:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32]):
            pl.aic_initialize_pipe(dir_mask=1, slot_size=M * N * 4, slot_num=2)
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                            pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
            pl.tpush_to_aiv(acc, split=split)

        @pl.function(type=pl.FunctionType.AIV)
        def half(self, bias: pl.Tensor[[M, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]],
                 r0: pl.Scalar[pl.INDEX], c0: pl.Scalar[pl.INDEX]):
            pl.aiv_initialize_pipe(dir_mask=1, slot_size=M * N * 4, slot_num=2)
            t = pl.tpop_from_aic(shape=[hr, hc], dtype=FP32, split=split)
            r = pl.add(t, pl.load(bias, [r0, c0], [hr, hc]))
            pl.tfree_to_aic(t, split=split)
            out = pl.store(r, [r0, c0], out)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def fused(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                  out: pl.Out[pl.Tensor[[M, N], FP32]]):
            self.cube(a, b)
            out = self.half(bias, out, 0, 0)
            out = self.half(bias, out, M - hr, N - hc)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                 out: pl.Out[pl.Tensor[[M, N], FP32]]):
            out = self.fused(a, b, bias, out)
            return out

    return Split


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("split", [1, 2])
def test_split_push_gives_each_vector_core_its_half(engine, split):
    prog = make_split_program(split)
    a, b, bias, out = randn(M, K), randn(K, N), randn(M, N), np.zeros((M, N), np.float32)
    run_with_timeout(lambda: run(prog, a, b, bias, out, config=RunConfig(engine=engine, verify="roundtrip")))
    np.testing.assert_allclose(out, a @ b + bias, rtol=1e-4, atol=1e-4)
    text = pir.print_program(prog)
    assert f"pl.tile.tpush_to_aiv(acc, aiv=0, split={split})" in text
    assert pir.structural_equal(pl.parse(text), prog)


@pl.program
class TwoPipesDeepFifo:
    """Two pipes (id=0, id=1) towards AIV 0, popped in the other order, and a pipe of 4 slots:
    the cube pushes 4 tiles on pipe 1 before the vector core pops any (a 2-slot FIFO would
    deadlock)."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[4 * M, K], FP32], b: pl.Tensor[[K, N], FP32]):
        buf = pl.reserve_buffer(name="c2v", size=4 * M * N * 4, base=pl.AUTO)
        pl.aic_initialize_pipe(buf, dir_mask=1, slot_size=M * N * 4, slot_num=4, id=1)
        tb = pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right)
        first = pl.matmul(pl.move(pl.load(a, [3 * M, 0], [M, K], target_memory=Mat), target_memory=Left), tb)
        pl.tpush_to_aiv(first, aiv=0, id=0)
        for i in pl.range(4):
            acc = pl.matmul(pl.move(pl.load(a, [i * M, 0], [M, K], target_memory=Mat), target_memory=Left), tb)
            pl.tpush_to_aiv(acc, aiv=0, id=1)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[pl.Tensor[[5 * M, N], FP32]]):
        buf = pl.import_peer_buffer(name="c2v", peer_func=self.cube)
        pl.aiv_initialize_pipe(buf, dir_mask=1, slot_size=M * N * 4, slot_num=4, id=1)
        t0 = pl.tpop_from_aic(shape=[M, N], dtype=FP32, id=1)  # all four held at once: needs 4 slots
        t1 = pl.tpop_from_aic(shape=[M, N], dtype=FP32, id=1)
        t2 = pl.tpop_from_aic(shape=[M, N], dtype=FP32, id=1)
        t3 = pl.tpop_from_aic(shape=[M, N], dtype=FP32, id=1)
        out = pl.store(pl.add(t0, 0.0), [M, 0], out)
        out = pl.store(pl.add(t1, 0.0), [2 * M, 0], out)
        out = pl.store(pl.add(t2, 0.0), [3 * M, 0], out)
        out = pl.store(pl.add(t3, 0.0), [4 * M, 0], out)
        pl.tfree_to_aic(t0, id=1)
        pl.tfree_to_aic(t1, id=1)
        pl.tfree_to_aic(t2, id=1)
        pl.tfree_to_aic(t3, id=1)
        f = pl.tpop_from_aic(shape=[M, N], dtype=FP32, id=0)
        out = pl.store(pl.add(f, 0.0), [0, 0], out)
        pl.tfree_to_aic(f, id=0)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[4 * M, K], FP32], b: pl.Tensor[[K, N], FP32],
              out: pl.Out[pl.Tensor[[5 * M, N], FP32]]):
        self.cube(a, b)
        out = self.vec(out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4 * M, K], FP32], b: pl.Tensor[[K, N], FP32],
             out: pl.Out[pl.Tensor[[5 * M, N], FP32]]):
        out = self.fused(a, b, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_pipe_ids_and_slot_num(engine):
    a, b, out = randn(4 * M, K), randn(K, N), np.zeros((5 * M, N), np.float32)
    run_with_timeout(lambda: run(TwoPipesDeepFifo, a, b, out, config=RunConfig(engine=engine, verify="roundtrip")))
    want = np.concatenate([a[3 * M:] @ b] + [a[i * M:(i + 1) * M] @ b for i in range(4)])
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    text = pir.print_program(TwoPipesDeepFifo)
    assert "pl.tile.import_peer_buffer(name='c2v', peer_func='cube')" in text
    assert pir.structural_equal(pl.parse(text), TwoPipesDeepFifo)


def test_system_spellings_of_the_fifo_ops():
    for n in ("tpush_to_aiv", "tpush_to_aic", "tpop_from_aic", "tpop_from_aiv", "tfree_to_aic", "tfree_to_aiv",
              "aic_initialize_pipe", "aiv_initialize_pipe", "reserve_buffer", "import_peer_buffer"):
        assert repr(getattr(pl.system, n)) == f"pl.system.{n}"


@pytest.mark.parametrize("call,expect", [
    ("pl.tpush_to_aiv(acc, split=3)", "split=3 names no split mode"),
    ("pl.tpush_to_aiv(acc, id=16)", "id=16 names no pipe of the cluster"),
    ("pl.aic_initialize_pipe(dir_mask=4, slot_size=64)", "dir_mask=4 names no direction"),
    ("pl.aic_initialize_pipe(dir_mask=1, slot_size=0)", "slot_size=0 is not a positive byte count"),
])
def test_cross_core_keyword_errors(call, expect):
    src = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32]):
        acc = pl.matmul(pl.move(pl.load(a, [0, 0], [32, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left),
                        pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
        {call}
"""
    with pytest.raises(PyptoError) as e:
        pl.parse(src)
    assert expect in str(e.value) and "fix:" in str(e.value)


@pl.program
class WholePop:
    """Each vector core must pop its half of a split push; this one pops the whole shape."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32]):
        acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                        pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
        pl.tpush_to_aiv(acc, split=1)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[pl.Tensor[[M, N], FP32]]):
        t = pl.tpop_from_aic(shape=[M, N], dtype=FP32, split=1)
        out = pl.store(pl.add(t, 0.0), [0, 0], out)
        pl.tfree_to_aic(t, split=1)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        self.cube(a, b)
        out = self.vec(out)
        out = self.vec(out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        out = self.fused(a, b, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_split_pop_with_the_whole_shape_is_reported(engine):
    a, b, out = randn(M, K), randn(K, N), np.zeros((M, N), np.float32)
    with pytest.raises(PyptoError) as e:
        run_with_timeout(lambda: run(WholePop, a, b, out, config=RunConfig(engine=engine)))
    assert "pops a 32x64 FP32 tile 't'" in str(e.value) and "as 16x64 FP32" in str(e.value)


@pl.program
class SplitToCube:
    """Each vector core pushes its half (split=1: AIV 0 the top rows); the cube pops the two
    halves joined, multiplies and stores: out = x @ b."""

    @pl.function(type=pl.FunctionType.AIV)
    def half(self, x: pl.Tensor[[M, K], FP32], r0: pl.Scalar[pl.INDEX]):
        t = pl.load(x, [r0, 0], [M // 2, K])
        pl.tpush_to_aic(t, split=1)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        t = pl.tpop_from_aiv(shape=[M, K], dtype=FP32, split=1)
        acc = pl.matmul(pl.move(t, target_memory=Left),
                        pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
        pl.tfree_to_aiv(t, split=1)
        out = pl.store(acc, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, x: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        out = self.cube(b, out)
        self.half(x, 0)
        self.half(x, M // 2)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        out = self.fused(x, b, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_split_push_to_the_cube_joins_the_halves(engine):
    x, b, out = randn(M, K), randn(K, N), np.zeros((M, N), np.float32)
    run_with_timeout(lambda: run(SplitToCube, x, b, out, config=RunConfig(engine=engine, verify="roundtrip")))
    np.testing.assert_allclose(out, x @ b, rtol=1e-4, atol=1e-4)


def test_tile_namespace_memref_type():
    assert pl.tile.MemRefType is pl.MemRef


@pytest.mark.parametrize("call,expect", [
    ("pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.V, event_id=0)",
     "set_pipe and wait_pipe are both V"),
    ("pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=9)", "event_id = 9 is outside 0..7"),
    ("pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, event_id=0)", "argument 'wait_pipe' is missing"),
    ("pl.system.sync_src(set_pipe=pl.PipeType.ALL, wait_pipe=pl.PipeType.V, event_id=0)", "'set_pipe' = 'ALL' names no pipe"),
    ("pl.system.sync_set(14, pipe=pl.PipeType.MTE3)", "event_id = 14 is outside 0..13"),
    ("pl.system.sync_wait(0, pipe=pl.PipeType.V, core_type='cube')", "core_type = 'cube' names no core type"),
])
def test_flag_and_event_errors(call, expect):
    src = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        {call}
        out = pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], out)
        return out
"""
    with pytest.raises(PyptoError) as e:
        pl.parse(src)
    assert expect in str(e.value) and "fix:" in str(e.value)


# -- FP8: load, store, cast (bit-exact against a reference written here) ----------------------

def fp8_table(kind):
    """Values of the 256 FP8 bit patterns (E4M3FN: bias 7, no inf; E5M2: bias 15, IEEE-like)."""
    mant, bias = (3, 7) if kind == "e4m3fn" else (2, 15)
    emax = (1 << (7 - mant)) - 1
    out = np.zeros(256)
    for b in range(256):
        e, m = (b & 0x7F) >> mant, b & ((1 << mant) - 1)
        if kind == "e4m3fn" and e == emax and m == (1 << mant) - 1:
            v = np.nan
        elif kind == "e5m2" and e == emax:
            v = np.inf if m == 0 else np.nan
        elif e == 0:
            v = m * 2.0 ** (1 - bias - mant)
        else:
            v = (1 + m / (1 << mant)) * 2.0 ** (e - bias)
        out[b] = -v if b & 0x80 else v
    return out


def fp8_encode(x, kind, ties="even"):
    """Nearest FP8 bits of each float (ties to even bits, or away from zero); magnitudes past
    the largest finite value by half an ulp or more (ties by the same rule) overflow to NaN
    (E4M3FN) / infinity (E5M2)."""
    table = fp8_table(kind)
    top = 0x7E if kind == "e4m3fn" else 0x7B
    finite = table[: top + 1]
    ulp_top = finite[top] - finite[top - 1]
    out = np.zeros(x.shape, np.uint8)
    for idx, v in np.ndenumerate(x.astype(np.float64)):
        sign = 0x80 if np.signbit(v) else 0
        a = abs(v)
        cand = list(finite) + [finite[top] + ulp_top]  # the virtual next value: overflow
        d = np.abs(np.array(cand) - a)
        best = np.flatnonzero(d == d.min())
        if len(best) == 2:
            pick = best[1] if ties == "away" else best[0] if best[0] % 2 == 0 else best[1]
        else:
            pick = best[0]
        out[idx] = ((0x7F if kind == "e4m3fn" else 0x7C) if pick > top else pick) | sign
    return out


def same_fp8(got, want, kind):
    t = fp8_table(kind)
    g, w = t[got], t[want]
    both_nan = np.isnan(g) & np.isnan(w)
    return bool(np.all(both_nan | (got == want)))


@pl.program
class Fp8Casts:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], FP32], h: pl.Tensor[[16, 64], pl.FP8E4M3FN],
          q: pl.Out[pl.Tensor[[16, 64], pl.FP8E4M3FN]], qa: pl.Out[pl.Tensor[[16, 64], pl.FP8E4M3FN]],
          r: pl.Out[pl.Tensor[[16, 64], pl.FP8E5M2]], back: pl.Out[pl.Tensor[[16, 64], FP32]],
          hf: pl.Out[pl.Tensor[[16, 64], pl.FP16]], hb: pl.Out[pl.Tensor[[16, 64], pl.BF16]]):
        t = pl.load(x, [0, 0], [16, 64])
        a = pl.cast(t, pl.FP8E4M3FN, mode="rint")
        q = pl.store(a, [0, 0], q)
        qa = pl.store(pl.cast(t, pl.FP8E4M3FN), [0, 0], qa)  # pl.cast's default: ties away from zero
        r = pl.store(pl.cast(t, pl.FP8E5M2, mode="rint"), [0, 0], r)
        back = pl.store(pl.cast(a, FP32), [0, 0], back)
        g = pl.load(h, [0, 0], [16, 64])
        hf = pl.store(pl.cast(g, pl.FP16), [0, 0], hf)
        hb = pl.store(pl.cast(g, pl.BF16), [0, 0], hb)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], FP32], h: pl.Tensor[[16, 64], pl.FP8E4M3FN],
             q: pl.Out[pl.Tensor[[16, 64], pl.FP8E4M3FN]], qa: pl.Out[pl.Tensor[[16, 64], pl.FP8E4M3FN]],
             r: pl.Out[pl.Tensor[[16, 64], pl.FP8E5M2]], back: pl.Out[pl.Tensor[[16, 64], FP32]],
             hf: pl.Out[pl.Tensor[[16, 64], pl.FP16]], hb: pl.Out[pl.Tensor[[16, 64], pl.BF16]]):
        self.k(x, h, q, qa, r, back, hf, hb)


@pytest.mark.parametrize("engine", ENGINES)
def test_fp8_load_store_and_casts_are_bit_exact(engine):
    x = (randn(16, 64) * 40).astype(np.float32)
    # ties of both formats, the largest values, overflow, tiny values and zeros of both signs
    special = [448.0, 464.0, 465.0, 500.0, -464.0, 1.0625, 1.1875, -2.125, 0.0, -0.0, 2.0 ** -9, 2.0 ** -10,
               3 * 2.0 ** -11, 57344.0, 61440.0, 61441.0, 1.125, 1.375, 0.4375, 240.0, 232.0]
    x.flat[: len(special)] = special
    h = np.arange(16 * 64, dtype=np.int64).reshape(16, 64).astype(np.uint8)  # every FP8 pattern, 4 times
    q, qa, r = (np.zeros((16, 64), np.uint8) for _ in range(3))
    back = np.zeros((16, 64), np.float32)
    hf = np.zeros((16, 64), np.float16)
    import torch
    hb = torch.zeros(16, 64, dtype=torch.bfloat16)
    run(Fp8Casts, x, h, q, qa, r, back, hf, hb, config=RunConfig(engine=engine, verify="roundtrip"))
    assert same_fp8(q, fp8_encode(x, "e4m3fn"), "e4m3fn")
    assert same_fp8(qa, fp8_encode(x, "e4m3fn", ties="away"), "e4m3fn")
    assert same_fp8(r, fp8_encode(x, "e5m2"), "e5m2")
    table = fp8_table("e4m3fn")
    np.testing.assert_array_equal(back, table[q].astype(np.float32))  # widening is exact
    want = table[h]
    np.testing.assert_array_equal(np.isnan(hf), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(hf[ok].astype(np.float64), want[ok])
    np.testing.assert_array_equal(hb.float().numpy()[ok].astype(np.float64), want[ok])


def test_fp8_tiles_take_only_load_store_and_cast():
    with pytest.raises(PyptoError) as e:
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 64], pl.FP8E5M2], out: pl.Out[pl.Tensor[[16, 64], pl.FP8E5M2]]):
                out = pl.store(pl.add(pl.load(x, [0, 0], [16, 64]), 1.0), [0, 0], out)
                return out
    assert "FP8 tiles are loaded, stored and converted" in str(e.value) and "fix:" in str(e.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_task_invalid_and_cluster_count(engine):
    @pl.jit
    def k(x: pl.Tensor[[16, 64], FP32], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        none = pl.system.task_invalid()
        n = pl.system.available_cluster_count()
        with pl.at(level=pl.Level.CORE_GROUP, deps=[none]):
            out = pl.store(pl.mul(pl.load(x, [0, 0], [16, 64]), n), [0, 0], out)
        return out

    x, out = randn(16, 64), np.zeros((16, 64), np.float32)
    k(x, out, config=RunConfig(engine=engine, verify="roundtrip"))
    np.testing.assert_allclose(out, x * 24, rtol=1e-6)  # a2a3sim: 24 clusters


def test_syncall_in_a_mixed_task_is_refused():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32]):
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                            pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
            pl.system.syncall()
            pl.tpush_to_aiv(acc, aiv=0)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[pl.Tensor[[M, N], FP32]]):
            t = pl.tpop_from_aic([M, N], FP32)
            out = pl.store(pl.add(t, 0.0), [0, 0], out)
            pl.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def fused(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
            self.cube(a, b)
            out = self.vec(out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
            out = self.fused(a, b, out)
            return out

    with pytest.raises(PyptoError) as e:
        run(P, randn(M, K), randn(K, N), np.zeros((M, N), np.float32))
    msg = str(e.value)
    assert "is a mixed task whose parts are not held at a barrier on this runtime" in msg and "fix:" in msg

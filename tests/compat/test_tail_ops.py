"""The tail of PyPTO ops and behaviours model programs hit (issue 14, item 6), each in a small
program run on both engines against numpy / torch, plus the printer round trip:
pl.expand_clone(src, target) (tile and tensor), pl.scatter_update (torch index_copy),
pl.tensor.fillpad_expand, pl.store(..., atomic=pl.AtomicType.Add), pl.tensor.gather /
scatter(dim=, index=), pl.write / pl.read / pl.dump_tag, extract, ci, random, pl.prefetch.*
(no value changes), pl.system.* (timed by the sim engine's cycle model) and
pl.tile.get_block_idx() in an InCore function launched SPMD."""

import numpy as np
import pypto.language as pl
import pytest
import torch
from pypto import _core
from pypto.runtime import RunConfig, _arg_specs

from .roundtrip import round_trip

ENGINES = ["native", "sim"]
rng = np.random.default_rng(1414)


def run(kernel, *args, engine, **kw):
    kernel(*args, config=RunConfig(engine=engine, **kw))




# ---- pl.expand_clone(src, target): src broadcast to target's shape ------------------------------

@pl.jit
def k_expand_clone(x: pl.Tensor, row: pl.Tensor, col: pl.Tensor, o1: pl.Out[pl.Tensor], o2: pl.Out[pl.Tensor],
                   o3: pl.Out[pl.Tensor], o4: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        c = pl.reshape(pl.load(col, [0, 0], [1, 16]), [16, 1])
        pl.store(pl.expand_clone(c, t), [0, 0], o1)                       # the tile form: [16, 1] -> t's shape
        pl.store(pl.tile.expand_clone(src=pl.load(row, [0, 0], [1, 64]), target=t), [0, 0], o2)
        o3[:] = pl.expand_clone(row, x)                                   # the tensor form: [1, 64] -> [16, 64]
        o4[:] = pl.tensor.expand_clone(pl.tensor.row_max(x), target=x)    # of a computed tensor
    return o1


@pytest.mark.parametrize("engine", ENGINES)
def test_expand_clone_takes_the_targets_shape(engine):
    x = rng.uniform(-1, 1, size=(16, 64)).astype(np.float32)
    row = rng.uniform(-1, 1, size=(1, 64)).astype(np.float32)
    col = rng.uniform(-1, 1, size=(1, 16)).astype(np.float32)
    outs = [np.zeros((16, 64), np.float32) for _ in range(4)]
    run(k_expand_clone, x, row, col, *outs, engine=engine)
    np.testing.assert_array_equal(outs[0], np.broadcast_to(col.T, (16, 64)))
    np.testing.assert_array_equal(outs[1], np.broadcast_to(row, (16, 64)))
    np.testing.assert_array_equal(outs[2], np.broadcast_to(row, (16, 64)))
    np.testing.assert_array_equal(outs[3], np.broadcast_to(x.max(axis=1, keepdims=True), (16, 64)))
    text = round_trip(k_expand_clone, x, row, col, *outs)
    assert "pl.tensor.expand_clone(" in text and "pl.tile.expand_clone(" in text


def test_expand_clone_errors():
    @pl.jit
    def bad(x: pl.Tensor, o: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [8, 64])
            pl.store(pl.expand_clone(t, pl.load(x, [0, 0], [16, 64])), [0, 0], o)
        return o

    with pytest.raises(pl.ParseError, match=r"test_tail_ops.py:\d+[\s\S]*cannot broadcast a \[8, 64\] tile to \[16, 64\]"
                                            r"[\s\S]*fix:"):
        bad(np.zeros((16, 64), np.float32), np.zeros((16, 64), np.float32))

    @pl.jit
    def by_shape(x: pl.Tensor, o: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.reshape(pl.load(x, [0, 0], [1, 16]), [16, 1])
            pl.store(pl.expand_clone(t, shape=[16, 64]), [0, 0], o)   # our spelling: the shape itself
        return o

    x, o = rng.uniform(-1, 1, size=(16, 64)).astype(np.float32), np.zeros((16, 64), np.float32)
    by_shape(x, o)
    np.testing.assert_array_equal(o, np.broadcast_to(x[0, :16, None], (16, 64)))


# ---- pl.scatter_update(input, dim, index, src): torch index_copy --------------------------------

@pl.jit
def k_scatter_update(x: pl.Tensor, rows: pl.Tensor, ri: pl.Tensor, cols: pl.Tensor, ci: pl.Tensor,
                     o1: pl.Out[pl.Tensor], o2: pl.Out[pl.Tensor], o3: pl.Out[pl.Tensor], o4: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        u = pl.tile.scatter_update(t, 0, pl.load(ri, [0, 0], [1, 8]), pl.load(rows, [0, 0], [8, 32]))
        v = pl.scatter_update(t, dim=-1, index=pl.load(ci, [0, 0], [1, 8]), src=pl.load(cols, [0, 0], [16, 8]))
        pl.store(u, [0, 0], o1)
        pl.store(v, [0, 0], o2)
        pl.store(pl.adds(t, 1.0), [0, 0], o3)               # t itself is unchanged
        o4[:] = pl.scatter_update(x, -2, ri, rows)          # the tensor form
    return o1


@pytest.mark.parametrize("engine", ENGINES)
def test_scatter_update_is_index_copy(engine):
    x = rng.uniform(-1, 1, size=(16, 32)).astype(np.float32)
    rows = rng.uniform(-1, 1, size=(8, 32)).astype(np.float32)
    ri = np.array([[3, 0, 11, 7, 15, 1, 8, 4]], np.int32)
    cols = rng.uniform(-1, 1, size=(16, 8)).astype(np.float32)
    ci = np.array([[5, 31, 0, 9, 12, 20, 2, 27]], np.int32)
    outs = [np.zeros((16, 32), np.float32) for _ in range(4)]
    run(k_scatter_update, x, rows, ri, cols, ci, *outs, engine=engine)
    tx = torch.from_numpy(x)
    want_rows = tx.index_copy(0, torch.from_numpy(ri).flatten().long(), torch.from_numpy(rows)).numpy()
    want_cols = tx.index_copy(1, torch.from_numpy(ci).flatten().long(), torch.from_numpy(cols)).numpy()
    np.testing.assert_array_equal(outs[0], want_rows)
    np.testing.assert_array_equal(outs[1], want_cols)
    np.testing.assert_array_equal(outs[2], x + 1)
    np.testing.assert_array_equal(outs[3], want_rows)
    text = round_trip(k_scatter_update, x, rows, ri, cols, ci, *outs)
    assert "pl.tile.scatter_update(" in text and "pl.tensor.scatter_update(" in text


def test_scatter_update_checks_the_index():
    @pl.jit
    def bad(x: pl.Tensor, i: pl.Tensor, o: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 32])
            pl.store(pl.scatter_update(t, 0, pl.load(i, [0, 0], [1, 8]), pl.load(x, [0, 0], [4, 32])), [0, 0], o)
        return o

    with pytest.raises(pl.ParseError, match=r"'index' is \[1, 8\]; it lists one row of input for each of the 4 rows of src"
                                            r"[\s\S]*fix: pass an index tile of shape \[4, 1\] or \[1, 4\]"):
        bad(np.zeros((16, 32), np.float32), np.zeros((1, 8), np.int32), np.zeros((16, 32), np.float32))


# ---- pl.tensor.fillpad_expand: into a larger shape, padded ---------------------------------------

@pl.jit
def k_tensor_fillpad_expand(x: pl.Tensor, o1: pl.Out[pl.Tensor], o2: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        o1[:] = pl.tensor.fillpad_expand(x, [32, 64], pad_value=pl.PadValue.min)
        o2[:] = pl.fillpad_expand(pl.exp(x), shape=[24, 32])
    return o1


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_fillpad_expand(engine):
    x = rng.uniform(-1, 1, size=(20, 24)).astype(np.float32)
    o1, o2 = np.zeros((32, 64), np.float32), np.zeros((24, 32), np.float32)
    run(k_tensor_fillpad_expand, x, o1, o2, engine=engine)
    want = np.full((32, 64), -np.finfo(np.float32).max, np.float32)
    want[:20, :24] = x
    np.testing.assert_array_equal(o1, want)
    want2 = np.zeros((24, 32), np.float32)
    want2[:20, :24] = np.exp(x)
    np.testing.assert_allclose(o2, want2, rtol=1e-5, atol=1e-6)
    round_trip(k_tensor_fillpad_expand, x, o1, o2)


# ---- the PyTorch spelling (pypto.debug.torch_codegen) computes the same -------------------------

def torch_cases():
    x = rng.uniform(-1, 1, size=(16, 64)).astype(np.float32)
    x32 = rng.uniform(-1, 1, size=(16, 32)).astype(np.float32)
    return {
        "expand_clone": (k_expand_clone, [x, rng.uniform(-1, 1, size=(1, 64)).astype(np.float32),
                                          rng.uniform(-1, 1, size=(1, 16)).astype(np.float32)] +
                         [np.zeros((16, 64), np.float32) for _ in range(4)]),
        "scatter_update": (k_scatter_update, [x32, rng.uniform(-1, 1, size=(8, 32)).astype(np.float32),
                                              np.array([[3, 0, 11, 7, 15, 1, 8, 4]], np.int32),
                                              rng.uniform(-1, 1, size=(16, 8)).astype(np.float32),
                                              np.array([[5, 31, 0, 9, 12, 20, 2, 27]], np.int32)] +
                           [np.zeros((16, 32), np.float32) for _ in range(4)]),
        "gather_scatter": (k_gather_scatter, [x32, rng.integers(0, 32, size=(16, 32)).astype(np.int32),
                                              np.stack([rng.permutation(16)[:8] for _ in range(32)], 1).astype(np.int32),
                                              rng.uniform(-1, 1, size=(8, 32)).astype(np.float32),
                                              rng.uniform(-1, 1, size=(16, 32)).astype(np.float32),
                                              np.zeros((8, 32), np.float32), np.zeros((16, 32), np.float32),
                                              np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32),
                                              np.zeros((8, 32), np.float32), np.zeros((16, 32), np.float32)]),
        "paged_gather": (k_paged_gather, [rng.uniform(-1, 1, size=(PAGES * BS, D)).astype(np.float32),
                                          np.array([[2, 0, 3, 1, 0, 0, 0, 0]], np.int32),
                                          rng.integers(0, PAGES * BS, size=(1, 16)).astype(np.int32),
                                          rng.uniform(-1, 1, size=(16, D)).astype(np.float32),
                                          np.zeros((16, D), np.float32), np.zeros((16, 32), np.float32),
                                          np.zeros((16, 16), np.float32)]),
        "read_write": (k_read_write, [rng.uniform(-1, 1, size=(9, 16)).astype(np.float32), np.zeros((9, 16), np.float32),
                                      np.zeros((2, 8), np.float32)]),
        "fillpad_expand": (k_tensor_fillpad_expand, [rng.uniform(-1, 1, size=(20, 24)).astype(np.float32),
                                                     np.zeros((32, 64), np.float32), np.zeros((24, 32), np.float32)]),
    }


@pytest.mark.parametrize("case", ["expand_clone", "scatter_update", "fillpad_expand", "gather_scatter", "paged_gather",
                                  "read_write"])
def test_torch_script_computes_the_same(case):
    import pypto.debug as dbg

    kernel, args = torch_cases()[case]
    namespace = {}
    exec(compile(dbg.torch_codegen(kernel, *args), f"<torch script of {case}>", "exec"), namespace)
    theirs = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    namespace["ENTRY"](*theirs)
    ours = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel(*ours, config=RunConfig(engine="sim"))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(t.numpy().astype(np.float64), o.astype(np.float64), rtol=1e-5, atol=1e-5)


# ---- pl.system.*: timed and ordered by the sim engine's cycle model ------------------------------

SYNC_BODY = """
import pypto.language as pl


@pl.jit
def k(x: pl.Tensor, y: pl.Tensor, o1: pl.Out[pl.Tensor], o2: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [64, 64])
        pl.store(a, [0, 0], o1)
        {between}
        b = pl.load(y, [0, 0], [64, 64])
        pl.store(b, [0, 0], o2)
        pl.store(a, [0, 0], o1)   # keeps a alive: b gets a buffer of its own
    return o1
"""


def sync_program(tmp_path, between):
    import importlib.util

    name = "k_sync_" + str(abs(hash(between)))
    src = tmp_path / f"{name}.py"
    src.write_text(SYNC_BODY.replace("{between}", between))
    spec = importlib.util.spec_from_file_location(name, src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


def timeline(tmp_path, between, engine="sim"):
    """The kernel's values, and its modelled instruction events by name (sorted by start)."""
    import json

    k = sync_program(tmp_path, between)
    x, y = rng.uniform(-1, 1, size=(64, 64)).astype(np.float32), rng.uniform(-1, 1, size=(64, 64)).astype(np.float32)
    o1, o2 = np.zeros_like(x), np.zeros_like(y)
    trace = tmp_path / "trace.json"
    k(x, y, o1, o2, config=RunConfig(engine=engine, trace_path=str(trace)) if engine == "sim" else RunConfig(engine=engine))
    np.testing.assert_array_equal(o1, x)   # a barrier changes no value
    np.testing.assert_array_equal(o2, y)
    if engine != "sim":
        return None
    ev = {}
    for e in json.loads(trace.read_text())["traceEvents"]:
        if e.get("ph") == "X":
            ev.setdefault(e["name"], []).append((e["args"]["start_cycle"], e["args"]["end_cycle"]))
    for v in ev.values():
        v.sort()
    return ev


BARRIERS = {
    "none": "",
    "bar_v": "pl.system.bar_v()",
    "bar_all": "pl.system.bar_all()",
    "fence": "pl.system.fence()",
    "event": "pl.system.sync_set(0, pipe=pl.PipeType.MTE3)\n        pl.system.sync_wait(0, pipe=pl.PipeType.MTE2)",
    "syncall": "pl.system.syncall()",
    "syncall_soft": "pl.system.syncall(mode='soft', core_type='aiv_only', gm_workspace=ws, used_cores=1)",
    "cacheinvalid": "pl.system.cacheinvalid()",
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", sorted(set(BARRIERS) - {"syncall_soft"}))
def test_system_ops_keep_the_values(tmp_path, engine, kind):
    timeline(tmp_path, BARRIERS[kind], engine)


def test_system_ops_order_the_pipes_in_the_cycle_model(tmp_path):
    ev = {k: timeline(tmp_path / k, BARRIERS[k]) for k in sorted(set(BARRIERS) - {"syncall_soft"})
          if not (tmp_path / k).mkdir()}
    first_store_end = {k: e["TSTORE"][0][1] for k, e in ev.items()}
    second_load_start = {k: e["TLOAD"][1][0] for k, e in ev.items()}
    # Without a barrier (or with one on another pipe) the second load overlaps the first store.
    for k in ("none", "bar_v", "cacheinvalid"):
        assert second_load_start[k] < first_store_end[k], k
    # bar_all, the GM fence, a sync_set / sync_wait pair and syncall make it wait for the store.
    for k in ("bar_all", "fence", "syncall"):
        assert second_load_start[k] >= first_store_end[k], k
    # The event reaches its waiter one signal latency (30 cycles) after the store ended.
    assert second_load_start["event"] >= first_store_end["event"] + 30
    assert second_load_start["syncall"] >= first_store_end["syncall"] + 30  # the FFTS handshake
    # A cache invalidation costs the scalar unit a global-memory round trip.
    assert ev["cacheinvalid"]["CACHEINVALID"][0][1] - ev["cacheinvalid"]["CACHEINVALID"][0][0] == pytest.approx(30)
    total = {k: max(end for v in e.values() for _, end in v) for k, e in ev.items()}
    for k in ("bar_all", "fence", "event", "syncall"):
        assert total[k] > total["none"], k


@pl.program
class SoftBarrierPrefetch:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], ws: pl.Tensor[[16], pl.INT32],
          o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        ctx = pl.prefetch.make_context()
        e = pl.prefetch.async_prefetch(ws, ctx)
        done = pl.prefetch.wait(e, pl.prefetch.session(ctx))
        a = pl.load(x, [0, 0], [64, 64])
        pl.system.cacheinvalid()
        pl.system.fence()
        pl.system.syncall(mode="soft", core_type="aiv_only", gm_workspace=ws, used_cores=1)
        pl.system.cacheinvalid()
        o = pl.store(pl.muls(a, 2.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], ws: pl.Tensor[[16], pl.INT32],
             o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        o = self.k(x, ws, o)
        return o


@pytest.mark.parametrize("engine", ENGINES)
def test_soft_syncall_and_prefetch_change_no_value(engine):
    from pypto.runtime import run as run_program

    x, ws, o = rng.uniform(-1, 1, size=(64, 64)).astype(np.float32), np.zeros(16, np.int32), np.zeros((64, 64), np.float32)
    compiled = run_program(SoftBarrierPrefetch, x, ws, o, config=RunConfig(engine=engine))
    np.testing.assert_array_equal(o, 2 * x)
    assert _core.ir.structural_equal(pl.parse(_core.ir.print_program(SoftBarrierPrefetch)), SoftBarrierPrefetch)
    if engine == "sim":
        # After the barrier drains the pipes: its GM store and poll (2 x 30-cycle transfer
        # startups) and the second cache invalidation (30); the first overlaps the load.
        x2 = x.copy()
        plain = run_program(Plain, x2, np.zeros_like(x2), config=RunConfig(engine="sim"))
        assert compiled.modelled_cycles > plain.modelled_cycles + 2 * 30 + 30


@pl.program
class Plain:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        a = pl.load(x, [0, 0], [64, 64])
        o = pl.store(pl.muls(a, 2.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        o = self.k(x, o)
        return o


# A global-memory handoff inside one mixed task: the cube stores its product, sets event 3;
# the vector core waits for it, then loads what the cube wrote.
@pl.program
class CubeToVectorEvent:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        acc = pl.matmul(pl.move(pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left),
                        pl.move(pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right))
        c = pl.store(acc, [0, 0], c)
        pl.system.sync_set(3, pipe=pl.PipeType.FIX, core_type="aic")
        return c

    @pl.function(type=pl.FunctionType.AIV)
    def vector(self, c: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        pl.system.sync_wait(3, pipe=pl.PipeType.MTE2, core_type="aiv")
        out = pl.store(pl.adds(pl.load(c, [0, 0], [32, 32]), 1.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        c = self.cube(a, b, c)
        out = self.vector(c, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        out = self.fused(a, b, c, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_cross_core_event_orders_a_global_memory_handoff(engine, tmp_path):
    import json

    from pypto.runtime import run as run_program

    a = rng.uniform(-1, 1, size=(32, 32)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(32, 32)).astype(np.float32)
    c, out = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32)
    trace = tmp_path / "trace.json"
    cfg = RunConfig(engine=engine, trace_path=str(trace)) if engine == "sim" else RunConfig(engine=engine)
    for _ in range(3):  # the vector core always reads the finished product
        run_program(CubeToVectorEvent, a, b, c, out, config=cfg)
        np.testing.assert_allclose(out, a @ b + 1, rtol=1e-5, atol=1e-5)
    if engine == "sim":
        ev = {}
        for e in json.loads(trace.read_text())["traceEvents"]:
            if e.get("ph") == "X":
                ev.setdefault(e["name"], []).append(e)
        fix_store = next(e for e in ev["TSTORE"] if e["tid"] == ev["TMATMUL"][0]["tid"] or e["pid"] == ev["TMATMUL"][0]["pid"])
        vec_load = next(e for e in ev["TLOAD"] if e["pid"] != ev["TMATMUL"][0]["pid"])
        # The vector core's load starts once the cube's store has ended plus the event's latency.
        assert vec_load["args"]["start_cycle"] >= fix_store["args"]["end_cycle"] + 30


def test_a_wait_without_its_set_is_reported():
    @pl.program
    class Lonely:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            pl.system.sync_wait(2, pipe=pl.PipeType.MTE2)
            o = pl.store(pl.load(x, [0, 0], [64, 64]), [0, 0], o)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
            o = self.k(x, o)
            return o

    from pypto.runtime import run as run_program

    x = np.zeros((64, 64), np.float32)
    with pytest.raises(_core.PyptoError, match=r"test_tail_ops.py:\d+: pl.system.sync_wait\(2\) in kernel 'k' has no "
                                               r"earlier sync_set of event 2[\s\S]*fix:"):
        run_program(Lonely, x, x.copy(), config=RunConfig(engine="sim"))


# ---- pl.tensor.gather / scatter(dim=, index=): torch.gather / scatter ----------------------------

@pl.jit
def k_gather_scatter(x: pl.Tensor, gi: pl.Tensor, ri: pl.Tensor, src: pl.Tensor, src2: pl.Tensor, g0: pl.Out[pl.Tensor],
                     g1: pl.Out[pl.Tensor], s0: pl.Out[pl.Tensor], s1: pl.Out[pl.Tensor], t0: pl.Out[pl.Tensor],
                     u0: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g0[:] = pl.tensor.gather(x, dim=0, index=ri)               # down the columns
        g1[:] = pl.tensor.gather(x, -1, gi)                        # along the rows
        s0[:] = pl.tensor.scatter(x, 0, ri, src)
        s1[:] = pl.tensor.scatter(input=x, dim=1, index=gi, src=src2)
        t = pl.load(x, [0, 0], [16, 32])
        pl.store(pl.tile.gather(t, pl.load(ri, [0, 0], [8, 32]), dim=-2), [0, 0], t0)
        pl.store(pl.tile.scatter(t, pl.load(ri, [0, 0], [8, 32]), pl.load(src, [0, 0], [8, 32]), dim=0), [0, 0], u0)
    return g0


@pytest.mark.parametrize("engine", ENGINES)
def test_gather_and_scatter_along_either_dim(engine):
    x = rng.uniform(-1, 1, size=(16, 32)).astype(np.float32)
    gi = rng.integers(0, 32, size=(16, 32)).astype(np.int32)
    # distinct rows per column for the scatter (a repeated index would make the winner order-dependent)
    ri = np.stack([rng.permutation(16)[:8] for _ in range(32)], axis=1).astype(np.int32)
    src = rng.uniform(-1, 1, size=(8, 32)).astype(np.float32)
    src2 = rng.uniform(-1, 1, size=(16, 32)).astype(np.float32)
    outs = [np.zeros((8, 32), np.float32), np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32),
            np.zeros((16, 32), np.float32), np.zeros((8, 32), np.float32), np.zeros((16, 32), np.float32)]
    run(k_gather_scatter, x, gi, ri, src, src2, *outs, engine=engine)
    tx, tg, tr, ts, ts2 = (torch.from_numpy(a) for a in (x, gi, ri, src, src2))
    np.testing.assert_array_equal(outs[0], torch.gather(tx, 0, tr.long()).numpy())
    np.testing.assert_array_equal(outs[1], torch.gather(tx, 1, tg.long()).numpy())
    np.testing.assert_array_equal(outs[2], tx.scatter(0, tr.long(), ts).numpy())
    want_s1 = tx.clone()
    for c in range(32):  # repeated column indices: the later column wins
        want_s1.scatter_(1, tg[:, c:c + 1].long(), ts2[:, c:c + 1])
    np.testing.assert_array_equal(outs[3], want_s1.numpy())
    np.testing.assert_array_equal(outs[4], torch.gather(tx, 0, tr.long()).numpy())
    np.testing.assert_array_equal(outs[5], tx.scatter(0, tr.long(), ts).numpy())
    text = round_trip(k_gather_scatter, x, gi, ri, src, src2, *outs)
    assert "dim=0" in text


# ---- SPMD: pl.tile.get_block_idx() in an InCore function; atomic adds of the blocks ------------

@pl.jit.incore
def k_block_partial(x: pl.Tensor, out: pl.InOut[pl.Tensor], ids: pl.Out[pl.Tensor]):
    i = pl.tile.get_block_idx()
    t = pl.load(x, [i * 16, 0], [16, 64])
    out = pl.store(t, [0, 0], out, atomic=pl.AtomicType.Add)          # split-K style: the blocks add up
    ids = pl.store(pl.adds(pl.full([1, 8], dtype=pl.INT32, value=0), i), [i, 0], ids)
    return out


@pl.jit
def k_spmd_blocks(x: pl.Tensor, out: pl.InOut[pl.Tensor], ids: pl.Out[pl.Tensor], out2: pl.InOut[pl.Tensor],
                  ids2: pl.Out[pl.Tensor]):
    with pl.spmd(4):
        out = k_block_partial(x, out, ids)
    out2, tid = pl.spmd_submit(k_block_partial, x, out2, ids2, core_num=4)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_spmd_blocks_see_their_index_and_add_atomically(engine):
    x = rng.uniform(-1, 1, size=(64, 64)).astype(np.float32)
    out, out2 = np.zeros((16, 64), np.float32), np.zeros((16, 64), np.float32)
    ids, ids2 = np.full((4, 8), -1, np.int32), np.full((4, 8), -1, np.int32)
    run(k_spmd_blocks, x, out, ids, out2, ids2, engine=engine)
    want = x.reshape(4, 16, 64).sum(axis=0)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out2, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ids, np.repeat(np.arange(4, dtype=np.int32)[:, None], 8, axis=1))
    np.testing.assert_array_equal(ids2, ids)


# ---- pl.paged_gather: rows of a paged KV cache through a block table ----------------------------

BS, PAGES, D = 16, 4, 64


@pl.jit
def k_paged_gather(cache: pl.Tensor, table: pl.Tensor, tokens: pl.Tensor, q: pl.Tensor, rows: pl.Out[pl.Tensor],
                   head: pl.Out[pl.Tensor], scores: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        k = pl.paged_gather(cache, tokens, table, block_size=BS, size=D, max_indices=16, space=pl.MemorySpace.Vec)
        pl.store(k, [0, 0], rows)
        h = pl.paged_gather(cache, tokens, table, BS, 32, 16, space=pl.MemorySpace.Vec, col_off=32)  # one head
        pl.store(h, [0, 0], head)
        kt = pl.paged_gather(cache, tokens, table, block_size=BS, size=D, max_indices=16, is_trans=True,
                             is_b_matrix=True)                                       # K^T in Mat
        qt = pl.load(q, [0, 0], [16, D], target_memory=pl.MemorySpace.Mat)
        pl.store(pl.matmul(qt, kt), [0, 0], scores)
    return rows


def paged_rows(cache, table, tokens):
    t = tokens.reshape(-1)
    return cache[table.reshape(-1)[t // BS] * BS + t % BS]


@pytest.mark.parametrize("engine", ENGINES)
def test_paged_gather_reads_rows_through_the_block_table(engine):
    cache = rng.uniform(-1, 1, size=(PAGES * BS, D)).astype(np.float32)
    table = np.array([[2, 0, 3, 1, 0, 0, 0, 0]], np.int32)          # logical page p lives in physical page table[p]
    tokens = rng.integers(0, PAGES * BS, size=(1, 16)).astype(np.int32)
    q = rng.uniform(-1, 1, size=(16, D)).astype(np.float32)
    rows, head, scores = np.zeros((16, D), np.float32), np.zeros((16, 32), np.float32), np.zeros((16, 16), np.float32)
    run(k_paged_gather, cache, table, tokens, q, rows, head, scores, engine=engine)
    want = paged_rows(cache, table, tokens)
    np.testing.assert_array_equal(rows, want)
    np.testing.assert_array_equal(head, want[:, 32:])
    np.testing.assert_allclose(scores, q @ want.T, rtol=1e-4, atol=1e-4)
    text = round_trip(k_paged_gather, cache, table, tokens, q, rows, head, scores)
    assert "pl.tensor.paged_gather(" in text


def test_paged_gather_checks_its_columns():
    @pl.jit
    def bad(cache: pl.Tensor, table: pl.Tensor, tokens: pl.Tensor, o: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.paged_gather(cache, tokens, table, block_size=BS, size=64, max_indices=16, col_off=8,
                                     space=pl.MemorySpace.Vec), [0, 0], o)
        return o

    with pytest.raises(pl.ParseError, match=r"columns 8 \.\. 71 lie outside the 64 columns of 'src'[\s\S]*fix:"):
        bad(np.zeros((64, 64), np.float32), np.zeros((1, 8), np.int32), np.zeros((1, 16), np.int32),
            np.zeros((16, 64), np.float32))


# ---- pl.read / pl.write: one index per dimension, or one flat row-major index --------------------

@pl.jit
def k_read_write(x: pl.Tensor, out: pl.Out[pl.Tensor], s: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 16])
        v = pl.read(t, 21)                         # flat: row 1, column 5
        w = pl.read(x, [3, 4])
        t = pl.write(t, 3, v + w)                  # flat: row 0, column 3
        t = pl.tile.write(t, [7, 15], pl.tile.read(t, [0, 0]))
        pl.store(t, [0, 0], out)
        pl.write(out, 130, pl.read(x, 0))          # a flat index into the tensor: row 8, column 2
    pl.write(s, [0, 1], pl.read(x, 17))            # in the orchestration: the host reads and writes
    pl.write(s, 12, pl.read(x, [2, 2]))
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_read_and_write_take_a_flat_index(engine):
    x = rng.uniform(-1, 1, size=(9, 16)).astype(np.float32)
    out, s = np.zeros((9, 16), np.float32), np.zeros((2, 8), np.float32)
    run(k_read_write, x, out, s, engine=engine)
    want = x.copy()
    want[8] = 0
    want[0, 3] = x[1, 5] + x[3, 4]
    want[7, 15] = x[0, 0]
    want[8, 2] = x[0, 0]
    np.testing.assert_array_equal(out, want)
    want_s = np.zeros((2, 8), np.float32)
    want_s[0, 1], want_s[1, 4] = x.flat[17], x[2, 2]
    np.testing.assert_array_equal(s, want_s)
    round_trip(k_read_write, x, out, s)


def test_a_flat_index_out_of_range_is_reported():
    @pl.jit
    def bad(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [8, 16])
            pl.store(pl.write(t, 128, 1.0), [0, 0], out)
        return out

    with pytest.raises(pl.ParseError, match=r"test_tail_ops.py:\d+[\s\S]*flat index 128 is out of range 0\.\.127[\s\S]*fix:"):
        bad(np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32))


@pl.program
class VectorWaitsForever:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[32, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        acc = pl.matmul(pl.move(pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left),
                        pl.move(pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right))
        c = pl.store(acc, [0, 0], c)   # no sync_set
        return c

    @pl.function(type=pl.FunctionType.AIV)
    def vector(self, c: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        pl.system.sync_wait(5, pipe=pl.PipeType.MTE2)
        out = pl.store(pl.load(c, [0, 0], [32, 32]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[32, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        c = self.cube(a, c)
        out = self.vector(c, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        out = self.fused(a, c, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_a_cross_core_wait_the_peer_never_sets_is_a_deadlock_report(engine):
    from pypto.runtime import run as run_program

    z = np.zeros((32, 32), np.float32)
    with pytest.raises(_core.PyptoError, match=r"test_tail_ops.py:\d+: deadlock in mixed task 'fused'[\s\S]*AIV 0 'vector' "
                                               r"waits at pl.system.sync_wait \(.*\) of event 5[\s\S]*fix:.*sync_set"):
        run_program(VectorWaitsForever, z, z.copy(), z.copy(), config=RunConfig(engine=engine))


# ---- tensor index reductions: blocks of whole rows (columns), as many as fit --------------------

@pl.jit
def k_long_argreduce(x: pl.Tensor, y: pl.Tensor, c: pl.Out[pl.Tensor], r: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.col_argmax(x)            # columns of 2000 rows: 8 whole columns per block
        r[:] = pl.tensor.row_argmin(y)     # rows of 1000 columns: a few whole rows per block
    return c


@pytest.mark.parametrize("engine", ENGINES)
def test_index_reductions_of_long_rows_and_columns(engine):
    x = rng.permutation(2000 * 64).reshape(2000, 64).astype(np.float32)
    y = rng.permutation(500 * 1000).reshape(500, 1000).astype(np.float32)
    c, r = np.zeros((1, 64), np.int32), np.zeros((500, 1), np.int32)
    run(k_long_argreduce, x, y, c, r, engine=engine)
    np.testing.assert_array_equal(c[0], x.argmax(axis=0))
    np.testing.assert_array_equal(r[:, 0], y.argmin(axis=1))

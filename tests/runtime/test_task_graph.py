"""The task graph of the runtime: dependency edges from overlapping tensor regions (RAW,
WAW, WAR) read back from the swimlane, explicit deps, deadlock reports, SPMD blocks, ring
back-pressure, created-tensor lifetimes and two host workers running tasks concurrently."""

import json
import os
import sys

import numpy as np
import pytest
from hand_built_programs import imm, tensor_arg, tile_instr
from pypto import _core as c

R, C = 8, 16  # one tile: 8 rows x 16 cols; tensors are [32, 16] (4 tiles)


def shift_kernel(name="shift", synced=True):
    """dst[j:j+8, :] = src[i:i+8, :] + v  (i, j, v scalar parameters)."""
    k = c.Kernel()
    k.name = name
    k.params = [
        c.ParamDesc("src", True, "FP32", [-1, C], "In"),
        c.ParamDesc("dst", True, "FP32", [-1, C], "Out"),
        c.ParamDesc("i", False, "INDEX", [], "In"),
        c.ParamDesc("j", False, "INDEX", [], "In"),
        c.ParamDesc("v", False, "FP32", [], "In"),
    ]
    k.num_regs = 3
    k.reg_is_float = [False, False, True]
    k.tiles = [c.TileDesc("t", "FP32", "Vec", R, C, 0), c.TileDesc("u", "FP32", "Vec", R, C, R * C * 4)]
    T, G, S = c.Operand.tile, c.Operand.tensor, c.Operand.scalar_of
    k.code = [
        tile_instr("TLOAD", [T(0)], [G(0), c.Operand.list_of([c.Scalar.r(0), imm(0)])], 1),
        tile_instr("TADDS", [T(1)], [T(0), S(c.Scalar.r(2))], 2),
        tile_instr("TSTORE", [G(1)], [T(1), c.Operand.list_of([c.Scalar.r(1), imm(0)])], 3),
    ]
    return c.insert_sync(k) if synced else k  # the flags the compiler would insert (races are errors)


def call(src, dst, i, j, v, line, **attrs):
    ins = c.Instr()
    ins.kind = c.InstrKind.Call
    ins.callee = 0
    S = c.Operand.scalar_of
    ins.ins = [c.Operand.tensor(src), c.Operand.tensor(dst), S(imm(i)), S(imm(j)), S(imm(float(v)))]
    ins.span_file, ins.span_line = "graph.py", line
    if attrs:
        ins.attrs = attrs
    return ins


def program(names, code, kernel=None):
    p = c.HostProgram()
    p.name = "graph"
    p.params = [c.ParamDesc(n, True, "FP32", [32, C], "InOut") for n in names]
    p.tensors = p.params
    p.kernels = [kernel or shift_kernel()]
    p.code = code
    return p


def run(p, arrays, tmp_path, engine="sim", **kw):
    path = str(tmp_path / "swimlane.json")
    args = [tensor_arg(a, f"t{i}") for i, a in enumerate(arrays)]
    stats = c.run_host_program(p, args, "a2a3sim", engine, kw.pop("workers", 2), swimlane_path=path, **kw)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans = {e["args"]["task"]: e for e in events if e["ph"] == "X" and e["pid"] == 0}  # host wall clock
    return stats, {t: set(e["args"]["deps"]) for t, e in spans.items()}, events


def arrays(n):
    rng = np.random.default_rng(n)
    return [rng.standard_normal((32, C)).astype(np.float32) for _ in range(n)]


def test_read_after_write_edge(tmp_path):
    x, t, out = arrays(3)
    x0, t0 = x.copy(), t.copy()
    code = [call(0, 1, 0, 0, 1, 1),    # t[0:8] = x[0:8] + 1
            call(1, 2, 0, 0, 2, 2),    # out[0:8] = t[0:8] + 2      RAW on t[0:8]
            call(1, 2, 8, 8, 3, 3)]    # out[8:16] = t[8:16] + 3    disjoint: no edge
    _, deps, _ = run(program("x t out".split(), code), [x, t, out], tmp_path)
    assert deps[1] == {0}
    assert deps[2] == set()
    np.testing.assert_array_equal(out[0:8], x0[0:8] + 1 + 2)
    np.testing.assert_array_equal(out[8:16], t0[8:16] + 3)


def test_write_after_write_edge(tmp_path):
    x, y = arrays(2)
    code = [call(0, 1, 0, 0, 1, 1),    # y[0:8] = x[0:8] + 1
            call(0, 1, 8, 0, 2, 2),    # y[0:8] = x[8:16] + 2       WAW on y[0:8]
            call(0, 1, 0, 16, 3, 3)]   # y[16:24] = x[0:8] + 3      disjoint: no edge
    _, deps, _ = run(program(["x", "y"], code), [x, y], tmp_path)
    assert deps[1] == {0}
    assert deps[2] == set()
    np.testing.assert_array_equal(y[0:8], x[8:16] + 2)


def test_write_after_read_edge(tmp_path):
    x, z = arrays(2)
    x0 = x.copy()
    code = [call(0, 1, 0, 0, 1, 1),    # z[0:8] = x[0:8] + 1
            call(1, 0, 0, 0, 5, 2),    # x[0:8] = z[0:8] + 5        WAR on x[0:8] (and RAW on z)
            call(1, 0, 24, 8, 5, 3)]   # x[8:16] = z[24:32] + 5     x[8:16] not read before: no edge
    _, deps, _ = run(program(["x", "z"], code), [x, z], tmp_path)
    assert deps[1] == {0}
    assert deps[2] == set()
    code_war_only = [call(0, 1, 0, 0, 1, 1),  # z[0:8] = x[0:8] + 1
                     call(1, 0, 8, 0, 0, 2)]  # x[0:8] = z[8:16]: reads other rows of z, writes x[0:8]
    x2, z2 = arrays(2)
    _, deps, _ = run(program(["x", "z"], code_war_only), [x2, z2], tmp_path)
    assert deps[1] == {0}  # only write-after-read orders these two
    np.testing.assert_array_equal(z[0:8], x0[0:8] + 1)


def test_explicit_dependency_is_honoured(tmp_path):
    x, y = arrays(2)
    code = [call(0, 1, 0, 0, 1, 1), call(0, 1, 8, 8, 1, 2, deps=[0])]  # disjoint, but deps=[call 0]
    _, deps, _ = run(program(["x", "y"], code), [x, y], tmp_path)
    assert deps[1] == {0}


def test_dependency_on_a_later_call_is_a_deadlock_report(tmp_path):
    x, y = arrays(2)
    code = [call(0, 1, 0, 0, 1, 11, deps=[1]), call(0, 1, 8, 8, 1, 12, deps=[0])]
    with pytest.raises(c.PyptoError) as e:
        run(program(["x", "y"], code), [x, y], tmp_path)
    msg = str(e.value)
    assert "deadlock" in msg and "cycle" in msg
    assert "graph.py:11" in msg and "graph.py:12" in msg
    code = [call(0, 1, 0, 0, 1, 11, deps=[1]), call(0, 1, 8, 8, 1, 12)]
    with pytest.raises(c.PyptoError, match="deadlock: call #0 .* depends on call #1"):
        run(program(["x", "y"], code), [x, y], tmp_path)


def test_spmd_blocks_see_their_block_index(tmp_path):
    k = shift_kernel("spmd", synced=False)
    # i = j = __block_idx * 8: the kernel computes its rows from the block index
    k.params = list(k.params[:2]) + [c.ParamDesc("__block_idx", False, "INDEX", [], "In"),
                                     c.ParamDesc("__block_num", False, "INDEX", [], "In"),
                                     c.ParamDesc("v", False, "FP32", [], "In")]
    k.num_regs = 5
    k.reg_is_float = [False, False, True, False, False]
    mul = c.Instr()
    mul.kind = c.InstrKind.ScalarBin
    mul.sop = "*"
    mul.dst_reg = 3
    mul.a, mul.b = c.Scalar.r(0), imm(R)
    code = list(k.code)
    code[0] = tile_instr("TLOAD", [c.Operand.tile(0)], [c.Operand.tensor(0), c.Operand.list_of([c.Scalar.r(3), imm(0)])], 1)
    code[2] = tile_instr("TSTORE", [c.Operand.tensor(1)], [c.Operand.tile(1), c.Operand.list_of([c.Scalar.r(3), imm(0)])], 3)
    k.code = [mul] + code
    k = c.insert_sync(k)
    ins = c.Instr()
    ins.kind = c.InstrKind.Call
    ins.callee = 0
    S = c.Operand.scalar_of
    # the call passes placeholders for __block_idx/__block_num; the runtime fills them per block
    ins.ins = [c.Operand.tensor(0), c.Operand.tensor(1), S(imm(0)), S(imm(0)), S(imm(2.0))]
    ins.attrs = {"block_num": 4}
    x, y = arrays(2)
    stats, deps, events = run(program(["x", "y"], [ins], k), [x, y], tmp_path)
    np.testing.assert_array_equal(y, x + 2)
    assert stats["tasks"] == 4
    blocks = sorted(e["args"]["block_idx"] for e in events if e["ph"] == "X" and e["pid"] == 0)
    assert blocks == [0, 1, 2, 3]
    assert all(d == set() for d in deps.values())  # each block writes its own rows


def test_ring_back_pressure_with_a_tiny_ring(tmp_path):
    x, y = arrays(2)
    x0 = x.copy()
    code = [call(0, 1, 8 * (n % 4), 8 * (n % 4), n, n) for n in range(40)]
    stats, _, _ = run(program(["x", "y"], code), [x, y], tmp_path, ring_size=2)
    assert stats["max_in_flight"] <= 2
    assert stats["ring_waits"] > 0
    for b in range(4):  # the last call writing each band wins
        last = max(n for n in range(40) if n % 4 == b)
        np.testing.assert_array_equal(y[8 * b:8 * b + 8], x0[8 * b:8 * b + 8] + last)


def test_created_tensors_are_freed_when_no_later_task_uses_them(tmp_path):
    sys.path.insert(0, os.path.dirname(__file__))
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit.incore
    def scale(x: pl.Tensor, y: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
        y = pl.store(pl.muls(pl.load(x, [i * 8, 0], [8, 256]), 2.0), [0, 0], y)
        return y

    @pl.jit.incore
    def shift(t: pl.Tensor, out: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
        out = pl.store(pl.adds(pl.load(t, [0, 0], [8, 256]), 1.0), [i * 8, 0], out)
        return out

    @pl.jit
    def scoped(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        for i in pl.range(64):
            t = pl.create_tensor([8, 256], dtype=pl.FP32)
            t = scale(x, t, i)
            out = shift(t, out, i)
        return out

    x = np.random.default_rng(0).standard_normal((512, 256)).astype(np.float32)
    out = np.zeros_like(x)
    f = scoped.compile(x, out) if hasattr(scoped, "compile") else None
    cfg = RunConfig(ring_size=4)
    scoped(x, out, config=cfg)
    np.testing.assert_allclose(out, x * 2 + 1, rtol=1e-6)
    from pypto.runtime import jit_compile

    stats = jit_compile(scoped, (x, out), cfg).last_run_stats
    assert stats["tensors_created"] == 64
    assert stats["tensors_freed_early"] == 64
    assert stats["peak_tensor_bytes"] <= 8 * 8 * 256 * 4  # a few in flight, not all 64
    del f


def test_two_host_workers_run_tasks_concurrently(tmp_path):
    import pypto.language as pl  # noqa: F401  (the benchmark programs need the DSL)
    from pypto.runtime import RunConfig

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, root)
    from benchmarks import programs as P

    B = P.BATCH
    rng = np.random.default_rng(0)
    a = rng.standard_normal((B * 128, 128), dtype=np.float32)
    w = rng.standard_normal((B * 128, 128), dtype=np.float32)
    bias = rng.standard_normal((128, 128), dtype=np.float32)
    cm, d = np.zeros_like(a), np.zeros_like(a)
    path = str(tmp_path / "swim.json")
    P.batched_gemm(a, w, bias, cm, d, config=RunConfig(enable_chip_swimlane=1, trace_path=path, num_workers=2))
    ref = np.einsum("bij,bjk->bik", a.reshape(B, 128, 128), w.reshape(B, 128, 128)).reshape(-1, 128)
    np.testing.assert_allclose(d, ref + np.tile(bias, (B, 1)), rtol=1e-3, atol=1e-3)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    events = [e for e in events if e.get("pid") == 0]  # the host clock (the sim engine adds pid 1)
    spans = [e for e in events if e["ph"] == "X"]
    assert len(spans) == 2 * B
    assert {e["args"]["kind"] for e in spans} == {"AIC", "AIV"}
    assert sum(e["ph"] == "s" for e in events) == B == sum(e["ph"] == "f" for e in events)
    by_worker = {}
    for e in spans:
        by_worker.setdefault(e["args"]["worker"], []).append((e["ts"], e["ts"] + e["dur"]))
    assert len(by_worker) == 2
    s0, s1 = (sorted(v) for v in by_worker.values())
    overlap = 0
    j = 0
    for lo, hi in s0:  # spans of worker 0 that overlap a span of worker 1
        while j < len(s1) and s1[j][1] <= lo:
            j += 1
        overlap += j < len(s1) and s1[j][0] < hi
    assert overlap >= B // 10


def test_swimlane_shows_modelled_cycles_on_the_sim_engine(tmp_path):
    # Tasks 0 and 1 are independent (two virtual cores at once); task 2 reads what 0 wrote.
    x, t, out = arrays(3)
    code = [call(0, 1, 0, 0, 1, 1), call(0, 1, 8, 8, 1, 2), call(1, 2, 0, 0, 2, 3)]
    _, deps, events = run(program("x t out".split(), code), [x, t, out], tmp_path)
    host = {e["args"]["task"]: e for e in events if e["ph"] == "X" and e["pid"] == 0}
    model = {e["args"]["task"]: e["args"] for e in events if e["ph"] == "X" and e["pid"] == 1}
    names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert names == ["a2a3sim (host wall clock)", "a2a3sim (modelled cycles)"]
    for task in range(3):
        assert model[task]["cycles"] > 0 and host[task]["args"]["modelled_cycles"] == model[task]["cycles"]
    assert model[0]["start_cycle"] == 0 and model[1]["start_cycle"] == 0  # side by side on two cores
    assert deps[2] == {0}
    assert model[2]["start_cycle"] >= model[0]["start_cycle"] + model[0]["cycles"]  # after its producer


def test_native_swimlane_has_no_modelled_process(tmp_path):
    x, t = arrays(2)
    _, _, events = run(program(["x", "t"], [call(0, 1, 0, 0, 1, 1)]), [x, t], tmp_path, engine="native")
    assert not [e for e in events if e.get("pid") == 1]

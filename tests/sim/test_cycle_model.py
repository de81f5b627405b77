"""The cycle model: pypto.isa.cost against chip-model.md's formulas, races for missing
flags, InsertSync making hand-built and compiled kernels race-free, the Chrome trace, and
MTE2 / V / MTE3 overlap with double-buffered tiles."""

import json
import math
import os
import sys

import numpy as np
import pytest

from pypto import _core as c
from pypto import isa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
from hand_built_programs import imm, offsets, tensor_arg, tile_instr  # noqa: E402


def test_cost_matches_chip_model_formulas():
    # TADD fp32 64x64: R = 64*64*4/256 = 64 repeats, rows are whole repeats -> 2.11 R + 24.
    assert isa.cost("TADD", "FP32", [64, 64]) == pytest.approx(2.11 * 64 + 24)
    # A 16-column fp32 row is 64 B, not a whole repeat: +16.
    assert isa.cost("TEXP", "FP32", [8, 16]) == pytest.approx(2.0 * 2 + 31 + 16)
    # TMATMUL fp16 128x128x128: 6 + ceil(128/16) * ceil(128/16) * ceil(128/16).
    assert isa.cost("TMATMUL", "FP16", [128, 128, 128]) == 6 + 8 * 8 * 8
    # fp32: K0 = 8 and double cost.
    assert isa.cost("TMATMUL", "FP32", [64, 64, 64]) == 6 + 2 * 4 * 8 * 4
    # TLOAD 64x128 fp32 into UB at 100.9 GiB/s, 1.85 GHz, + 30 cycles startup.
    assert isa.cost("TLOAD", "FP32", [64, 128]) == pytest.approx(32768 / (100.9 * 2**30) * 1.85e9 + 30)
    assert isa.pipe("TMATMUL") == "M" and isa.pipe("TLOAD") == "MTE2"
    assert "Acc" in isa.memories("TMATMUL") and isa.memories("TADD") == ["Vec"]


def unsynced_add_kernel():
    k = c.Kernel()
    k.name = "add"
    k.params = [c.ParamDesc(n, True, "FP32", [16, 64], d) for n, d in (("a", "In"), ("b", "In"), ("out", "Out"))]
    k.tiles = [c.TileDesc(n, "FP32", "Vec", 16, 64, i * 4096) for i, n in enumerate(("ta", "tb", "tc"))]
    T, G = c.Operand.tile, c.Operand.tensor
    k.code = [
        tile_instr("TLOAD", [T(0)], [G(0), offsets(0, 0)], 10),
        tile_instr("TLOAD", [T(1)], [G(1), offsets(0, 0)], 11),
        tile_instr("TADD", [T(2)], [T(0), T(1)], 12),
        tile_instr("TSTORE", [G(2)], [T(2), offsets(0, 0)], 13),
    ]
    return k


def add_args():
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((16, 64)).astype(np.float32) for _ in range(2))
    out = np.zeros_like(a)
    return a, b, out, [tensor_arg(a, "a"), tensor_arg(b, "b"), tensor_arg(out, "out")]


def test_missing_flag_is_a_race():
    a, b, out, args = add_args()  # the arrays stay alive: args holds only their addresses
    with pytest.raises(c.PyptoError) as e:
        c.run_kernel(unsynced_add_kernel(), args)
    msg = str(e.value)
    assert "race" in msg and "TADD" in msg and "'ta'" in msg and "MTE2" in msg and "pipe V" in msg
    assert "test_kernel.py:12" in msg and "set_flag(PIPE_MTE2, PIPE_V" in msg


def test_one_flag_missing_of_two_is_a_race():
    k = unsynced_add_kernel()
    sync = [tile_instr(m, [], [], 11, src="MTE2", dst="V", event=0) for m in ("SET_FLAG", "WAIT_FLAG")]
    k.code = k.code[:2] + sync + k.code[2:]  # orders the loads before TADD, but not TADD before TSTORE
    a, b, out, args = add_args()  # the arrays stay alive: args holds only their addresses
    with pytest.raises(c.PyptoError, match="TSTORE .* on pipe MTE3 reads tile 'tc'"):
        c.run_kernel(k, args)


def test_wait_without_set_is_reported():
    k = unsynced_add_kernel()
    k.code = [tile_instr("WAIT_FLAG", [], [], 9, src="MTE2", dst="V", event=3)] + list(k.code)
    with pytest.raises(c.PyptoError, match="no earlier matching set_flag"):
        c.run_kernel(k, add_args()[3])


def test_inserted_sync_runs_clean_and_is_in_the_pto_text():
    a, b, out, args = add_args()
    k = c.insert_sync(unsynced_add_kernel())
    names = [i.mnemonic for i in k.code]
    assert names.count("SET_FLAG") == names.count("WAIT_FLAG") == 2
    cycles = c.run_kernel(k, args)
    np.testing.assert_array_equal(out, a + b)
    text = c.emit_pto(k)
    assert "pto.set_flag[PIPE_MTE2, PIPE_V, EVENT_ID" in text and "pto.wait_flag[PIPE_V, PIPE_MTE3" in text
    # Both loads run back to back on MTE2, then TADD, then TSTORE: a chain.
    load = isa.cost("TLOAD", "FP32", [16, 64])
    assert cycles >= 2 * load + isa.cost("TADD", "FP32", [16, 64])


def test_compiled_program_runs_clean():
    import pypto.language as pl

    @pl.jit
    def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, 0], [16, 64])
            tb = pl.load(b, [0, 0], [16, 64])
            out = pl.store(pl.add(ta, tb), [0, 0], out)
        return out

    a, b, out, _ = add_args()
    add(a, b, out)
    np.testing.assert_array_equal(out, a + b)


def double_buffered_exp_kernel(rows=256, cols=128, block=64):
    """y = exp(x), two blocks per loop iteration in alternating tiles (a0/b0, a1/b1)."""
    k = c.Kernel()
    k.name = "exp_db"
    k.params = [c.ParamDesc("x", True, "FP32", [rows, cols], "In"), c.ParamDesc("y", True, "FP32", [rows, cols], "Out")]
    nb = block * cols * 4
    k.tiles = [c.TileDesc(n, "FP32", "Vec", block, cols, i * nb) for i, n in enumerate(("a0", "a1", "b0", "b1"))]
    k.num_regs, k.reg_is_float = 2, [False, False]
    R, T, G = c.Scalar.r, c.Operand.tile, c.Operand.tensor
    begin, end = c.Instr(), c.Instr()
    begin.kind, end.kind = c.InstrKind.LoopBegin, c.InstrKind.LoopEnd
    for i in (begin, end):
        i.dst_reg, i.a, i.b, i.step = 0, imm(0), imm(rows), imm(2 * block)
    second = c.Instr()
    second.kind, second.dst_reg, second.sop, second.a, second.b = c.InstrKind.ScalarBin, 1, "+", R(0), imm(block)
    begin.jump, end.jump = 9, 1  # past the LoopEnd; the first body instruction
    k.code = [
        begin,
        second,
        tile_instr("TLOAD", [T(0)], [G(0), offsets(R(0), 0)], 1),
        tile_instr("TLOAD", [T(1)], [G(0), offsets(R(1), 0)], 2),
        tile_instr("TEXP", [T(2)], [T(0)], 3),
        tile_instr("TEXP", [T(3)], [T(1)], 4),
        tile_instr("TSTORE", [G(1)], [T(2), offsets(R(0), 0)], 5),
        tile_instr("TSTORE", [G(1)], [T(3), offsets(R(1), 0)], 6),
        end,
    ]
    return k


def overlaps(a, b):
    return a["args"]["start_cycle"] < b["args"]["end_cycle"] and b["args"]["start_cycle"] < a["args"]["end_cycle"]


def test_double_buffering_overlaps_pipes_in_the_trace(tmp_path):
    k = c.insert_sync(double_buffered_exp_kernel())
    x = np.random.default_rng(1).standard_normal((256, 128)).astype(np.float32)
    y = np.zeros_like(x)
    path = str(tmp_path / "trace.json")
    cycles = c.run_kernel(k, [tensor_arg(x, "x"), tensor_arg(y, "y")], trace_path=path)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    trace = json.load(open(path))
    ev = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    by = {p: [e for e in ev if e["tid"] == p] for p in (1, 3, 4)}  # V, MTE2, MTE3
    assert len(by[3]) == 4 and len(by[1]) == 4 and len(by[4]) == 4
    assert any(overlaps(a, b) for a in by[3] for b in by[1]), "a load runs while V computes"
    assert any(overlaps(a, b) for a in by[1] for b in by[4]), "a store runs while V computes"
    serial = sum(e["args"]["end_cycle"] - e["args"]["start_cycle"] for e in ev)
    assert cycles < serial
    assert max(e["args"]["end_cycle"] for e in ev) == pytest.approx(cycles, abs=10)
    assert math.isclose(ev[0]["dur"] * 1850, ev[0]["args"]["end_cycle"] - ev[0]["args"]["start_cycle"], rel_tol=1e-6)


def test_softmax_example_trace_through_run_config(tmp_path):
    import importlib

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "intermediate"))
    softmax = importlib.import_module("02_softmax").softmax
    from pypto.runtime import RunConfig, jit_compile

    x = np.random.default_rng(6).standard_normal((256, 128)).astype(np.float32)
    y = np.zeros_like(x)
    path = str(tmp_path / "softmax.json")
    compiled = jit_compile(softmax, (x, y))
    compiled(x, y, config=RunConfig(trace_path=path, num_workers=1))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    ev = [e for e in json.load(open(path))["traceEvents"] if e["ph"] == "X"]
    serial = sum(e["args"]["end_cycle"] - e["args"]["start_cycle"] for e in ev)
    assert compiled.modelled_cycles < serial
    # pl.pipeline(stage=2): a block's load (MTE2, tid 3) runs while V (tid 1) works on the
    # previous block, and V works while MTE3 (tid 4) stores
    assert any(overlaps(a, b) for a in ev if a["tid"] == 3 for b in ev if b["tid"] == 1)
    assert any(overlaps(a, b) for a in ev if a["tid"] == 1 for b in ev if b["tid"] == 4)


def store_then_reload_kernel():
    """tmp = a + 1 (TSTORE), then out = tmp * 2 reading tmp back (TLOAD): the reload must
    wait for the store, a dependency through global memory."""
    k = c.Kernel()
    k.name = "reload"
    k.params = [c.ParamDesc(n, True, "FP32", [16, 64], d) for n, d in (("a", "In"), ("tmp", "InOut"), ("out", "Out"))]
    k.tiles = [c.TileDesc(n, "FP32", "Vec", 16, 64, i * 4096) for i, n in enumerate(("ta", "tb", "tc", "td"))]
    T, G = c.Operand.tile, c.Operand.tensor
    k.code = [
        tile_instr("TLOAD", [T(0)], [G(0), offsets(0, 0)], 20),
        tile_instr("TADDS", [T(1)], [T(0), c.Operand.scalar_of(c.Scalar.immf(1.0))], 21),
        tile_instr("TSTORE", [G(1)], [T(1), offsets(0, 0)], 22),
        tile_instr("TLOAD", [T(2)], [G(1), offsets(0, 0)], 23),
        tile_instr("TMULS", [T(3)], [T(2), c.Operand.scalar_of(c.Scalar.immf(2.0))], 24),
        tile_instr("TSTORE", [G(2)], [T(3), offsets(0, 0)], 25),
    ]
    return k


def reload_args():
    a = np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32)
    tmp, out = np.zeros_like(a), np.zeros_like(a)
    return a, tmp, out, [tensor_arg(a, "a"), tensor_arg(tmp, "tmp"), tensor_arg(out, "out")]


def test_reloading_a_stored_tensor_without_a_flag_is_a_race():
    """The race checker covers global tensors too: the flags InsertSync puts between tiles,
    without the MTE3 -> MTE2 one, leave the reload of 'tmp' unordered after its store."""
    k = c.insert_sync(store_then_reload_kernel())
    k.code = [i for i in k.code if not (i.mnemonic in ("SET_FLAG", "WAIT_FLAG") and i.attrs["src"] == "MTE3"
                                         and i.attrs["dst"] == "MTE2")]
    a, tmp, out, args = reload_args()
    with pytest.raises(c.PyptoError, match=r"race in kernel 'reload': TLOAD \(test_kernel.py:23, pc \d+\) on pipe MTE2 "
                                           r"reads tensor 'tmp' while TSTORE \(test_kernel.py:22, pc \d+\) on pipe MTE3 "
                                           r"may still be writing it[\s\S]*set_flag\(PIPE_MTE3, PIPE_MTE2"):
        c.run_kernel(k, args)


def test_insert_sync_orders_a_reload_after_the_store(tmp_path):
    a, tmp, out, args = reload_args()
    k = c.insert_sync(store_then_reload_kernel())
    assert "pto.set_flag[PIPE_MTE3, PIPE_MTE2" in c.emit_pto(k)
    path = str(tmp_path / "trace.json")
    c.run_kernel(k, args, trace_path=path)
    np.testing.assert_array_equal(tmp, a + 1)
    np.testing.assert_array_equal(out, (a + 1) * 2)
    # In the modelled timeline the reload starts only once the store has finished.
    ev = [e for e in json.load(open(path))["traceEvents"] if e["ph"] == "X"]
    store = next(e for e in ev if e["name"] == "TSTORE")
    reload = [e for e in ev if e["name"] == "TLOAD"][1]
    assert reload["ts"] >= store["ts"] + store["dur"] - 1e-9


def test_in_place_call_with_disjoint_windows_is_not_a_race():
    """out passed as the same array as input a: block 1's load of a and block 0's store to
    out touch different rows, so the checker (which compares the windows moved, not whole
    tensors) reports nothing."""
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit
    def add_rows(a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        with pl.at(level=pl.Level.AIV):
            for i in pl.range(2):
                t = pl.add(pl.load(a, [i * 32, 0], [32, 64]), pl.load(b, [i * 32, 0], [32, 64]))
                out = pl.store(t, [i * 32, 0], out)
        return out

    a = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)
    b = np.ones_like(a)
    want = a + b
    add_rows(a, b, a, config=RunConfig(engine="sim"))
    np.testing.assert_array_equal(a, want)

"""Mixed AIC+AIV tasks end to end, on both engines: a Group function's AIC and AIV functions
run at once on one cluster and pass tiles through the cross-core FIFOs. Results are checked
against numpy; the sim engine's trace shows the FIFO's order (a TPOP after its TPUSH, a
TPUSH into a recycled slot after the TFREE); deadlocks are reported, never hung."""

import json
import os
import pathlib
import threading

import mixed_programs as mp
import numpy as np
import pypto.language as pl
import pytest
from pypto import _core, ir
from pypto.runtime import RunConfig, run

rng = np.random.default_rng(6)


def randn(*shape):
    return rng.standard_normal(shape, dtype=np.float32)


def zeros(*shape):
    return np.zeros(shape, np.float32)


def run_with_timeout(fn, seconds=120):
    """Runs fn() on a thread; a run that does not return in time fails the test (no hang)."""
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


def relu(x):
    return np.maximum(x, 0)


def test_one_cube_one_vector_matmul_bias_relu():
    a, b, bias, out = randn(mp.M, mp.K), randn(mp.K, mp.N), randn(mp.M, mp.N), zeros(mp.M, mp.N)
    compiled = run_with_timeout(lambda: run(mp.OneCubeOneVector, a, b, bias, out, config=RunConfig()))
    np.testing.assert_allclose(out, relu(a @ b + bias), rtol=1e-5, atol=1e-4)
    # One task, a Group kernel whose parts are the AIC and the AIV function.
    host = compiled.host_program
    group = next(k for k in host.kernels if k.name == "fused")
    assert group.core == "Group"
    assert [(host.kernels[p.kernel].name, p.role) for p in group.parts] == [("cube", "AIC"), ("epilogue", "AIV 0")]
    assert compiled.last_run_stats["tasks"] == 1
    assert "pto.part[aic] @cube(%a, %b)" in compiled.pto()["fused"]
    assert "pto.part[aiv0] @epilogue(%bias, %out)" in compiled.pto()["fused"]
    assert 'pto.tpush ins(%acc' in compiled.pto()["cube"] and "// pipe FIX" in compiled.pto()["cube"]


def test_printed_program_parses_back():
    text = ir.print_program(mp.RoundTrip)
    assert "@pl.function(type=pl.FunctionType.Group)" in text
    assert "pl.tile.tpop_from_aiv([32, 64], dtype=pl.FP32, aiv=0)" in text
    assert "pl.tile.tfree_to_aic(t)" in text
    assert ir.structural_equal(pl.parse(text), mp.RoundTrip)


def test_one_cube_two_vectors_split_rows():
    a, b, bias, out = randn(mp.M, mp.K), randn(mp.K, mp.N), randn(mp.M, mp.N), zeros(mp.M, mp.N)
    compiled = run_with_timeout(lambda: run(mp.OneCubeTwoVectors, a, b, bias, out, config=RunConfig()))
    np.testing.assert_allclose(out, relu(a @ b + bias), rtol=1e-5, atol=1e-4)
    group = next(k for k in compiled.host_program.kernels if k.name == "fused")
    assert [p.role for p in group.parts] == ["AIC", "AIV 0", "AIV 1"]
    rows = [p.args[2] for p in group.parts[1:]]  # the constant first row of each half
    assert [(r.param, r.constant.i) for r in rows] == [(-1, 0), (-1, mp.H)]


def test_block_pipeline_with_fifo_back_pressure():
    a, b, bias, out = randn(mp.PM, mp.PK), randn(mp.PK, mp.N), randn(mp.PM, mp.N), zeros(mp.PM, mp.N)
    run_with_timeout(lambda: run(mp.BlockPipeline, a, b, bias, out, config=RunConfig()))
    np.testing.assert_allclose(out, relu(a @ b + bias), rtol=1e-5, atol=1e-4)


def test_vector_preprocessing_feeds_the_cube():
    x, w, out = randn(mp.XM, mp.XK), randn(mp.XK, mp.XN), zeros(mp.XM, mp.XN)
    run_with_timeout(lambda: run(mp.VectorFeedsCube, x, w, out, config=RunConfig()))
    np.testing.assert_allclose(out, (relu(x) * 0.5) @ w, rtol=1e-5, atol=1e-4)


def test_round_trip_and_a_dependent_task(tmp_path):
    x, w, bias, z = randn(mp.XM, mp.XK), randn(mp.XK, mp.XN), randn(mp.XM, mp.XN), zeros(mp.XM, mp.XN)
    lane = str(tmp_path / "swimlane.json")
    cfg = RunConfig(enable_chip_swimlane=1, trace_path=lane)
    run_with_timeout(lambda: run(mp.RoundTrip, x, w, bias, z, config=cfg))
    np.testing.assert_allclose(z, 2 * (relu(x) @ w + bias), rtol=1e-5, atol=1e-4)
    # The swimlane shows the mixed task on its cluster's three lanes, and the task that reads
    # its output waits for it (a read-after-write edge from the parts' footprints).
    events = [e for e in json.loads(pathlib.Path(lane).read_text())["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 0]
    fused = [e for e in events if e["name"] == "fused"]
    assert len(fused) == 3 and {e["args"]["kind"] for e in fused} == {"MIX"}
    c = fused[0]["args"]["vcore"]
    assert sorted(e["tid"] for e in fused) == sorted([c, 24 + 2 * c, 24 + 2 * c + 1])  # AIC c, AIV 2c, 2c+1 on a2a3sim
    double = next(e for e in events if e["name"] == "double")
    assert double["args"]["deps"] == [fused[0]["args"]["task"]]


def test_mixed_tasks_edges_follow_their_parts_footprints(tmp_path):
    """Two mixed tasks write disjoint row halves (their row is a scalar parameter of the Group
    function): no edge between them. The task that reads only the top half waits only for
    the first."""
    a, b, bias = randn(mp.M, mp.K), randn(mp.K, mp.N), randn(mp.M, mp.N)
    out, z = zeros(mp.M, mp.N), zeros(mp.H, mp.N)
    lane = str(tmp_path / "swimlane.json")
    run_with_timeout(lambda: run(mp.GroupPerHalf, a, b, bias, out, z,
                                 config=RunConfig(enable_chip_swimlane=1, trace_path=lane)))
    want = relu(a @ b + bias)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(z, 2 * want[:mp.H], rtol=1e-5, atol=1e-4)
    events = [e for e in json.loads(pathlib.Path(lane).read_text())["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 0]
    deps = {e["args"]["task"]: e["args"]["deps"] for e in events}
    assert deps == {0: [], 1: [], 2: [0]}


def test_deadlock_pop_without_push_names_the_parts():
    args = [randn(16, 16), zeros(16, 16), zeros(16, 16)]
    with pytest.raises(_core.PyptoError) as e:
        run_with_timeout(lambda: run(mp.PopWithoutPush, *args, config=RunConfig()))
    msg = str(e.value)
    assert "deadlock in mixed task 'fused'" in msg
    assert "AIC 'idle' has finished" in msg
    assert "AIV 0 'waiter' waits at TPOP (" in msg and "mixed_programs.py:" in msg
    assert "nothing has been pushed yet" in msg
    assert "AIC -> AIV 0 (depth 2): 0 pushed, 0 popped, 0 freed" in msg


def test_deadlock_push_without_free_beyond_the_depth():
    args = [randn(48, 16), zeros(48, 16)]
    with pytest.raises(_core.PyptoError) as e:
        run_with_timeout(lambda: run(mp.PushWithoutFree, *args, config=RunConfig()))
    msg = str(e.value)
    assert "AIC 'producer' waits at TPUSH (" in msg
    assert "all 2 slots are taken (0 pushed and not yet popped, 2 popped and not yet freed)" in msg
    assert "AIV 0 'hoarder' waits at TPOP (" in msg
    assert "AIC -> AIV 0 (depth 2): 2 pushed, 2 popped, 0 freed" in msg and "not freed" in msg
    assert "fix:" in msg


def events_of(trace):
    out = {}
    for e in json.loads(pathlib.Path(trace).read_text())["traceEvents"]:
        if e.get("ph") == "X":
            out.setdefault(e["name"], []).append(e)
    for v in out.values():
        v.sort(key=lambda e: e["args"]["start_cycle"])
    return out


def test_sim_timeline_pop_after_push_and_push_after_free(tmp_path):
    if os.environ.get("PYPTO_ENGINE") != "sim":
        pytest.skip("the modelled timeline is the sim engine's")
    a, b, bias, out = randn(mp.PM, mp.PK), randn(mp.PK, mp.N), randn(mp.PM, mp.N), zeros(mp.PM, mp.N)
    trace = str(tmp_path / "trace.json")
    compiled = run(mp.BlockPipeline, a, b, bias, out, config=RunConfig(engine="sim", trace_path=trace))
    ev = events_of(trace)
    pushes, pops, frees = ev["TPUSH"], ev["TPOP"], ev["TFREE"]
    assert len(pushes) == len(pops) == len(frees) == mp.RB
    # The parts run on virtual cores of their own: the AIC part on one, the AIV part on another.
    assert {e["pid"] for e in pushes} != {e["pid"] for e in pops}
    for n in range(mp.RB):
        # The n-th TPOP starts no earlier than the n-th TPUSH ended ...
        assert pops[n]["args"]["start_cycle"] >= pushes[n]["args"]["end_cycle"]
        # ... and with 2 slots, push n reuses the slot freed by the (n-2)-th TFREE.
        if n >= 2:
            assert pushes[n]["args"]["start_cycle"] >= frees[n - 2]["args"]["end_cycle"]
    # The task's modelled cycles are the later part's end.
    ends = [e["args"]["end_cycle"] for es in ev.values() for e in es]
    assert compiled.modelled_cycles == pytest.approx(max(ends))


def test_sim_timeline_back_pressure_of_a_slow_consumer(tmp_path):
    """A producer that could run ahead waits for the consumer: with 2 slots its third TPUSH
    starts exactly when the first TFREE ends (and the results are still exact)."""
    if os.environ.get("PYPTO_ENGINE") != "sim":
        pytest.skip("the modelled timeline is the sim engine's")
    a, out = randn(mp.SB * mp.SR, mp.SC), zeros(mp.SB * mp.SR, mp.SC)
    trace = str(tmp_path / "trace.json")
    run(mp.SlowConsumer, a, out, config=RunConfig(engine="sim", trace_path=trace))
    np.testing.assert_array_equal(out, a)
    ev = events_of(trace)
    pushes, frees = ev["TPUSH"], ev["TFREE"]
    assert len(pushes) == len(frees) == mp.SB
    for n in range(2, mp.SB):
        assert pushes[n]["args"]["start_cycle"] == pytest.approx(frees[n - 2]["args"]["end_cycle"])
    # Without the wait the producer would have pushed far sooner: its loads are done by then.
    loads = ev["TLOAD"]
    aic_loads = [e for e in loads if e["pid"] == pushes[0]["pid"]]
    assert aic_loads[2]["args"]["end_cycle"] < pushes[2]["args"]["start_cycle"]


def test_insert_sync_orders_the_fifo_and_the_sim_finds_no_race():
    """Compiled parts run race-free on the sim engine (its race checker raises otherwise); the
    TFREE waits for the vector pipe's last read of the popped tile, the TPUSH of the Acc
    result for the cube."""
    if os.environ.get("PYPTO_ENGINE") != "sim":
        pytest.skip("the race checker is the sim engine's")
    a, b, bias, out = randn(mp.PM, mp.PK), randn(mp.PK, mp.N), randn(mp.PM, mp.N), zeros(mp.PM, mp.N)
    compiled = run(mp.BlockPipeline, a, b, bias, out, config=RunConfig(engine="sim"))
    host = compiled.host_program
    vec = next(k for k in host.kernels if k.name == "epilogue")
    cube = next(k for k in host.kernels if k.name == "cube")

    def waits_before(kernel, mnemonic):
        code = list(kernel.code)
        pc = next(i for i, x in enumerate(code) if x.mnemonic == mnemonic)
        waits = []
        for x in reversed(code[:pc]):
            if x.mnemonic != "WAIT_FLAG":
                break
            waits.append((x.attrs["src"], x.attrs["dst"]))
        return waits

    assert ("V", "S") in waits_before(vec, "TFREE")
    assert ("M", "FIX") in waits_before(cube, "TPUSH")
    assert _core.kernel_pipes(cube)[[x.mnemonic for x in cube.code].index("TPUSH")] == "FIX"


def test_a_missing_flag_before_tfree_is_a_race():
    """Without the flag InsertSync puts before TFREE, the sim engine reports the race: TFREE
    (pipe S) writes the popped tile while the vector pipe may still read it."""
    a, b, bias, out = randn(mp.M, mp.K), randn(mp.K, mp.N), randn(mp.M, mp.N), zeros(mp.M, mp.N)
    compiled = run(mp.OneCubeOneVector, a, b, bias, out, config=RunConfig(engine="sim"))
    host = compiled.host_program
    vec_index = next(i for i, k in enumerate(host.kernels) if k.name == "epilogue")
    kernels = list(host.kernels)
    vec = kernels[vec_index]
    vec.code = [x for x in vec.code if not (x.mnemonic in ("SET_FLAG", "WAIT_FLAG") and x.attrs["dst"] == "S")]
    kernels[vec_index] = vec
    host.kernels = kernels
    args = [(x.ctypes.data, "FP32", list(x.shape), [st // 4 for st in x.strides], n)
            for x, n in ((a, "a"), (b, "b"), (bias, "bias"), (out, "out"))]
    with pytest.raises(_core.PyptoError, match=r"race in kernel 'epilogue': TFREE .* on pipe S writes tile 't'"):
        run_with_timeout(lambda: _core.run_host_program(host, args, "a2a3sim", "sim", 1))
    # host_program was a copy: the compiled program (cached for later runs of the class) kept
    # its flags. (Editing it in place once made a later test's run report this race.)
    out[:] = 0
    again = run(mp.OneCubeOneVector, a, b, bias, out, config=RunConfig(engine="sim"))
    assert again.compiled is compiled.compiled  # run() returns a RunResult standing for the cached program
    np.testing.assert_allclose(out, relu(a @ b + bias), rtol=1e-5, atol=1e-4)

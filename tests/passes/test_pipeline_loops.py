"""PipelineLoops: `pl.pipeline(n, stage=k)` loops become k copies per iteration with one
buffer set per copy (pass text in, pass text out), the results equal numpy for every trip
count (constant and run-time, with and without leftover iterations, on both engines), the
modelled timeline overlaps MTE2 with V only when the loop is pipelined, and a pipeline whose
buffer sets do not fit fails with the bytes it needs."""

import json

import numpy as np
import pypto.language as pl
import pytest
from pass_text import check_pass, run_pass
from pypto import _core
from pypto.runtime import RunConfig, jit_compile

T = "pl.Tensor[[320, 128], pl.FP32]"


def vec(addr):
    return f"pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec, pl.Addr({addr})]"


def test_two_stages_get_two_buffer_sets_and_the_leftover_iteration_follows():
    # 5 iterations, stage=2: a loop over 2 groups of 2 copies, then iteration 4 on its own.
    # Copy 0 keeps PlanMemory's addresses (0, 32768); copy 1 takes the region above them.
    check_pass("PipelineLoops", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, c: pl.Out[{T}]) -> {T}:
                for i, (c_1,) in pl.pipeline(0, 5, 1, init_values=(c,), stage=2):
                    t: {vec(0)} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    e: {vec(32768)} = pl.tile.exp(t)
                    c_2: {T} = pl.tile.store(e, [i * 64, 0], c_1)
                    c_3 = pl.yield_(c_2)
                return c_3
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, c: pl.Out[{T}]) -> {T}:
                for i, (c_1,) in pl.range(0, 4, 2, init_values=(c,)):
                    t: {vec(0)} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    e: {vec(32768)} = pl.tile.exp(t)
                    c_2: {T} = pl.tile.store(e, [i * 64, 0], c_1)
                    t_1: {vec(65536)} = pl.tile.load(a, [(i + 1) * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    e_1: {vec(98304)} = pl.tile.exp(t_1)
                    c_2_1: {T} = pl.tile.store(e_1, [(i + 1) * 64, 0], c_2)
                    c_3 = pl.yield_(c_2_1)
                t_2: {vec(0)} = pl.tile.load(a, [256, 0], [64, 128], target_memory=pl.Mem.Vec)
                e_2: {vec(32768)} = pl.tile.exp(t_2)
                c_2_2: {T} = pl.tile.store(e_2, [256, 0], c_3)
                return c_2_2
        """)


def test_loop_carried_tiles_keep_one_address_in_every_copy():
    # acc is carried: its yield (add) shares acc's address 0 in both copies; t moves.
    r = run_pass("PipelineLoops", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, c: pl.Out[{T}]) -> {T}:
                z: {vec(0)} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                for i, (acc,) in pl.pipeline(0, 4, 1, init_values=(z,), stage=2):
                    t: {vec(32768)} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    add: {vec(0)} = pl.tile.add(acc, t)
                    acc_1 = pl.yield_(add)
                c_1: {T} = pl.tile.store(acc_1, [0, 0], c)
                return c_1
        """)
    text = "\n".join(line.strip() for line in str(r).splitlines())
    assert f"t: {vec(32768)}" in text and f"t_1: {vec(65536)}" in text
    assert f"add: {vec(0)}" in text and f"add_1: {vec(0)}" in text
    assert "pl.range(0, 4, 2" in text


def test_stage_one_or_a_single_iteration_stays_a_plain_loop():
    for head in ("pl.pipeline(0, 4, 1, init_values=(c,), stage=1)", "pl.pipeline(0, 1, 1, init_values=(c,), stage=2)"):
        r = run_pass("PipelineLoops", f"""
            @pl.program
            class p:
                @pl.function(type=pl.FunctionType.InCore)
                def k(self, a: {T}, c: pl.Out[{T}]) -> {T}:
                    for i, (c_1,) in {head}:
                        t: {vec(0)} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                        c_2: {T} = pl.tile.store(t, [i * 64, 0], c_1)
                        c_3 = pl.yield_(c_2)
                    return c_3
            """)
        text = str(r)
        assert "pl.pipeline" not in text and text.count("pl.tile.load") == 1


def test_buffer_sets_that_do_not_fit_fail_with_the_bytes_needed():
    # 4 stages of two 32 KiB tiles = 256 KiB > 192 KiB of UB on a2a3.
    with pytest.raises(_core.PyptoError) as err:
        run_pass("PipelineLoops", f"""
            @pl.program
            class p:
                @pl.function(type=pl.FunctionType.InCore)
                def k(self, a: {T}, c: pl.Out[{T}]) -> {T}:
                    for i, (c_1,) in pl.pipeline(0, 5, 1, init_values=(c,), stage=4):
                        t: {vec(0)} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                        e: {vec(32768)} = pl.tile.exp(t)
                        c_2: {T} = pl.tile.store(e, [i * 64, 0], c_1)
                        c_3 = pl.yield_(c_2)
                    return c_3
            """)
    msg = str(err.value)
    assert "pl.pipeline(stage=4)" in msg and "262144 bytes of Vec (UB)" in msg and "196608" in msg
    assert "stage=2" in msg


def test_a_step_known_only_at_run_time_is_rejected():
    with pytest.raises(_core.PyptoError, match="positive step known at compile time"):
        run_pass("PipelineLoops", f"""
            @pl.program
            class p:
                @pl.function(type=pl.FunctionType.InCore)
                def k(self, a: {T}, c: pl.Out[{T}], s: pl.Scalar[pl.INDEX]) -> {T}:
                    for i, (c_1,) in pl.pipeline(0, 5, s, init_values=(c,), stage=2):
                        t: {vec(0)} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                        c_2: {T} = pl.tile.store(t, [i * 64, 0], c_1)
                        c_3 = pl.yield_(c_2)
                    return c_3
            """)


def make_softmax(blocks, stage, pipelined=True):
    if not pipelined:
        @pl.jit
        def softmax_plain(x: pl.Tensor, y: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                for i in pl.range(blocks):
                    t = pl.load(x, [i * 32, 0], [32, 64])
                    e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
                    y = pl.store(pl.row_expand_div(e, pl.row_sum(e)), [i * 32, 0], y)
            return y

        return softmax_plain

    @pl.jit
    def softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.pipeline(blocks, stage=stage):
                t = pl.load(x, [i * 32, 0], [32, 64])
                e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
                y = pl.store(pl.row_expand_div(e, pl.row_sum(e)), [i * 32, 0], y)
        return y

    return softmax


def softmax_ref(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("engine_name", ["native", "sim"])
@pytest.mark.parametrize("blocks,stage", [(1, 2), (2, 2), (5, 2), (6, 3), (7, 3), (4, 4)])
def test_pipelined_softmax_matches_numpy(engine_name, blocks, stage):
    x = np.random.default_rng(blocks * 10 + stage).standard_normal((blocks * 32, 64)).astype(np.float32) * 3
    y = np.zeros_like(x)
    make_softmax(blocks, stage)(x, y, config=RunConfig(engine=engine_name))
    np.testing.assert_allclose(y, softmax_ref(x), rtol=1e-5, atol=1e-6)


@pl.jit
def scaled_rows(x: pl.Tensor, y: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.pipeline(n, stage=2):
            t = pl.load(x, [i * 16, 0], [16, 32])
            y = pl.store(pl.muls(pl.exp(t), 2.0), [i * 16, 0], y)
    return y


@pytest.mark.parametrize("engine_name", ["native", "sim"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5])
def test_run_time_trip_count_runs_whole_groups_then_the_rest(engine_name, n):
    x = np.random.default_rng(n).standard_normal((96, 32)).astype(np.float32)
    y = np.zeros_like(x)
    scaled_rows(x, y, n, config=RunConfig(engine=engine_name))
    want = np.zeros_like(x)
    want[: n * 16] = 2 * np.exp(x[: n * 16])
    np.testing.assert_allclose(y, want, rtol=1e-6)


def pipe_overlap(path, p, q):
    ev = [e for e in json.load(open(path))["traceEvents"] if e["ph"] == "X"]
    names = {}
    for e in json.load(open(path))["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"]
    by = {}
    for e in ev:
        by.setdefault(names[e["tid"]], []).append((e["args"]["start_cycle"], e["args"]["end_cycle"]))
    return sum(max(0, min(b, d) - max(a, c)) for a, b in by.get(p, []) for c, d in by.get(q, []))


def test_only_the_pipelined_loop_overlaps_loads_with_vector_compute(tmp_path):
    x = np.random.default_rng(3).standard_normal((256, 64)).astype(np.float32)
    cycles = {}
    for pipelined in (False, True):
        f = make_softmax(8, 2, pipelined)
        y = np.zeros_like(x)
        path = str(tmp_path / f"t{pipelined}.json")
        compiled = jit_compile(f, (x, y))
        compiled(x, y, config=RunConfig(engine="sim", trace_path=path, num_workers=1))
        np.testing.assert_allclose(y, softmax_ref(x), rtol=1e-5, atol=1e-6)
        cycles[pipelined] = compiled.modelled_cycles
        overlap = pipe_overlap(path, "MTE2", "V")
        if pipelined:
            assert overlap > 0 and pipe_overlap(path, "V", "MTE3") > 0
        else:
            assert overlap == 0  # one tile set: the next load waits for the vector unit
    assert cycles[True] < cycles[False]

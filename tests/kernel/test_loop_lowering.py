"""Loop lowering of lane kernels and pipe flags.

Repeating chunks of the grid become one loop over a base register; the partial last chunk
and chunks that differ stay straight-line. Results must equal numpy exactly (the kernels
below are elementwise fp32 arithmetic, one rounding per operation, as numpy's float32),
for grid sizes that are not multiples of the chunk and on both engines. InsertSync gives
lane kernels the pipe flags, so the sim engine's race checker passes them; the debugger,
the timeline and the profiler count lane-program instructions, not flags."""

import numpy as np
import pytest

import pypto as pto
import pypto.debug as dbg
from pypto._core import kernel as _k

ENGINES = ["sim", "native"]


@pto.kernel
def vector_add(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)
        pto.fma(o + i, a_val, b_val, 0.0)


@pto.kernel
def axpb(x, y, o, alpha, n):
    i = pto.get_global_id()
    if i < n:
        v = pto.load(x + i) * alpha - pto.load(y + i)
        pto.mad(o + i, v, 0.5, 2.0)


@pto.kernel
def per_block(x, o):
    # block and lane ids: one block per tile row
    j = pto.get_block_id() * 128 + pto.get_lane_id()
    pto.store(o + j, pto.load(x + j) + 1.0)


@pto.kernel
def shift_in_place(a, n):
    # reads a neighbour that another chunk writes: chunks must run in order
    i = pto.get_global_id()
    if i < n - 1:
        pto.store(a + i, pto.load(a + i + 1))


def _dev(*arrays):
    out = []
    for x in arrays:
        d = pto.alloc_tensor(x.nbytes)
        pto.memcpy_h2d(d, x)
        out.append(d)
    return out


def _get(d, n):
    out = np.zeros(n, np.float32)
    pto.memcpy_d2h(out, d)
    return out


def _rand(n, seed):
    return np.random.default_rng(seed).random(n, dtype=np.float32)


# (n, block, grid): one chunk; several chunks plus a partial one; a grid much larger than n
# (chunks with no active lane); n a multiple of the chunk.
SHAPES = [(1000, 256, 4), (3 * 16384 + 1000, 256, 197), (40000, 128, 1000), (2 * 16384, 256, 128)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("n,block,grid", SHAPES)
def test_vector_add_loop_matches_numpy(engine, n, block, grid):
    a, b = _rand(n, 1), _rand(n, 2)
    d_a, d_b = _dev(a, b)
    d_o = pto.alloc_tensor(max(n, grid * block) * 4)
    pto.launch(vector_add, grid=(grid, 1, 1), block=(block, 1, 1), args=(d_a, d_b, d_o, n), engine=engine)
    out = _get(d_o, max(n, grid * block))
    np.testing.assert_array_equal(out[:n], a + b)
    assert not out[n:].any()  # lanes past n stored nothing


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("chunk_blocks", [1, 3, 7])
def test_chunk_width_not_dividing_the_grid(engine, chunk_blocks):
    n, block, grid = 5000, 64, 80  # 5120 lanes: 3 and 7 blocks per chunk leave a partial chunk
    x, y = _rand(n, 3), _rand(n, 4)
    d_x, d_y = _dev(x, y)
    d_o = pto.alloc_tensor(n * 4)
    low = _k.lower(axpb.program, [d_x._buf, d_y._buf, d_o._buf, 1.25, n], grid, block, "a2a3sim", chunk_blocks)
    assert low.chunk_lanes == chunk_blocks * block
    # the full chunks are one loop (7 instructions), the partial chunk 7 more; not 80 copies
    assert low.num_loops == 1 and low.num_instrs == 14
    low.run("a2a3sim", engine)
    v = x * np.float32(1.25) - y
    np.testing.assert_array_equal(_get(d_o, n), v * np.float32(0.5) + np.float32(2.0))


@pytest.mark.parametrize("engine", ENGINES)
def test_block_and_lane_ids_in_loops(engine):
    grid, block = 37, 128
    n = grid * block
    x = _rand(n, 5)
    d_x, = _dev(x)
    d_o = pto.alloc_tensor(n * 4)
    pto.launch(per_block, grid=(grid, 1, 1), block=(block, 1, 1), args=(d_x, d_o), engine=engine)
    np.testing.assert_array_equal(_get(d_o, n), x + np.float32(1.0))
    low = _k.lower(per_block.program, [d_x._buf, d_o._buf], grid, block)
    assert low.chunk_lanes == block and low.num_loops == 1 and low.independent_chunks


@pytest.mark.parametrize("engine", ENGINES)
def test_dependent_chunks_run_in_order(engine):
    n = 5 * 16384 + 77
    a = _rand(n, 6)
    d_a, = _dev(a)
    low = _k.lower(shift_in_place.program, [d_a._buf, n], (n + 255) // 256, 256)
    assert not low.independent_chunks  # 'a' is read at i + 1 and written at i
    pto.launch(shift_in_place, grid=((n + 255) // 256, 1, 1), block=(256, 1, 1), args=(d_a, n), engine=engine)
    expect = a.copy()
    expect[:-1] = a[1:]
    np.testing.assert_array_equal(_get(d_a, n), expect)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cores", [1, 2, 3])
def test_independent_chunks_on_several_cores(engine, cores):
    n = 9 * 16384 + 5
    a, b = _rand(n, 7), _rand(n, 8)
    d_a, d_b = _dev(a, b)
    d_o = pto.alloc_tensor(n * 4)
    grid = (n + 255) // 256
    low = _k.lower(vector_add.program, [d_a._buf, d_b._buf, d_o._buf, n], grid, 256)
    assert low.chunk_range and low.independent_chunks
    low.run("a2a3sim", engine, cores)
    np.testing.assert_array_equal(_get(d_o, n), a + b)


def test_lane_kernels_get_pipe_flags_and_run_race_free_on_sim():
    n = 3 * 16384 + 100
    x, y = _rand(n, 9), _rand(n, 10)
    d_x, d_y = _dev(x, y)
    d_o = pto.alloc_tensor(n * 4)
    grid = (n + 255) // 256
    for k, args, expect in [
        (vector_add, (d_x, d_y, d_o, n), x + y),
        (axpb, (d_x, d_y, d_o, 3.0, n), (x * np.float32(3.0) - y) * np.float32(0.5) + np.float32(2.0)),
    ]:
        low = _k.lower(k.program, [getattr(a, "_buf", a) for a in args], grid, 256)
        mnemonics = low.code_mnemonics()
        assert "SET_FLAG" in mnemonics and "WAIT_FLAG" in mnemonics and low.num_sync > 0
        low.run("a2a3sim", "sim", 1)  # the sim engine checks every cross-pipe access; a race raises
        np.testing.assert_array_equal(_get(d_o, n), expect)
        pto.launch(k, grid=(grid, 1, 1), block=(256, 1, 1), args=args, engine="sim")
        pto.sync()
        np.testing.assert_array_equal(_get(d_o, n), expect)


def test_debugger_and_profile_count_lane_instructions_not_flags(capsys):
    n, grid, block = 1000, 4, 256
    a, b = _rand(n, 11), _rand(n, 12)
    d_a, d_b = _dev(a, b)
    d_o = pto.alloc_tensor(n * 4)
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, n), grid=grid, block=block)
    assert ctx.lowered.num_sync > 0
    assert ctx.lowered.num_instrs == 16  # 4 blocks x (LOAD, LOAD, ADD, STORE)
    ctx.add_breakpoint(13)  # block 3's first load
    assert ctx.cont() == 13
    lines = ctx.step(quiet=True)
    assert lines[0].startswith("#13 TLOAD") and "block 3" in lines[0]
    assert ctx.cont() is None and ctx.done
    timeline = ctx.get_instruction_timeline()
    assert [e.index for e in timeline] == list(range(16))
    assert {e.inst for e in timeline} == {"LOAD", "FMA", "STORE"}
    np.testing.assert_array_equal(_get(d_o, n), a + b)

    big = 3 * 16384 + 100
    x, y = _rand(big, 13), _rand(big, 14)
    d_x, d_y = _dev(x, y)
    d_z = pto.alloc_tensor(big * 4)
    prof = pto.profile(vector_add, args=(d_x, d_y, d_z, big), grid=(big + 255) // 256, block=256)
    chunks = 4  # 3 full chunks of 16384 lanes (one loop) and the tail
    assert prof.classes["LOAD"]["count"] == 2 * chunks and prof.classes["STORE"]["count"] == chunks
    assert "SYNC" not in prof.classes and prof.num_instrs == 4 * chunks and prof.num_sync > 0
    assert "set_flag/wait_flag" in prof.cycle_breakdown()
    np.testing.assert_array_equal(_get(d_z, big), x + y)


@pto.kernel
def two_bounds(x, o, n, m):
    i = pto.get_global_id()
    if i < n:
        v = pto.load(x + i + 3)
        if i < m:
            pto.store(o + i, v * 2.0)
        pto.store(o + i + n, v + 1.0)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("chunk_blocks", [0, 1, 5])
def test_phases_of_nested_bounds(engine, chunk_blocks):
    # chunks where both ifs are full, where `i < m` cuts the row, where only `i < n` holds,
    # where it cuts, and past n: each phase is its own loop or straight chunk
    n, m, block = 50000, 30011, 128
    grid = (n + 9000) // block
    x = _rand(n + 3, 15)
    d_x, = _dev(x)
    d_o = pto.alloc_tensor(2 * n * 4)
    low = _k.lower(two_bounds.program, [d_x._buf, d_o._buf, n, m], grid, block, "a2a3sim", chunk_blocks)
    assert not low.independent_chunks  # 'o' is written at i and at i + n
    assert low.num_instrs <= 4 * 7
    low.run("a2a3sim", engine)
    expect = np.zeros(2 * n, np.float32)
    expect[:m] = x[3:m + 3] * np.float32(2.0)
    expect[n:] = x[3:n + 3] + np.float32(1.0)
    np.testing.assert_array_equal(_get(d_o, 2 * n), expect)

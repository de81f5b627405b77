"""The task pool keeps its task slots, with their argument and dependency lists, from one run
to the next, and the host refills one argument list per call (src/runtime/task_pool.cpp
TaskStore / stage, runtime.cpp call_args): a warm program allocates nothing per task. These
programs make the recycled lists change shape from call to call (kernels with more and fewer
parameters, a tensor parameter where the slot last held a scalar, SPMD blocks, predicates,
created tensors) and check every run against numpy, on both engines, with a ring small
enough that the host waits for the workers in the middle of its batches."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig

ENGINES = ["native", "sim"]
R, C = 64, 32


@pl.jit.incore
def scale_rows(x: pl.Tensor, y: pl.Out[pl.Tensor], r0: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.FP32]):
    y = pl.store(pl.muls(pl.load(x, [r0, 0], [8, C]), s), [r0, 0], y)
    return y


@pl.jit.incore
def add_rows(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.add(pl.load(a, [0, 0], [8, C]), pl.load(b, [0, 0], [8, C])), [0, 0], y)
    return y


@pl.jit
def mixed_calls(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor], s: pl.Scalar[pl.FP32]):
    # Calls alternate between a kernel of four parameters (two scalars) and one of three
    # tensors, so a recycled argument list grows, shrinks and changes kinds in place.
    for i in pl.range(R // 8):
        y = scale_rows(x, y, i * 8, s)
        add_rows(y[i * 8:i * 8 + 8, :], x[i * 8:i * 8 + 8, :], z[i * 8:i * 8 + 8, :])
    return y, z


@pl.jit
def bands(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for k in pl.range(3):
        with pl.spmd(4):
            b = pl.tile.get_block_idx()
            rows = x[b * 16:b * 16 + 16, :]
            out[b * 16:b * 16 + 16, :] = pl.add(pl.muls(rows, 2.0), out[b * 16:b * 16 + 16, :])
    return out


@pl.jit
def gated(x: pl.Tensor, flag: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(2, predicate=(flag[0, 0] > 0)):
        i = pl.get_block_idx()
        out = pl.store(pl.muls(pl.load(x, [i * 32, 0], [32, C]), 3.0), [i * 32, 0], out)
    return out


@pl.jit.incore
def double_into(x: pl.Tensor, t: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
    t = pl.store(pl.muls(pl.load(x, [i * 8, 0], [8, C]), 2.0), [0, 0], t)
    return t


@pl.jit.incore
def shift_into(t: pl.Tensor, out: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
    out = pl.store(pl.adds(pl.load(t, [0, 0], [8, C]), 1.0), [i * 8, 0], out)
    return out


@pl.jit
def through_created(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(R // 8):
        t = pl.create_tensor([8, C], dtype=pl.FP32)
        t = double_into(x, t, i)
        out = shift_into(t, out, i)
    return out


def data(seed, shape=(R, C)):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ring", [0, 2, 1024])
def test_calls_of_changing_signatures_reuse_their_slots(engine, ring):
    cfg = RunConfig(engine=engine, ring_size=ring)
    for seed, s in [(1, 2.0), (2, -0.5), (3, 4.0)]:
        x = data(seed)
        y, z = np.zeros_like(x), np.full_like(x, np.nan)
        mixed_calls(x, y, z, s, config=cfg)
        np.testing.assert_allclose(y, x * np.float32(s), rtol=1e-6)
        np.testing.assert_allclose(z, x * np.float32(s) + x, rtol=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_spmd_blocks_of_every_run_get_their_own_block_index(engine):
    cfg = RunConfig(engine=engine, ring_size=3)
    for seed in (4, 5):
        x = data(seed)
        out = np.ones_like(x)
        bands(x, out, config=cfg)
        want = np.ones_like(x)
        for _ in range(3):
            want = x * np.float32(2) + want  # the program's order, in fp32
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_recycled_predicate_is_the_current_runs(engine):
    x = data(6)
    for flag_value in (1, 0, 1, 0):
        out = np.zeros_like(x)
        gated(x, np.full((1, 8), flag_value, np.int32), out, config=RunConfig(engine=engine))
        np.testing.assert_allclose(out, 3 * x if flag_value else np.zeros_like(x), rtol=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_created_tensors_are_released_by_recycled_tasks(engine):
    from pypto.runtime import jit_compile

    cfg = RunConfig(engine=engine, ring_size=4)
    for seed in (7, 8, 9):
        x = data(seed)
        out = np.zeros_like(x)
        through_created(x, out, config=cfg)
        np.testing.assert_allclose(out, 2 * x + 1, rtol=1e-6)
    stats = jit_compile(through_created, (x, out), cfg).last_run_stats
    assert stats["tensors_created"] == R // 8
    assert stats["tensors_freed_early"] == R // 8


def test_a_long_chain_after_a_larger_program_and_a_smaller_one():
    # The pool of the process is shared: slots that held another program's tasks (more
    # arguments, longer lists) serve this one, and the other way round.
    cfg = RunConfig(ring_size=16)
    x = data(10)
    for _ in range(2):
        out = np.zeros_like(x)
        through_created(x, out, config=cfg)
        np.testing.assert_allclose(out, 2 * x + 1, rtol=1e-6)
        y, z = np.zeros_like(x), np.zeros_like(x)
        mixed_calls(x, y, z, 1.5, config=cfg)
        np.testing.assert_allclose(z, x * np.float32(1.5) + x, rtol=1e-6)

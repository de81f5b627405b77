"""while loops, break and continue compiled and run (on each engine, see conftest.py) against
numpy: kernels looping over row blocks until a run-time count, stopping at a run-time limit,
skipping blocks, and orchestration loops that submit tasks until a run-time condition."""

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

rng = np.random.default_rng(29)
ROWS, COLS, BLOCK = 128, 32, 16


@pl.jit
def rows_until_count(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    """out block i = 2 * x block i for i < n; out's last block = sum of those blocks."""
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([BLOCK, COLS], dtype=pl.FP32, value=0.0)
        i = 0
        while i < n:
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, COLS])
            out = pl.store(pl.add(t, t), [i * BLOCK, 0], out)
            acc = pl.add(acc, t)
            i = i + 1
        out = pl.store(acc, [ROWS - BLOCK, 0], out)
    return out


def test_kernel_while_over_row_blocks_until_a_run_time_count():
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    for n in (0, 3, 7):
        out = np.zeros_like(x)
        rows_until_count(x, n, out, config=RunConfig())
        want = np.zeros_like(x)
        want[:n * BLOCK] = 2 * x[:n * BLOCK]
        want[ROWS - BLOCK:] = x[:n * BLOCK].reshape(n, BLOCK, COLS).sum(axis=0) if n else 0
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pl.jit
def blocks_until_limit(x: pl.Tensor, w: pl.Tensor, limit: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    """Copies block i scaled by w[i] while the running sum of w stays within `limit`."""
    with pl.at(level=pl.Level.CORE_GROUP):
        s = 0.0
        for i in pl.range(ROWS // BLOCK):
            s = s + pl.tensor.read(w, [i])
            if s > limit:
                break
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, COLS])
            out = pl.store(pl.muls(t, pl.tensor.read(w, [i])), [i * BLOCK, 0], out)
    return out


def test_break_when_a_scalar_reaches_a_run_time_limit():
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    w = np.array([1.0, 2.0, 0.5, 3.0, 1.0, 4.0, 1.0, 1.0], np.float32)
    for limit in (0.5, 3.5, 7.0, 100.0):
        out = np.zeros_like(x)
        blocks_until_limit(x, w, limit, out, config=RunConfig())
        want = np.zeros_like(x)
        total = 0.0
        for i in range(ROWS // BLOCK):  # the loop, written in plain Python
            total += float(w[i])
            if total > limit:
                break
            want[i * BLOCK:(i + 1) * BLOCK] = x[i * BLOCK:(i + 1) * BLOCK] * w[i]
        np.testing.assert_allclose(out, want, rtol=1e-6)


@pl.jit
def even_blocks(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """Negates the even blocks and sums them into the last block; odd blocks are skipped."""
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([BLOCK, COLS], dtype=pl.FP32, value=0.0)
        for i in pl.range(ROWS // BLOCK - 1):
            if i % 2 == 1:
                continue
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, COLS])
            acc = pl.add(acc, t)
            out = pl.store(pl.neg(t), [i * BLOCK, 0], out)
        out = pl.store(acc, [ROWS - BLOCK, 0], out)
    return out


def test_continue_skips_odd_blocks():
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    out = np.zeros_like(x)
    even_blocks(x, out, config=RunConfig())
    blocks = x.reshape(ROWS // BLOCK, BLOCK, COLS)
    want = np.zeros_like(blocks)
    want[0:7:2] = -blocks[0:7:2]
    want[7] = blocks[0:7:2].sum(axis=0)
    np.testing.assert_allclose(out, want.reshape(ROWS, COLS), rtol=1e-5, atol=1e-6)


@pl.jit
def halve_until_small(x: pl.Tensor, eps: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    """Halves a tile until its first element is at most eps, capped at 40 rounds; stores the
    tile and, as the second block, the number of rounds."""
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [BLOCK, COLS])
        v = pl.tensor.read(x, [0, 0])
        rounds = 0
        while True:
            if v <= eps:
                break
            if rounds == 40:
                break
            t = pl.muls(t, 0.5)
            v = v * 0.5
            rounds = rounds + 1
        out = pl.store(t, [0, 0], out)
        marks = pl.full([BLOCK, COLS], dtype=pl.FP32, value=0.0)
        out = pl.store(pl.adds(marks, rounds * 1.0), [BLOCK, 0], out)
    return out


def test_while_true_with_break_at_a_run_time_limit():
    x = np.abs(rng.standard_normal((2 * BLOCK, COLS))).astype(np.float32) + 1.0
    for eps, x00 in ((0.01, None), (1e-9, 3e5)):
        if x00 is not None:
            x[0, 0] = x00  # needs more than 40 halvings: the cap ends the loop
        out = np.zeros_like(x)
        halve_until_small(x, eps, out, config=RunConfig())
        v, rounds = float(x[0, 0]), 0
        while v > eps and rounds < 40:
            v, rounds = v * 0.5, rounds + 1
        np.testing.assert_allclose(out[:BLOCK], x[:BLOCK] * 0.5 ** rounds, rtol=1e-6)
        np.testing.assert_array_equal(out[BLOCK:], np.full((BLOCK, COLS), rounds, np.float32))
    assert rounds == 40


@pl.jit.incore
def double_block(x: pl.Tensor, i: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    t = pl.load(x, [i * BLOCK, 0], [BLOCK, COLS])
    out = pl.store(pl.muls(t, 2.0), [i * BLOCK, 0], out)
    return out


@pl.jit
def submit_while(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    i = 0
    while i < n:
        out = double_block(x, i, out)
        i = i + 1
    return out


def test_orchestration_while_submits_one_task_per_iteration():
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    for n in (0, 5, 8):
        out = np.zeros_like(x)
        compiled = submit_while(x, n, out, config=RunConfig())
        want = np.zeros_like(x)
        want[:n * BLOCK] = 2 * x[:n * BLOCK]
        np.testing.assert_array_equal(out, want)
    assert compiled is not None


@pl.jit.incore
def halve(src: pl.Tensor, dst: pl.Out[pl.Tensor]):
    t = pl.load(src, [0, 0], [BLOCK, COLS])
    dst = pl.store(pl.muls(t, 0.5), [0, 0], dst)
    return dst


@pl.jit
def halve_until(x: pl.Tensor, eps: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    """Orchestration loop whose condition reads what the last task wrote: the host waits
    for the tasks before each test, as it does for any pl.tensor.read."""
    tmp = pl.create_tensor([BLOCK, COLS], dtype=pl.FP32)
    out = halve(x, out)
    steps = 1
    while pl.tensor.read(out, [0, 0]) > eps:
        tmp = halve(out, tmp)
        out = halve(tmp, out)
        steps = steps + 2
        if steps > 60:
            break
    return out


def test_orchestration_while_on_a_value_the_tasks_compute():
    x = np.full((BLOCK, COLS), 5.0, np.float32) + rng.uniform(0, 1, (BLOCK, COLS)).astype(np.float32)
    out = np.zeros_like(x)
    halve_until(x, 0.1, out, config=RunConfig())
    v, steps = float(x[0, 0]) * 0.5, 1
    while v > 0.1 and steps <= 60:
        v, steps = v * 0.25, steps + 2
    np.testing.assert_allclose(out, x * 0.5 ** steps, rtol=1e-6)


def test_pto_text_has_scf_while(tmp_path):
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    out = np.zeros_like(x)
    rows_until_count(x, 2, out, config=RunConfig(save_kernels=True, save_kernels_dir=str(tmp_path)))
    text = "\n".join(p.read_text() for p in tmp_path.rglob("*.pto"))
    assert "scf.while {" in text and "scf.condition %r" in text and "} do {" in text


@pl.jit
def endless(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = 0
        while i != n:
            i = i + 2
        out = pl.store(pl.load(x, [0, 0], [BLOCK, COLS]), [0, 0], out)
    return out


def test_a_while_loop_that_never_ends_is_an_error_at_its_line():
    import pytest
    from pypto import PyptoError
    x = rng.standard_normal((BLOCK, COLS)).astype(np.float32)
    out = np.zeros_like(x)
    endless(x, 6, out, config=RunConfig())  # even: ends after 3 iterations
    np.testing.assert_array_equal(out, x)
    with pytest.raises(PyptoError, match=r"test_while_programs.py:\d+: while loop ran 16777216 iterations"):
        endless(x, 7, out, config=RunConfig())


@pl.jit
def scalar_loops(out: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX],
                 step: pl.Scalar[pl.INDEX]):
    """Scalar-only loops with break/continue in every position; `reference_scalar_loops`
    is the same code in plain Python."""
    with pl.at(level=pl.Level.CORE_GROUP):
        s = 0
        for i in pl.range(0, n, step):          # a run-time step of either sign
            if i > 40:
                break
            s = s + i
        for i in pl.range(n, -3, -2):
            i = i * 2                           # the loop variable is rebound in the body
            if i % 3 == 0:
                continue
            s = s + i
            if s > 200:
                break
        j = 0
        while j < m:
            j = j + 1
            k = 0
            while True:
                k = k + 1
                if k % 2 == 0:
                    continue
                if k > j:
                    break
                s = s + k * j
            if s % 7 == 3:
                continue
            s = s + 1
        out = pl.store(pl.adds(pl.full([1, 8], dtype=pl.FP32, value=0.0), s * 1.0), [0, 0], out)
    return out


def reference_scalar_loops(n, m, step):
    s = 0
    for i in range(0, n, step):
        if i > 40:
            break
        s = s + i
    for i in range(n, -3, -2):
        i = i * 2
        if i % 3 == 0:
            continue
        s = s + i
        if s > 200:
            break
    j = 0
    while j < m:
        j = j + 1
        k = 0
        while True:
            k = k + 1
            if k % 2 == 0:
                continue
            if k > j:
                break
            s = s + k * j
        if s % 7 == 3:
            continue
        s = s + 1
    return s


def test_scalar_loops_match_python():
    for n, m, step in ((0, 0, 1), (10, 3, 3), (60, 6, 7), (-9, 5, -4), (25, 9, 1)):
        out = np.zeros((1, 8), np.float32)
        scalar_loops(out, n, m, step, config=RunConfig())
        assert out[0, 0] == reference_scalar_loops(n, m, step), (n, m, step)


M = pl.dynamic("M")


@pl.jit
def double_dynamic_rows(x: pl.Tensor[[M, 64], pl.FP32], y: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        n = pl.tensor.dim(x, 0)
        i = 0
        while i * 32 < n:  # one compiled kernel for every M
            rows = pl.min(n - i * 32, 32)
            t = pl.load(x, [i * 32, 0], [32, 64], valid_shape=[rows, 64])
            y = pl.store(pl.muls(t, 2.0), [i * 32, 0], y)
            i = i + 1
    return y


def test_while_over_a_dynamic_extent():
    for m in (100, 7, 64):
        x = rng.standard_normal((m, 64)).astype(np.float32)
        y = np.zeros_like(x)
        double_dynamic_rows(x, y, config=RunConfig())
        np.testing.assert_allclose(y, 2 * x, rtol=1e-6)

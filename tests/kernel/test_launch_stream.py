"""pto.launch on the runtime's task pool (docs/kernel-api.md, "How launches run"): a launch is
SPMD block tasks of the launch stream's TaskPool, launches on the stream run in submission
order, pto.sync / memcpy_d2h wait and raise the first launch error once, later launches run."""

import os

import numpy as np
import pytest

import pypto as pto
from pypto._core import PyptoError
from pypto._core import kernel as _k

ENGINES = ["sim", "native"]


@pto.kernel
def increment(a, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(a + i, pto.load(a + i) + 1.0)


@pto.kernel
def doubled(a, b, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(b + i, pto.load(a + i) * 2.0)


@pto.kernel
def racy(src, smem, out):
    i = pto.get_global_id()
    data = pto.load(src + i)
    if pto.get_global_id() < 128:
        pto.store(smem + i, data)
    pto.barrier()  # orders one warp only: lane 128 reads what lane 0 wrote -> a data race
    pto.store(out + i, pto.load(smem + i % 128))


@pto.kernel
def divides(o, a, b):
    i = pto.get_global_id()
    q = a // b
    pto.barrier()
    if i < 1:
        pto.store(o + i, q)


def _get(d, n):
    out = np.zeros(n, np.float32)
    pto.memcpy_d2h(out, d)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_launches_on_the_stream_run_in_order(engine):
    """Thirty in-place increments and a read of the running value in between, with no sync:
    each launch sees every earlier launch's writes; the blocks of one launch are pool tasks."""
    n = 6 * 16384 + 77
    grid = (n + 255) // 256
    with pto.Tensor(n * 4) as d_a, pto.Tensor(n * 4) as d_b:
        for k in range(30):
            pto.launch(increment, grid=(grid, 1, 1), block=(256, 1, 1), args=(d_a, n), engine=engine)
            if k == 9:
                pto.launch(doubled, grid=(grid, 1, 1), block=(256, 1, 1), args=(d_a, d_b, n), engine=engine)
        cpus = os.cpu_count() or 1
        chunks = (n + 16383) // 16384
        assert _k.last_launch_blocks() == max(1, min(cpus, chunks // 2))
        assert _k.stream_workers() >= 1
        np.testing.assert_array_equal(_get(d_a, n), np.full(n, 30, np.float32))
        np.testing.assert_array_equal(_get(d_b, n), np.full(n, 20, np.float32))  # 2 * (value after 10)
    assert _k.launches_in_flight() == 0


def test_first_error_is_raised_once_and_later_launches_run():
    src = np.arange(256, dtype=np.float32)
    d_src, d_smem, d_out, d_q = (pto.alloc_tensor(256 * 4) for _ in range(4))
    pto.memcpy_h2d(d_src, src)
    pto.launch(racy, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_smem, d_out))      # fails: a race
    pto.launch(divides, grid=(1, 1, 1), block=(32, 1, 1), args=(d_q, 7, 0))               # fails too
    pto.launch(divides, grid=(1, 1, 1), block=(32, 1, 1), args=(d_q, -7, 2))              # runs
    with pytest.raises(PyptoError, match="data race in kernel 'racy'"):
        pto.sync()  # the first failed launch's error
    pto.sync()      # reported once
    assert _get(d_q, 1)[0] == -4.0
    pto.launch(divides, grid=(1, 1, 1), block=(32, 1, 1), args=(d_q, 7, 0))
    with pytest.raises(PyptoError, match="integer division by zero"):
        _get(d_q, 1)  # memcpy_d2h waits for the launch using the tensor and raises its error
    pto.sync()


@pytest.mark.parametrize("engine", ENGINES)
def test_synchronous_run_after_queued_launches(engine):
    """LoweredKernel.run is a launch on the same stream: it runs after the queued ones."""
    n = 4 * 16384
    grid = n // 256
    with pto.Tensor(n * 4) as d_a, pto.Tensor(n * 4) as d_b:
        for _ in range(3):
            pto.launch(increment, grid=(grid, 1, 1), block=(256, 1, 1), args=(d_a, n), engine=engine)
        low = _k.lower(doubled.program, [d_a._buf, d_b._buf, n], grid, 256)
        low.run("a2a3sim", engine, 2)
        np.testing.assert_array_equal(_get(d_b, n), np.full(n, 6, np.float32))

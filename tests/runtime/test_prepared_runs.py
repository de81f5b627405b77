"""A compiled program called directly keeps its program prepared (per platform, engine and
kernel-compile environment) and runs on an idle worker pool of the process
(src/runtime/runtime.cpp run_prepared, pypto/jit/compiled.py _prepared_run): every call
computes the same as the first, a changed engine or compile target prepares again, a failed
run leaves the next call working, and a forked child runs on pools of its own."""

import os
import signal
import time

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def scaled_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    for i in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [i * 16, 0], [16, 64])
            tb = pl.load(b, [i * 16 + n, 0], [16, 64])
            pl.store(pl.add(pl.muls(ta, 2.0), tb), [i * 16, 0], c)
    return c


def operands(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((80, 64)).astype(np.float32)


def expect(a, b, n):
    return 2 * a + b[n:n + 64]


def test_every_call_of_a_prepared_program_computes_afresh():
    a, b = operands(1)
    c = np.zeros_like(a)
    compiled = scaled_add.compile(a, b, c, 0)
    for seed, n in [(1, 0), (2, 16), (3, 5), (4, 16)]:
        a, b = operands(seed)
        compiled(a, b, c, n)
        np.testing.assert_array_equal(c, expect(a, b, n))
    assert len(compiled._prepared_runs) == 1  # prepared once, for the one configuration


def test_another_engine_or_compile_target_prepares_again(monkeypatch):
    a, b = operands(5)
    c = np.zeros_like(a)
    compiled = scaled_add.compile(a, b, c, 0)
    native = RunConfig(engine="native")  # explicit: PYPTO_ENGINE may set the default (CI's sanitizer job)
    compiled(a, b, c, 3, config=native)
    np.testing.assert_array_equal(c, expect(a, b, 3))
    c[:] = 0
    compiled(a, b, c, 7, config=RunConfig(engine="sim"))
    np.testing.assert_array_equal(c, expect(a, b, 7))
    if os.uname().machine in ("x86_64", "AMD64"):
        monkeypatch.setenv("PYPTO_NATIVE_ISA", "scalar")
        c[:] = 0
        compiled(a, b, c, 9, config=native)
        np.testing.assert_array_equal(c, expect(a, b, 9))
        assert len(compiled._prepared_runs) == 3
    else:
        assert len(compiled._prepared_runs) == 2


def test_a_failed_run_leaves_the_next_call_working():
    a, b = operands(6)
    c = np.zeros_like(a)
    compiled = scaled_add.compile(a, b, c, 0)
    with pytest.raises(Exception):
        compiled(a, b, c, 1000)  # rows 1000.. of b: out of bounds
    for n in (0, 16):
        compiled(a, b, c, n)
        np.testing.assert_array_equal(c, expect(a, b, n))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_on_pools_of_its_own():
    a, b = operands(7)
    c = np.zeros_like(a)
    compiled = scaled_add.compile(a, b, c, 0)
    compiled(a, b, c, 2)  # the parent's pool is idle now
    pid = os.fork()
    if pid == 0:  # the child: the parent's worker threads do not exist here
        try:
            c2 = np.zeros_like(a)
            compiled(a, b, c2, 4)
            os._exit(0 if np.array_equal(c2, expect(a, b, 4)) else 1)
        except BaseException:
            os._exit(2)
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung running the program")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    compiled(a, b, c, 6)  # and the parent's pool still works
    np.testing.assert_array_equal(c, expect(a, b, 6))

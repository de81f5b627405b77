"""Concurrency and interruption: one compiled program called from 8 threads at once, two
processes compiling the same kernel into one cache, and Ctrl-C during a long run."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pl.jit
def scaled_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            ta = pl.load(a, [i * 32, 0], [32, 64])
            tb = pl.load(b, [i * 32, 0], [32, 64])
            c = pl.store(pl.add(pl.mul(ta, 3.0), tb), [i * 32, 0], c)
    return c


def eight_inputs():
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((128, 64), dtype=np.float32), rng.standard_normal((128, 64), dtype=np.float32))
            for _ in range(8)]


def run_in_eight_threads(call, inputs, repeats=5):
    """Calls `call(a, b, c)` from 8 threads released at once; returns their outputs."""
    results = [np.zeros((128, 64), np.float32) for _ in inputs]
    errors = []
    start = threading.Barrier(len(inputs))

    def work(i):
        try:
            start.wait()
            for _ in range(repeats):
                call(inputs[i][0], inputs[i][1], results[i])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return results


@pytest.mark.parametrize("engine", ["sim", "native"])
def test_eight_threads_share_one_compiled_program(engine):
    config = RunConfig(engine=engine)
    inputs = eight_inputs()
    compiled = scaled_add.compile(*inputs[0], np.zeros((128, 64), np.float32))
    sequential = []
    for a, b in inputs:
        c = np.zeros((128, 64), np.float32)
        compiled(a, b, c, config=config)
        sequential.append(c)
    results = run_in_eight_threads(lambda a, b, c: compiled(a, b, c, config=config), inputs)
    for got, want, (a, b) in zip(results, sequential, inputs):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, a * np.float32(3) + b, rtol=1e-6)


@pl.jit
def scaled_sub(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            ta = pl.load(a, [i * 32, 0], [32, 64])
            tb = pl.load(b, [i * 32, 0], [32, 64])
            c = pl.store(pl.sub(pl.mul(ta, 2.0), tb), [i * 32, 0], c)
    return c


@pytest.mark.parametrize("engine", ["sim", "native"])
def test_eight_threads_call_a_jit_function_before_it_is_compiled(engine):
    """The first calls race to specialise, compile and run the same @pl.jit function."""
    config = RunConfig(engine=engine)
    inputs = eight_inputs()
    results = run_in_eight_threads(lambda a, b, c: scaled_sub(a, b, c, config=config), inputs, repeats=2)
    for got, (a, b) in zip(results, inputs):
        want = np.zeros((128, 64), np.float32)
        scaled_sub(a, b, want, config=config)  # sequential, after the threads
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, a * np.float32(2) - b, rtol=1e-6)


PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig

    SCALE = float(sys.argv[1])

    @pl.jit
    def kernel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.store(pl.mul(pl.load(a, [0, 0], [32, 64]), SCALE), [0, 0], c)
        return c

    a = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    c = np.zeros_like(a)
    kernel(a, c, config=RunConfig(engine="native"))
    assert np.array_equal(c, a * np.float32(SCALE)), "wrong result"
    print("OK")
""")


_children = []


@pytest.fixture(autouse=True)
def _kill_leftover_children():
    """A failing test must not leave its child running (a 10^7-task run burns CPU for hours)."""
    yield
    while _children:
        p = _children.pop()
        if p.poll() is None:
            p.kill()
            p.wait(timeout=30)


def run_python(code, args, env, **kw):
    """Runs `code` from a file (pl programs are parsed from their source file)."""
    path = pathlib.Path(env["PYPTO_CACHE_DIR"]).parent / f"prog_{abs(hash(code))}.py"
    path.write_text(code)
    p = subprocess.Popen([sys.executable, str(path), *args], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, **kw)
    _children.append(p)
    return p


def test_two_processes_compile_the_same_kernel_into_one_cache(tmp_path):
    env = dict(os.environ, PYPTO_CACHE_DIR=str(tmp_path / "cache"), PYPTO_CACHE="1")
    procs = [run_python(PROGRAM, ["1.25"], env) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.strip() == "OK"
    cached = [f for f in (tmp_path / "cache").rglob("*") if f.is_file()]
    assert cached and not [f for f in cached if ".tmp" in f.name]  # no torn temporary files left
    again = run_python(PROGRAM, ["1.25"], env)  # a third process reuses the cache
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0 and out.strip() == "OK", err


LONG_RUN = textwrap.dedent("""
    import sys
    import signal
    # Ctrl-C raises KeyboardInterrupt even when this process was started with SIGINT ignored
    # (as background jobs of a non-interactive shell are, e.g. a CI step).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit.incore
    def bump(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        y = pl.store(pl.add(pl.load(x, [0, 0], [64, 64]), 1.0), [0, 0], y)
        return y

    @pl.jit
    def many(x: pl.Tensor, y: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
        for i in pl.range(n):
            y = bump(x, y)
        return y

    config = RunConfig(engine=sys.argv[1])
    x = np.zeros((64, 64), np.float32)
    y = np.zeros_like(x)
    many(x, y, 2, config=config)  # compiled (the native engine: kernels built and cached)
    assert np.array_equal(y, x + 1), "wrong result"
    print("started", flush=True)
    try:
        many(x, y, 10**7, config=config)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(3)
    print("finished", flush=True)
""")


def no_temporary_files(cache):
    return not [f for f in pathlib.Path(cache).rglob("*") if ".tmp" in f.name]


@pytest.mark.parametrize("engine", ["sim", "native"])
def test_ctrl_c_stops_a_long_run_cleanly(tmp_path, engine):
    env = dict(os.environ, PYPTO_CACHE_DIR=str(tmp_path / "cache"))
    p = run_python(LONG_RUN, [engine], env)
    assert p.stdout.readline().strip() == "started", p.stderr.read()
    time.sleep(1.0)  # running: 10^7 tasks take far longer than this
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 3, (out, err)  # KeyboardInterrupt caught by the program: no crash
    assert "interrupted" in out and "finished" not in out
    assert time.monotonic() - t0 < 30
    assert no_temporary_files(tmp_path / "cache")
    # The cache is still usable by a new process.
    ok = run_python(PROGRAM, ["2.0"], env)
    out, err = ok.communicate(timeout=300)
    assert ok.returncode == 0 and out.strip() == "OK", err


COMPILE = textwrap.dedent("""
    import sys
    import signal
    # Ctrl-C raises KeyboardInterrupt even when this process was started with SIGINT ignored
    # (as background jobs of a non-interactive shell are, e.g. a CI step).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit
    def chain(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [32, 64])
            u = pl.exp(pl.mul(t, 0.5))
            v = pl.sqrt(pl.add(pl.mul(u, u), 1.0))
            w = pl.row_expand_sub(v, pl.row_max(v))
            c = pl.store(pl.div(w, pl.add(pl.abs(t), 1.0)), [0, 0], c)
        return c

    a = np.linspace(-1, 1, 32 * 64, dtype=np.float32).reshape(32, 64)
    c = np.zeros_like(a)
    print("started", flush=True)
    try:
        chain(a, c, config=RunConfig(engine="native"))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(3)
    u = np.exp(a * np.float32(0.5))
    v = np.sqrt(u * u + np.float32(1))
    want = (v - v.max(axis=1, keepdims=True)) / (np.abs(a) + np.float32(1))
    assert np.allclose(c, want, rtol=1e-5, atol=1e-6), "wrong result"
    print("finished", flush=True)
""")


def test_ctrl_c_while_the_native_engine_compiles_leaves_the_cache_valid(tmp_path):
    """Ctrl-C in a terminal reaches the whole foreground process group: Python and the C++
    compiler building the kernel. The run stops with KeyboardInterrupt, the cache holds no
    half-written kernel, and the next process compiles and runs it."""
    cache = tmp_path / "cache"
    env = dict(os.environ, PYPTO_CACHE_DIR=str(cache))
    p = run_python(COMPILE, [], env, start_new_session=True)
    assert p.stdout.readline().strip() == "started", p.stderr.read()
    deadline = time.monotonic() + 120
    while not list(cache.rglob("*.cpp")) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # the generated source appears just before the compiler starts
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode in (0, 3), (p.returncode, out, err)  # never a crash or a traceback
    assert ("interrupted" in out) != ("finished" in out), (out, err)
    assert time.monotonic() - t0 < 30
    assert no_temporary_files(cache)
    again = run_python(COMPILE, [], env)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0 and "finished" in out, (out, err)

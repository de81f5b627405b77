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

import pypto.language as pl

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pl.jit
def scaled_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            ta = pl.load(a, [i * 32, 0], [32, 64])
            tb = pl.load(b, [i * 32, 0], [32, 64])
            c = pl.store(pl.add(pl.mul(ta, 3.0), tb), [i * 32, 0], c)
    return c


def test_eight_threads_share_one_compiled_program():
    rng = np.random.default_rng(0)
    inputs = [(rng.standard_normal((128, 64), dtype=np.float32), rng.standard_normal((128, 64), dtype=np.float32))
              for _ in range(8)]
    sequential = []
    for a, b in inputs:
        c = np.zeros((128, 64), np.float32)
        scaled_add(a, b, c)
        sequential.append(c)
    results = [np.zeros((128, 64), np.float32) for _ in inputs]
    errors = []

    def work(i):
        try:
            for _ in range(5):
                scaled_add(inputs[i][0], inputs[i][1], results[i])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for got, want, (a, b) in zip(results, sequential, inputs):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, a * np.float32(3) + b, rtol=1e-6)


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


def run_python(code, args, env, **kw):
    """Runs `code` from a file (pl programs are parsed from their source file)."""
    path = pathlib.Path(env["PYPTO_CACHE_DIR"]).parent / f"prog_{abs(hash(code))}.py"
    path.write_text(code)
    return subprocess.Popen([sys.executable, str(path), *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


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
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit.incore
    def bump(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        y = pl.store(pl.add(pl.load(x, [0, 0], [64, 64]), 1.0), [0, 0], y)
        return y

    @pl.jit
    def many(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        for i in pl.range(200000):
            y = bump(x, y)
        return y

    x = np.zeros((64, 64), np.float32)
    y = np.zeros_like(x)
    print("started", flush=True)
    try:
        many(x, y, config=RunConfig(engine="sim"))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(3)
    print("finished", flush=True)
""")


def test_ctrl_c_stops_a_long_run_cleanly(tmp_path):
    env = dict(os.environ, PYPTO_CACHE_DIR=str(tmp_path / "cache"))
    p = run_python(LONG_RUN, [], env)
    assert p.stdout.readline().strip() == "started"
    time.sleep(2.0)  # compiled and running: 200,000 tasks take far longer than this
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 3, (out, err)
    assert "interrupted" in out and "finished" not in out
    assert time.monotonic() - t0 < 30
    # The cache is still usable by a new process.
    ok = run_python(PROGRAM, ["2.0"], env)
    out, err = ok.communicate(timeout=300)
    assert ok.returncode == 0 and out.strip() == "OK", err

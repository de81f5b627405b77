"""Progress of native kernel compiles: a program with two kernels runs in a subprocess with
a cold cache and PYPTO_PROGRESS_AFTER=0; on a pseudo-terminal stderr shows
"pypto: compiling kernel i/2 <name> ...", through a pipe it shows nothing."""

import os
import re
import pty
import subprocess
import sys
import textwrap

import pypto

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

PROGRAM = textwrap.dedent(
    """
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit.incore
    def progress_scale(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        t = pl.load(x, [0, 0], [32, 32])
        y = pl.store(pl.muls(t, 3.0), [0, 0], y)
        return y

    @pl.jit.incore
    def progress_add(x: pl.Tensor, z: pl.Tensor, y: pl.Out[pl.Tensor]):
        t = pl.add(pl.load(x, [0, 0], [32, 32]), pl.load(z, [0, 0], [32, 32]))
        y = pl.store(t, [0, 0], y)
        return y

    @pl.jit
    def program(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        tmp = pl.create_tensor([32, 32], dtype=pl.FP32)
        tmp = progress_scale(a, tmp)
        out = progress_add(tmp, a, out)
        return out

    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros_like(a)
    program(a, out, config=RunConfig(engine="native"))
    np.testing.assert_array_equal(out, 4 * a)
    print("RESULT OK", flush=True)
    """
)


def env_for(tmp_path):
    env = dict(os.environ)
    # The child imports the same pypto as this process (installed, or a development tree).
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(pypto.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYPTO_CACHE_DIR"] = str(tmp_path / "cache")
    env["PYPTO_PROGRESS_AFTER"] = "0"
    env.pop("PYPTO_CACHE", None)
    env.pop("PYPTO_ENGINE", None)
    return env


def run_on_a_terminal(script, env):
    """Runs `script` with stdin/stdout/stderr on a pseudo-terminal: (exit code, output)."""
    pid, fd = pty.fork()
    if pid == 0:  # child
        os.execve(sys.executable, [sys.executable, str(script)], env)
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")


def test_progress_on_a_terminal(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    code, text = run_on_a_terminal(script, env_for(tmp_path))
    assert code == 0 and "RESULT OK" in text, text
    # which kernel the first redraw shows depends on how fast each compiles (they run in parallel)
    assert re.search(r"pypto: compiling kernel [12]/2 ", text), text
    assert "progress_scale" in text or "progress_add" in text, text
    assert "\r\x1b[K" in text  # redrawn in place, erased at the end
    # Again with the cache warm: nothing to compile, no progress.
    code, warm = run_on_a_terminal(script, env_for(tmp_path))
    assert code == 0 and "RESULT OK" in warm and "pypto: compiling" not in warm, warm


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    r = subprocess.run([sys.executable, str(script)], env=env_for(tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "RESULT OK" in r.stdout
    assert "pypto" not in r.stderr and "\x1b" not in r.stderr



def test_no_progress_before_the_delay(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = env_for(tmp_path)
    env["PYPTO_PROGRESS_AFTER"] = "600"  # the cold compile ends long before
    code, text = run_on_a_terminal(script, env)
    assert code == 0 and "RESULT OK" in text, text
    assert "pypto: compiling" not in text and "\x1b" not in text, text

"""The native engine's kernel link (src/engines/native/native_compile.cpp): the short link
(-nostdlib, libm / libc named, libgcc) and its fallback to the default link when the short
one fails. Each runs a kernel in a fresh process with an empty kernel cache and checks the
result against numpy; the link used is read back from a compiler wrapper's log."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import pypto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROGRAM = textwrap.dedent("""
    import numpy as np
    import pypto.language as pl

    @pl.jit
    def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 64])
            pl.store(pl.add(pl.exp(t), t), [0, 0], c)
        return c

    a = np.linspace(-3, 3, 16 * 64, dtype=np.float32).reshape(16, 64)
    c = np.zeros_like(a)
    k(a, c)
    np.testing.assert_allclose(c, np.exp(a) + a, rtol=2e-6, atol=1e-6)
    print("ok")
""")


def run_with_wrapper(tmp_path, refuse_short_link):
    cxx = shutil.which(os.environ.get("CXX") or "c++")
    if not cxx:
        pytest.skip("no C++ compiler")
    log = tmp_path / "cxx.log"
    wrapper = tmp_path / "cxx"
    refuse = 'case " $* " in *" -nostdlib "*) exit 1;; esac\n' if refuse_short_link else ""
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\n{refuse}exec {cxx} "$@"\n')
    wrapper.chmod(0o755)
    script = tmp_path / "prog.py"  # pl.jit reads the source file
    script.write_text(PROGRAM)
    env = dict(os.environ, CXX=str(wrapper), PYPTO_CACHE_DIR=str(tmp_path / "cache"), PYPTO_ENGINE="native")
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(os.path.abspath(pypto.__file__))), env.get("PYTHONPATH", "")] if p)
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
    return log.read_text().splitlines()


def test_short_link(tmp_path):
    lines = run_with_wrapper(tmp_path, refuse_short_link=False)
    assert len(lines) == 1 and "-nostdlib" in lines[0] and "-l:libc.so.6" in lines[0]


def test_default_link_when_the_short_link_fails(tmp_path):
    lines = run_with_wrapper(tmp_path, refuse_short_link=True)
    assert len(lines) == 2 and "-nostdlib" in lines[0] and "-nostdlib" not in lines[1]

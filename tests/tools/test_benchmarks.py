"""The benchmark module (benchmarks/run.py): its machine record, the fast-path report of each
case, the torch.compile guard, and the first-call helper against an installed layout (a
site directory holding pypto with its extension and headers, and benchmarks, run from a
directory outside the checkout). No timing is asserted."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import pypto.language as pl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

run = pytest.importorskip("benchmarks.run")


@pl.jit
def f32_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [16, 64]), pl.load(b, [0, 0], [16, 64])), [0, 0], c)
    return c


@pl.jit
def i32_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [16, 64]), pl.load(b, [0, 0], [16, 64])), [0, 0], c)
    return c


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return None


def test_native_report_names_fast_and_reference_instructions():
    a = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    report = f32_add.compile(a, a, np.zeros_like(a)).native_report()
    (k,) = report.values()
    assert k["native"] and k["reference"] == [] and "TADD" in k["fast"] and "TLOAD" in k["fast"]
    ai = a.astype(np.int32)
    (ki,) = i32_add.compile(ai, ai, np.zeros_like(ai)).native_report().values()
    # Integer arithmetic has no fast path (docs/performance.md): TADD runs on the reference.
    assert "TADD" in ki["reference"] and "TADD" not in ki["fast"]
    text = run.fast_path(i32_add, ai, ai, np.zeros_like(ai))
    assert re.search(r"1 kernels, \d+ tile instrs fast, 1 on reference \(TADD\)", text), text
    c = np.zeros_like(ai)
    i32_add(ai, ai, c)  # the reported path computes: checked against numpy
    np.testing.assert_array_equal(c, ai + ai)


def test_machine_record_matches_the_cpu():
    info = run.machine()
    assert info["cpu"] and info["cpus"] == os.cpu_count()
    m = re.fullmatch(r"vector=(avx512|avx2|portable) f16=(f16c|portable) store=(movnt|plain)", info["library_paths"])
    assert m, info["library_paths"]
    flags = cpu_flags()
    if flags is not None:
        assert set(info["vector_features"]) <= flags
        # -march=native: the library's width follows the CPU (unless CXX targets elsewhere)
        if not os.environ.get("CXX"):
            want = "avx512" if "avx512f" in flags else "avx2" if "avx" in flags else "portable"
            assert m.group(1) == want
            assert (m.group(2) == "f16c") == ("f16c" in flags and "avx" in flags)


def test_torch_compile_failure_is_reported_and_skipped():
    torch = pytest.importorskip("torch")

    def broken(t):
        raise RuntimeError("no inductor here")

    notes = len(run.NOTES)
    assert run.torch_compiled(broken, torch.zeros(4)) is None
    assert len(run.NOTES) == notes + 1 and "no inductor here" in run.NOTES[-1]
    assert run.timed(None) is None


def installed_layout(site):
    """What `pip install .` puts in site-packages: pypto (with _core and include/) and
    benchmarks, nothing of the checkout on the path."""
    pkg = os.path.join(ROOT, "python", "pypto")
    shutil.copytree(pkg, os.path.join(site, "pypto"), ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(ROOT, "include"), os.path.join(site, "pypto", "include"))
    shutil.copytree(os.path.join(ROOT, "benchmarks"), os.path.join(site, "benchmarks"),
                    ignore=shutil.ignore_patterns("__pycache__"))


def test_first_call_runs_against_an_installed_layout(tmp_path):
    if not any(n.startswith("_core") for n in os.listdir(os.path.join(ROOT, "python", "pypto"))):
        pytest.skip("no built extension in python/pypto")
    site, work = tmp_path / "site", tmp_path / "elsewhere"
    site.mkdir()
    work.mkdir()
    installed_layout(str(site))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    probe = (
        "import os, tempfile, pypto\n"
        "from benchmarks import run\n"
        "assert pypto.__file__.startswith(os.environ['PYTHONPATH']), pypto.__file__\n"
        "d = tempfile.mkdtemp()\n"
        "path = run.first_call_env(d)['PYTHONPATH'].split(os.pathsep)\n"
        f"assert not any(p.startswith({ROOT!r} + os.sep) for p in path), path\n"
        "print(run.first_call(d))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=work, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert float(out.stdout.strip().splitlines()[-1]) > 0

"""`pypto doctor`: checks the environment pypto needs and says how to fix what is missing.

Each check prints one line: `ok`, `warn` (works, with a limitation) or `FAIL`, then a fix.
The exit status is 1 when any check fails.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass


@dataclass
class Check:
    name: str
    status: str  # "ok", "warn", "FAIL"
    detail: str
    fix: str = ""


def _python() -> Check:
    v = sys.version_info
    if v >= (3, 10):
        return Check("python", "ok", f"Python {platform.python_version()} at {sys.executable}")
    return Check(
        "python", "FAIL", f"Python {platform.python_version()}", "install Python 3.10 or newer"
    )


def _extension() -> Check:
    try:
        from pypto import _core

        platforms = (
            ", ".join(_core.simulated_platforms()) if hasattr(_core, "simulated_platforms") else ""
        )
        return Check(
            "extension",
            "ok",
            f"pypto._core loaded from {_core.__file__}" + (f" ({platforms})" if platforms else ""),
        )
    except ImportError as e:  # pragma: no cover - only on a broken install
        return Check(
            "extension", "FAIL", f"pypto._core does not load: {e}", "reinstall: pip install ."
        )


def _compiler() -> Check:
    cxx = (
        os.environ.get("CXX")
        or shutil.which("g++")
        or shutil.which("c++")
        or shutil.which("clang++")
    )
    if not cxx:
        return Check(
            "c++ compiler",
            "FAIL",
            "no C++ compiler on PATH",
            "install one (Debian: apt-get install g++) or set CXX",
        )
    try:
        version = subprocess.run(
            [cxx, "--version"], check=False, capture_output=True, text=True, timeout=20
        ).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as e:
        return Check(
            "c++ compiler", "FAIL", f"{cxx} does not run: {e}", "reinstall the compiler or set CXX"
        )
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "probe.cpp")
        with open(src, "w") as f:
            f.write(
                '#include <vector>\nextern "C" int probe() { std::vector<int> v{1,2}; return v[1]; }\n'
            )
        cmd = [
            cxx,
            "-std=c++20",
            "-O3",
            "-march=native",
            "-shared",
            "-fPIC",
            src,
            "-o",
            os.path.join(d, "probe.so"),
        ]
        r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return Check(
                "c++ compiler",
                "FAIL",
                f"{version}: '-std=c++20 -O3 -march=native -shared' fails: {r.stderr.strip()[:200]}",
                "install g++ 12 or newer (C++20)",
            )
    return Check("c++ compiler", "ok", f"{version} (-std=c++20 -O3 -march=native -shared works)")


def _cpu() -> Check:
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    found = [f for f in ("avx512f", "avx2", "fma", "neon", "asimd") if f in flags]
    detail = (
        f"{platform.machine()}, {os.cpu_count()} CPUs, SIMD: {', '.join(found) or 'none detected'}"
    )
    if platform.machine() in ("x86_64", "AMD64") and "avx2" not in flags:
        return Check("cpu", "warn", detail, "kernels use the portable (slower) path without AVX2")
    return Check("cpu", "ok", detail)


def _cache() -> Check:
    if os.environ.get("PYPTO_CACHE") == "0":
        return Check(
            "kernel cache",
            "warn",
            "disabled by PYPTO_CACHE=0",
            "unset PYPTO_CACHE to cache compiled kernels",
        )
    try:
        # The engine's own rule (PYPTO_CACHE_DIR, then $XDG_CACHE_HOME/pypto, then
        # ~/.cache/pypto): one source of truth, in C++ (runtime::native_cache_dir).
        from pypto import _core

        path = _core.native_cache_dir()
    except ImportError:  # pragma: no cover - the extension check reports the broken install
        return Check(
            "kernel cache", "FAIL", "pypto._core does not load", "reinstall: pip install ."
        )
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path):
            pass
    except OSError as e:
        return Check(
            "kernel cache",
            "FAIL",
            f"{path} is not writable: {e}",
            "set PYPTO_CACHE_DIR to a writable directory",
        )
    return Check("kernel cache", "ok", f"{path} is writable")


def _numpy() -> Check:
    try:
        import numpy

        return Check("numpy", "ok", f"numpy {numpy.__version__}")
    except ImportError:
        return Check("numpy", "FAIL", "numpy is missing", "pip install numpy")


def _torch() -> Check:
    try:
        import torch

        return Check("torch", "ok", f"torch {torch.__version__} (optional)")
    except ImportError:
        return Check(
            "torch",
            "warn",
            "torch is not installed (optional: numpy arrays work without it)",
            "pip install torch==2.13.0 (the CPU build) to pass torch tensors",
        )


CHECKS = (_python, _extension, _compiler, _cpu, _cache, _numpy, _torch)


def run_checks() -> list[Check]:
    return [check() for check in CHECKS]


def main(argv: list[str] | None = None) -> int:
    results = run_checks()
    width = max(len(c.name) for c in results)
    for c in results:
        print(f"{c.status:>4}  {c.name:<{width}}  {c.detail}")
        if c.fix and c.status != "ok":
            print(f"{'':>4}  {'':<{width}}  fix: {c.fix}")
    failed = [c for c in results if c.status == "FAIL"]
    print(
        "pypto doctor: "
        + ("everything pypto needs is here" if not failed else f"{len(failed)} problem(s) to fix")
    )
    return 1 if failed else 0

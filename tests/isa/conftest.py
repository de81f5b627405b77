"""Fixtures of the ISA tests."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded generator: every run draws the same operands."""
    return np.random.default_rng(1234)


@pytest.fixture(params=["native", "scalar"])
def kernel_cache(request, monkeypatch, tmp_path):
    """Kernels compiled for the native target (PYPTO_NATIVE_ISA unset) and for the forced
    portable one (x86 only) into a fresh cache directory, which is returned: tests read the
    generated sources there."""
    import os

    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    if request.param == "native":
        monkeypatch.delenv("PYPTO_NATIVE_ISA", raising=False)
    else:
        if os.uname().machine not in ("x86_64", "AMD64"):
            pytest.skip("forced targets are x86 only")
        monkeypatch.setenv("PYPTO_NATIVE_ISA", request.param)
    return tmp_path / "cache"

"""`pypto doctor` reports what works and how to fix what does not."""

from pypto.tools import doctor
from pypto.tools.cli import main


def test_doctor_on_this_machine_passes(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    for name in ("python", "extension", "c++ compiler", "cpu", "kernel cache", "numpy"):
        assert name in out
    assert "everything pypto needs is here" in out


def test_unwritable_cache_dir_fails_with_a_fix(monkeypatch, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(blocker / "cache"))
    assert doctor.main() == 1
    out = capsys.readouterr().out
    assert "FAIL  kernel cache" in out and "fix: set PYPTO_CACHE_DIR" in out


def test_missing_compiler_fails_with_a_fix(monkeypatch, capsys):
    monkeypatch.setenv("CXX", "/nonexistent/g++")
    assert doctor.main() == 1
    out = capsys.readouterr().out
    assert "FAIL  c++ compiler" in out and "fix:" in out


def test_disabled_cache_is_a_warning(monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE", "0")
    check = doctor._cache()
    assert check.status == "warn" and "PYPTO_CACHE=0" in check.detail


def test_doctor_and_engine_share_the_cache_rule(monkeypatch, tmp_path, capsys):
    """With XDG_CACHE_HOME set and PYPTO_CACHE_DIR unset, doctor reports $XDG_CACHE_HOME/pypto
    and the native engine writes its compiled kernels exactly there."""
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig

    monkeypatch.delenv("PYPTO_CACHE_DIR", raising=False)
    monkeypatch.delenv("PYPTO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    expected = tmp_path / "xdg" / "pypto"
    check = doctor._cache()
    assert check.status == "ok" and check.detail == f"{expected} is writable"

    @pl.jit
    def add_const_cache_rule(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, 0], [16, 16])
            pl.store(pl.adds(ta, 3.25), [0, 0], c)
        return c

    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    c = np.zeros_like(a)
    add_const_cache_rule(a, c, config=RunConfig(engine="native"))
    np.testing.assert_allclose(c, a + 3.25)
    assert list(expected.glob("*.so")), f"the engine wrote no kernel under {expected}"

    # PYPTO_CACHE_DIR wins over XDG_CACHE_HOME in both.
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "explicit"))
    assert doctor._cache().detail == f"{tmp_path / 'explicit'} is writable"

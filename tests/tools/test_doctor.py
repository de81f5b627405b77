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

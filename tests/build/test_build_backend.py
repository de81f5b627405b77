"""The build backend (tools/build_backend/pypto_build_backend.py) keeps build/<wheel tag>/
between pip's isolated builds: a build directory recorded by an earlier isolated
environment is adopted by the current one (scikit-build-core would clear its CMake cache
and object files), one of another source tree is left alone."""

import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BACKEND = ROOT / "tools" / "build_backend" / "pypto_build_backend.py"


@pytest.fixture
def backend():
    pytest.importorskip("scikit_build_core")
    spec = importlib.util.spec_from_file_location("pypto_build_backend", BACKEND)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pyproject_uses_the_backend():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'build-backend = "pypto_build_backend"' in text and 'backend-path = ["tools/build_backend"]' in text
    assert 'build-dir = "build/{wheel_tag}"' in text


def test_a_build_dir_of_an_earlier_isolated_env_is_adopted(backend, tmp_path, monkeypatch):
    import scikit_build_core

    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "build" / "cp311-cp311-linux_x86_64"
    other = tmp_path / "build" / "other-tree"
    for d, source in ((mine, str(tmp_path.resolve())), (other, "/somewhere/else")):
        d.mkdir(parents=True)
        (d / ".skbuild-info.json").write_text(json.dumps(
            {"source_dir": source, "build_dir": str(d), "skbuild_path": "/tmp/pip-build-env-old/skbuild"}))
    backend._adopt_build_dirs()
    here = str(pathlib.Path(scikit_build_core.__file__).parent.resolve())
    assert json.loads((mine / ".skbuild-info.json").read_text())["skbuild_path"] == here
    assert json.loads((other / ".skbuild-info.json").read_text())["skbuild_path"] == "/tmp/pip-build-env-old/skbuild"


def test_the_backend_exports_the_pep517_hooks(backend):
    for hook in ("build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel"):
        assert callable(getattr(backend, hook))

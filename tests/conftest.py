"""Shared fixtures: `engine` runs a test once per execution engine. The end-to-end test
directories (ops, codegen, examples) use it through an autouse fixture, so every test
program runs on both engines and is checked against numpy/torch on each.

Every test writes only under temporary directories: the session runs in a temporary working
directory (so a compile without output_dir writes its default build_output/<program>/ there),
and `_writes_nothing_into_the_checkout` fails a test that leaves a new file or directory in
the checkout (at its top, in build_output/, in tests/ or the test's own directory)."""

import os
import pathlib
import sys

import pytest

ENGINES = ["native", "sim"]
ROOT = pathlib.Path(__file__).resolve().parents[1]
# Written by the tools themselves, not by a test.
_IGNORED = {".pytest_cache", "__pycache__", ".ruff_cache", ".hypothesis"}


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    """Makes RunConfig() default to this engine for the test."""
    monkeypatch.setenv("PYPTO_ENGINE", request.param)
    return request.param


@pytest.fixture(scope="session", autouse=True)
def _in_a_temporary_working_directory(tmp_path_factory):
    old = os.getcwd()
    # What was relative to the checkout stays found: imports ('' on sys.path) and the
    # PYTHONPATH=python of the README's commands, which subprocesses inherit.
    sys.path[:] = [old if p in ("", ".") else p for p in sys.path]
    if os.environ.get("PYTHONPATH"):
        os.environ["PYTHONPATH"] = os.pathsep.join(
            os.path.join(old, p) if p else p for p in os.environ["PYTHONPATH"].split(os.pathsep))
    work = tmp_path_factory.mktemp("cwd")
    os.chdir(work)
    yield work
    os.chdir(old)


def _watched(test_dir):
    dirs = {ROOT, ROOT / "build_output", ROOT / "tests", test_dir}
    cwd = pathlib.Path.cwd().resolve()
    if cwd == ROOT or ROOT in cwd.parents:
        dirs.add(cwd)
    return dirs


def _entries(dirs):
    found = set()
    for d in dirs:
        try:
            found.update(d / name for name in os.listdir(d) if name not in _IGNORED)
        except OSError:
            pass
        if d.exists():
            found.add(d)
    return found


@pytest.fixture(autouse=True)
def _writes_nothing_into_the_checkout(request):
    dirs = _watched(pathlib.Path(str(request.fspath)).resolve().parent)
    before = _entries(dirs)
    yield
    new = sorted(str(p.relative_to(ROOT)) for p in _entries(dirs) - before if ROOT in p.parents)
    if new:
        pytest.fail(f"{request.node.nodeid} wrote {new} into the checkout; fix: write under a temporary "
                    "directory (tmp_path: RunConfig(output_dir=str(tmp_path / 'out')), ir.compile(..., "
                    "output_dir=...), or monkeypatch.chdir(tmp_path))", pytrace=False)

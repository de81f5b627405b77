"""How a user error looks (issue 19): the user's source line with a caret under the offending
expression, the user's variable names next to the op's parameter names, and a traceback with
no pypto-internal frames (all of them with PYPTO_FULL_TRACEBACK=1)."""

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pypto
import pypto.language as pl
import pytest
from pypto import PyptoError
from pypto.runtime import RunConfig

PACKAGE = pathlib.Path(pypto.__file__).resolve().parent
PYTHON = str(pathlib.Path(pypto.__file__).resolve().parents[1])  # the pypto under test (a dev build or the installed package)

SCRIPT = '''\
import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [64, 128])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


a = np.zeros((128, 128), np.float32)
tile_add(a, a, a.copy(), config=RunConfig())
'''


def run_script(tmp_path, **env):
    path = tmp_path / "user_prog.py"
    path.write_text(SCRIPT)
    full = {k: v for k, v in os.environ.items() if k != "PYPTO_FULL_TRACEBACK"}
    full.update(env, PYTHONPATH=PYTHON + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=full,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stderr
    return path, proc.stderr


def frames(stderr):
    return re.findall(r'^  File "([^"]+)", line \d+', stderr, re.M)


def test_script_error_shows_only_the_users_frames_and_a_caret(tmp_path):
    path, err = run_script(tmp_path)
    assert frames(err) == [str(path)], err  # the call line of the user's script, nothing of pypto
    assert f"{path}:11: pl.tile.add: argument 'rhs' has shape [64, 128] but 'lhs' has [128, 128]" in err
    lines = err.splitlines()
    at = lines.index("    pl.store(pl.add(ta, tb), [0, 0], c)")
    caret = lines[at + 1]
    assert caret.index("^") == lines[at].index("tb"), err
    assert caret.strip() == "^^ 'rhs' is tb, 'lhs' is ta", err  # the user's names of the op's parameters
    assert lines[at + 2].startswith("  fix: ")
    assert "PYPTO_FULL_TRACEBACK=1" in err


def test_full_traceback_switch_keeps_the_internal_frames(tmp_path):
    path, err = run_script(tmp_path, PYPTO_FULL_TRACEBACK="1")
    files = frames(err)
    assert files[0] == str(path)
    assert any(pathlib.Path(f).resolve().is_relative_to(PACKAGE) for f in files), err
    assert "^^ 'rhs' is tb, 'lhs' is ta" in err


@pl.jit
def shape_mismatch(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [32, 64])
        y = pl.load(b, [0, 0], [16, 64])
        c = pl.store(pl.mul(x, y), [0, 0], c)
    return c


def test_in_process_traceback_has_no_pypto_frames(monkeypatch):
    monkeypatch.delenv("PYPTO_FULL_TRACEBACK", raising=False)
    a = np.zeros((32, 64), np.float32)
    with pytest.raises(PyptoError) as err:
        shape_mismatch(a, a, a.copy(), config=RunConfig())
    inside = [e.path for e in err.traceback if pathlib.Path(str(e.path)).resolve().is_relative_to(PACKAGE)]
    assert inside == [], inside
    text = str(err.value)
    assert "'rhs' has shape [16, 64] but 'lhs' has [32, 64]" in text
    assert "\n    c = pl.store(pl.mul(x, y), [0, 0], c)\n" in text and "^ 'rhs' is y, 'lhs' is x\n" in text


def test_caret_under_a_sub_expression_and_pl_parse_text():
    text = '''\
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        t = pl.load(a, [0, 0], [16, 16])
        u = pl.load(a, [0, 0], [8, 16])
        out = pl.store(pl.sub(t, pl.exp(u)), [0, 0], out)
        return out
'''
    with pytest.raises(PyptoError) as err:
        pl.parse(text, filename="<my program>")
    msg = str(err.value)
    assert msg.startswith("<my program>:7: ")
    lines = msg.splitlines()
    at = lines.index("    out = pl.store(pl.sub(t, pl.exp(u)), [0, 0], out)")
    assert lines[at + 1].index("^") == lines[at].index("pl.exp(u)")
    assert lines[at + 1].strip() == "^" * len("pl.exp(u)") + " 'rhs' is pl.exp(u), 'lhs' is t"

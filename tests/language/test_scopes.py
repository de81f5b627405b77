"""`with pl.scope():` bounds the lifetime of the tensors created in it (they are not visible
after it); `with pl.manual_scope():` launches kernels without automatic dependencies on
one another (explicit deps only), while tasks outside still order after them. Checked on
the runtime's swimlane (the dependency edges of every task) and on the results."""

import json
import re

import numpy as np
import pypto.language as pl
import pytest
from pypto.ir import print_program
from pypto.runtime import RunConfig, jit_compile

R, C = 8, 64


@pl.jit.incore
def bump(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], out)
    return out


@pl.jit.incore
def double(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = pl.store(pl.muls(pl.load(x, [0, 0], [R, C]), 2.0), [0, 0], out)
    return out


@pl.jit
def automatic(x: pl.Tensor, out: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    out = bump(x, out)
    out = bump(x, out)
    y = double(out, y)
    return out, y


@pl.jit
def manual(x: pl.Tensor, out: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        out = bump(x, out)
        out = bump(x, out)
    y = double(out, y)
    return out, y


@pl.jit
def manual_with_deps(x: pl.Tensor, out: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        with pl.at(level=pl.Level.AIV) as first:
            out = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], out)
        with pl.at(level=pl.Level.AIV, deps=[first]):
            out = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], out)
        with pl.at(level=pl.Level.AIV):
            out = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], out)
    y = double(out, y)
    return out, y


def task_deps(fn, tmp_path):
    """Runs fn on fresh arrays with a swimlane; returns ({task: set of deps}, y)."""
    x = np.random.default_rng(0).standard_normal((R, C)).astype(np.float32)
    out, y = np.zeros_like(x), np.zeros_like(x)
    path = tmp_path / f"{fn.__name__}.json"
    fn(x, out, y, config=RunConfig(enable_chip_swimlane=1, trace_path=str(path), num_workers=2))
    np.testing.assert_allclose(out, x + 1, rtol=1e-6)
    np.testing.assert_allclose(y, (x + 1) * 2, rtol=1e-6)
    events = json.loads(path.read_text())["traceEvents"]
    return {e["args"]["task"]: set(e["args"]["deps"]) for e in events if e["ph"] == "X" and e["pid"] == 0}


def test_automatic_dependencies_order_two_writers(tmp_path):
    assert task_deps(automatic, tmp_path) == {0: set(), 1: {0}, 2: {1}}


def test_manual_scope_drops_edges_between_its_launches_only(tmp_path):
    deps = task_deps(manual, tmp_path)
    assert deps[0] == set() and deps[1] == set()  # the second write does not wait for the first
    assert deps[2] == {0, 1}  # the reader after the scope waits for both writers


def test_manual_scope_keeps_explicit_deps(tmp_path):
    deps = task_deps(manual_with_deps, tmp_path)
    assert deps[1] == {0} and deps[2] == set() and deps[3] == {0, 1, 2}


def test_manual_launches_print_and_parse_back():
    x = np.zeros((R, C), np.float32)
    text = print_program(jit_compile(manual_with_deps, (x, x.copy(), x.copy())).program)
    assert text.count("manual=True") == 3
    text = print_program(jit_compile(manual, (x, x.copy(), x.copy())).program)
    assert text.count("manual=True") == 2
    assert print_program(pl.parse(text)) == text
    calls = [i for i in jit_compile(manual, (x, x.copy(), x.copy())).host_program.code if str(i.kind).endswith("Call")]
    assert [c.attrs.get("manual", False) for c in calls] == [True, True, False]
    parsed = manual.parse([("tensor", (R, C), pl.FP32)] * 3)
    assert print_program(parsed).count("manual=True") == 2
    text = print_program(manual_with_deps.parse([("tensor", (R, C), pl.FP32)] * 3))
    assert text.count("with pl.at(level=pl.Level.AIV") == 3 and text.count("manual=True)") == 3
    again = print_program(pl.parse(text))  # `pl.at(..., manual=True)` reads back (task ids renumbered)
    assert re.sub(r"task_\d+", "task", again) == re.sub(r"task_\d+", "task", text)


@pl.jit
def scoped(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.scope():
        t = pl.create_tensor([R, C], dtype=pl.FP32)
        t = bump(x, t)
        out = double(t, out)
        alias = out
    return alias


def test_scope_runs_and_keeps_rebound_outputs():
    x = np.random.default_rng(1).standard_normal((R, C)).astype(np.float32)
    out = np.zeros_like(x)
    assert scoped(x, out) is out
    np.testing.assert_allclose(out, (x + 1) * 2, rtol=1e-6)


def test_tensor_created_in_a_scope_is_not_visible_after_it():
    @pl.jit
    def leaky(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.scope():
            t = pl.create_tensor([R, C], dtype=pl.FP32)
            t = bump(x, t)
        out = double(t, out)
        return out

    x = np.zeros((R, C), np.float32)
    with pytest.raises(pl.ParseError) as err:
        leaky(x, x.copy())
    msg = str(err.value)
    assert "test_scopes.py:" in msg and "'t' is defined inside `with pl.scope()` at line" in msg
    assert "frees the tensors created in it at its end" in msg and "fix:" in msg


def test_scope_errors_name_the_fix():
    @pl.jit
    def bad_scope(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.scope(1):
            out = bump(x, out)
        return out

    @pl.jit
    def bad_manual(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        out = bump(x, out, manual="yes")
        return out

    x = np.zeros((R, C), np.float32)
    with pytest.raises(pl.ParseError, match=r"mode= of pl.scope takes a pl.ScopeMode, got 1[\s\S]*fix: write pl.scope\(mode=pl.ScopeMode.MANUAL\)"):
        bad_scope(x, x.copy())
    with pytest.raises(pl.ParseError, match=r"manual= takes True or False"):
        bad_manual(x, x.copy())

"""Explicit task edges in the DSL: `with pl.at(...) as tid`, `deps=[tid]` on a later scope or
kernel call; the declared edge reaches the runtime (swimlane flow events) and an edge to a
launch that never ran is reported as the runtime's deadlock error."""

import json

import numpy as np
import pytest

import pypto.language as pl
from pypto import PyptoError
from pypto.runtime import RunConfig

R, C = 32, 64


def swimlane(tmp_path):
    with open(tmp_path / "swimlane.json") as f:
        events = json.load(f)["traceEvents"]
    spans = {e["args"]["task"]: e for e in events if e["ph"] == "X" and e["pid"] == 0}  # host clock (sim adds pid 1)
    return {t: set(e["args"]["deps"]) for t, e in spans.items()}, events


@pl.jit
def declared(x: pl.Tensor, y: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.AIV) as first:
        a = pl.store(pl.add(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], a)
    with pl.at(level=pl.Level.AIV, deps=[first]):
        b = pl.store(pl.mul(pl.load(y, [0, 0], [R, C]), 3.0), [0, 0], b)
    return a, b


@pl.jit
def undeclared(x: pl.Tensor, y: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.AIV):
        a = pl.store(pl.add(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], a)
    with pl.at(level=pl.Level.AIV):
        b = pl.store(pl.mul(pl.load(y, [0, 0], [R, C]), 3.0), [0, 0], b)
    return a, b


def inputs():
    rng = np.random.default_rng(5)
    return [rng.standard_normal((R, C)).astype(np.float32) for _ in range(2)]


def run(fn, tmp_path):
    x, y = inputs()[:2]
    a, b = np.zeros((R, C), np.float32), np.zeros((R, C), np.float32)
    fn(x, y, a, b, config=RunConfig(enable_chip_swimlane=1, output_dir=str(tmp_path), num_workers=2))
    np.testing.assert_allclose(a, x + 1, rtol=1e-6)
    np.testing.assert_allclose(b, y * 3, rtol=1e-6)
    return swimlane(tmp_path)


def test_declared_edge_reaches_the_swimlane(tmp_path):
    deps, events = run(declared, tmp_path)
    assert deps[1] == {0}
    assert any(e["ph"] == "s" for e in events) and any(e["ph"] == "f" for e in events)


def test_without_the_declaration_the_tasks_are_independent(tmp_path):
    deps, events = run(undeclared, tmp_path)
    assert deps[1] == set()
    assert not any(e["ph"] in ("s", "f") for e in events)


def test_codegen_maps_task_ids_to_call_ordinals():
    x, y = inputs()[:2]
    a, b = np.zeros((R, C), np.float32), np.zeros((R, C), np.float32)
    calls = [i for i in declared.compile(x, y, a, b).host_program.code if str(i.kind).endswith("Call")]
    assert [list(c.attrs.get("deps", [])) for c in calls] == [[], [0]]


@pl.jit.incore
def triple(y: pl.Tensor, b: pl.Out[pl.Tensor]):
    b = pl.store(pl.mul(pl.load(y, [0, 0], [R, C]), 3.0), [0, 0], b)
    return b


@pl.jit
def kernel_call_deps(x: pl.Tensor, y: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.AIV) as first:
        a = pl.store(pl.add(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], a)
    b = triple(y, b, deps=[first])
    return a, b


def test_kernel_call_takes_deps(tmp_path):
    deps, _ = run(kernel_call_deps, tmp_path)
    assert deps[1] == {0}


@pl.jit
def after_loop(x: pl.Tensor, y: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    for k in pl.range(n):
        with pl.at(level=pl.Level.AIV) as step:
            a = pl.store(pl.add(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], a)
    with pl.at(level=pl.Level.AIV, deps=[step]):
        b = pl.store(pl.mul(pl.load(y, [0, 0], [R, C]), 3.0), [0, 0], b)
    return a, b


def test_edge_to_the_last_launch_of_a_loop(tmp_path):
    x, y = inputs()[:2]
    a, b = np.zeros((R, C), np.float32), np.zeros((R, C), np.float32)
    after_loop(x, y, a, b, 3, config=RunConfig(enable_chip_swimlane=1, output_dir=str(tmp_path)))
    deps, _ = swimlane(tmp_path)
    assert deps[3] >= {2}
    np.testing.assert_allclose(b, y * 3, rtol=1e-6)


def test_edge_to_a_launch_that_never_ran_is_a_deadlock():
    x, y = inputs()[:2]
    a, b = np.zeros((R, C), np.float32), np.zeros((R, C), np.float32)
    with pytest.raises(PyptoError, match="deadlock: call #1 .* depends on call #0"):
        after_loop(x, y, a, b, 0)


def test_deps_must_name_task_ids():
    @pl.jit
    def bad(x: pl.Tensor, a: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.AIV, deps=[x]):
            a = pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], a)
        return a

    x = np.zeros((R, C), np.float32)
    with pytest.raises(PyptoError, match="deps= must be a list of task ids"):
        bad(x, np.zeros((R, C), np.float32))


@pl.jit.incore
def scale_task(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.muls(pl.load(x, [0, 0], [8, 16]), 2.0), [0, 0], y)
    return y


@pl.jit.incore
def shift_task(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.adds(pl.load(x, [0, 0], [8, 16]), 1.0), [0, 0], y)
    return y


@pl.jit
def submitted(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    t = pl.submit(scale_task, x, a)
    pl.submit(shift_task, x, b, deps=[t])  # no shared data: only the declared edge
    return a, b


@pytest.mark.parametrize("engine", ["native", "sim"])
def test_submit_returns_a_task_id_for_later_deps(tmp_path, engine):
    import json

    x = np.random.default_rng(2).standard_normal((8, 16)).astype(np.float32)
    a, b = np.zeros_like(x), np.zeros_like(x)
    path = str(tmp_path / "swimlane.json")
    submitted(x, a, b, config=RunConfig(engine=engine, enable_chip_swimlane=1, trace_path=path, verify="roundtrip"))
    np.testing.assert_allclose(a, 2 * x)
    np.testing.assert_allclose(b, x + 1)
    ev = [e for e in json.load(open(path))["traceEvents"] if e["ph"] == "X" and e["pid"] == 0]
    assert {e["args"]["task"]: e["args"]["deps"] for e in ev} == {0: [], 1: [0]}


def test_submit_of_something_else_than_a_kernel_is_rejected():
    @pl.jit
    def bad(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        pl.submit(np.add, x, y)
        return y

    x = np.zeros((8, 16), np.float32)
    with pytest.raises(pl.ParseError, match="pl.submit launches a kernel"):
        bad(x, x.copy())

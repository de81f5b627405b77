"""PyPTO's scopes and launches (docs/language.md "Scopes and launches"): every keyword of
pl.at / pl.spmd / pl.submit / pl.spmd_submit is accepted and kept in the IR (printed and
parsed back), and the ones with an effect on our chip have it: name_hint names the kernel,
no_dep_args / pl.no_dep drop the dependency tracking of a tensor, a run-time core_num
launches that many blocks, predicate= retires a task at dispatch, deps=[arr] waits for a
whole task-id array, pl.system.task_dummy joins task ids, pl.scope(mode=MANUAL) is a manual
scope. Results are checked against numpy on both engines, task edges in the swimlane."""

import json

import numpy as np
import pytest

import pypto.language as pl
from pypto import PyptoError, ir
from pypto.runtime import RunConfig

R, C, BAND = 64, 32, 16
ENGINES = ["native", "sim"]


def data(seed=0, shape=(R, C)):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def swimlane(path):
    """{task: set(deps)}, {task: kernel name}, {task: retired} of the host-clock spans."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans = {e["args"]["task"]: e for e in events if e["ph"] == "X" and e["pid"] == 0}
    return ({t: set(e["args"]["deps"]) for t, e in spans.items()}, {t: e["name"] for t, e in spans.items()},
            {t: e["args"].get("retired", False) for t, e in spans.items()})


def config(engine, tmp_path=None, **kw):
    extra = {"enable_chip_swimlane": 1, "trace_path": str(tmp_path / "swimlane.json")} if tmp_path else {}
    return RunConfig(engine=engine, verify="roundtrip", **extra, **kw)


def calls(hp):
    return [i for i in hp.code if str(i.kind).endswith("Call")]


# ---------------------------------------------------------------- pl.at: every keyword


@pl.jit
def at_all_keywords(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)],
               deps=None, no_dep_args=None, dumps=[y], allow_early_resolve=True, name_hint="scale_rows",
               windowize=True):
        y = pl.store(pl.muls(pl.load(x, [0, 0], [R, C]), 2.0), [0, 0], y)
    return y


@pytest.mark.parametrize("engine", ENGINES)
def test_at_accepts_every_keyword_and_names_the_kernel(engine, tmp_path):
    x, y = data(1), np.zeros((R, C), np.float32)
    at_all_keywords(x, y, config=config(engine, tmp_path, save_kernels=True, output_dir=str(tmp_path / "out")))
    np.testing.assert_allclose(y, 2 * x, rtol=1e-6)
    _, names, _ = swimlane(tmp_path / "swimlane.json")
    assert names == {0: "scale_rows"}  # the swimlane lane label is the name_hint
    assert [p.name for p in (tmp_path / "out" / "kernels").glob("*.pto")] == ["scale_rows.pto"]


def test_at_keywords_are_printed_and_parse_back():
    hp = at_all_keywords.compile(data(), np.zeros((R, C), np.float32)).host_program
    assert [k.name for k in hp.kernels] == ["scale_rows"]
    assert list(calls(hp)[0].attrs["dump_args"]) == [1]  # y is argument 1 of the kernel: dumps= for a dump hook
    prog = at_all_keywords.parse([("tensor", [R, C], pl.FP32)] * 2)
    text = ir.print_program(prog)
    assert "optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]" in text
    assert "name_hint='scale_rows'" in text and "allow_early_resolve=True" in text and "windowize=True" in text
    assert "dumps=[y]" in text
    assert ir.structural_equal(prog, pl.parse(text))
    after = at_all_keywords.lower(data(), np.zeros((R, C), np.float32))  # the outlined launch keeps them
    assert ir.structural_equal(after, pl.parse(ir.print_program(after)))


@pl.program
class RoleAndSplit:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, role=pl.Role.SubWorker,
                   optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT, slot_num=3)], name_hint="k"):
            y = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], y)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="k", deps=None):  # a clash: k_1
            y = pl.store(pl.muls(pl.load(y, [0, 0], [R, C]), 3.0), [0, 0], y)
        return y


@pytest.mark.parametrize("engine", ENGINES)
def test_role_split_and_name_clash(engine, tmp_path):
    from pypto.runtime import run

    text = ir.print_program(RoleAndSplit)
    assert "role=pl.Role.SubWorker" in text and "pl.split(pl.SplitMode.LEFT_RIGHT, slot_num=3)" in text
    assert ir.structural_equal(RoleAndSplit, pl.parse(text))
    x, y = data(2), np.zeros((R, C), np.float32)
    run(RoleAndSplit, x, y, config=config(engine, tmp_path))
    np.testing.assert_allclose(y, (x + 1) * 3, rtol=1e-6)
    deps, names, _ = swimlane(tmp_path / "swimlane.json")
    assert names == {0: "k", 1: "k_1"} and deps[1] == {0}


def test_at_rejects_what_pypto_rejects():
    @pl.jit
    def bad_opt(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(pl.Level.CORE_GROUP, optimizations=[1]):
            y = pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], y)
        return y

    @pl.jit
    def bad_kw(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(pl.Level.CORE_GROUP, predicate=(x[0, 0] > 0)):  # pl.at has no predicate=
            y = pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], y)
        return y

    @pl.jit
    def bad_slot(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(pl.Level.CORE_GROUP, optimizations=[pl.cross_core_slot(slot_num=0)]):
            y = pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], y)
        return y

    x = data()
    with pytest.raises(pl.ParseError, match=r"test_scopes_launches.py:\d+.*optimizations= of pl.at holds 1[\s\S]*fix:"):
        bad_opt(x, x.copy())
    with pytest.raises(pl.ParseError, match=r"unexpected keyword argument 'predicate'[\s\S]*fix: call it as pl.at"):
        bad_kw(x, x.copy())
    with pytest.raises(pl.ParseError, match=r"slot_num of pl.cross_core_slot must be a positive integer"):
        bad_slot(x, x.copy())


# ---------------------------------------------------------------- no_dep_args / pl.no_dep


@pl.jit
def tracked(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.AIV):
        a = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], a)
    with pl.at(level=pl.Level.AIV):
        b = pl.store(pl.muls(pl.load(a, [0, 0], [R, C]), 2.0), [0, 0], b)
    return a, b


@pl.jit
def untracked(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.AIV) as first:
        a = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], a)
    with pl.at(level=pl.Level.AIV, no_dep_args=[a]):  # no lookup: no edge on the writer of a
        b = pl.store(pl.muls(pl.load(a, [0, 0], [R, C]), 2.0), [0, 0], b)
    with pl.at(level=pl.Level.AIV, no_dep_args=[a], deps=[first]):  # the edge is the author's
        b = pl.store(pl.muls(pl.load(a, [0, 0], [R, C]), 2.0), [0, 0], b)
    return a, b


@pytest.mark.parametrize("engine", ENGINES)
def test_no_dep_args_drop_the_data_edge(engine, tmp_path):
    x = data(3)
    a, b = np.zeros_like(x), np.zeros_like(x)
    tracked(x, a, b, config=config(engine, tmp_path, num_workers=1))
    assert swimlane(tmp_path / "swimlane.json")[0] == {0: set(), 1: {0}}
    a, b = np.zeros_like(x), np.zeros_like(x)
    untracked(x, a, b, config=config(engine, tmp_path, num_workers=1))  # one worker: runs in order
    np.testing.assert_allclose(b, (x + 1) * 2, rtol=1e-6)
    deps = swimlane(tmp_path / "swimlane.json")[0]
    assert deps[1] == set()  # no_dep_args=[a]: the read of a waits for nobody
    assert deps[2] == {0, 1}  # deps=[first], and the write of b after task 1's (b is tracked: WAW)
    hp = untracked.compile(x, a, b).host_program
    assert [list(c.attrs["no_dep_args"]) for c in calls(hp)[1:]] == [[0], [0]]


@pl.jit.incore
def double_into(src: pl.Tensor, dst: pl.Out[pl.Tensor]):
    dst = pl.store(pl.muls(pl.load(src, [0, 0], [R, C]), 2.0), [0, 0], dst)
    return dst


@pl.jit.incore
def add_one_into(src: pl.Tensor, dst: pl.Out[pl.Tensor]):
    dst = pl.store(pl.adds(pl.load(src, [0, 0], [R, C]), 1.0), [0, 0], dst)
    return dst


@pl.jit
def no_dep_wrapper(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    _, t = pl.submit(add_one_into, x, a)
    _, u = pl.submit(double_into, pl.no_dep(a), b)
    return a, b


@pl.jit
def adir_no_dep(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    _, t = pl.submit(add_one_into, x, a)
    _, u = pl.submit(double_into, a, b, attrs={"arg_directions": [pl.adir.no_dep, pl.adir.output_existing]})
    return a, b


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn", [no_dep_wrapper, adir_no_dep])
def test_pl_no_dep_marks_one_argument(engine, fn, tmp_path):
    x = data(4)
    a, b = np.zeros_like(x), np.zeros_like(x)
    fn(x, a, b, config=config(engine, tmp_path, num_workers=1))
    np.testing.assert_allclose(b, (x + 1) * 2, rtol=1e-6)
    assert swimlane(tmp_path / "swimlane.json")[0] == {0: set(), 1: set()}


# ---------------------------------------------------------------- pl.spmd


@pl.jit
def spmd_loop(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.spmd(R // BAND, name_hint="bands", sync_start=True):  # i: the block index
        out = pl.store(pl.adds(pl.load(x, [i * BAND, 0], [BAND, C]), 2.0), [i * BAND, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_spmd_for_form_outlines_the_body(engine, tmp_path):
    x, out = data(5), np.zeros((R, C), np.float32)
    spmd_loop(x, out, config=config(engine, tmp_path))
    np.testing.assert_allclose(out, x + 2, rtol=1e-6)
    _, names, _ = swimlane(tmp_path / "swimlane.json")
    assert sorted(names) == list(range(R // BAND)) and set(names.values()) == {"bands"}
    hp = spmd_loop.compile(x, out).host_program
    assert calls(hp)[0].attrs["sync_start"] is True


@pl.jit
def spmd_runtime(x: pl.Tensor, out: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.spmd(n):
        i = pl.get_block_idx()
        out = pl.store(pl.adds(pl.load(x, [i * BAND, 0], [BAND, C]), 2.0), [i * BAND, 0], out)
    return out


@pl.jit
def spmd_from_tensor(x: pl.Tensor, counts: pl.Tensor, out: pl.Out[pl.Tensor]):
    n = pl.tensor.read(counts, [0, 0])
    for i in pl.spmd(n):
        out = pl.store(pl.muls(pl.load(x, [i * BAND, 0], [BAND, C]), -1.0), [i * BAND, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_run_time_core_num(engine, tmp_path):
    x = data(6)
    for n in (1, 3):
        out = np.zeros((R, C), np.float32)
        spmd_runtime(x, out, n, config=config(engine, tmp_path))
        want = np.zeros_like(x)
        want[: n * BAND] = x[: n * BAND] + 2
        np.testing.assert_allclose(out, want, rtol=1e-6)
        assert len(swimlane(tmp_path / "swimlane.json")[0]) == n  # n blocks were launched
    counts = np.full((1, 8), 2, np.int32)
    out = np.zeros((R, C), np.float32)
    spmd_from_tensor(x, counts, out, config=config(engine))
    want = np.zeros_like(x)
    want[: 2 * BAND] = -x[: 2 * BAND]
    np.testing.assert_allclose(out, want, rtol=1e-6)
    with pytest.raises(PyptoError, match=r"test_scopes_launches.py:\d+.*over 0 blocks: core_num must be at least 1"):
        spmd_runtime(x, np.zeros_like(x), 0, config=config(engine))


def test_spmd_errors():
    @pl.jit
    def negative(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        for i in pl.spmd(-2):
            out = pl.store(pl.load(x, [0, 0], [BAND, C]), [0, 0], out)
        return out

    @pl.jit
    def float_count(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.spmd(2.5):
            out = pl.store(pl.load(x, [0, 0], [BAND, C]), [0, 0], out)
        return out

    x = data()
    with pytest.raises(pl.ParseError, match=r"test_scopes_launches.py:\d+.*ValueError: core_num of pl.spmd must be "
                                            r"positive, got -2[\s\S]*fix:"):
        negative(x, x.copy())
    with pytest.raises(pl.ParseError, match=r"core_num of pl.spmd must be an integer"):
        float_count(x, x.copy())


# ---------------------------------------------------------------- predicate=


@pl.jit
def predicated(x: pl.Tensor, flag: pl.Tensor, out: pl.Out[pl.Tensor], after: pl.Out[pl.Tensor]):
    with pl.spmd(2, predicate=(flag[0, 0] > 0)) as grid:
        i = pl.get_block_idx()
        out = pl.store(pl.muls(pl.load(x, [i * BAND, 0], [BAND, C]), 2.0), [i * BAND, 0], out)
    with pl.at(level=pl.Level.AIV, deps=[grid]):  # a dependent of the grid still runs
        after = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], after)
    return out, after


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("flag_value", [1, 0])
def test_predicate_is_evaluated_at_dispatch(engine, flag_value, tmp_path):
    x = data(7)
    flag = np.full((1, 8), flag_value, np.int32)
    out, after = np.zeros_like(x), np.zeros_like(x)
    predicated(x, flag, out, after, config=config(engine, tmp_path))
    want = np.zeros_like(x)
    if flag_value:
        want[: 2 * BAND] = 2 * x[: 2 * BAND]
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(after, x + 1, rtol=1e-6)
    deps, _, retired = swimlane(tmp_path / "swimlane.json")
    assert retired == {0: not flag_value, 1: not flag_value, 2: False}
    assert deps[2] == {0, 1}


def test_predicate_prints_and_parses_back():
    hp = predicated.compile(data(), np.ones((1, 8), np.int32), data(), data())
    assert calls(hp.host_program)[0].attrs["predicate_text"].startswith("pl.tensor.read(flag, [0, 0]) > ")


# ---------------------------------------------------------------- submit forms


@pl.program
class Submits:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        y = pl.store(pl.muls(pl.load(x, [0, 0], [R, C]), 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def band(self, x: pl.Tensor[[R, C], pl.FP32], z: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        i = pl.get_block_idx()
        z = pl.store(pl.adds(pl.load(x, [i * BAND, 0], [BAND, C]), 1.0), [i * BAND, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
             z: pl.Out[pl.Tensor[[R, C], pl.FP32]], w: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
        y, t1 = pl.submit(self.scale, x, y)
        z, t2 = pl.spmd_submit(self.band, x, z, core_num=R // BAND, sync_start=True, deps=[t1])
        joined = pl.system.task_dummy(deps=[t1, t2])
        w, t3 = pl.submit(self.scale, x, w, deps=[joined, pl.system.task_invalid()])
        return y, z, w


@pytest.mark.parametrize("engine", ENGINES)
def test_submit_forms_return_results_and_task_ids(engine, tmp_path):
    from pypto.runtime import run

    text = ir.print_program(Submits)
    assert ir.structural_equal(Submits, pl.parse(text))
    x = data(8)
    y, z, w = (np.zeros_like(x) for _ in range(3))
    run(Submits, x, y, z, w, config=config(engine, tmp_path))
    np.testing.assert_allclose(y, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(z, x + 1, rtol=1e-6)
    np.testing.assert_allclose(w, 2 * x, rtol=1e-6)
    deps, names, _ = swimlane(tmp_path / "swimlane.json")
    n = R // BAND
    grid = set(range(1, 1 + n))
    assert all(deps[t] == {0} for t in grid)  # spmd_submit deps=[t1]
    dummy = 1 + n
    assert names[dummy] == "task_dummy" and deps[dummy] == {0} | grid  # joins t1 and the grid
    assert dummy in deps[dummy + 1]  # the last launch waits for the join


@pl.jit.incore
def put(x: pl.Tensor, out: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
    out = pl.store(pl.adds(pl.load(x, [i * BAND, 0], [BAND, C]), 1.0), [i * BAND, 0], out)
    return out


@pl.jit.incore
def total(out: pl.Tensor, res: pl.Out[pl.Tensor]):
    res = pl.store(pl.muls(pl.load(out, [0, 0], [R, C]), 2.0), [0, 0], res)
    return res


@pl.jit
def fan_in(x: pl.Tensor, out: pl.Out[pl.Tensor], res: pl.Out[pl.Tensor]):
    tids = pl.array.create(R // BAND, pl.TASK_ID)
    for i, (arr,) in pl.range(R // BAND, init_values=(tids,)):
        _, t = pl.submit(put, x, out, i)
        arr[i] = t
        arr = pl.yield_(arr)
    with pl.manual_scope():
        _, done = pl.submit(total, out, res, deps=[arr])  # every task stored in the array
    return out, res


@pytest.mark.parametrize("engine", ENGINES)
def test_deps_on_a_whole_task_id_array(engine, tmp_path):
    x = data(9)
    out, res = np.zeros_like(x), np.zeros_like(x)
    fan_in(x, out, res, config=config(engine, tmp_path))
    np.testing.assert_allclose(res, 2 * (x + 1), rtol=1e-6)
    deps = swimlane(tmp_path / "swimlane.json")[0]
    assert deps[R // BAND] == set(range(R // BAND))


# ---------------------------------------------------------------- pl.scope(mode=)


@pl.jit
def manual_mode(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    with pl.scope(mode=pl.ScopeMode.MANUAL):
        with pl.at(level=pl.Level.AIV) as first:
            a = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], a)
        with pl.at(level=pl.Level.AIV, deps=[first]):
            b = pl.store(pl.muls(pl.load(a, [0, 0], [R, C]), 2.0), [0, 0], b)
        with pl.at(level=pl.Level.AIV):
            b = pl.store(pl.muls(pl.load(a, [0, 0], [R, C]), 2.0), [0, 0], b)
    return a, b


@pl.jit
def auto_mode(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    with pl.scope(mode=pl.ScopeMode.AUTO):
        with pl.at(level=pl.Level.AIV):
            a = pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], a)
        with pl.at(level=pl.Level.AIV):
            b = pl.store(pl.muls(pl.load(a, [0, 0], [R, C]), 2.0), [0, 0], b)
    return a, b


@pytest.mark.parametrize("engine", ENGINES)
def test_scope_modes(engine, tmp_path):
    x = data(10)
    a, b = np.zeros_like(x), np.zeros_like(x)
    manual_mode(x, a, b, config=config(engine, tmp_path, num_workers=1))
    np.testing.assert_allclose(b, (x + 1) * 2, rtol=1e-6)
    deps = swimlane(tmp_path / "swimlane.json")[0]
    assert deps[1] == {0} and deps[2] == set()  # MANUAL: only the author's edges
    a, b = np.zeros_like(x), np.zeros_like(x)
    auto_mode(x, a, b, config=config(engine, tmp_path))
    np.testing.assert_allclose(b, (x + 1) * 2, rtol=1e-6)
    assert swimlane(tmp_path / "swimlane.json")[0][1] == {0}


def test_manual_in_manual_is_rejected():
    @pl.jit
    def nested(x: pl.Tensor, a: pl.Out[pl.Tensor]):
        with pl.manual_scope():
            with pl.scope(mode=pl.ScopeMode.MANUAL):
                with pl.at(level=pl.Level.AIV):
                    a = pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], a)
        return a

    x = data()
    with pytest.raises(pl.ParseError, match=r"a manual scope inside a manual scope[\s\S]*fix:"):
        nested(x, x.copy())


@pl.jit
def tile_block_idx(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(R // BAND):
        i = pl.tile.get_block_idx()
        n = pl.tensor.get_block_num()
        out = pl.store(pl.adds(pl.load(x, [i * BAND, 0], [BAND, C]), n * 1.0), [i * BAND, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_namespaced_block_index(engine):
    x, out = data(11), np.zeros((R, C), np.float32)
    tile_block_idx(x, out, config=config(engine))
    np.testing.assert_allclose(out, x + R // BAND, rtol=1e-6)


@pl.jit.incore
def band_kernel(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    i = pl.tile.get_block_idx()
    out = pl.store(pl.muls(pl.load(x, [i * BAND, 0], [BAND, C]), 3.0), [i * BAND, 0], out)
    return out


@pl.jit
def spmd_dispatches_a_kernel(x: pl.Tensor, out: pl.Out[pl.Tensor], out2: pl.Out[pl.Tensor]):
    with pl.spmd(R // BAND):  # the kernel reads the block index of the grid
        out = band_kernel(x, out)
    _, t = pl.spmd_submit(band_kernel, x, out2, core_num=R // BAND)
    return out, out2


@pytest.mark.parametrize("engine", ENGINES)
def test_kernel_reads_the_block_index_of_its_launch(engine):
    x = data(12)
    out, out2 = np.zeros_like(x), np.zeros_like(x)
    spmd_dispatches_a_kernel(x, out, out2, config=config(engine))
    np.testing.assert_allclose(out, 3 * x, rtol=1e-6)
    np.testing.assert_allclose(out2, 3 * x, rtol=1e-6)


@pl.jit.incore
def make_flag(src: pl.Tensor, flag: pl.Out[pl.Tensor]):
    flag = pl.store(pl.load(src, [0, 0], [1, 8]), [0, 0], flag)
    return flag


@pl.jit
def submit_predicate(x: pl.Tensor, src: pl.Tensor, out: pl.Out[pl.Tensor]):
    flag = pl.create_tensor([1, 8], dtype=pl.INT32)
    flag, made = pl.submit(make_flag, src, flag)
    _, t = pl.submit(double_into, x, out, deps=[made], predicate=(flag[0, 3] == 7))  # the producer is in deps
    joins = pl.array.create(1, pl.TASK_ID)
    joins[0] = pl.system.task_dummy(deps=[t])
    _, last = pl.submit(add_one_into, x, out, deps=[joins])
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("value", [7, 5])
def test_submit_predicate_reads_the_producers_value(engine, value, tmp_path):
    x = data(13)
    src = np.full((1, 8), value, np.int32)
    out = np.zeros_like(x)
    submit_predicate(x, src, out, config=config(engine, tmp_path))
    np.testing.assert_allclose(out, x + 1, rtol=1e-6)  # the last launch runs after the (maybe retired) one
    deps, names, retired = swimlane(tmp_path / "swimlane.json")
    assert retired[1] is (value != 7) and deps[1] == {0}
    assert names[2] == "task_dummy" and deps[2] == {1} and 2 in deps[3]


# ---------------------------------------------------------------- pl.cluster

MM = 64
Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right


@pl.program
class ClusterLinearRelu:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[MM, MM], pl.FP32], b: pl.Tensor[[MM, MM], pl.FP32]):
        acc = pl.matmul(pl.move(pl.load(a, [0, 0], [MM, MM], target_memory=Mat), target_memory=Left),
                        pl.move(pl.load(b, [0, 0], [MM, MM], target_memory=Mat), target_memory=Right))
        pl.tpush_to_aiv(acc, aiv=0)

    @pl.function(type=pl.FunctionType.AIV)
    def epilogue(self, bias: pl.Tensor[[MM, MM], pl.FP32], out: pl.Out[pl.Tensor[[MM, MM], pl.FP32]]):
        t = pl.tpop_from_aic([MM, MM], pl.FP32)
        r = pl.relu(pl.add(t, pl.load(bias, [0, 0], [MM, MM])))
        pl.tfree_to_aic(t)
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[MM, MM], pl.FP32], b: pl.Tensor[[MM, MM], pl.FP32],
             bias: pl.Tensor[[MM, MM], pl.FP32], out: pl.Out[pl.Tensor[[MM, MM], pl.FP32]]):
        with pl.cluster(name_hint="fused"):  # one mixed task: the AIC and the AIV part on one cluster
            self.cube(a, b)
            out = self.epilogue(bias, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_cluster_is_a_group_function(engine, tmp_path):
    from pypto.runtime import run

    fused = next(f for f in ClusterLinearRelu.functions if f.name == "fused")
    assert fused.func_type == pl.FunctionType.Group
    text = ir.print_program(ClusterLinearRelu)
    assert ir.structural_equal(ClusterLinearRelu, pl.parse(text))
    rng = np.random.default_rng(14)
    a, b, bias = (rng.standard_normal((MM, MM)).astype(np.float32) for _ in range(3))
    out = np.zeros((MM, MM), np.float32)
    run(ClusterLinearRelu, a, b, bias, out, config=config(engine, tmp_path))
    np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-4, atol=1e-4)
    deps, names, _ = swimlane(tmp_path / "swimlane.json")
    assert names == {0: "fused"}  # one task


def test_cluster_mistakes():
    with pytest.raises(pl.ParseError, match=r"test_scopes_launches.py:\d+: a pl.cluster block holds kernel calls only"
                                            r"[\s\S]*fix: put only calls of self.<AIC function>"):
        @pl.program
        class NotACall:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[MM, MM], pl.FP32], out: pl.Out[pl.Tensor[[MM, MM], pl.FP32]]):
                with pl.cluster():
                    with pl.at(level=pl.Level.AIV):
                        out = pl.store(pl.load(a, [0, 0], [MM, MM]), [0, 0], out)
                return out


@pytest.mark.parametrize("flag_value", [1, 0])
def test_torch_script_honours_the_predicate(flag_value):
    torch = pytest.importorskip("torch")
    from pypto import debug as dbg

    x = data(15)
    flag = np.full((1, 8), flag_value, np.int32)
    compiled = predicated.compile(x, flag, np.zeros_like(x), np.zeros_like(x))
    ns = {}
    exec(compile(dbg.torch_codegen(compiled), "script", "exec"), ns)
    out, after = torch.zeros(R, C), torch.zeros(R, C)
    ns["ENTRY"](torch.from_numpy(x.copy()), torch.from_numpy(flag), out, after)
    want = np.zeros_like(x)
    if flag_value:
        want[: 2 * BAND] = 2 * x[: 2 * BAND]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(after.numpy(), x + 1, rtol=1e-6)


def test_cluster_rejects_early_resolve():
    with pytest.raises(pl.ParseError, match=r"allow_early_resolve= are not allowed under pl.cluster\(\)[\s\S]*fix:"):
        @pl.program
        class EarlyResolve:
            @pl.function(type=pl.FunctionType.AIC)
            def cube(self, a: pl.Tensor[[MM, MM], pl.FP32], b: pl.Tensor[[MM, MM], pl.FP32]):
                acc = pl.matmul(pl.move(pl.load(a, [0, 0], [MM, MM], target_memory=Mat), target_memory=Left),
                                pl.move(pl.load(b, [0, 0], [MM, MM], target_memory=Mat), target_memory=Right))
                pl.tpush_to_aiv(acc, aiv=0)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[MM, MM], pl.FP32], b: pl.Tensor[[MM, MM], pl.FP32]):
                with pl.cluster():
                    self.cube(a, b, allow_early_resolve=True)

"""PyPTO's `pypto.runtime` surface: the module paths programs import, RunConfig's DFX and
sizing fields (each file they write parsed and checked), run() with RunResult and golden
comparison, TensorSpec / ScalarSpec, compile_program / execute_compiled, benchmark, logging,
ChipWorker memory (malloc / copies / DeviceTensor runs in place) and pl.dump_tag. Real runs
on both engines, results checked against numpy."""

import csv
import importlib
import json
import logging
import os

import numpy as np
import pypto.language as pl
import pytest
from pypto import PyptoError, ir
from pypto.language.errors import ParseError
from pypto.runtime import (BenchmarkStats, ChipWorker, CompiledProgram, DeviceTensor, RunConfig, RunResult,
                           ScalarSpec, TensorSpec, Worker, benchmark, compile_program, configure_log,
                           ensure_pto_isa_root, execute_compiled, log_level, pto_isa_include_dir)
import pypto.runtime as runtime

N = 32
ENGINES = ["native", "sim"]


@pl.program
class Diamond:
    """Three tasks: a = x + 1 and b = 2x are independent; out = a + b waits for both."""

    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        y = pl.store(pl.adds(pl.load(x, [0, 0], [N, N]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def dbl(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        y = pl.store(pl.muls(pl.load(x, [0, 0], [N, N]), 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
            y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        y = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        a = pl.create_tensor([N, N], dtype=pl.FP32)
        b = pl.create_tensor([N, N], dtype=pl.FP32)
        a = self.inc(x, a)
        b = self.dbl(x, b)
        out = self.add(a, b, out)
        return out


@pl.program
class Tagged:
    """Diamond with pl.dump_tag(b): only the launch passing b after the tag dumps it."""

    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        y = pl.store(pl.adds(pl.load(x, [0, 0], [N, N]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
            y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        y = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        b = pl.create_tensor([N, N], dtype=pl.FP32)
        b = self.inc(x, b)
        pl.dump_tag(b)
        out = self.add(x, b, out)
        return out


def data(seed=0):
    x = np.random.default_rng(seed).standard_normal((N, N)).astype(np.float32)
    return x, np.zeros_like(x)


def want(x):
    return (x + 1) + 2 * x


# -- module paths ----------------------------------------------------------------------------
def test_module_paths_reexport_the_one_implementation():
    runner = importlib.import_module("pypto.runtime.runner")
    assert runner.RunConfig is RunConfig and runner.run is runtime.run and runner.RunResult is RunResult
    spec = importlib.import_module("pypto.runtime.tensor_spec")
    assert spec.TensorSpec is TensorSpec and spec.ScalarSpec is ScalarSpec
    dev = importlib.import_module("pypto.runtime.device_runner")
    assert dev.ChipWorker is ChipWorker and dev.DeviceTensor is DeviceTensor and dev.execute_compiled is execute_compiled
    gw = importlib.import_module("pypto.runtime.golden_writer")
    assert callable(gw.write_golden) and callable(gw.load_golden)


# -- RunConfig fields ----------------------------------------------------------------------
def test_runconfig_defaults_are_pyptos():
    c = RunConfig()
    assert (c.enable_dump_args, c.enable_pmu, c.enable_dep_gen, c.enable_scope_stats, c.compile_profiling) == (
        0, 0, False, False, False)
    assert c.diagnostic_phase is None and c.disabled_diagnostics is None and c.golden_data_dir is None
    assert c.aicpu_thread_num is None and c.ring_task_window is None and c.ring_heap is None
    assert c.ring_dep_pool is None and c.distributed_config is None and c.memory_planner is None
    assert c.analyze_auto_scopes_for_deps is False and c.dump_ptoas_passes is False
    assert not c.any_dfx_enabled() and c.save_kernels is False


@pytest.mark.parametrize("field", ["enable_dump_args", "enable_pmu", "enable_dep_gen", "enable_scope_stats",
                                   "enable_chip_swimlane"])
def test_any_dfx_flag_forces_save_kernels(field):
    c = RunConfig(**{field: 1})
    assert c.any_dfx_enabled() and c.save_kernels is True


def test_enable_l2_swimlane_is_a_deprecated_alias():
    c = RunConfig()
    with pytest.warns(DeprecationWarning, match="enable_chip_swimlane"):
        assert c.enable_l2_swimlane(True) is c
    assert c.enable_chip_swimlane == 4 and c.save_kernels


def test_ring_task_window_maps_onto_ring_size():
    assert RunConfig(ring_task_window=64).ring_size == 64
    assert RunConfig(ring_task_window=[0, 128, 0, 16]).ring_size == 128
    assert RunConfig(ring_heap=[0, 4096, 0, 0]).ring_heap == [0, 4096, 0, 0]
    assert RunConfig(ring_dep_pool=4).ring_dep_pool == 4


@pytest.mark.parametrize("kwargs, message", [
    ({"ring_task_window": 6}, r"ring_task_window=6\): must be a power of two >= 4"),
    ({"ring_task_window": [0, 2, 0, 0]}, r"entry 2 must be a power of two >= 4"),
    ({"ring_heap": 512}, r"ring_heap=512\): must be a power of two >= 1024"),
    ({"ring_dep_pool": 3}, r"ring_dep_pool=3\): must be an int in \[4, 2147483647\]"),
    ({"ring_dep_pool": [4, 4]}, r"must be None, an int .* or a list of 4"),
    ({"enable_dump_args": 3}, r"enable_dump_args=3\): must be one of 0, 1, 2"),
    ({"aicpu_thread_num": 0}, r"aicpu_thread_num=0\): must be None or an int >= 1"),
    ({"memory_planner": "FAST"}, r"memory_planner='FAST'\): must be None or one of 'PYPTO', 'DSA_RP', 'PTOAS'"),
    ({"distributed_config": {"world_size": 2}}, r"distributed_config=.*must be a pypto.runtime.DistributedConfig"),
])
def test_runconfig_rejects_what_pypto_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RunConfig(**kwargs)


def test_accepted_hints_leave_results_unchanged():
    x, out = data()
    cfg = RunConfig(memory_planner="PYPTO", aicpu_thread_num=2, analyze_auto_scopes_for_deps=True,
                    diagnostic_phase="post_pass", disabled_diagnostics=["perf"], ring_heap=1 << 20, ring_dep_pool=64)
    runtime.run(Diamond, x, out, config=cfg)
    np.testing.assert_allclose(out, want(x), rtol=1e-6)


# -- DFX outputs ---------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_dep_gen_writes_the_edges_the_runtime_used(engine, tmp_path):
    x, out = data()
    compiled = runtime.run(Diamond, x, out, config=RunConfig(engine=engine, enable_dep_gen=True, output_dir=str(tmp_path)))
    np.testing.assert_allclose(out, want(x), rtol=1e-6)
    with open(tmp_path / "dfx_outputs" / "deps.json") as f:
        deps = json.load(f)
    assert [t["kernel"] for t in deps["tasks"]] == ["inc", "dbl", "add"]
    assert sorted(map(tuple, deps["edges"])) == [(0, 2), (1, 2)]  # inc and dbl are independent
    assert [t["deps"] for t in deps["tasks"]] == [[], [], [0, 1]]
    assert compiled.dfx_dir == str(tmp_path / "dfx_outputs")
    assert (tmp_path / "kernels" / "inc.pto").is_file()  # DFX forces save_kernels


@pytest.mark.parametrize("engine", ENGINES)
def test_full_args_dump_writes_every_tensor_before_and_after(engine, tmp_path):
    x, out = data(1)
    runtime.run(Diamond, x, out, config=RunConfig(engine=engine, enable_dump_args=2, output_dir=str(tmp_path)))
    d = tmp_path / "dfx_outputs" / "args_dump"
    entries = json.load(open(d / "args_dump.json"))["entries"]
    assert len(entries) == 2 * (2 + 2 + 3)  # every tensor argument of the 3 tasks, before and after
    by = {(e["kernel"], e["param"], e["phase"]): e for e in entries}
    load = lambda e: np.fromfile(d / e["file"], dtype=np.float32).reshape(e["shape"])
    assert by[("inc", "x", "before")]["dtype"] == "FP32" and by[("inc", "x", "before")]["shape"] == [N, N]
    np.testing.assert_array_equal(load(by[("inc", "x", "before")]), x)
    np.testing.assert_array_equal(load(by[("inc", "y", "before")]), 0)  # a fresh pl.create_tensor
    np.testing.assert_allclose(load(by[("inc", "y", "after")]), x + 1, rtol=1e-6)
    np.testing.assert_allclose(load(by[("dbl", "y", "after")]), 2 * x, rtol=1e-6)
    np.testing.assert_allclose(load(by[("add", "y", "after")]), want(x), rtol=1e-6)
    assert by[("add", "y", "after")]["tensor"] == "out"


@pytest.mark.parametrize("engine", ENGINES)
def test_partial_args_dump_writes_only_dump_tagged_tensors(engine, tmp_path):
    x, out = data(2)
    runtime.run(Tagged, x, out, config=RunConfig(engine=engine, enable_dump_args=1, output_dir=str(tmp_path)))
    np.testing.assert_array_equal(out, x + (x + np.float32(1)))
    d = tmp_path / "dfx_outputs" / "args_dump"
    entries = json.load(open(d / "args_dump.json"))["entries"]
    # inc writes b before the tag: not dumped; add reads b after it: its argument 'b', twice
    assert [(e["task"], e["kernel"], e["param"], e["phase"]) for e in entries] == [
        (1, "add", "b", "before"), (1, "add", "b", "after")]
    np.testing.assert_allclose(np.fromfile(d / entries[0]["file"], dtype=np.float32).reshape(N, N), x + 1, rtol=1e-6)


@pl.jit
def jit_tagged(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.store(pl.adds(pl.load(x, [0, 0], [N, N]), 1.0), [0, 0], t)
    pl.dump_tag(t)
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.store(pl.muls(pl.load(t, [0, 0], [N, N]), 2.0), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_dump_tag_in_a_jit_orchestration(engine, tmp_path):
    x, out = data(3)
    jit_tagged(x, out, config=RunConfig(engine=engine, enable_dump_args=1, output_dir=str(tmp_path)))
    np.testing.assert_array_equal(out, (x + np.float32(1)) * np.float32(2))
    d = tmp_path / "dfx_outputs" / "args_dump"
    entries = json.load(open(d / "args_dump.json"))["entries"]
    assert [(e["task"], e["param"], e["phase"]) for e in entries] == [(1, "t", "before"), (1, "t", "after")]
    np.testing.assert_array_equal(np.fromfile(d / entries[1]["file"], dtype=np.float32).reshape(N, N), x + np.float32(1))


def test_no_dump_without_the_flag(tmp_path):
    x, out = data()
    runtime.run(Tagged, x, out, config=RunConfig(output_dir=str(tmp_path)))
    assert not (tmp_path / "dfx_outputs").exists()


def test_dump_tag_round_trips_and_is_rejected_in_kernels():
    text = ir.print_program(Tagged)
    assert "        pl.tensor.dump_tag(b" in text
    assert ir.structural_equal(pl.parse(text), Tagged)
    with pytest.raises(ParseError, match=r"(?s)test_runtime_api.py:\d+: pl.dump_tag marks a tensor of the orchestration.*fix: call pl.dump_tag"):
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
                pl.dump_tag(x)
                y = pl.store(pl.load(x, [0, 0], [N, N]), [0, 0], y)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
                y = self.k(x, y)
                return y


def test_dump_tag_inside_pl_at_is_a_parse_error():
    @pl.jit
    def f(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.dump_tag(x)
            y = pl.store(pl.load(x, [0, 0], [N, N]), [0, 0], y)
        return y

    x, y = data()
    with pytest.raises(ParseError, match=r"pl.dump_tag .* kernel code"):
        f(x, y)


def test_pmu_writes_modelled_pipe_busy_cycles_on_sim(tmp_path):
    x, out = data()
    runtime.run(Diamond, x, out, config=RunConfig(engine="sim", enable_pmu=2, output_dir=str(tmp_path)))
    rows = list(csv.DictReader(open(tmp_path / "dfx_outputs" / "pmu.csv")))
    assert [r["kernel"] for r in rows] == ["inc", "dbl", "add"]
    for r in rows:
        assert float(r["cycles"]) > 0
        assert float(r["MTE2"]) > 0 and float(r["MTE3"]) > 0 and float(r["V"]) > 0  # loads, store, vector op
        assert max(float(r[p]) for p in ("S", "V", "MTE1", "MTE2", "MTE3", "M", "FIX")) <= float(r["cycles"])


def test_pmu_on_native_has_no_modelled_cycles(tmp_path):
    x, out = data()
    runtime.run(Diamond, x, out, config=RunConfig(engine="native", enable_pmu=2, output_dir=str(tmp_path)))
    rows = list(csv.DictReader(open(tmp_path / "dfx_outputs" / "pmu.csv")))
    assert len(rows) == 3 and all(r["cycles"] == "" and r["V"] == "" for r in rows)


@pytest.mark.parametrize("engine", ENGINES)
def test_scope_stats_counts_tasks_per_launched_kernel(engine, tmp_path):
    x, out = data()
    runtime.run(Diamond, x, out, config=RunConfig(engine=engine, enable_scope_stats=True, output_dir=str(tmp_path)))
    lines = [json.loads(l) for l in open(tmp_path / "dfx_outputs" / "scope_stats" / "scope_stats.jsonl")]
    assert [(l["scope"], l["tasks"]) for l in lines] == [("inc", 1), ("dbl", 1), ("add", 1)]
    assert all((l["modelled_cycles"] > 0) == (engine == "sim") for l in lines)


def test_compile_profiling_writes_the_time_of_each_pass(tmp_path):
    x, out = data()
    runtime.run(Diamond, x, out, config=RunConfig(compile_profiling=True, output_dir=str(tmp_path)))
    prof = json.load(open(tmp_path / "report" / "pipeline_profile.json"))
    from pypto import _core
    names = [p["name"] for p in prof["passes"]]
    assert names == [n for n, _ in _core.pipeline_passes()] + ["LowerProgram"]
    assert all(p["seconds"] >= 0 for p in prof["passes"])
    assert abs(prof["total_seconds"] - sum(p["seconds"] for p in prof["passes"])) < 1e-9
    txt = open(tmp_path / "report" / "pipeline_profile.txt").read()
    assert txt.splitlines()[0].split() == ["pass", "ms", "%"] and "LowerProgram" in txt


# -- run() and RunResult ---------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_run_returns_a_run_result_that_is_also_the_compiled_program(engine):
    x, out = data()
    result = runtime.run(Diamond, x, out, config=RunConfig(engine=engine))
    assert isinstance(result, RunResult) and result.passed and result.error is None
    assert result.test_name == "main" and result.execution_time > 0 and result.profile["tasks"] == 3
    assert isinstance(result.compiled, CompiledProgram) and result.name == "main"
    np.testing.assert_allclose(out, want(x), rtol=1e-6)
    x2, out2 = data(5)
    result(x2, out2)  # runs again without recompiling
    np.testing.assert_allclose(out2, want(x2), rtol=1e-6)
    assert os.fspath(result) == result.compiled.output_dir


@pytest.mark.parametrize("engine", ENGINES)
def test_run_with_specs_and_golden(engine):
    specs = [TensorSpec("x", [N, N], pl.FP32, init_value=lambda shape: np.full(shape, 3.0, np.float32)),
             TensorSpec("out", [N, N], pl.FP32, is_output=True)]
    good = runtime.run(Diamond, *specs, config=RunConfig(engine=engine), golden=lambda t: {"out": 3 * t["x"] + 1},
                       test_name="diamond")
    assert good.passed and good.test_name == "diamond" and good.error is None
    bad = runtime.run(Diamond, *specs, config=RunConfig(engine=engine), golden=lambda t: {"out": 3 * t["x"]})
    assert not bad.passed
    assert bad.error.startswith(f"output 'out': {N * N} of {N * N} elements differ beyond rtol=1e-05, atol=1e-05; "
                                "worst at [0, 0]: got 10.0, golden 9.0")


def test_run_golden_on_plain_arrays_compares_out_params():
    x, out = data()
    def golden(t):
        t["out"] = want(t["x"])
    assert runtime.run(Diamond, x, out, golden=golden).passed


def test_golden_data_dir_keeps_inputs_and_outputs(tmp_path):
    cfg = RunConfig(golden_data_dir=str(tmp_path))
    specs = [TensorSpec("x", [N, N], pl.FP32, init_value=np.arange(N * N, dtype=np.float32).reshape(N, N)),
             TensorSpec("out", [N, N], pl.FP32, is_output=True)]
    calls = []
    def golden(t):
        calls.append(1)
        return {"out": want(t["x"])}
    assert runtime.run(Diamond, *specs, config=cfg, golden=golden).passed
    np.testing.assert_array_equal(np.load(tmp_path / "in" / "x.npy"), specs[0].init_value)
    np.testing.assert_allclose(np.load(tmp_path / "out" / "out.npy"), want(specs[0].init_value))
    assert runtime.run(Diamond, *specs, config=cfg, golden=golden).passed
    assert len(calls) == 1  # the second run reused the saved golden


def test_codegen_only_compiles_without_running():
    x, out = data()
    r = runtime.run(Diamond, x, out, config=RunConfig(codegen_only=True))
    assert r.passed and r.profile is None and not out.any()


def test_tensor_spec_and_scalar_spec():
    assert TensorSpec("a", [2, 3], pl.FP16).create_tensor().dtype == np.float16
    np.testing.assert_array_equal(TensorSpec("a", [2, 2], np.int32, init_value=7).create_tensor(), np.full((2, 2), 7))
    with pytest.raises(ValueError, match=r"TensorSpec\('a'\): init_value has shape \[3\], the spec \[2, 2\]"):
        TensorSpec("a", [2, 2], pl.FP32, init_value=np.zeros(3)).create_tensor()
    with pytest.raises(TypeError, match=r"TensorSpec\('a'\): dtype 'complex' is not supported"):
        TensorSpec("a", [2], "complex")
    assert ScalarSpec("n", 3.7, "int64_t").arg() == 3 and ScalarSpec("s", 2, "float").arg() == 2.0
    torch = pytest.importorskip("torch")
    t = TensorSpec("t", [4], torch.float32, init_value=torch.ones).create_tensor()
    assert isinstance(t, torch.Tensor) and t.sum().item() == 4


# -- compile_program / execute_compiled ------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_compile_to_a_directory_then_run_from_it(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_ENGINE", engine)
    from pypto.backend import BackendType
    from pypto.ir.pass_manager import OptimizationStrategy
    compiled = compile_program(Diamond, tmp_path, strategy=OptimizationStrategy.Default,
                               backend_type=BackendType.Ascend910B, dump_passes=True, profiling=True,
                               analyze_auto_scopes_for_deps=True, memory_planner="PYPTO",
                               enable_pypto_l0c_double_buffer=True)
    for f in ("program.py", "kernel_config.json", "kernels/inc.pto", "report/pipeline_profile.json"):
        assert (tmp_path / f).is_file(), f
    assert any((tmp_path / "passes_dump").iterdir())
    x, out = data(3)
    assert execute_compiled(tmp_path, [x, out], platform="a2a3sim", device_id=0) is compiled
    np.testing.assert_allclose(out, want(x), rtol=1e-6)
    # Another process has no compiled program in memory: it parses program.py again.
    runtime.runner._by_dir.clear()
    x, out = data(4)
    again = execute_compiled(tmp_path, [x, out], platform="a2a3sim")
    assert again is not compiled
    np.testing.assert_allclose(out, want(x), rtol=1e-6)


def test_execute_compiled_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"holds no program.py; fix: compile into it first"):
        execute_compiled(tmp_path, [])
    compile_program(Diamond, tmp_path / "d")
    with pytest.raises(ValueError, match=r"compiled for platform 'a2a3sim', not 'a5sim'"):
        execute_compiled(tmp_path / "d", [], platform="a5sim")


def test_execute_compiled_dfx(tmp_path):
    compile_program(Diamond, tmp_path)
    x, out = data()
    execute_compiled(tmp_path, [x, out], dfx=runtime.runner._DfxOpts(enable_dep_gen=True))
    assert json.load(open(tmp_path / "dfx_outputs" / "deps.json"))["edges"] == [[0, 2], [1, 2]]


# -- benchmark -------------------------------------------------------------------------------
def test_benchmark_sim_reports_modelled_device_time():
    x, out = data()
    compiled = runtime.run(Diamond, x, out, config=RunConfig(engine="sim")).compiled
    stats = benchmark(compiled, [x, out], rounds=4, warmup=1, config=RunConfig(engine="sim"))
    assert isinstance(stats, BenchmarkStats) and stats.rounds == 4 and stats.warmup == 1 and stats.modelled
    from pypto import _core
    # each round's device time is its run's modelled cycles on the chip clock (the cycles
    # depend on which virtual cores the two independent tasks landed on)
    clock = _core.chip_clock_ghz("a2a3sim")
    cycles = [inv.task().attrs["modelled_cycles"] for inv in stats.invocations]
    assert all(c > 0 for c in cycles) and clock == pytest.approx(1.85)
    assert stats.device_wall_us == pytest.approx([c / clock / 1e3 for c in cycles])
    assert len(stats.host_wall_us) == 4 and all(v > 0 for v in stats.host_wall_us)
    assert stats.device_us_min() == pytest.approx(min(cycles) / clock / 1e3)
    assert stats.device_us_mean() == pytest.approx(sum(cycles) / 4 / clock / 1e3)
    expect = stats.device_wall_us[0]
    assert stats.dispatch_tasks() == [3] * 4 and not stats.all_zero_device()
    assert "round 0: host" in stats.format_tree() and "device (modelled)" in stats.format_mean_tree()
    inv = stats.invocations[0]
    assert inv.root().name == "call" and inv.host_wall_us() == stats.host_wall_us[0]
    assert inv.task_name() == "main" and inv.device_wall_us() == pytest.approx(expect) and inv.task().is_device()
    assert inv.format_tree().splitlines()[1].startswith("  main: ")
    assert stats.mean_invocation()["tasks"] == 3
    np.testing.assert_allclose(out, want(x), rtol=1e-6)


def test_benchmark_native_times_real_runs():
    x, out = data()
    stats = benchmark(Diamond, [x, out], rounds=3, warmup=0, config=RunConfig(engine="native"))
    assert not stats.modelled and stats.device_wall_us == stats.host_wall_us and len(stats.samples()) == 3
    assert stats.per_rank() == {0: stats.device_wall_us}
    with pytest.raises(ValueError, match=r"rounds must be an int >= 1"):
        benchmark(Diamond, [x, out], rounds=0)


# -- logging, pto-isa ------------------------------------------------------------------------
def test_configure_log_and_log_level():
    before = logging.getLogger("pypto").level
    try:
        configure_log("DEBUG", sync_pypto=True)
        assert log_level() == logging.DEBUG
        configure_log(logging.ERROR)
        assert log_level() == logging.ERROR
        with pytest.raises(ValueError, match=r"configure_log\(level='LOUD'\): unknown level"):
            configure_log("LOUD")
    finally:
        logging.getLogger("pypto").setLevel(before)


def test_pto_isa_dirs_are_the_optimised_library():
    inc = pto_isa_include_dir()
    assert os.path.isfile(os.path.join(inc, "pypto", "isa", "optimized", "tile_ops.h"))
    assert ensure_pto_isa_root() == os.path.dirname(os.path.abspath(inc))


# -- ChipWorker memory and DeviceTensor ------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_device_tensors_are_read_and_written_in_place(engine):
    x, _ = data(6)
    with ChipWorker(config=RunConfig(engine=engine), level=2, enable_sdma=False) as w:
        assert w.initialized() and w.level() == 2 and w.platform() == "a2a3sim" and w.device_id() == 0
        assert ChipWorker.current(level=2, platform="a2a3sim") is w
        dx = w.alloc_tensor([N, N], pl.FP32, init=x)
        dout = w.alloc_tensor([N, N], np.float32)
        assert isinstance(dx, DeviceTensor) and dx.nbytes() == N * N * 4
        f = w.register(runtime.run(Diamond, x, np.zeros_like(x), config=RunConfig(engine=engine)).compiled)
        f(dx, dout)
        # the run wrote the worker's buffer itself: a view of it sees the result, no copy back
        np.testing.assert_allclose(dout.numpy(), want(x), rtol=1e-6)
        assert dout.numpy().__array_interface__["data"][0] == dout.data_ptr
        host = np.empty((N, N), np.float32)
        w.copy_from(host, dout, dout.nbytes())
        np.testing.assert_allclose(host, want(x), rtol=1e-6)
        w.copy_to(dx, np.ones((N, N), np.float32))
        f(dx, dout)
        np.testing.assert_allclose(dout.numpy(), 4.0)
        w.free_tensor(dx)
        with pytest.raises(ValueError, match=r"'x' is a DeviceTensor that was freed"):
            f(dx, dout)
    assert not w.initialized() and ChipWorker.current(level=2) is None


def test_malloc_copy_and_their_checks():
    with ChipWorker() as w:
        p = w.malloc(64)
        src = np.arange(16, dtype=np.int32)
        w.copy_to(p, src, 64)
        back = np.zeros(16, np.int32)
        w.copy_from(back, p, 64)
        np.testing.assert_array_equal(back, src)
        with pytest.raises(ValueError, match=r"copy_to: 128 bytes do not fit the source of 64 bytes \(destination \? "
                                             r"bytes, source 64 bytes\)"):
            w.copy_to(p, src, 128)
        with pytest.raises(ValueError, match=r"80 bytes at device address 0x[0-9a-f]+ run past its allocation of 64"):
            w.copy_to(p + 16, np.zeros(20, np.int32), 80)
        t = w.alloc_tensor([16], pl.INT32)
        with pytest.raises(TypeError, match=r"the destination \(device\) has dtype INT32 but the source \(host\) has "
                                            r"dtype FP32"):
            w.copy_to(t, np.zeros(16, np.float32))
        with pytest.raises(ValueError, match=r"copy_from: 64 bytes do not fit the destination of 32 bytes"):
            w.copy_from(np.zeros(8, np.int32), t, 64)
        with pytest.raises(ValueError, match=r"copy_from: the destination has 32 bytes and the source 64; fix: pass "
                                             r"nbytes"):
            w.copy_from(np.zeros(8, np.int32), t)
        with pytest.raises(ValueError, match=r"device address 0x[0-9a-f]+ is not in memory this worker allocated"):
            w.copy_to(back.__array_interface__["data"][0], src, 4)
        with pytest.raises(ValueError, match=r"worker_id=1\): a ChipWorker is one chip"):
            w.malloc(4, worker_id=1)
        w.free(p)
        with pytest.raises(ValueError, match=r"not an address this worker's malloc returned \(or freed twice\)"):
            w.free(p)


def test_registration_handle():
    x, out = data()
    with ChipWorker() as w:
        with runtime.RegistrationHandle(w, Diamond, 7) as h:
            assert h.cid() == 7 and isinstance(h.compiled(), CompiledProgram) and not h.closed()
            h(x, out)
            np.testing.assert_allclose(out, want(x), rtol=1e-6)
        assert h.closed()
        with pytest.raises(PyptoError, match=r"registration 7 of 'main' was unregistered; fix: register"):
            h(x, out)


def test_auto_init_false_and_worker():
    w = ChipWorker(auto_init=False)
    assert not w.initialized()
    with pytest.raises(PyptoError, match=r"auto_init=False and is not initialised; fix: call worker.init\(\)"):
        w.register(Diamond)
    assert w.init() is w and w.initialized() and w.runtime() == "tensormap_and_ringbuffer"
    w.close()
    with Worker() as h:
        assert h.level() == 3
        x, out = data()
        h.run(Diamond, x, out)
        np.testing.assert_allclose(out, want(x), rtol=1e-6)
        dt = h.alloc_tensor([N, N], pl.FP32, init=x)
        do = h.alloc_tensor([N, N], pl.FP32)
        h.run(Diamond, dt, do)
        np.testing.assert_allclose(do.numpy(), want(x), rtol=1e-6)


@pl.jit
def jit_dumps(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.store(pl.adds(pl.load(x, [0, 0], [N, N]), 1.0), [0, 0], t)
    with pl.at(level=pl.Level.CORE_GROUP, dumps=[t]):
        out = pl.store(pl.muls(pl.load(t, [0, 0], [N, N]), 2.0), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_dumps_of_a_scope_are_written_at_partial_level(engine, tmp_path):
    x, out = data(4)
    jit_dumps(x, out, config=RunConfig(engine=engine, enable_dump_args=1, output_dir=str(tmp_path)))
    np.testing.assert_array_equal(out, (x + np.float32(1)) * np.float32(2))
    d = tmp_path / "dfx_outputs" / "args_dump"
    entries = json.load(open(d / "args_dump.json"))["entries"]
    # only the second launch names t in dumps=: its argument, before and after it runs
    assert [(e["task"], e["phase"]) for e in entries] == [(1, "before"), (1, "after")]
    np.testing.assert_array_equal(np.fromfile(d / entries[0]["file"], dtype=np.float32).reshape(N, N), x + np.float32(1))

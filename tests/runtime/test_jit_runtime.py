"""The Python runtime surface: RunConfig, jit specialisation and caching, run(), artifacts,
zero-copy in-place outputs, and the errors users hit at call time."""

import re

import numpy as np
import pypto.language as pl
import pytest
from pypto import _core
from pypto.runtime import RunConfig, run


@pl.jit
def add_rows(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 64])
        tb = pl.load(b, [0, 0], [32, 64])
        c = pl.store(pl.add(ta, tb), [0, 0], c)
    return c


def arrays(rows=32, cols=64, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    b = rng.standard_normal((rows, cols), dtype=np.float32)
    return a, b, np.zeros((rows, cols), dtype=np.float32)


def test_jit_call_writes_output_in_place_and_returns_it():
    a, b, c = arrays()
    ptr = c.__array_interface__["data"][0]
    result = add_rows(a, b, c)
    assert result is c
    assert c.__array_interface__["data"][0] == ptr
    np.testing.assert_array_equal(c, a + b)


def test_jit_compiles_once_per_signature():
    a, b, c = arrays(seed=1)
    first = add_rows.compile(a, b, c)
    assert add_rows.compile(a, b, c) is first
    a2, b2, c2 = arrays(seed=2)
    add_rows(a2, b2, c2)
    assert add_rows.compile(a2, b2, c2) is first
    np.testing.assert_array_equal(c2, a2 + b2)


def test_strided_output_view_is_written_in_place():
    a, b, _ = arrays(seed=3)
    big = np.zeros((32, 128), dtype=np.float32)
    view = big[:, ::2]  # every other column: not contiguous
    add_rows(a, b, view)
    np.testing.assert_array_equal(big[:, ::2], a + b)
    assert not big[:, 1::2].any()


def test_torch_tensors_are_bound_without_copies():
    torch = pytest.importorskip("torch")
    a, b = torch.rand(32, 64), torch.rand(32, 64)
    c = torch.zeros(32, 64)
    ptr = c.data_ptr()
    add_rows(a, b, c)
    assert c.data_ptr() == ptr
    assert torch.equal(c, a + b)


def test_lower_returns_the_ir_after_the_pipeline():
    a, b, c = arrays()
    text = _core.ir.print_program(add_rows.lower(a, b, c))
    assert "pl.FunctionType.InCore" in text and "pl.Addr(" in text
    again = pl.parse(text)
    assert _core.ir.structural_equal(again, add_rows.lower(a, b, c))


def test_hardware_platform_fails_clearly():
    a, b, c = arrays()
    with pytest.raises(_core.PyptoError) as err:
        add_rows(a, b, c, config=RunConfig(platform="a2a3"))
    assert re.search(r"no NPU is present.*\n  fix: run on a simulated chip instead: RunConfig\(platform='a2a3sim'\) "
                     r"\(or 'a5sim'\)", str(err.value), re.S), str(err.value)


def test_unknown_platform_and_engine():
    a, b, c = arrays()
    # PyPTO's RunConfig refuses an unknown platform when it is built (ValueError), before any call
    with pytest.raises(ValueError, match=r"test_jit_runtime.py:\d+: RunConfig\(platform='tpu'\): unknown platform"):
        RunConfig(platform="tpu")
    with pytest.raises(ValueError, match="unknown engine"):
        RunConfig(engine="gpu")


def test_a5sim_runs():
    a, b, c = arrays(seed=4)
    add_rows(a, b, c, config=RunConfig(platform="a5sim"))
    np.testing.assert_array_equal(c, a + b)


def test_wrong_argument_shape_dtype_and_readonly_output():
    a, b, c = arrays()
    compiled = add_rows.compile(a, b, c)
    with pytest.raises(
        TypeError, match=r"argument 'a' has shape \[16, 64\].*compiled for \[32, 64\]"
    ):
        compiled(a[:16], b, c)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        compiled(a, b)
    c.flags.writeable = False
    with pytest.raises(ValueError, match="output 'c' is a read-only numpy array"):
        compiled(a, b, c)
    with pytest.raises(TypeError, match="float64 is not supported"):
        add_rows(a.astype(np.float64), b, np.zeros((32, 64)))


def test_dump_passes_and_save_kernels(tmp_path):
    a, b, c = arrays(seed=5)
    cfg = RunConfig(dump_passes=True, save_kernels=True, output_dir=str(tmp_path))
    add_rows(a, b, c, config=cfg)
    np.testing.assert_array_equal(c, a + b)
    dumps = sorted(p.name for p in (tmp_path / "passes_dump").iterdir())
    assert dumps[0].startswith("01_after_") and all(d.endswith(".py") for d in dumps)
    for d in dumps:  # every dump re-parses
        pl.parse((tmp_path / "passes_dump" / d).read_text())
    kernels = list((tmp_path / "kernels").glob("*.pto"))
    assert len(kernels) == 1 and "pto.tadd" in kernels[0].read_text()


def test_class_form_program_with_run():
    @pl.program
    class AddProgram:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            a: pl.Tensor[[32, 64], pl.FP32],
            b: pl.Tensor[[32, 64], pl.FP32],
            c: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
        ) -> pl.Tensor[[32, 64], pl.FP32]:
            ta = pl.load(a, [0, 0], [32, 64])
            tb = pl.load(b, [0, 0], [32, 64])
            c = pl.store(pl.sub(ta, tb), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[32, 64], pl.FP32],
            b: pl.Tensor[[32, 64], pl.FP32],
            c: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
        ) -> pl.Tensor[[32, 64], pl.FP32]:
            c = self.kernel(a, b, c)
            return c

    a, b, c = arrays(seed=6)
    compiled = run(AddProgram, a, b, c)
    np.testing.assert_array_equal(c, a - b)
    assert compiled.param_names == ["a", "b", "c"] and compiled.platform == "a2a3sim"
    a2, b2, c2 = arrays(seed=7)
    compiled(a2, b2, c2)
    np.testing.assert_array_equal(c2, a2 - b2)


def test_program_that_does_not_fit_ub_fails_naming_the_buffer():
    @pl.jit
    def too_big(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [256, 256])
            u = pl.exp(t)
            c = pl.store(pl.add(t, u), [0, 0], c)
        return c

    a = np.zeros((256, 256), dtype=np.float32)
    with pytest.raises(_core.PyptoError) as err:
        too_big(a, np.zeros_like(a))
    msg = str(err.value)
    assert "test_jit_runtime.py:" in msg and "Vec (UB)" in msg and "196608 bytes" in msg
    assert "fix: use smaller tiles" in msg


def test_pypto_compatibility_modules():
    from pypto.backend import BackendType
    from pypto.ir.pass_manager import OptimizationStrategy

    cfg = RunConfig(
        strategy=OptimizationStrategy.Default,
        backend_type=BackendType.Ascend950,
        dump_passes=False,
        device_id=0,
    )
    assert cfg.platform == "a5sim"
    a, b, c = arrays(seed=8)
    add_rows(a, b, c, config=cfg)
    np.testing.assert_array_equal(c, a + b)


# -- RunConfig: one C++ options struct, and the jit cache keyed by it -----------------------

# A value that differs from the default for each field of the C++ options struct.
_CHANGED = {
    "platform": "a5sim", "dump_passes": True, "save_kernels": True, "save_kernels_dir": "kdir",
    "output_dir": "odir", "verify": "off", "compile_profiling": True, "engine": "sim", "num_workers": 2,
    "trace_path": "trace.json", "ring_size": 64, "enable_chip_swimlane": 1, "enable_dump_args": 1,
    "enable_pmu": 2, "enable_dep_gen": True, "enable_scope_stats": True, "codegen_only": True, "device_id": 1,
    "rtol": 0.5, "atol": 0.5, "golden_data_dir": "golden", "aicpu_thread_num": 3,
    "analyze_auto_scopes_for_deps": True, "dump_ptoas_passes": True, "dfx_dir": "dfx",
}


def test_run_config_defaults_are_the_cpp_structs(monkeypatch):
    monkeypatch.delenv("PYPTO_ENGINE", raising=False)
    defaults, cfg = _core.RunConfig(), RunConfig()
    names = [n for n, _, _ in _core.RunConfig.fields()]
    assert set(names) == set(_CHANGED)  # the test covers every field
    for name in names:
        if name != "platform":  # None in C++: the backend's platform, resolved by RunConfig
            assert getattr(cfg, name) == getattr(defaults, name), name
    assert defaults.engine == "native" == cfg.engine  # the documented default engine, one value
    assert defaults.ring_size == 1024 and defaults.verify == "basic" and defaults.rtol == 1e-5
    monkeypatch.setenv("PYPTO_ENGINE", "sim")
    assert RunConfig().engine == "sim"


def test_run_config_builds_the_options_struct(tmp_path):
    cfg = RunConfig(engine="sim", num_workers=3, ring_size=7, trace_path=str(tmp_path / "t.json"),
                    output_dir=str(tmp_path), enable_pmu=True, aicpu_thread_num=2)
    o = cfg.options()
    assert isinstance(o, _core.RunConfig)
    assert (o.engine, o.num_workers, o.ring_size, o.output_dir, o.enable_pmu, o.aicpu_thread_num) == (
        "sim", 3, 7, str(tmp_path), 2, 2)
    assert o.trace_path == str(tmp_path / "t.json") and o.platform == cfg.platform
    paths = o.run_paths("elsewhere")  # output_dir set: it is the build directory
    assert paths["dfx_dir"] == str(tmp_path / "dfx_outputs") and paths["swimlane_path"] == ""
    assert RunConfig(enable_chip_swimlane=1).options().run_paths("b")["swimlane_path"] == "b/swimlane.json"


@pytest.mark.parametrize("name", sorted(_CHANGED))
def test_a_compile_field_misses_the_jit_cache_and_a_run_field_hits_it(name, tmp_path):
    compile_fields = {n for n, compiles, _ in _core.RunConfig.fields() if compiles}
    assert {"platform", "dump_passes", "verify", "output_dir"} <= compile_fields
    assert not {"engine", "trace_path", "num_workers", "enable_pmu", "ring_size"} & compile_fields
    value = _CHANGED[name]
    if isinstance(value, str) and name.endswith(("dir", "path")):
        value = str(tmp_path / value)
    base = RunConfig(output_dir=str(tmp_path / "base"))
    other = RunConfig(**{"output_dir": str(tmp_path / "base"), name: value})
    a, b, c = arrays(seed=5)
    add_rows._cache.clear()
    first = add_rows.compile(a, b, c, config=base)
    again = add_rows.compile(a, b, c, config=other)
    derived = {n for n in compile_fields if getattr(other, n) != getattr(base, n)}  # e.g. DFX flags -> save_kernels
    if name in compile_fields or derived:
        assert again is not first, f"{name} is read by the compile step: a change must compile again"
        assert add_rows.compile(a, b, c, config=other) is again  # and then it is cached
    else:
        assert again is first, f"{name} is run-only: the compiled program must be reused"
    assert add_rows.compile(a, b, c, config=base) is first
    if name == "engine":  # the reused program runs on the other engine
        add_rows(a, b, c, config=other)
        np.testing.assert_array_equal(c, a + b)


def test_class_form_programs_are_cached_by_the_same_key(tmp_path):
    from pypto.jit import compile_cached

    program = add_rows.parse([("tensor", (32, 64), _core.DataType.FP32)] * 3)
    one = compile_cached(program, RunConfig(output_dir=str(tmp_path)))
    assert compile_cached(program, RunConfig(output_dir=str(tmp_path), engine="sim", trace_path="x")) is one
    assert compile_cached(program, RunConfig(output_dir=str(tmp_path), verify="off")) is not one


def test_program_kind_is_decided_in_one_place():
    from pypto.jit import compiled_of, program_kind
    from pypto.runtime import ChipWorker

    @pl.jit.incore
    def kernel(a: pl.Tensor[[32, 64], pl.FP32]):
        return a

    a, b, c = arrays(seed=7)
    compiled = add_rows.compile(a, b, c)
    program = add_rows.parse([("tensor", (32, 64), _core.DataType.FP32)] * 3)
    result = run(program, a, b, c)
    kinds = [program_kind(x) for x in (compiled, result, add_rows, program, kernel, lambda: 0)]
    assert kinds == ["compiled", "result", "jit", "program", "", ""]
    assert compiled_of(result) is result.compiled and compiled_of(compiled) is compiled
    for entry, where in ((lambda p: run(p), "run(program=...)"),
                         (lambda p: pypto_ir().compile(p), "pypto.ir.compile(program=...)"),
                         (lambda p: ChipWorker(config=RunConfig(num_workers=1)).register(p),
                          "ChipWorker.register(program)")):
        with pytest.raises(TypeError, match=r"takes a @pl.program class(,| or) a @pl.jit function.*, got the "
                                            r"@pl.jit.incore function 'kernel'; fix: run the @pl.jit entry") as e:
            entry(kernel)
        assert where in str(e.value)
    with pytest.raises(TypeError, match=r"run\(program=...\) takes .*, got int; fix: decorate the class"):
        run(3)


def pypto_ir():
    import pypto.ir

    return pypto.ir

"""PyPTO's tier-2 runtime surface: `f.compile()` from annotations, the compiled program's
output_dir / platform / param_names, `pypto.ir.compile`, and `pypto.runtime.ChipWorker`
(one worker pool kept across runs). Results are checked against numpy."""

import os
import threading

import numpy as np
import pypto.ir
import pypto.language as pl
import pytest
from pypto import PyptoError
from pypto.backend import BackendType
from pypto.ir.pass_manager import OptimizationStrategy
from pypto.runtime import ChipWorker, CompiledProgram, RunConfig, jit_compile

N = 64


@pl.jit
def annotated_add(a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                  c: pl.Out[pl.Tensor[[N, N], pl.FP32]], scale: pl.Scalar[pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.add(pl.load(a, [0, 0], [N, N]), pl.muls(pl.load(b, [0, 0], [N, N]), scale))
        c = pl.store(t, [0, 0], c)
    return c


@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        y = pl.store(pl.muls(pl.load(x, [0, 0], [N, N]), 3.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        y = self.kernel(x, y)
        return y


def arrays(seed=0):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((N, N)).astype(np.float32) for _ in range(2))
    return a, b, np.zeros((N, N), np.float32)


# -- f.compile() ----------------------------------------------------------------------------
def test_compile_without_arguments_uses_the_annotations(tmp_path):
    compiled = annotated_add.compile(config=RunConfig(output_dir=str(tmp_path)))
    assert isinstance(compiled, CompiledProgram)
    assert compiled.platform == "a2a3sim" and compiled.param_names == ["a", "b", "c", "scale"]
    a, b, c = arrays(1)
    assert compiled(a, b, c, 0.5) is c
    np.testing.assert_allclose(c, a + 0.5 * b, rtol=1e-6)
    # the same specialisation as a call with arrays of the annotated shapes: compiled once
    assert jit_compile(annotated_add, (a, b, c, 0.5), RunConfig(output_dir=str(tmp_path))) is compiled


@pl.jit
def rows_scaled(x: pl.Tensor[[pl.dynamic("M"), N], pl.FP32], y: pl.Out[pl.Tensor[[pl.dynamic("M"), N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(pl.tensor.dim(x, 0) // 16):
            y = pl.store(pl.muls(pl.load(x, [i * 16, 0], [16, N]), 2.0), [i * 16, 0], y)
    return y


def test_compile_without_arguments_keeps_dynamic_dimensions_open():
    compiled = rows_scaled.compile()
    for rows in (32, 80):
        x = np.random.default_rng(rows).standard_normal((rows, N)).astype(np.float32)
        y = np.zeros_like(x)
        compiled(x, y)
        np.testing.assert_allclose(y, 2 * x, rtol=1e-6)
        assert jit_compile(rows_scaled, (x, y)) is compiled  # calls reuse it for every extent


@pl.jit
def bare(a: pl.Tensor, c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    return c


@pl.jit
def unannotated(a, c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    return c


def test_compile_without_arguments_needs_full_annotations():
    with pytest.raises(pl.ParseError) as err:
        bare.compile()
    msg = str(err.value)
    assert "test_chip_worker_api.py:" in msg and "parameter 'a' is annotated bare pl.Tensor" in msg
    assert "fix: annotate it fully, e.g. `a: pl.Tensor[[128, 128], pl.FP32]`" in msg and "bare.compile(*arrays)" in msg
    with pytest.raises(pl.ParseError, match=r"parameter 'a' has no annotation[\s\S]*fix: annotate it fully"):
        unannotated.compile()
    a, _, c = arrays()
    assert bare.compile(a, c).param_names == ["a", "c"]  # example arguments still work


# -- output_dir -----------------------------------------------------------------------------
def test_output_dir_holds_pass_dumps_kernels_and_reports(tmp_path):
    compiled = annotated_add.compile(config=RunConfig(output_dir=str(tmp_path / "build")))
    out = compiled.output_dir
    assert out == str(tmp_path / "build") and os.fspath(compiled) == out
    dumps = sorted(os.listdir(os.path.join(out, "passes_dump")))
    assert dumps and all(d[:2].isdigit() and "_after_" in d and d.endswith(".py") for d in dumps)
    assert any(d.endswith("_after_OutlineIncore.py") for d in dumps)
    for d in dumps:  # every dump parses back
        assert isinstance(pl.loads(os.path.join(out, "passes_dump", d)), pypto.ir.Program)
    kernels = os.listdir(os.path.join(out, "kernels"))
    names = list(compiled.pto())
    assert {n + ".pto" for n in names} <= set(kernels) and {n + ".cpp" for n in names} <= set(kernels)
    with open(os.path.join(out, "kernels", names[0] + ".cpp")) as f:
        assert "pto_kernel_0" in f.read()
    assert {"memory_map.json", "report.html"} <= set(os.listdir(out))


# -- pypto.ir.compile -----------------------------------------------------------------------
def test_ir_compile_of_a_class_form_program(tmp_path):
    compiled = pypto.ir.compile(Scale, output_dir=str(tmp_path), strategy=OptimizationStrategy.Default,
                                backend_type=BackendType.Ascend950)
    assert compiled.platform == "a5sim" and compiled.param_names == ["x", "y"]
    assert os.listdir(tmp_path / "passes_dump") and os.listdir(tmp_path / "kernels")
    x, _, y = arrays(2)
    compiled(x, y)
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)


def test_ir_compile_without_pass_dumps_and_of_a_jit_function(tmp_path):
    compiled = pypto.ir.compile(Scale, output_dir=str(tmp_path / "p"), dump_passes=False, platform="a2a3sim")
    assert not (tmp_path / "p" / "passes_dump").exists() and (tmp_path / "p" / "kernels").is_dir()
    assert compiled.platform == "a2a3sim"
    jit = pypto.ir.compile(annotated_add, output_dir=str(tmp_path / "j"))
    assert jit.param_names == ["a", "b", "c", "scale"] and (tmp_path / "j" / "passes_dump").is_dir()


def test_ir_compile_rejects_unknown_options():
    with pytest.raises(ValueError, match=r"strategy='fast'.*unknown optimisation strategy.*OptimizationStrategy.Default"):
        pypto.ir.compile(Scale, strategy="fast")
    with pytest.raises(ValueError, match=r"backend_type='Ascend999'.*unknown backend.*BackendType.Ascend910B"):
        pypto.ir.compile(Scale, backend_type="Ascend999")
    with pytest.raises(ValueError, match=r"platform='a5sim', backend_type=BackendType.Ascend910B"):
        pypto.ir.compile(Scale, platform="a5sim", backend_type=BackendType.Ascend910B)
    with pytest.raises(PyptoError, match="no NPU is present"):
        pypto.ir.compile(Scale, platform="a2a3")
    with pytest.raises(TypeError, match="takes a @pl.program class"):
        pypto.ir.compile(42)
    with pytest.raises(TypeError, match="dump_passes"):
        pypto.ir.compile(Scale, dump_passes="yes")
    with pytest.raises(ValueError, match=r"RunConfig\(strategy='O3'\)"):
        RunConfig(strategy="O3")
    assert RunConfig(strategy="Default").strategy is OptimizationStrategy.Default


# -- ChipWorker -----------------------------------------------------------------------------
def threads_of_this_process():
    """The task pool's worker threads alive in this process (named pypto-worker): other
    libraries (numpy's BLAS, torch) may start threads of their own at any time."""
    count = 0
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/comm") as f:
                count += f.read().strip() == "pypto-worker"
        except OSError:  # the thread exited while we looked
            pass
    return count


@pytest.mark.parametrize("engine", ["sim", "native"])
def test_chip_worker_runs_registered_programs_on_one_pool(engine):
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("counts threads through /proc")
    cfg = RunConfig(engine=engine, num_workers=3)
    compiled = annotated_add.compile(config=cfg)
    before = threads_of_this_process()
    with ChipWorker(config=cfg) as worker:
        assert worker.num_workers == 3 and threads_of_this_process() == before + 3
        run = worker.register(compiled)
        assert worker.register(compiled) is run
        for seed in range(5):
            a, b, c = arrays(seed)
            assert run(a, b, c, 2.0) is c
            np.testing.assert_allclose(c, a + 2 * b, rtol=1e-6)
            assert threads_of_this_process() == before + 3  # the same workers serve every run
        a, b, c = arrays(9)
        worker.run(compiled, a, b, c, -1.0)
        np.testing.assert_allclose(c, a - b, rtol=1e-6)
        x, _, y = arrays(10)
        worker.run(Scale, x, y)  # a class-form program, compiled for the worker
        np.testing.assert_allclose(y, 3 * x, rtol=1e-6)
        assert worker.runs == 7
    assert worker.closed and threads_of_this_process() == before


def test_closed_chip_worker_is_a_clear_error():
    worker = ChipWorker(config=RunConfig(num_workers=1))
    run = worker.register(annotated_add)  # a @pl.jit function: compiled from its annotations
    worker.close()
    worker.close()  # harmless
    a, b, c = arrays()
    for use in (lambda: run(a, b, c, 1.0), lambda: worker.run(Scale, a, c), lambda: worker.register(Scale)):
        with pytest.raises(PyptoError, match=r"this ChipWorker is closed[\s\S]*fix: create a new pypto.runtime.ChipWorker"):
            use()
    assert "closed" in repr(worker)


def test_chip_worker_checks_platform_and_arguments():
    with pytest.raises(PyptoError, match="no NPU is present"):
        ChipWorker(config=RunConfig(platform="a2a3"))
    with ChipWorker(config=RunConfig(platform="a5sim", num_workers=1)) as worker:
        with pytest.raises(ValueError, match=r"compiled for platform 'a2a3sim' but this worker runs 'a5sim'"):
            worker.register(annotated_add.compile())
        a, b, c = arrays()
        run = worker.register(annotated_add.compile(config=RunConfig(platform="a5sim")))
        with pytest.raises(TypeError, match="takes 4 arguments"):
            run(a, b, c)
        run(a, b, c, 1.0)  # the worker still runs after a rejected call
        np.testing.assert_allclose(c, a + b, rtol=1e-6)


@pl.jit
def offset_load(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]], row: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.store(pl.load(x, [row, 0], [16, N]), [0, 0], y)
    return y


def test_chip_worker_recovers_from_a_failed_task():
    with ChipWorker(config=RunConfig(num_workers=2)) as worker:
        run = worker.register(offset_load)
        x, _, y = arrays(3)
        with pytest.raises(PyptoError, match="goes past the tensor's shape"):
            run(x, y, N - 8)  # rows N-8 .. N+7: outside x
        run(x, y, 8)
        np.testing.assert_array_equal(y[:16], x[8:24])


def test_chip_worker_serialises_runs_from_threads():
    with ChipWorker(config=RunConfig(num_workers=2)) as worker:
        run = worker.register(annotated_add)
        errors = []

        def client(seed):
            try:
                for k in range(5):
                    a, b, c = arrays(seed * 10 + k)
                    run(a, b, c, float(seed))
                    np.testing.assert_allclose(c, a + seed * b, rtol=1e-6)
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=client, args=(s,)) for s in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and worker.runs == 15

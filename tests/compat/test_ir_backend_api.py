"""PyPTO's IR and backend API: pypto.ir.compile's keywords, Program / Function accessors,
python_print / as_python (round trip), PassManager (the same pipeline as compile),
PassContext, IRVisitor / IRMutator, CompiledProgram (pypto.ir.compiled_program: from_dir,
validate_ir, ...), pypto.backend (chip numbers equal the chip table's), and the module paths
pypto.pypto_core(.passes), pypto.backend.pto_backend. Results are checked against numpy, on
both engines where a program runs."""

import json
import os
import subprocess
import sys

import numpy as np
import pypto
import pypto.ir as ir
import pypto.language as pl
import pytest
from pypto import _core
from pypto.backend import BackendType
from pypto.runtime import RunConfig

N = 32
ENGINES = ["native", "sim"]


@pl.program
class AddMul:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
               c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        x = pl.load(a, [0, 0], [N, N])
        y = pl.load(b, [0, 0], [N, N])
        c = pl.store(pl.mul(pl.add(x, y), x), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        c = self.kernel(a, b, c)
        return c


@pl.jit
def jit_add(a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], c)
    return c


def arrays(seed=0):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((N, N)).astype(np.float32) for _ in range(2))
    return a, b, np.zeros((N, N), np.float32)


def expected(a, b):
    return (a + b) * a


@pytest.fixture(autouse=True)
def _fresh_backend():
    pypto.backend.reset_for_testing()
    yield
    pypto.backend.reset_for_testing()


# -- pypto.ir.compile ------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_compile_takes_every_pypto_keyword(tmp_path, engine):
    compiled = ir.compile(
        AddMul, output_dir=str(tmp_path), strategy=ir.OptimizationStrategy.Default, dump_passes=ir.PassDumpLevel.EXPLICIT,
        backend_type=BackendType.Ascend910B, skip_ptoas=True, verification_level=ir.VerificationLevel.ROUNDTRIP,
        diagnostic_phase=ir.DiagnosticPhase.POST_PASS, disabled_diagnostics=ir.DiagnosticCheckSet(),
        memory_planner=ir.MemoryPlanner.PYPTO, enable_pypto_l0c_double_buffer=False, profiling=True, platform=None,
        distributed_config=None, analyze_auto_scopes_for_deps=True, emit_source_loc=True, dump_ptoas_passes=False,
        runtime=ir.RuntimeKind.TENSORMAP_AND_RINGBUFFER)
    assert isinstance(compiled, ir.CompiledProgram)
    assert compiled.platform == "a2a3sim" and compiled.config.verify == "roundtrip"
    assert os.listdir(tmp_path / "passes_dump")
    a, b, c = arrays(1)
    compiled(a, b, c, config=RunConfig(engine=engine))
    np.testing.assert_allclose(c, expected(a, b), rtol=1e-6)


def test_compile_keywords_are_checked(tmp_path):
    with pytest.raises(TypeError, match="distributed_config=.*not a DistributedConfig; fix:"):
        ir.compile(AddMul, distributed_config={"world_size": 2})
    with pytest.raises(ValueError, match="verification_level='strict'.*VerificationLevel.BASIC"):
        ir.compile(AddMul, verification_level="strict")
    with pytest.raises(TypeError, match="skip_ptoas"):
        ir.compile(AddMul, skip_ptoas="no")
    with pytest.raises(ValueError, match="memory_planner"):
        ir.compile(AddMul, memory_planner="greedy")
    off = ir.compile(AddMul, output_dir=str(tmp_path / "o"), verification_level=ir.VerificationLevel.NONE,
                     dump_passes=ir.PassDumpLevel.NONE)
    assert off.config.verify == "off" and not (tmp_path / "o" / "passes_dump").exists()


def test_pass_context_sets_the_verification_of_compiles_inside_it(tmp_path):
    assert ir.PassContext.current() is None
    with ir.PassContext([ir.make_roundtrip_instrument()], verification_level=ir.VerificationLevel.BASIC) as ctx:
        assert ir.PassContext.current() is ctx
        assert ctx.get_verification_level() is ir.VerificationLevel.BASIC
        assert ctx.get_memory_planner() is ir.MemoryPlanner.PYPTO and ctx.get_enable_pypto_l0c_double_buffer() is False
        assert ctx.get_diagnostic_phase() is ir.DiagnosticPhase.PRE_PIPELINE
        assert ctx.get_disabled_diagnostics().empty() and len(ctx.get_instruments()) == 1
        compiled = ir.compile(AddMul, output_dir=str(tmp_path / "r"), dump_passes=False)
        assert compiled.config.verify == "roundtrip"
        with ir.PassContext([], verification_level=ir.VerificationLevel.NONE):
            assert ir.compile(AddMul, output_dir=str(tmp_path / "n"), dump_passes=False).config.verify == "off"
    assert ir.PassContext.current() is None


def test_diagnostic_check_set():
    s = ir.DiagnosticCheckSet()
    assert s.empty()
    s.insert(ir.DiagnosticCheck.UnusedVariable)
    s.insert(ir.DiagnosticCheck.OutParamWriteDropped)
    assert s.contains(ir.DiagnosticCheck.UnusedVariable) and not s.empty()
    t = ir.DiagnosticCheckSet([ir.DiagnosticCheck.UnusedVariable])
    assert s.difference(t).to_list() == [ir.DiagnosticCheck.OutParamWriteDropped]
    assert t.union_with(s) == s
    s.remove(ir.DiagnosticCheck.UnusedVariable)
    assert s.to_list() == [ir.DiagnosticCheck.OutParamWriteDropped]
    with pytest.raises(ValueError, match="not a diagnostic check"):
        s.insert("Bogus")


# -- Program / Function ----------------------------------------------------------------------
def test_program_functions_is_a_name_mapping():
    fns = AddMul.functions
    assert list(fns.keys()) == ["kernel", "main"] and len(fns) == 2
    assert fns["main"].name == "main" and fns[0].name == "kernel"  # by name, and by position
    assert "kernel" in fns and "nope" not in fns
    assert [f.name for f in fns] == ["kernel", "main"]  # iteration yields the functions
    gv, f = fns.items()[1]
    assert gv == "main" and gv.name == "main" and f is fns["main"] and fns[gv] is f
    assert AddMul.get_function("kernel").same_as(fns["kernel"]) and AddMul.get_function("none") is None
    assert AddMul.get_global_var("main").name == "main" and AddMul.get_global_var("none") is None
    assert AddMul.same_as(AddMul) and not fns["kernel"].same_as(fns["main"])


def test_function_accessors():
    k = AddMul.get_function("kernel")
    assert k.param_directions == [ir.ParamDirection.In, ir.ParamDirection.In, ir.ParamDirection.Out]
    assert k.requires_runtime_binding is False and isinstance(k.attrs, dict)
    for name in ("level", "role", "split"):
        assert hasattr(k, name)


def test_as_python_round_trips(tmp_path):
    text = AddMul.as_python()
    assert text == ir.python_print(AddMul) == _core.ir.print_program(AddMul)
    again = pl.parse(text)
    assert ir.structural_equal(again, AddMul)
    # another module name: every `pl` name is renamed; imported as a module, the text gives
    # the same program
    ir_text = AddMul.as_python(prefix="ir", concise=True, format=True)
    assert "pl." not in ir_text and "ir.Tensor[" in ir_text and "import pypto.language as ir" in ir_text
    path = tmp_path / "printed_with_ir.py"
    path.write_text(ir_text)
    import importlib.util

    spec = importlib.util.spec_from_file_location("printed_with_ir", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    programs = [v for v in vars(module).values() if isinstance(v, ir.Program)]
    assert len(programs) == 1 and ir.structural_equal(programs[0], AddMul)
    assert "def kernel" in AddMul.get_function("kernel").as_python()
    with pytest.raises(ValueError, match="prefix"):
        ir.python_print(AddMul, prefix="not a name")


def test_tile_type_accessors():
    t = ir.TileType([ir.ConstInt(16), ir.ConstInt(32)], ir.DataType.FP32, ir.MemorySpace.Mat)
    assert t.memory_space == ir.MemorySpace.Mat and t.tile_view is None
    view = t.get_effective_tile_view()
    assert [d.value for d in view.valid_shape] == [16, 32]
    padded = ir.TileType([ir.ConstInt(16), ir.ConstInt(32)], ir.DataType.FP32, ir.MemorySpace.Vec,
                         [ir.ConstInt(8), ir.ConstInt(32)], ir.PadValue.zero)
    assert [d.value for d in padded.tile_view.valid_shape] == [8, 32] and padded.tile_view.pad == ir.PadValue.zero
    assert ir.TensorType([ir.ConstInt(4)], ir.DataType.FP32).tensor_view is None


# -- PassManager -----------------------------------------------------------------------------
def test_pass_manager_runs_the_pipeline_compile_runs(tmp_path):
    pm = ir.PassManager.get_strategy(ir.OptimizationStrategy.Default, analyze_auto_scopes_for_deps=True)
    assert pm.pass_names() == pm.get_pass_names() == [n for n, _ in _core.pipeline_passes()]
    assert [p.name for p in pm.passes()] == pm.pass_names()
    lowered = pm.run_passes(AddMul, dump_ir=True, output_dir=str(tmp_path), prefix="pl")
    compiled = ir.compile(AddMul, output_dir=str(tmp_path / "c"))
    assert ir.structural_equal(lowered, compiled.program)
    assert sorted(os.listdir(tmp_path / "passes_dump")) == sorted(os.listdir(tmp_path / "c" / "passes_dump"))
    # each pass on its own, in order, gives the same program
    p = AddMul
    for one in pm.passes():
        p = one(p)
    assert ir.structural_equal(p, lowered)
    with ir.PassContext([ir.make_roundtrip_instrument()]):  # print -> parse -> equal after every pass
        assert ir.structural_equal(pm.run_passes(AddMul), lowered)
    from pypto.ir.pass_manager import PassFactory, coerce_dump_level
    assert PassFactory.PlanMemory().name == "PlanMemory"
    assert coerce_dump_level(True) is ir.PassDumpLevel.EXPLICIT and coerce_dump_level(False) is ir.PassDumpLevel.NONE


# -- IRVisitor / IRMutator -------------------------------------------------------------------
def test_visitor_sees_the_calls_and_mutator_rewrites_them():
    class Calls(ir.IRVisitor):
        def __init__(self):
            super().__init__()
            self.ops = []

        def visit_call(self, op):
            self.ops.append(getattr(op, "op_name", None) or op.callee)
            super().visit_call(op)

    v = Calls()
    v.visit_program(AddMul)
    assert v.ops.count("tile.load") == 2 and "tile.add" in v.ops and "tile.mul" in v.ops and "kernel" in v.ops

    class AddToSub(ir.IRMutator):
        def visit_call(self, op):
            op = super().visit_call(op)
            if getattr(op, "op_name", None) == "tile.add":
                return ir.make_call("tile.sub", list(op.args))
            return op

    changed = AddToSub().visit_program(AddMul)
    assert not ir.structural_equal(changed, AddMul)
    assert ir.structural_equal(ir.IRMutator().visit_program(AddMul), AddMul)
    a, b, c = arrays(4)
    pypto.runtime.run(changed, a, b, c)
    np.testing.assert_allclose(c, (a - b) * a, rtol=1e-6)
    assert ir.structural_equal(pl.parse(changed.as_python()), changed)


def test_make_call_and_directions():
    x = ir.Var("x", ir.TileType([ir.ConstInt(16), ir.ConstInt(16)], ir.DataType.FP32))
    call = ir.make_call("tile.add", [x, x], directions=[ir.directions.input, ir.directions.input])
    assert call.op_name == "tile.add" and ir.structural_equal(call.type, x.type)
    assert ir.input == ir.ParamDirection.In and ir.inout == ir.ParamDirection.InOut and ir.output_existing == ir.output
    with pytest.raises(ValueError, match="one direction per argument"):
        ir.make_call("tile.add", [x, x], directions=[ir.input])


# -- CompiledProgram -------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_compiled_program_api(tmp_path, engine):
    from pypto.ir.compiled_program import CompiledProgram

    assert CompiledProgram is ir.CompiledProgram is pypto.runtime.CompiledProgram
    compiled = ir.compile(AddMul, output_dir=str(tmp_path))
    assert compiled.output_dir == str(tmp_path) and compiled.backend_type is BackendType.Ascend910B
    assert compiled.param_names == ["a", "b", "c"] and compiled.output_indices == [2] and compiled.has_return
    assert compiled.orchestration_names == ["main"] and ir.structural_equal(compiled.program, compiled._compiled.lowered)
    a, b, c = arrays(2)
    assert compiled.validate_ir([a, b, c], [expected(a, b)]) is True
    assert compiled.validate_ir({"a": a, "b": b, "c": c}, {"c": expected(a, b)}, rtol=1e-5, atol=1e-5)
    assert not c.any()  # validate_ir ran on copies
    with pytest.raises(AssertionError, match="output 'c' differs"):
        compiled.validate_ir([a, b, c], [expected(a, b) + 1.0])
    bound = compiled.build_orch_args(a, b, c)
    assert len(bound) == 3
    cfg = compiled.build_call_config(RunConfig(engine=engine), aicpu_thread_num=4, dfx_dir=str(tmp_path / "dfx"))
    assert cfg.engine == engine and cfg.output_dir == str(tmp_path / "dfx")
    assert compiled(a, b, c, config=cfg) is c
    np.testing.assert_allclose(c, expected(a, b), rtol=1e-6)

    manifest = json.loads((tmp_path / "compiled_program.json").read_text())
    assert manifest["platform"] == "a2a3sim" and manifest["entry"] == "main"
    again = CompiledProgram.from_dir(str(tmp_path))
    assert isinstance(again, CompiledProgram) and again.platform == "a2a3sim"
    assert ir.structural_equal(again.program, compiled.program)
    c2 = np.zeros_like(c)
    again(a, b, c2, config=RunConfig(engine=engine))
    np.testing.assert_allclose(c2, expected(a, b), rtol=1e-6)
    on950 = CompiledProgram.from_dir(tmp_path, backend_type=BackendType.Ascend950)
    assert on950.platform == "a5sim" and on950.backend_type is BackendType.Ascend950
    with pytest.raises(FileNotFoundError, match="compiled_program.json"):
        CompiledProgram.from_dir(str(tmp_path / "passes_dump"))


def test_compiled_program_pypto_constructor(tmp_path):
    compiled = ir.CompiledProgram(AddMul, str(tmp_path), backend_type=BackendType.Ascend950)
    assert compiled.platform == "a5sim"
    a, b, c = arrays(3)
    compiled(a, b, c)
    np.testing.assert_allclose(c, expected(a, b), rtol=1e-6)
    assert isinstance(pypto.runtime.run(AddMul, a, b, c).compiled, ir.CompiledProgram)
    jitted = jit_add.compile(config=RunConfig(output_dir=str(tmp_path / "jit")))
    assert isinstance(jitted, ir.CompiledProgram) and jitted.orchestration_names and jitted.has_return
    jitted(a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    # a jit function's build directory reloads too (its specialised program is written)
    reloaded = ir.CompiledProgram.from_dir(jitted.output_dir)
    c2 = np.zeros_like(c)
    reloaded(a, b, c2)
    np.testing.assert_array_equal(c2, c)


# -- pypto.backend ---------------------------------------------------------------------------
@pytest.mark.parametrize("cls, platform", [(pypto.backend.Backend910B, "a2a3sim"),
                                           (pypto.backend.Backend950, "a5sim")])
def test_backend_numbers_are_the_chip_tables(cls, platform):
    spec = _core.chip_spec(platform)
    be = cls.instance()
    assert be is cls.instance() and be.platform == platform
    assert be.get_type_name() == be.backend_type.name
    M = ir.MemorySpace
    for m in (M.Vec, M.Mat, M.Left, M.Right, M.Acc, M.Bias):
        assert be.get_mem_size(m) == spec["capacity"][m.name] > 0
    assert be.get_core_count(pypto.backend.CoreType.AIC) == spec["aic_cores"]
    assert be.get_core_count("AIV") == spec["aiv_cores"]
    soc = be.soc()
    assert soc.total_die_count() == 1 and soc.total_cluster_count() == spec["clusters"]
    assert soc.total_core_count() == spec["aic_cores"] + spec["aiv_cores"]
    (die, _), = soc.die_counts()
    (cluster, n), = die.cluster_counts()
    assert n == spec["clusters"] and cluster.total_core_count() == 3
    for core, count in cluster.core_counts().items():
        assert count == {"AIC": 1, "AIV": 2}[core.core_type.name]
        for mem in core.mems:
            assert mem.mem_size == spec["capacity"][mem.mem_type.name] and mem.alignment == spec["alignment_bytes"]
    # a Vec tile passes Mat on its way to Left; DDR loads into Mat; Acc stores to DDR
    assert be.find_mem_path(M.Vec, M.Left) == [M.Vec, M.Mat, M.Left]
    assert be.find_mem_path(M.DDR, M.Right) == [M.DDR, M.Mat, M.Right]
    assert be.find_mem_path(M.Acc, M.DDR) == [M.Acc, M.DDR]
    assert be.find_mem_path(M.Left, M.Vec) == []


BIG = 256


@pl.program
class BigCopy:  # one 256x256 fp32 tile: 256 KiB
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[BIG, BIG], pl.FP32],
               c: pl.Out[pl.Tensor[[BIG, BIG], pl.FP32]]) -> pl.Tensor[[BIG, BIG], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [BIG, BIG]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[BIG, BIG], pl.FP32],
             c: pl.Out[pl.Tensor[[BIG, BIG], pl.FP32]]) -> pl.Tensor[[BIG, BIG], pl.FP32]:
        c = self.kernel(a, c)
        return c


def test_the_chip_numbers_are_the_ones_memory_planning_enforces(tmp_path):
    # docs/language.md: UB 192 KiB, L1 512 KiB, L0A/L0B 64 KiB, L0C 128 KiB on a2a3sim
    b910 = pypto.backend.Backend910B.instance()
    M = ir.MemorySpace
    assert [b910.get_mem_size(m) for m in (M.Vec, M.Mat, M.Left, M.Right, M.Acc)] == \
        [192 * 1024, 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024]
    assert b910.get_core_count("AIC") == 24 and b910.get_core_count("AIV") == 48
    # a 256 KiB Vec tile is over the 910B's UB and within the 950's
    assert b910.get_mem_size(M.Vec) < BIG * BIG * 4 <= pypto.backend.Backend950.instance().get_mem_size(M.Vec)
    with pytest.raises(pypto.PyptoError, match=f"the a2a3sim chip has {b910.get_mem_size(M.Vec)} bytes"):
        ir.compile(BigCopy, output_dir=str(tmp_path / "910"), backend_type=BackendType.Ascend910B)
    compiled = ir.compile(BigCopy, output_dir=str(tmp_path / "950"), backend_type=BackendType.Ascend950)
    a = np.random.default_rng(7).standard_normal((BIG, BIG)).astype(np.float32)
    c = np.zeros_like(a)
    compiled(a, c)
    np.testing.assert_array_equal(c, a)


def test_set_backend_type_selects_the_default_platform(tmp_path):
    assert not pypto.backend.is_backend_configured()
    assert pypto.backend.get_backend_type() is BackendType.Ascend910B
    pypto.backend.set_backend_type(BackendType.Ascend950)
    assert pypto.backend.is_backend_configured() and pypto.backend.get_backend_type() is BackendType.Ascend950
    assert pypto.backend.get_backend_instance() is pypto.backend.Backend950.instance()
    compiled = ir.compile(AddMul, output_dir=str(tmp_path), dump_passes=False)
    assert compiled.platform == "a5sim" and RunConfig().platform == "a5sim"
    a, b, c = arrays(5)
    compiled(a, b, c)
    np.testing.assert_allclose(c, expected(a, b), rtol=1e-6)
    pypto.backend.set_backend_type(BackendType.Ascend950)  # the same again is fine
    with pytest.raises(ValueError, match="already configured.*reset_for_testing"):
        pypto.backend.set_backend_type(BackendType.Ascend910B)
    pypto.backend.reset_for_testing()
    assert RunConfig().platform == "a2a3sim"
    assert BackendType.Ascend910B.name == "Ascend910B" and BackendType.Ascend950.value == "a5sim"
    assert BackendType.name is not None and BackendType.value is not None


# -- module paths ----------------------------------------------------------------------------
def test_module_paths():
    from pypto.backend.pto_backend import PartialCodegenError
    from pypto.pypto_core import passes

    import pypto.pypto_core as pypto_core

    assert issubclass(PartialCodegenError, pypto.PyptoError)
    assert pypto_core.ir is _core.ir and pypto_core.DataType is _core.DataType
    assert passes.PassContext is ir.PassContext and passes.plan_memory().name == "PlanMemory"
    # `import pypto` alone reaches the submodules
    code = ("import pypto; print(pypto.ir.compile.__name__, pypto.backend.BackendType.Ascend950.name, "
            "pypto.ir.pass_manager.PassManager.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.split() == ["compile", "Ascend950", "PassManager"], out.stderr


# -- IRBuilder -------------------------------------------------------------------------------
def _build_add_mul(ib):
    fp32 = ir.DataType.FP32
    with ib.program("AddMul") as p:
        t = ib.tensor_type([N, N], fp32)
        for name, func_type in (("kernel", ir.FunctionType.InCore), ("main", ir.FunctionType.Orchestration)):
            with ib.function(name, type=func_type) as f:
                a, b = f.param("a", t), f.param("b", t)
                c = f.param("c", t, ir.directions.output)
                f.return_type(t)
                assert ib.in_function() and not ib.in_loop()
                if name == "kernel":
                    x = ib.let("x", ir.op.tile.load(a, ib.make_tuple([0, 0]), shape=[N, N]))
                    y = ib.let("y", ir.op.tile.load(b, ib.make_tuple([0, 0]), shape=[N, N]))
                    out = ib.let("c", ir.op.tile.store(ir.op.tile.mul(ir.op.tile.add(x, y), x),
                                                       ib.make_tuple([0, 0]), c))
                else:
                    out = ib.let("c", ir.FuncCall("kernel", [a, b, c], t))
                ib.return_stmt([out])
    return p.get_result()


def test_ir_builder_builds_the_parsed_program():
    built = _build_add_mul(ir.IRBuilder())
    assert ir.structural_equal(built, AddMul)
    assert ir.structural_equal(pl.parse(built.as_python()), built)


@pytest.mark.parametrize("engine", ENGINES)
def test_ir_builder_loop_with_a_carried_tile(engine):
    ib = ir.IRBuilder()
    fp32 = ir.DataType.FP32
    with ib.program("Loop") as p:
        t = ib.tensor_type([N, N], fp32)
        with ib.function("kernel", type=ir.FunctionType.InCore) as f:
            a, b, c = f.param("a", t), f.param("b", t), f.param("c", t, ir.directions.output)
            f.return_type(t)
            x = ib.let("x", ir.op.tile.load(a, ib.make_tuple([0, 0]), shape=[N, N]))
            y = ib.let("y", ir.op.tile.load(b, ib.make_tuple([0, 0]), shape=[N, N]))
            i = ib.var("i", ir.ScalarType(ir.DataType.INDEX))
            with ib.for_loop(i, 0, 3, 1) as loop:
                acc = loop.iter_arg("acc", x)
                total = loop.return_var("total")
                assert ib.in_loop()
                nxt = ib.let("nxt", ir.op.tile.add(acc, y))
                ib.yield_([nxt])
            out = ib.let("c", ir.op.tile.store(total, ib.make_tuple([0, 0]), c))
            ib.return_stmt([out])
        with ib.function("main", type=ir.FunctionType.Orchestration) as g:
            a, b, c = g.param("a", t), g.param("b", t), g.param("c", t, ir.directions.output)
            g.return_type(t)
            ib.return_stmt([ib.let("c", ir.FuncCall("kernel", [a, b, c], t))])
    program = p.get_result()
    assert ir.structural_equal(pl.parse(program.as_python()), program)
    a, b, c = arrays(6)
    pypto.runtime.run(program, a, b, c, config=RunConfig(engine=engine))
    np.testing.assert_allclose(c, ((a + b) + b) + b, rtol=1e-6)  # the loop's order of fp32 adds


def test_ir_builder_refuses_what_the_ir_cannot_hold():
    ib = ir.IRBuilder()
    with pytest.raises(NotImplementedError, match="memref.*fix:"):
        ib.memref(ir.MemorySpace.Vec, 0, 1024)
    with pytest.raises(NotImplementedError, match="break_stmt.*fix:"):
        ib.break_stmt()
    with pytest.raises(RuntimeError, match="outside a function"):
        ib.let("x", 1)


def test_backend_export_and_import(tmp_path):
    be = pypto.backend.Backend950.instance()
    path = tmp_path / "chip.json"
    be.export_to_file(str(path))
    assert json.loads(path.read_text())["capacity"]["Vec"] == _core.chip_spec("a5sim")["capacity"]["Vec"]
    assert pypto.backend.Backend.import_from_file(str(path)) is be and be.get_handler() is be
    data = json.loads(path.read_text())
    data["capacity"]["Vec"] = 1
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="differ from the a5sim chip table"):
        pypto.backend.Backend.import_from_file(str(path))


def test_ir_op_namespace_builds_calls():
    x = ir.Var("x", ir.TileType([ir.ConstInt(16), ir.ConstInt(16)], ir.DataType.FP32))
    call = ir.op.tile.mul(x, x)
    assert call.op_name == "tile.mul" and ir.structural_equal(call, ir.make_call("tile.mul", [x, x]))
    with pytest.raises(AttributeError, match="no op 'tile.nonsense'"):
        ir.op.tile.nonsense

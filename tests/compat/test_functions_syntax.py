"""PyPTO compatibility: decorators, function kinds and syntactic forms. Programs written in
PyPTO's idioms run on both engines against numpy; hints are kept in the IR and round-trip
(print -> pl.parse -> structurally equal); errors name the user's line and a fix."""

import importlib.util
import pathlib
import textwrap
import warnings

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import ParseError, SSAViolationError
from pypto.runtime import RunConfig, run

HERE = pathlib.Path(__file__)
SOURCE = HERE.read_text().splitlines()


def line_of(marker):
    hits = [i + 1 for i, text in enumerate(SOURCE) if text.rstrip().endswith(f"# E:{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def roundtrip(program):
    text = ir.print_program(program)
    again = pl.parse(text)
    assert ir.structural_equal(program, again), text
    assert ir.print_program(again) == text
    return text


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------ @pl.function keywords
@pl.program
class Hinted:
    @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CORE_GROUP)
    def scale(self, x: pl.Tensor[[32, 64], pl.FP32], f: pl.FP32,
              out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        pl.func_attr({"tile_hint": 32, "mode": "fast"})
        t = pl.load(x, [0, 0], [32, 64])
        out = pl.store(pl.mul(t, f), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST, role=pl.Role.Orchestrator,
                 auto_scope=False)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        out = self.scale(x, 2.0 ** 3, out)
        return out


def test_function_hints_are_kept_printed_and_run(engine):
    fn = Hinted.find("scale")
    assert fn.level == pl.Level.CORE_GROUP and fn.role is None
    assert fn.attrs == {"tile_hint": 32, "mode": "fast"}
    main = Hinted.find("main")
    assert main.level == pl.Level.HOST and main.role == pl.Role.Orchestrator
    text = roundtrip(Hinted)
    assert "level=pl.Level.CORE_GROUP)" in text
    assert "role=pl.Role.Orchestrator)" in text
    assert "pl.func_attr({'mode': 'fast', 'tile_hint': 32})" in text
    x, out = rand(32, 64), np.zeros((32, 64), np.float32)
    run(Hinted, x, out, config=RunConfig(verify="roundtrip"))  # every pass's output round-trips too
    np.testing.assert_allclose(out, x * 8.0, rtol=1e-6)  # 2.0 ** 3 folded at parse time


def test_attrs_keyword_warns_deprecated_and_is_kept():
    with pytest.warns(DeprecationWarning, match="pl.func_attr"):
        @pl.program
        class Old:
            @pl.function(type=pl.FunctionType.InCore, attrs={"k": 1})
            def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
                out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
                return out
    assert Old.find("k").attrs == {"k": 1}
    roundtrip(Old)


def test_func_attr_errors():
    with pytest.raises(ParseError, match="first statement") as e:
        @pl.program
        class Late:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
                t = pl.load(x, [0, 0], [16, 16])
                pl.func_attr({"a": 1})  # E:late_attr
    assert f"{HERE}:{line_of('late_attr')}:" in str(e.value) and "fix:" in str(e.value)
    with pytest.raises(ParseError, match="'a' is given twice"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)

            @pl.program
            class Dup:
                @pl.function(type=pl.FunctionType.InCore, attrs={"a": 1})
                def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
                    pl.func_attr({"a": 2})
    with pytest.raises(ParseError, match="not a compile-time constant"):
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
                pl.func_attr({"a": {1: 2}})


def test_function_keyword_errors():
    with pytest.raises(ParseError, match="level= of pl.function must be a pl.Level") as e:
        pl.function(level="HOST")  # E:bad_level
    assert f"{HERE}:{line_of('bad_level')}:" in str(e.value)
    with pytest.raises(ParseError, match="pl.function: .*bogus"):
        pl.function(bogus=1)
    with pytest.raises(ParseError, match="external_source= is for AIC or AIV"):
        pl.function(type=pl.FunctionType.InCore, external_source="k.cpp")


def test_function_type_graph_member():
    assert pl.FunctionType.Graph.name == "Graph"
    assert "Graph" in pl.FunctionType.__members__


# ------------------------------------------------------------------ strict_ssa
def test_strict_ssa_rebinding_is_an_error():
    with pytest.raises(SSAViolationError, match="'t' is assigned again") as e:
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore, strict_ssa=True)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
                t = pl.load(x, [0, 0], [16, 16])
                t = pl.exp(t)  # E:ssa_rebind
                out = pl.store(t, [0, 0], out)
                return out
    assert f"{HERE}:{line_of('ssa_rebind')}:" in str(e.value) and "fix:" in str(e.value)


def test_strict_ssa_from_program_turns_off_subscript_writes():
    with pytest.raises(ParseError, match="subscript writes are off") as e:
        @pl.program(strict_ssa=True)
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
                t = pl.load(x, [0, 0], [16, 16])
                out[:] = t  # E:ssa_write
                return out
    assert f"{HERE}:{line_of('ssa_write')}:" in str(e.value)


@pl.program(strict_ssa=True)
class StrictOk:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t0 = pl.load(x, [0, 0], [16, 16])
        t1 = pl.load(x, [0, 0], [16, 16])
        for i, (acc,) in pl.range(3, init_values=(t0,)):
            nxt = pl.add(acc, t1)
            acc_out = pl.yield_(nxt)
        o2 = pl.store(acc_out, [0, 0], out)
        return o2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = self.k(x, out)
        return o


def test_strict_ssa_program_in_ssa_form_runs(engine):
    roundtrip(StrictOk)
    x, out = rand(16, 16), np.zeros((16, 16), np.float32)
    run(StrictOk, x, out)
    np.testing.assert_allclose(out, x * 4, rtol=1e-5)


# ------------------------------------------------------------------ external sources
def test_external_source_function_fails_at_compile_naming_the_file():
    @pl.program
    class Ext:
        @pl.function(type=pl.FunctionType.AIV, external_source="kernels/my_add.cpp")
        def add_k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            ...

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            self.add_k(x, out)

    assert Ext.find("add_k").attrs == {"external_source": "kernels/my_add.cpp"}
    roundtrip(Ext)
    with pytest.raises(pl.PyptoError, match=r"kernels/my_add\.cpp.*cannot run on the virtual chip"):
        run(Ext, rand(16, 16), np.zeros((16, 16), np.float32))


def test_external_source_needs_ellipsis_body():
    with pytest.raises(ParseError, match="body must be `...`"):
        @pl.program
        class Ext:
            @pl.function(type=pl.FunctionType.AIV, external_source="k.cpp")
            def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
                t = pl.load(x, [0, 0], [16, 16])


# ------------------------------------------------------------------ pl.jit family
@pl.jit.incore(level=pl.Level.CORE_GROUP)
def k_scale(x: pl.Tensor, f: pl.FP32, out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [32, 64])
    out = pl.store(pl.mul(t, f), [0, 0], out)
    return out


@pl.jit(auto_scope=False)
def jit_scale(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = k_scale(x, 3.0, out)
    return out


def test_jit_incore_level_and_auto_scope(engine):
    x, out = rand(32, 64), np.zeros((32, 64), np.float32)
    jit_scale(x, out)
    np.testing.assert_allclose(out, x * 3, rtol=1e-6)
    prog = jit_scale.parse([("tensor", (32, 64), pl.FP32), ("tensor", (32, 64), pl.FP32)])
    assert prog.find("k_scale").level == pl.Level.CORE_GROUP
    roundtrip(prog)


def test_jit_unknown_keyword_is_an_error():
    with pytest.raises(ParseError, match="pl.jit has no keyword 'bogus'") as e:
        pl.jit(bogus=1)  # E:jit_bogus
    assert f"{HERE}:{line_of('jit_bogus')}:" in str(e.value) and "fix:" in str(e.value)
    with pytest.raises(ParseError, match=r"pl.jit.host has no keyword 'level'"):
        pl.jit.host(level=pl.Level.HOST)
    with pytest.raises(ParseError, match="pl.jit.incore does not"):
        pl.jit.incore(auto_scope=False)
    assert pl.jit.incore(auto_scope=True) is not None


def test_jit_signatures_are_pyptos():
    import inspect
    assert list(inspect.signature(pl.jit).parameters) == ["func", "auto_scope"]
    assert list(inspect.signature(pl.jit.extern).parameters) == [
        "func", "core_type", "source", "aic_source", "aiv_source", "dual_aiv_dispatch", "include_dirs"]


@pl.jit.inline
def add_rows(t, u):
    return pl.add(t, u)


@pl.inline
def double(t):
    return pl.add(t, t)


@pl.jit.opaque
def opaque_body(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [i * 16, 0], [16, 64])
            out = pl.store(double(add_rows(t, t)), [i * 16, 0], out)


@pl.jit
def uses_opaque(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    opaque_body(x, out)
    return out


def test_opaque_and_inline_are_spliced(engine):
    assert isinstance(double, pl.InlineFunction) and isinstance(add_rows, pl.JITFunction)
    x, out = rand(32, 64), np.zeros((32, 64), np.float32)
    uses_opaque(x, out)
    np.testing.assert_allclose(out, x * 4, rtol=1e-6)
    prog = uses_opaque.parse([("tensor", (32, 64), pl.FP32)] * 2)
    assert [f.name for f in prog.functions] == ["uses_opaque"]  # inline and opaque bodies leave no function
    roundtrip(prog)
    out = np.zeros_like(x)
    opaque_body(x, out)  # called directly: an Opaque entry, promoted to Orchestration
    np.testing.assert_allclose(out, x * 4, rtol=1e-6)
    entry = opaque_body.lower(x, out).find("opaque_body")
    assert entry.func_type == pl.FunctionType.Orchestration


@pl.jit
def entry_neg(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.store(pl.neg(pl.load(x, [0, 0], [32, 64])), [0, 0], out)
    return out


@pl.jit.host
def host_main(x: pl.Tensor, tmp: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    entry_neg(x, tmp)
    entry_neg(tmp, out)
    return out


def test_host_calls_other_entries(engine):
    x = rand(32, 64)
    tmp, out = np.zeros_like(x), np.zeros_like(x)
    host_main(x, tmp, out)
    np.testing.assert_allclose(tmp, -x)
    np.testing.assert_allclose(out, x)
    prog = host_main.parse([("tensor", (32, 64), pl.FP32)] * 3)
    entry = prog.find("host_main")
    assert entry.level == pl.Level.HOST and entry.role == pl.Role.Orchestrator
    assert entry.func_type == pl.FunctionType.Orchestration
    roundtrip(prog)


@pl.jit
def plain_calls_entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    entry_neg(x, out)  # E:plain_entry
    return out


def test_plain_jit_does_not_call_entries():
    with pytest.raises(ParseError, match="@pl.jit.host") as e:
        plain_calls_entry.parse([("tensor", (32, 64), pl.FP32)] * 2)
    assert f"{HERE}:{line_of('plain_entry')}:" in str(e.value)


@pl.jit.extern(core_type="aiv", source="kernels/vadd.cpp", include_dirs=["inc"])
def ext_add(x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):  # E:ext_def
    ...


@pl.jit
def calls_extern(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = ext_add(x, out)
    return out


def test_extern_is_accepted_and_compiling_says_it_cannot_run():
    x, out = rand(16, 16), np.zeros((16, 16), np.float32)
    with pytest.raises(pl.PyptoError, match=r"kernels/vadd\.cpp.*cannot run on the virtual chip"):
        calls_extern(x, out)
    with pytest.raises(pl.PyptoError, match=r"kernels/vadd\.cpp.*cannot run on the virtual chip") as e:
        ext_add(x, out)
    assert f"{HERE}:{line_of('ext_def')}:" in str(e.value) and "fix:" in str(e.value)
    with pytest.raises(ParseError, match="needs aic_source= and aiv_source="):
        pl.jit.extern(core_type="mixed", aic_source="a.cpp")


def test_cache_clear_forces_recompile():
    x, out = rand(32, 64), np.zeros((32, 64), np.float32)
    first = jit_scale.compile(x, out)
    assert jit_scale.compile(x, out) is first
    assert len(jit_scale._cache) >= 1
    jit_scale._cache.clear()
    assert len(jit_scale._cache) == 0
    again = jit_scale.compile(x, out)
    assert again is not first
    lowered = jit_scale.lower(x, out, config=RunConfig())
    assert isinstance(lowered, ir.Program)


# ------------------------------------------------------------------ syntactic forms
@pl.jit.incore
def scaled_add(x: pl.Tensor, y: pl.Tensor, scale: pl.FP32, out: pl.Out[pl.Tensor]):
    tx = pl.load(x, [0, 0], [16, 64])
    ty = pl.load(y, [0, 0], [16, 64])
    out = pl.store(pl.add(tx, pl.mul(ty, scale)), [0, 0], out)
    return out


@pl.jit
def bare_dtype_entry(x: pl.Tensor, y: pl.Tensor, s: pl.FP32, out: pl.Out[pl.Tensor]):
    out = scaled_add(x, y, s, out)
    return out


def test_bare_dtype_annotation_is_a_scalar(engine):
    x, y, out = rand(16, 64), rand(16, 64, seed=1), np.zeros((16, 64), np.float32)
    bare_dtype_entry(x, y, 0.5, out)
    np.testing.assert_allclose(out, x + 0.5 * y, rtol=1e-6)
    prog = bare_dtype_entry.parse([("tensor", (16, 64), pl.FP32)] * 2 + [("scalar", pl.FP32, 0.5),
                                                                           ("tensor", (16, 64), pl.FP32)])
    assert ir.print_type(prog.find("scaled_add").params[2].type) == "pl.Scalar[pl.FP32]"


ROWS = 2 ** 4  # used inside the body: folded


@pl.jit
def pow_entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [ROWS, 2 ** 6])
        out = pl.store(pl.mul(t, 2 ** -1), [0, 0], out)
    return out


def test_power_of_constants_folds(engine):
    x, out = rand(16, 64), np.zeros((16, 64), np.float32)
    pow_entry(x, out)
    np.testing.assert_allclose(out, x * 0.5)


@pl.jit.incore
def pow_runtime(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    m = n ** 2  # E:pow_runtime
    out = pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], out)
    return out


@pl.jit
def pow_runtime_entry(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    out = pow_runtime(x, n, out)
    return out


def test_power_of_runtime_value_is_an_error():
    with pytest.raises(ParseError, match=r"'\*\*'.*run-time operand") as e:
        pow_runtime_entry.parse([("tensor", (16, 64), pl.FP32), ("scalar", pl.INDEX, 2),
                                 ("tensor", (16, 64), pl.FP32)])
    assert f"{HERE}:{line_of('pow_runtime')}:" in str(e.value)


@pl.function(type=pl.FunctionType.InCore)
def module_kernel(x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 64])
    out = pl.store(pl.exp(t), [0, 0], out)
    return out


@pl.program
class UsesModuleFunction:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], a: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             b: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        a = module_kernel(x, a)
        b = module_kernel(a, b)
        return b


def test_module_level_function_added_once(engine):
    names = [f.name for f in UsesModuleFunction.functions]
    assert names == ["main", "module_kernel"]
    roundtrip(UsesModuleFunction)
    x = rand(16, 64) * 0.1
    a, b = np.zeros_like(x), np.zeros_like(x)
    run(UsesModuleFunction, x, a, b)
    np.testing.assert_allclose(b, np.exp(np.exp(x)), rtol=1e-5)


def test_module_level_function_name_clash():
    with pytest.raises(ParseError, match="has the name of a function of program"):
        @pl.program
        class Clash:
            @pl.function(type=pl.FunctionType.InCore)
            def module_kernel(self, x: pl.Tensor[[16, 64], pl.FP32]):
                pass

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[16, 64], pl.FP32], a: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
                a = module_kernel(x, a)
                return a


@pl.program
class OpaqueEntry:
    @pl.function
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
        for i in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [i * 16, 0], [16, 64])
                out = pl.store(pl.add(t, 1.0), [i * 16, 0], out)
        return out


@pl.program
class OpaqueCallsKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = pl.store(pl.abs(pl.load(x, [0, 0], [16, 64])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        out = self.k(x, out)
        return out


def test_opaque_caller_of_kernels_is_the_entry(engine):
    x, out = rand(16, 64), np.zeros((16, 64), np.float32)
    run(OpaqueCallsKernel, x, out)
    np.testing.assert_allclose(out, np.abs(x))


def test_opaque_entry_is_promoted(engine):
    assert OpaqueEntry.find("main").func_type == pl.FunctionType.Opaque
    roundtrip(OpaqueEntry)
    x, out = rand(32, 64), np.zeros((32, 64), np.float32)
    compiled = run(OpaqueEntry, x, out)
    np.testing.assert_allclose(out, x + 1)
    assert compiled.program.find("main").func_type == pl.FunctionType.Orchestration


@pl.jit
def name_from_loop(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            r = pl.store(pl.exp(pl.load(x, [i * 16, 0], [16, 64])), [i * 16, 0], out)
    # `r` is visible here: it became a carry whose initial value is `out`
    return r


def test_name_first_defined_in_loop_is_carried(engine):
    x, out = rand(64, 64) * 0.1, np.zeros((64, 64), np.float32)
    name_from_loop(x, out)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-5)
    roundtrip(name_from_loop.parse([("tensor", (64, 64), pl.FP32)] * 2))


@pl.jit.incore
def first_defined_in_loop(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(3):
        t = pl.load(x, [i * 16, 0], [16, 64])  # a tile first defined in the loop
        k = i * 2  # a scalar first defined in the loop
    out = pl.store(pl.add(t, t), [0, 0], out)  # the last iteration's t (rows 32..48)
    out = pl.store(pl.mul(t, k), [16, 0], out)  # k of the last iteration: 4
    return out


@pl.jit
def first_defined_in_loop_entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = first_defined_in_loop(x, out)
    return out


def test_tile_and_scalar_first_defined_in_loop_keep_last_iteration(engine):
    x, out = rand(48, 64), np.zeros((32, 64), np.float32)
    first_defined_in_loop_entry(x, out)
    np.testing.assert_allclose(out[:16], 2 * x[32:48], rtol=1e-6)
    np.testing.assert_allclose(out[16:], 4 * x[32:48], rtol=1e-6)
    roundtrip(first_defined_in_loop_entry.parse([("tensor", (48, 64), pl.FP32), ("tensor", (32, 64), pl.FP32)]))


@pl.jit.incore
def loop_and_branch(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 64])
    for i in pl.range(3):
        t = pl.add(t, 1.0)
    if n > 2:
        t = pl.mul(t, 2.0)
    out = pl.store(t, [0, 0], out)
    return out


@pl.jit
def loop_and_branch_entry(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    out = loop_and_branch(x, n, out)
    return out


def test_loop_and_one_arm_values_are_visible_after(engine):
    x = rand(16, 64)
    for n, factor in ((5, 2.0), (1, 1.0)):
        out = np.zeros_like(x)
        loop_and_branch_entry(x, n, out)
        np.testing.assert_allclose(out, (x + 3) * factor, rtol=1e-6)


@pl.jit.incore
def only_one_arm(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 64])
    if n > 2:
        u = pl.exp(t)
    out = pl.store(u, [0, 0], out)  # E:one_arm
    return out


@pl.jit
def only_one_arm_entry(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    out = only_one_arm(x, n, out)
    return out


def test_name_defined_in_one_arm_only_is_an_error():
    with pytest.raises(ParseError, match="'u' is defined inside an if arm") as e:
        only_one_arm_entry.parse([("tensor", (16, 64), pl.FP32), ("scalar", pl.INDEX, 1),
                                  ("tensor", (16, 64), pl.FP32)])
    assert f"{HERE}:{line_of('one_arm')}:" in str(e.value)


@pl.program
class LoopAttrs:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        for i in pl.range(2, attrs={"unroll_hint": 2}):
            t = pl.load(x, [i * 16, 0], [16, 64])
            out = pl.store(pl.neg(t), [i * 16, 0], out)
        for j in pl.parallel(2, attrs={"note": "p"}):
            out = pl.store(pl.neg(pl.load(x, [j * 16, 0], [16, 64])), [j * 16, 0], out)
        for u in pl.unroll(2, attrs={"a": True}):
            out = pl.store(pl.neg(pl.load(x, [u * 16, 0], [16, 64])), [u * 16, 0], out)
        for q in pl.pipeline(2, stage=2, attrs={"b": 1.5}):
            out = pl.store(pl.neg(pl.load(x, [q * 16, 0], [16, 64])), [q * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
        out = self.k(x, out)
        return out


def test_loop_attrs_are_kept(engine):
    text = roundtrip(LoopAttrs)
    assert "attrs={'unroll_hint': 2}" in text and "attrs={'note': 'p'}" in text
    loop = LoopAttrs.find("k").body.stmts[0]
    assert loop.attrs == {"unroll_hint": 2}
    x, out = rand(32, 64), np.zeros((32, 64), np.float32)
    run(LoopAttrs, x, out, config=RunConfig(verify="roundtrip"))
    np.testing.assert_allclose(out, -x)
    with pytest.raises(ParseError, match="attrs= of pl.range takes a dict"):
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[32, 64], pl.FP32]):
                for i in pl.range(2, attrs=[1]):
                    pass


@pl.jit.incore
def yield_forms(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    ta = pl.load(x, [0, 0], [16, 64])
    tb = pl.load(x, [0, 0], [16, 64])
    for i, (a, b) in pl.range(2, init_values=(ta, tb)):
        a2 = pl.add(a, 1.0)
        b2 = pl.mul(b, 2.0)
        ra, rb = pl.yield_(v1=a2, v2=b2)
    for j, (c,) in pl.range(1, init_values=(ra,)):
        c2 = pl.add(c, 0.0)
        rc = pl.yield_(value=c2)
    if n > 0:
        s = pl.yield_(pl.add(rc, rb))
    else:
        s = pl.yield_(rc)
    out = pl.store(s, [0, 0], out)
    return out


@pl.jit
def yield_entry(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    out = yield_forms(x, n, out)
    return out


@pl.jit.incore
def yield_bad_kw(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 64])
    for i, (a,) in pl.range(2, init_values=(t,)):
        r = pl.yield_(val=a)  # E:yield_kw
    out = pl.store(r, [0, 0], out)
    return out


@pl.jit
def yield_bad_kw_entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = yield_bad_kw(x, out)
    return out


def test_yield_unknown_keyword():
    with pytest.raises(ParseError, match="pl.yield_ has no keyword 'val'") as e:
        yield_bad_kw_entry.parse([("tensor", (16, 64), pl.FP32)] * 2)
    assert f"{HERE}:{line_of('yield_kw')}:" in str(e.value)


def test_yield_forms(engine):
    x = rand(16, 64)
    out = np.zeros_like(x)
    yield_entry(x, 1, out)
    np.testing.assert_allclose(out, (x + 2) + x * 4, rtol=1e-6)
    out = np.zeros_like(x)
    yield_entry(x, 0, out)
    np.testing.assert_allclose(out, x + 2, rtol=1e-6)


M = pl.dynamic("M")


@pl.jit.incore
def dyn_kernel(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 64])
    out = pl.store(pl.add(t, t), [0, 0], out)
    return out


@pl.jit
def bound_dyn(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    x.bind_dynamic(0, M)
    out.bind_dynamic(0, M)
    for i in pl.range(M // 16):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [i * 16, 0], [16, 64])
            out = pl.store(pl.add(t, t), [i * 16, 0], out)
    return out


def test_bind_dynamic_compiles_once_for_every_extent(engine):
    assert pl.DynVar is type(M)
    bound_dyn._cache.clear()
    for rows in (32, 64):
        x, out = rand(rows, 64), np.zeros((rows, 64), np.float32)
        bound_dyn(x, out)
        np.testing.assert_allclose(out, 2 * x)
    compiled = {id(v) for k, v in bound_dyn._cache.items() if k != "dynamic"}
    assert len(compiled) == 1


@pl.jit.incore
def rt_scale(x: pl.Tensor, f: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    out = pl.store(pl.mul(pl.load(x, [0, 0], [16, 64]), f), [0, 0], out)
    return out


@pl.jit
def rt_entry(x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             f: pl.Scalar[pl.FP32] = pl.RUNTIME):
    out = rt_scale(x, f, out)
    return out


def test_runtime_scalar(engine):
    assert repr(pl.RUNTIME) == "pl.RUNTIME"
    assert pl.IntLike is not None
    x = rand(16, 64)
    compiled = rt_entry.compile(x, np.zeros_like(x), pl.RUNTIME)
    for f in (2.0, -1.5):
        out = np.zeros_like(x)
        compiled(x, out, f)
        np.testing.assert_allclose(out, x * f, rtol=1e-6)
        out = np.zeros_like(x)
        rt_entry(x, out, f)
        np.testing.assert_allclose(out, x * f, rtol=1e-6)
    assert rt_entry.compile(x, np.zeros_like(x), 3.0) is compiled  # the scalar stays a run-time parameter
    assert rt_entry.compile(x, np.zeros_like(x)) is compiled  # the default: pl.RUNTIME
    assert rt_entry.compile(x, out=np.zeros_like(x), f=pl.RUNTIME) is compiled  # as a keyword
    out = np.zeros_like(x)
    rt_entry(x, out, f=4.0)
    np.testing.assert_allclose(out, x * 4, rtol=1e-6)
    with pytest.raises(TypeError, match="'f' is pl.RUNTIME and needs a value"):
        rt_entry(x, out)


# ------------------------------------------------------------------ importlib-loaded modules
MODULE = '''
import numpy as np
import pypto.language as pl

SCALE = 3.0


@pl.jit.incore
def scale_k(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = pl.store(pl.mul(pl.load(x, [0, 0], [16, 64]), SCALE), [0, 0], out)
    return out


@pl.jit
def triple(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = scale_k(x, out)
    return out


@pl.program
class Neg:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = pl.store(pl.neg(pl.load(x, [0, 0], [16, 64])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        out = self.k(x, out)
        return out
'''


@pytest.mark.parametrize("name", ["user_kernels_not_in_sys_modules", "json"])  # "json": another module has the name
def test_importlib_loaded_module(tmp_path, engine, name):
    path = tmp_path / "user_kernels.py"
    path.write_text(MODULE)
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    x = rand(16, 64)
    out = np.zeros_like(x)
    m.triple(x, out)
    np.testing.assert_allclose(out, 3 * x, rtol=1e-6)
    out = np.zeros_like(x)
    run(m.Neg, x, out)
    np.testing.assert_allclose(out, -x)


# ------------------------------------------------------------------ parse / loads
def test_parse_function_program_and_files(tmp_path):
    text = ir.print_program(Hinted)
    assert ir.structural_equal(pl.parse(code=text, filename="hinted.py", source_map=None), Hinted)
    assert ir.structural_equal(pl.parse_program(text, "hinted.py"), Hinted)
    fn = pl.parse(textwrap.dedent('''
        import pypto.language as pl

        @pl.function(type=pl.FunctionType.InCore, level=pl.Level.AIV)
        def k(x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out
    '''))
    assert isinstance(fn, ir.Function) and fn.name == "k" and fn.level == pl.Level.AIV
    again = pl.parse(textwrap.dedent(str(fn)))
    assert isinstance(again, ir.Function)
    assert ir.print_type(again.params[0].type) == "pl.Tensor[[16, 16], pl.FP32]"
    path = tmp_path / "p.py"
    path.write_text(text)
    assert ir.structural_equal(pl.loads(str(path)), Hinted)
    assert ir.structural_equal(pl.loads_program(path), Hinted)
    with pytest.raises(ParseError, match="no @pl.program class"):
        pl.parse_program("x = 1\n", "f.py")


# ------------------------------------------------------------------ carried tiles and their initial values
@pl.jit.incore
def carry_reads_init(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t0 = pl.load(x, [0, 0], [16, 64])
    acc = t0
    for i in pl.range(3):
        acc = pl.add(acc, t0)  # t0 is read while acc (which starts as t0) changes
    for j, (a, b) in pl.range(2, init_values=(t0, t0)):  # two carries from one tile
        a2 = pl.add(a, 1.0)
        b2 = pl.mul(b, 2.0)
        ra, rb = pl.yield_(a2, b2)
    s = pl.add(pl.add(acc, ra), pl.add(rb, t0))  # t0 read after the loops
    for k in pl.range(2):
        for m, (c,) in pl.range(1, init_values=(t0,)):  # re-initialised from t0 on every k
            c2 = pl.add(c, 1.0)
            rc = pl.yield_(c2)
        s = pl.add(s, rc)
    out = pl.store(s, [0, 0], out)
    return out


@pl.jit
def carry_reads_init_entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = carry_reads_init(x, out)
    return out


def test_initial_value_of_a_carry_is_not_clobbered(engine):
    x = rand(16, 64)
    out = np.zeros_like(x)
    carry_reads_init_entry(x, out)
    acc = 4 * x
    ra, rb = x + 2, 4 * x
    rc = x + 1
    np.testing.assert_allclose(out, acc + ra + rb + x + 2 * rc, rtol=1e-5)

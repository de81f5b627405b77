"""A store to a parameter declared as an input (issue 19): the task graph treats it as written
(the writer orders before its readers: a dependency edge), the program computes the right
result on both engines, and the parser warns once at the store with the fix."""

import json
import warnings

import numpy as np
import pypto.language as pl
import pytest
from pypto import ir
from pypto.language import InputWrittenWarning
from pypto.runtime import RunConfig, run


def program():
    @pl.program
    class WritesInput:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], scratch: pl.Tensor[[16, 16], pl.FP32]):
            t = pl.load(a, [0, 0], [16, 16])
            scratch = pl.store(pl.exp(t), [0, 0], scratch)  # scratch is declared as an input
            return scratch

        @pl.function(type=pl.FunctionType.InCore)
        def k2(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [16, 16])
            y = pl.store(pl.adds(t, 1.0), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            b = self.k(a, b)
            c = self.k2(b, c)
            return c
    return WritesInput


def test_one_warning_at_the_store_with_the_fix():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program()
    found = [w for w in caught if issubclass(w.category, InputWrittenWarning)]
    assert len(found) == 1, [str(w.message) for w in caught]
    w = found[0]
    assert w.filename == __file__
    import linecache
    assert "scratch = pl.store(pl.exp(t), [0, 0], scratch)" in linecache.getline(w.filename, w.lineno)
    text = str(w.message)
    assert "parameter 'scratch' of 'k' is declared as an input" in text and "(Out)" in text
    assert "fix: declare it pl.Out[...]" in text


def test_declared_outputs_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWrittenWarning)

        @pl.program
        class Fine:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
                o = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)
                return o

            @pl.function(type=pl.FunctionType.InCore)
            def k_rw(self, o: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]):
                o = pl.store(pl.adds(pl.load(o, [0, 0], [16, 16]), 1.0), [0, 0], o)
                return o
        assert Fine is not None


def test_the_written_input_becomes_out_and_orders_the_tasks(tmp_path, engine):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWrittenWarning)
        prog = program()
    # After OutlineIncore the parameter is written (Out: only stored to); the kernel's
    # parameter in the host program says so.
    after = ir.compile(prog, output_dir=str(tmp_path / "c"), dump_passes=False)
    lowered = after.program.find("k")
    assert [str(d).split(".")[-1] for d in lowered.directions] == ["In", "Out"]
    a = np.random.default_rng(1).uniform(-1, 1, (16, 16)).astype(np.float32)
    b, c = np.zeros_like(a), np.zeros_like(a)
    out = tmp_path / "run"
    run(prog, a, b, c, config=RunConfig(enable_dep_gen=True, output_dir=str(out)))
    np.testing.assert_allclose(b, np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(c, np.exp(a) + 1, rtol=1e-5)
    edges = json.load(open(out / "dfx_outputs" / "deps.json"))["edges"]
    assert edges == [[0, 1]]  # k2 reads what k wrote


def test_a_jit_entry_input_stored_in_a_scope_warns_and_is_written(tmp_path):
    @pl.jit
    def entry_writes_input(a: pl.Tensor, c: pl.Tensor):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 16])
            pl.store(pl.muls(t, 2.0), [0, 0], c)
        return c

    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    c = np.zeros_like(a)
    with pytest.warns(InputWrittenWarning, match="parameter 'c' of 'entry_writes_input'"):
        entry_writes_input(a, c, config=RunConfig(output_dir=str(tmp_path)))
    np.testing.assert_allclose(c, a * 2)


def test_window_tensors_are_written_by_design_and_do_not_warn():
    """A pld.DistributedTensor parameter is this rank's window: kernels store into it (peers read
    it), as every distributed program does; a plain tensor parameter beside it still warns."""
    import pypto.language.distributed as pld

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @pl.program
        class Windows:
            @pl.function(type=pl.FunctionType.InCore)
            def fill(self, x: pl.Tensor[[8, 16], pl.FP32], data: pld.DistributedTensor[[8, 16], pl.FP32],
                     plain: pl.Tensor[[8, 16], pl.FP32]):
                t = pl.load(x, [0, 0], [8, 16])
                data = pl.store(t, [0, 0], data)
                plain = pl.store(t, [0, 0], plain)  # declared as an input: warns
                return plain

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[8, 16], pl.FP32], data: pl.Tensor[[8, 16], pl.FP32],
                     plain: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
                plain = self.fill(x, data, plain)
                return plain

        @pl.jit
        def chip(x: pl.Tensor, data: pld.DistributedTensor, y: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.store(pl.load(x, [0, 0], [8, 16]), [0, 0], data)  # bare window annotation
                pl.store(pl.load(data, [0, 0], [8, 16]), [0, 0], y)
            return y

        x = np.ones((8, 16), np.float32)
        chip.lower(x, x.copy(), x.copy())
    texts = [str(w.message) for w in caught if issubclass(w.category, InputWrittenWarning)]
    assert len(texts) == 1 and "parameter 'plain' of 'fill'" in texts[0], texts

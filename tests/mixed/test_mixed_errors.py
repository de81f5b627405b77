"""Mistakes with mixed tasks are user errors at the user's line with a fix: FIFO ops in the
wrong kind of function, malformed Group functions, a part on the wrong core, peers that do
not exist, and FIFOs that disagree at run time (shape/dtype, tiles left behind)."""

import pathlib

import numpy as np
import pypto.language as pl
import pytest
from pypto import _core
from pypto.runtime import RunConfig, run

FP32 = pl.FP32
Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right
T16 = pl.Tensor[[16, 16], FP32]


def z(*shape):
    return np.zeros(shape, np.float32)


def run_error(program, *args):
    with pytest.raises((_core.PyptoError, pl.ParseError)) as e:
        run(program, *args, config=RunConfig())
    return str(e.value)


def line_of(text, fn):
    """The line of this file that holds `text` inside function `fn` (1-based)."""
    import inspect

    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def test_vector_op_in_the_aic_function():
    def build():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def cube(self, a: T16, out: pl.Out[T16]):
                pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 16], target_memory=Mat), aiv=0)
                t = pl.tpop_from_aic([16, 16], FP32)  # the AIV's op
                out = pl.store(t, [0, 0], out)
                pl.tfree_to_aic(t)
                return out

            @pl.function(type=pl.FunctionType.AIV)
            def vec(self, out: pl.Out[T16]):
                t = pl.tpop_from_aic([16, 16], FP32)
                pl.tpush_to_aic(t)
                pl.tfree_to_aic(t)
                return out

            @pl.function(type=pl.FunctionType.Group)
            def g(self, a: T16, out: pl.Out[T16], out2: pl.Out[T16]):
                self.cube(a, out)
                self.vec(out2)
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: T16, out: pl.Out[T16], out2: pl.Out[T16]):
                out = self.g(a, out, out2)
                return out
        return P

    msg = run_error(build(), z(16, 16), z(16, 16), z(16, 16))
    assert msg.startswith(f"{__file__}:{line_of('# the AIV', build)}: ")
    assert "pl.tpop_from_aic runs on the vector core (AIV) but 'cube' is an AIC function" in msg
    assert "fix: in an AIC function use pl.tpop_from_aiv(shape, dtype, aiv=0)" in msg


def test_cube_op_in_a_vector_function_names_the_function_and_the_fix():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T16):
            pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 16], target_memory=Mat), aiv=0)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[T16]):
            t = pl.tpop_from_aiv([16, 16], FP32, aiv=0)  # the AIC's op
            out = pl.store(t, [0, 0], out)
            pl.tfree_to_aiv(t, aiv=0)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: T16, out: pl.Out[T16]):
            self.cube(a)
            out = self.vec(out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T16, out: pl.Out[T16]):
            out = self.g(a, out)
            return out

    msg = run_error(P, z(16, 16), z(16, 16))
    assert "test_mixed_errors.py:" in msg
    assert "pl.tpop_from_aiv runs on the cube core (AIC) but 'vec' is an AIV function" in msg
    assert "fix: in an AIV function use pl.tpop_from_aic(shape, dtype)" in msg


def test_fifo_op_in_an_incore_function():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, out: pl.Out[T16]):
            t = pl.tpop_from_aic([16, 16], FP32)
            out = pl.store(t, [0, 0], out)
            pl.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[T16]):
            out = self.k(out)
            return out

    msg = run_error(P, z(16, 16))
    assert "pl.tpop_from_aic exchanges tiles between the cores of a cluster, but 'k' is an InCore function" in msg
    assert "fix: declare the function @pl.function(type=pl.FunctionType.AIV)" in msg


def test_fifo_kernel_called_directly_from_the_orchestration():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[T16]):
            t = pl.tpop_from_aic([16, 16], FP32)
            out = pl.store(t, [0, 0], out)
            pl.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[T16]):
            out = self.vec(out)  # not through a Group
            return out

    msg = run_error(P, z(16, 16))
    assert "kernel 'vec' exchanges tiles with another core (TPOP at" in msg
    assert "runs only as part of a mixed task" in msg
    assert "Group" in msg.split("fix:")[1]


def test_group_calls_an_incore_function():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: T16, out: pl.Out[T16]):
            out = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: T16, out: pl.Out[T16]):
            out = self.k(a, out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T16, out: pl.Out[T16]):
            out = self.g(a, out)
            return out

    msg = run_error(P, z(16, 16), z(16, 16))
    assert "Group function 'g' calls 'k', an InCore function" in msg
    assert "@pl.function(type=pl.FunctionType.AIC)" in msg


def test_group_without_an_aiv_function():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T16, out: pl.Out[T16]):
            out = pl.store(pl.load(a, [0, 0], [16, 16], target_memory=Mat), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: T16, out: pl.Out[T16]):
            out = self.cube(a, out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T16, out: pl.Out[T16]):
            out = self.g(a, out)
            return out

    msg = run_error(P, z(16, 16), z(16, 16))
    assert "Group function 'g' calls no AIV function" in msg


def test_group_with_other_statements():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T16):
            pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 16], target_memory=Mat), aiv=0)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[T16]):
            t = pl.tpop_from_aic([16, 16], FP32)
            out = pl.store(t, [0, 0], out)
            pl.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: T16, out: pl.Out[T16]):
            for i in pl.range(2):  # not a part call
                self.cube(a)
            out = self.vec(out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T16, out: pl.Out[T16]):
            out = self.g(a, out)
            return out

    msg = run_error(P, z(16, 16), z(16, 16))
    assert "a Group function's body only calls its AIC and AIV functions" in msg
    assert "first AIV call runs on AIV 0" in msg


def test_vector_work_in_the_aic_function():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T16, b: T16, out: pl.Out[T16]):
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [16, 16], target_memory=Mat), target_memory=Left),
                            pl.move(pl.load(b, [0, 0], [16, 16], target_memory=Mat), target_memory=Right))
            pl.tpush_to_aiv(acc, aiv=0)
            out = pl.store(pl.relu(acc), [0, 0], out)  # relu runs on the vector pipe, which the AIC lacks
            return out

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out2: pl.Out[T16]):
            t = pl.tpop_from_aic([16, 16], FP32)
            out2 = pl.store(t, [0, 0], out2)
            pl.tfree_to_aic(t)
            return out2

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: T16, b: T16, out: pl.Out[T16], out2: pl.Out[T16]):
            self.cube(a, b, out)
            out2 = self.vec(out2)
            return out2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T16, b: T16, out: pl.Out[T16], out2: pl.Out[T16]):
            out2 = self.g(a, b, out, out2)
            return out2

    msg = run_error(P, z(16, 16), z(16, 16), z(16, 16), z(16, 16))
    assert "AIC function 'cube' of Group 'g' uses tile" in msg and "in Vec" in msg
    assert "push the cube result there with pl.tpush_to_aiv" in msg


def test_push_to_an_aiv_the_group_does_not_have():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T16):
            pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 16], target_memory=Mat), aiv=1)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[T16]):
            t = pl.tpop_from_aic([16, 16], FP32)
            out = pl.store(t, [0, 0], out)
            pl.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: T16, out: pl.Out[T16]):
            self.cube(a)
            out = self.vec(out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T16, out: pl.Out[T16]):
            out = self.g(a, out)
            return out

    msg = run_error(P, z(16, 16), z(16, 16))
    assert "TPUSH in 'cube' talks to AIV 1, but Group 'g' runs only one AIV function" in msg
    assert "fix: use aiv=0" in msg


def test_pop_shape_differs_from_the_push_names_both_lines():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[16, 32], FP32]):
            pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 32], target_memory=Mat), aiv=0)  # the push

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[T16]):
            t = pl.tpop_from_aic([16, 16], FP32)  # the pop
            out = pl.store(t, [0, 0], out)
            pl.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: pl.Tensor[[16, 32], FP32], out: pl.Out[T16]):
            self.cube(a)
            out = self.vec(out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 32], FP32], out: pl.Out[T16]):
            out = self.g(a, out)
            return out

    msg = run_error(P, z(16, 32), z(16, 16))
    src = pathlib.Path(__file__).read_text().splitlines()
    push_line = next(i + 1 for i, x in enumerate(src) if "# the push" in x and "16, 32" in x)
    pop_line = next(i + 1 for i, x in enumerate(src) if "# the pop" in x)
    assert msg.startswith(f"{__file__}:{pop_line}: TPOP")
    assert f"the TPUSH at {__file__}:{push_line} in AIC 'cube' pushed 'load' as 16x32 FP32" in msg
    assert "pops a 16x16 FP32 tile 't'" in msg
    assert "pl.tpop_from_aic([16, 32], pl.FP32)" in msg


def test_tiles_left_in_a_fifo():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[32, 16], FP32]):
            for i in pl.range(2):
                pl.tpush_to_aiv(pl.load(a, [i * 16, 0], [16, 16], target_memory=Mat), aiv=0)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[T16]):
            t = pl.tpop_from_aic([16, 16], FP32)  # pops one of two
            out = pl.store(t, [0, 0], out)
            pl.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: pl.Tensor[[32, 16], FP32], out: pl.Out[T16]):
            self.cube(a)
            out = self.vec(out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[32, 16], FP32], out: pl.Out[T16]):
            out = self.g(a, out)
            return out

    msg = run_error(P, z(32, 16), z(16, 16))
    assert "mixed task 'g' ended with 1 tile(s) in FIFO AIC -> AIV 0 that AIV 0 'vec' never popped" in msg
    assert "fix: pop every tile the peer pushes" in msg


def test_free_without_pop():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T16):
            pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 16], target_memory=Mat), aiv=0)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[T16]):
            t = pl.tpop_from_aic([16, 16], FP32)
            out = pl.store(t, [0, 0], out)
            pl.tfree_to_aic(t)
            pl.tfree_to_aic(t)  # twice
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: T16, out: pl.Out[T16]):
            self.cube(a)
            out = self.vec(out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T16, out: pl.Out[T16]):
            out = self.g(a, out)
            return out

    msg = run_error(P, z(16, 16), z(16, 16))
    assert "TFREE: in AIV 0 'vec' frees tile 't' but holds no popped tile of AIC -> AIV 0 (1 popped, 1 freed already)" in msg


def test_pushing_a_vec_tile_from_the_cube_is_a_type_error():
    with pytest.raises(pl.ParseError) as e:
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def cube(self, a: T16):
                pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 16]), aiv=0)  # a Vec load

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: T16):
                self.cube(a)
    msg = str(e.value)
    assert "pl.tile.tpush_to_aiv: argument 'tile' is a Vec tile; this op takes an Acc or Mat tile" in msg
    assert "target_memory=pl.MemorySpace.Mat" in msg


def test_aiv_index_out_of_range():
    with pytest.raises(pl.ParseError, match="aiv=2 names no vector core of the cluster"):
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def cube(self, a: T16):
                pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 16], target_memory=Mat), aiv=2)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: T16):
                self.cube(a)


def test_an_error_in_one_part_cancels_the_others():
    """The AIV fails at run time (a store past the tensor) while the AIC waits to push its
    third tile into a full FIFO: the task reports the AIV's error, not a deadlock, and ends."""
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[48, 16], FP32]):
            for i in pl.range(3):
                pl.tpush_to_aiv(pl.load(a, [i * 16, 0], [16, 16], target_memory=Mat), aiv=0)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[pl.Tensor[[48, 16], FP32]], row: pl.Scalar[pl.INDEX]):
            t = pl.tpop_from_aic([16, 16], FP32)
            out = pl.store(t, [row, 0], out)  # row 40: past the 48 rows
            pl.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: pl.Tensor[[48, 16], FP32], out: pl.Out[pl.Tensor[[48, 16], FP32]]):
            self.cube(a)
            out = self.vec(out, 40)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[48, 16], FP32], out: pl.Out[pl.Tensor[[48, 16], FP32]]):
            out = self.g(a, out)
            return out

    msg = run_error(P, z(48, 16), z(48, 16))
    assert "TSTORE" in msg and "[40, 0]" in msg and "goes past the tensor's shape" in msg
    assert "deadlock" not in msg and "cancelled" not in msg

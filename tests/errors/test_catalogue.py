"""The catalogue of user mistakes: every one ends in an exception whose message names the
user's file and line (marked `# E:<name>` below), what is wrong, and a `fix:`."""

import linecache
import pathlib
import re

import numpy as np
import pytest

import pypto.language as pl
from pypto import PyptoError
from pypto.runtime import RunConfig

HERE = pathlib.Path(__file__)
SOURCE = HERE.read_text().splitlines()
A = np.zeros((32, 64), np.float32)


def line_of(marker: str) -> int:
    """1-based line of the `# E:<marker>` comment in this file."""
    hits = [i + 1 for i, text in enumerate(SOURCE) if text.rstrip().endswith(f"# E:{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


# --------------------------------------------------------------------------- programs


@pl.jit
def op_outside_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    t = pl.load(a, [0, 0], [32, 64])  # E:op_outside_kernel
    c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def vec_to_left(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        left = pl.move(t, target_memory=pl.MemorySpace.Left)  # E:vec_to_left
        c = pl.store(left, [0, 0], c)
    return c


@pl.jit
def load_into_acc(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64], target_memory=pl.MemorySpace.Acc)  # E:load_into_acc
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def load_into_left(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64], target_memory=pl.MemorySpace.Left)  # E:load_into_left
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def vector_op_on_left_tile(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.move(pl.load(a, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        c = pl.store(pl.exp(t), [0, 0], c)  # E:vector_op_on_left_tile
    return c


@pl.jit
def too_big_for_ub(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):  # E:too_big_for_ub
        t = pl.load(a, [0, 0], [256, 256])
        u = pl.exp(t)
        c = pl.store(pl.add(t, u), [0, 0], c)
    return c


@pl.jit
def too_big_for_l0a(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):  # E:too_big_for_l0a
        m = pl.load(a, [0, 0], [256, 128], target_memory=pl.MemorySpace.Mat)
        w = pl.load(a, [0, 0], [128, 128], target_memory=pl.MemorySpace.Mat)
        left = pl.move(m, target_memory=pl.MemorySpace.Left)
        right = pl.move(w, target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(left, right), [0, 0], c)
    return c


@pl.jit
def shape_mismatch(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        u = pl.load(a, [0, 0], [16, 64])
        c = pl.store(pl.add(t, u), [0, 0], c)  # E:shape_mismatch
    return c


@pl.jit
def dtype_mismatch(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        u = pl.load(b, [0, 0], [32, 64])
        c = pl.store(pl.mul(t, u), [0, 0], c)  # E:dtype_mismatch
    return c


@pl.jit
def store_dtype(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(t, [0, 0], c)  # E:store_dtype
    return c


@pl.jit
def unknown_op(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(pl.frobnicate(t), [0, 0], c)  # E:unknown_op
    return c


@pl.jit
def misspelt_op(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(pl.row_summ(t), [0, 0], c)  # E:misspelt_op
    return c


@pl.jit
def unknown_keyword(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64], bogus=1)  # E:unknown_keyword
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def missing_argument(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0])  # E:missing_argument
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def surplus_argument(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(pl.exp(t, t), [0, 0], c)  # E:surplus_argument
    return c


@pl.jit
def static_out_of_bounds(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [16, 0], [32, 64])  # E:static_out_of_bounds
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def runtime_out_of_bounds(a: pl.Tensor, c: pl.Out[pl.Tensor], r: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [r, 0], [32, 64])  # E:runtime_out_of_bounds
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def offsets_rank(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0, 0], [32, 64])  # E:offsets_rank
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def valid_shape_too_big(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64], valid_shape=[40, 64])  # E:valid_shape_too_big
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def out_rebinding(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.mul(t, t)  # E:out_rebinding
    return c


@pl.jit
def tile_leaves_scope(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):  # E:tile_leaves_scope
        t = pl.load(a, [0, 0], [32, 64])
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def string_operand(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(t + "x", [0, 0], c)  # E:string_operand
    return c


@pl.jit
def wrong_annotation(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t: pl.Tile[[16, 64], pl.FP32] = pl.load(a, [0, 0], [32, 64])  # E:wrong_annotation
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def bad_cast_mode(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(pl.cast(t, pl.FP16, mode="sideways"), [0, 0], c)  # E:bad_cast_mode
    return c


@pl.jit
def row_expand_shape(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(pl.row_expand_sub(t, t), [0, 0], c)  # E:row_expand_shape
    return c


@pl.jit
def reshape_count(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(pl.reshape(t, [30, 64]), [0, 0], c)  # E:reshape_count
    return c


@pl.jit
def undefined_name(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(tt, [0, 0], c)  # noqa: F821  # E:undefined_name
    return c


@pl.jit
def unsupported_construct(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store([x for x in t], [0, 0], c)  # E:unsupported_construct
    return c


@pl.jit
def runtime_value_as_shape(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [n, 64])  # E:runtime_value_as_shape
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def bad_memory_name(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64], target_memory=pl.MemorySpace.UB)  # E:bad_memory_name
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def private_attribute(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        c = pl.store(pl.__dict__, [0, 0], c)  # E:private_attribute
    return c


@pl.jit
def integer_division_by_zero(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        row = 64 // n  # E:integer_division_by_zero
        t = pl.load(a, [row, 0], [32, 64])
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def constant_zero_divisor(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for j in pl.unroll(0, 1, 1):
            row = (j + 64) // (j * 0)  # E:constant_zero_divisor
            t = pl.load(a, [row, 0], [32, 64])
            c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def while_never_changes(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = 0
        while i < n:  # E:while_never_changes
            c = pl.store(pl.load(a, [0, 0], [32, 64]), [0, 0], c)
    return c


@pl.jit
def break_in_parallel(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.parallel(4):  # E:break_in_parallel
            if i == n:
                break
            c = pl.store(pl.load(a, [0, 0], [32, 64]), [0, 0], c)
    return c


@pl.jit
def endless_while(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = 0
        while i != n:  # E:endless_while
            i = i + 2
        c = pl.store(pl.load(a, [0, 0], [32, 64]), [0, 0], c)
    return c


# Mixed AIC+AIV tasks (cross-core FIFOs). The class form, so that the AIC and AIV functions
# and the Group function that runs them together can be named.
T16 = pl.Tensor[[16, 16], pl.FP32]
B16 = np.zeros((16, 16), np.float32)


@pl.program
class FifoWrongCore:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T16):
        pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), aiv=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[T16]):
        t = pl.tpop_from_aiv([16, 16], pl.FP32, aiv=0)  # E:fifo_op_wrong_core
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


@pl.program
class FifoKernelAlone:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[T16]):
        t = pl.tpop_from_aic([16, 16], pl.FP32)
        out = pl.store(t, [0, 0], out)
        pl.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[T16]):
        out = self.vec(out)  # E:fifo_kernel_alone
        return out


@pl.program
class FifoDeadlock:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T16, c: pl.Out[T16]):
        c = pl.store(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[T16]):
        t = pl.tpop_from_aic([16, 16], pl.FP32)  # E:fifo_deadlock
        out = pl.store(t, [0, 0], out)
        pl.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: T16, c: pl.Out[T16], out: pl.Out[T16]):
        self.cube(a, c)
        out = self.vec(out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T16, c: pl.Out[T16], out: pl.Out[T16]):
        out = self.g(a, c, out)
        return out


@pl.program
class FifoPopMismatch:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[16, 32], pl.FP32]):
        pl.tpush_to_aiv(pl.load(a, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat), aiv=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[T16]):
        t = pl.tpop_from_aic([16, 16], pl.FP32)  # E:fifo_pop_mismatch
        out = pl.store(t, [0, 0], out)
        pl.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[T16]):
        self.cube(a)
        out = self.vec(out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[T16]):
        out = self.g(a, out)
        return out


def run_program(program, *args):
    from pypto.runtime import run

    return run(program, *args, config=RunConfig())


CASES = [
    # (name, call, exception, message pattern, fix pattern)
    ("op_outside_kernel", lambda: op_outside_kernel(A, A.copy()), PyptoError, r"works on tiles, which exist only inside kernels", r"pl\.at"),
    ("vec_to_left", lambda: vec_to_left(A, A.copy()), PyptoError, r"cannot move a Vec tile to Left", r"Vec.*Mat"),
    ("load_into_acc", lambda: load_into_acc(A, A.copy()), PyptoError, r"a load lands only in Vec or Mat, not Acc", r"pl\.matmul"),
    ("load_into_left", lambda: load_into_left(A, A.copy()), PyptoError, r"not Left", r"load into Mat, then pl\.move"),
    ("vector_op_on_left_tile", lambda: vector_op_on_left_tile(A, A.copy()), PyptoError, r"is a Left tile; vector ops work on Vec tiles and no move brings", r"matmul result"),
    ("too_big_for_ub", lambda: too_big_for_ub(np.zeros((256, 256), np.float32), np.zeros((256, 256), np.float32)), PyptoError, r"Vec \(UB\) but the a2a3sim chip has 196608 bytes", r"smaller tiles"),
    ("too_big_for_l0a", lambda: too_big_for_l0a(np.zeros((256, 128), np.float32), np.zeros((256, 128), np.float32)), PyptoError, r"Left \(L0A\)", r"smaller tiles"),
    ("shape_mismatch", lambda: shape_mismatch(A, A.copy()), PyptoError, r"has shape \[16, 64\] but 'lhs' has \[32, 64\]", r"same shape"),
    ("dtype_mismatch", lambda: dtype_mismatch(A, A.astype(np.float16), A.copy()), PyptoError, r"dtype FP16 but 'lhs' has FP32", r"pl\.cast"),
    ("store_dtype", lambda: store_dtype(A, A.astype(np.int32)), PyptoError, r"the tile is FP32 but the tensor is INT32", r"pl\.cast"),
    ("unknown_op", lambda: unknown_op(A, A.copy()), PyptoError, r"unknown name 'pl\.frobnicate'", r""),
    ("misspelt_op", lambda: misspelt_op(A, A.copy()), PyptoError, r"unknown name 'pl\.row_summ'", r"did you mean 'pl\.row_sum'"),
    ("unknown_keyword", lambda: unknown_keyword(A, A.copy()), PyptoError, r"no keyword argument 'bogus'", r"call it as"),
    ("missing_argument", lambda: missing_argument(A, A.copy()), PyptoError, r"missing argument 'shape'", r"call it as"),
    ("surplus_argument", lambda: surplus_argument(A, A.copy()), PyptoError, r"takes at most 1 arguments, got 2", r"call it as"),
    ("static_out_of_bounds", lambda: static_out_of_bounds(A, A.copy()), PyptoError, r"would read elements 16\.\.47 of dimension 0, but the tensor has only 32", r"valid_shape"),
    ("runtime_out_of_bounds", lambda: runtime_out_of_bounds(A, A.copy(), 8), PyptoError, r"at offsets \[8, 0\] goes past the tensor's shape", r"smaller valid shape"),
    ("offsets_rank", lambda: offsets_rank(A, A.copy()), PyptoError, r"offsets", r""),
    ("valid_shape_too_big", lambda: valid_shape_too_big(A, A.copy()), PyptoError, r"valid_shape\[0\] = 40 is outside 0\.\.32", r"prefix"),
    ("out_rebinding", lambda: out_rebinding(A, A.copy()), PyptoError, r"output parameter 'c' \(pl\.Out\) is rebound to a freshly computed value", r"c\[:\] = "),
    ("tile_leaves_scope", lambda: tile_leaves_scope(A, A.copy()), PyptoError, r"'t' is a tile computed inside the pl\.at scope", r"pl\.store"),
    ("string_operand", lambda: string_operand(A, A.copy()), PyptoError, r"cannot be used as a value here", r"tensor, tile, scalar"),
    ("wrong_annotation", lambda: wrong_annotation(A, A.copy()), PyptoError, r"annotated pl\.Tile\[\[16, 64\]", r"change the annotation"),
    ("bad_cast_mode", lambda: bad_cast_mode(A, A.astype(np.float16)), PyptoError, r"mode \"sideways\" is not a rounding mode", r"rint"),
    ("row_expand_shape", lambda: row_expand_shape(A, A.copy()), PyptoError, r"must be \[32, 1\]", r"pl\.row_max"),
    ("reshape_count", lambda: reshape_count(A, A.copy()), PyptoError, r"cannot reshape \[32, 64\]", r"element count"),
    ("undefined_name", lambda: undefined_name(A, A.copy()), PyptoError, r"name 'tt' is not defined", r"did you mean 't'"),
    ("unsupported_construct", lambda: unsupported_construct(A, A.copy()), PyptoError, r"ListComp", r"rewrite it"),
    ("runtime_value_as_shape", lambda: runtime_value_as_shape(A, A.copy(), 32), PyptoError, r"compile-time constant", r"literal"),
    ("bad_memory_name", lambda: bad_memory_name(A, A.copy()), PyptoError, r"MemorySpace\.UB", r""),
    ("private_attribute", lambda: private_attribute(A, A.copy()), PyptoError, r"'__dict__' is private", r"public names"),
    ("integer_division_by_zero", lambda: integer_division_by_zero(A, A.copy(), 0), PyptoError, r"integer division by zero", r"guard the divisor"),
    ("constant_zero_divisor", lambda: constant_zero_divisor(A, A.copy()), PyptoError, r"integer division by zero: the divisor of '//' is the constant 0", r"guard the divisor"),
    ("while_never_changes", lambda: while_never_changes(A, A.copy(), 2), PyptoError, r"condition 'i < n' of this while loop never changes", r"rebind a name the condition reads"),
    ("break_in_parallel", lambda: break_in_parallel(A, A.copy(), 2), PyptoError, r"break in a pl\.parallel loop", r"pl\.range"),
    ("endless_while", lambda: endless_while(A, A.copy(), 3), PyptoError, r"while loop ran 16777216 iterations without its condition turning false", r"changes what the condition reads"),
    ("fifo_op_wrong_core", lambda: run_program(FifoWrongCore, B16, B16.copy()), PyptoError, r"pl\.tpop_from_aiv runs on the cube core \(AIC\) but 'vec' is an AIV function", r"pl\.tpop_from_aic"),
    ("fifo_kernel_alone", lambda: run_program(FifoKernelAlone, B16.copy()), PyptoError, r"kernel 'vec' exchanges tiles with another core .* runs only as part of a mixed task", r"Group"),
    ("fifo_deadlock", lambda: run_program(FifoDeadlock, B16, B16.copy(), B16.copy()), PyptoError, r"deadlock in mixed task 'g'(.|\n)*AIC 'cube' has finished(.|\n)*AIV 0 'vec' waits at TPOP", r"every TPUSH needs a TPOP"),
    ("fifo_pop_mismatch", lambda: run_program(FifoPopMismatch, np.zeros((16, 32), np.float32), B16.copy()), PyptoError, r"pops a 16x16 FP32 tile 't', but the TPUSH at .* pushed 'load' as 16x32 FP32", r"pl\.tpop_from_aic\(\[16, 32\], pl\.FP32\)"),
]


@pytest.mark.parametrize("name,call,exc,message,fix", CASES, ids=[c[0] for c in CASES])
def test_mistake_is_reported_at_its_line_with_a_fix(name, call, exc, message, fix):
    with pytest.raises(exc) as err:
        call()
    text = str(err.value)
    assert f"{HERE.name}:{line_of(name)}:" in text, text
    assert re.search(message, text), text
    assert "fix: " in text and re.search(fix, text.split("fix: ", 1)[1]), text
    # The user's line is quoted with a caret under the offending code (issue 19).
    quoted = linecache.getline(str(HERE), line_of(name)).strip()
    assert re.search(r"\n    " + re.escape(quoted) + r"\n {4,}\^+( [^\n]*)?\n", text), text


# --------------------------------------------------------------------- call-time mistakes

CALL_SITE = re.compile(re.escape(HERE.name) + r":\d+: ")


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.add(pl.load(a, [0, 0], [32, 64]), pl.load(b, [0, 0], [32, 64])), [0, 0], c)
    return c


CALL_CASES = [
    ("too_few_arguments", lambda: add(A, A), TypeError, r"add\(\) takes 3 arguments \(a, b, c\), got 2.*fix"),
    ("float64_array", lambda: add(A.astype(np.float64), A, A.copy()), TypeError, r"argument 'a': numpy dtype float64 is not supported.*fix: convert"),
    ("python_list", lambda: add([[1.0]], A, A.copy()), TypeError, r"argument 'a' is a list"),
    ("wrong_shape_after_compile", lambda: add.compile(A, A, A.copy())(A[:16], A, A.copy()), TypeError, r"argument 'a' has shape \[16, 64\].*compiled for \[32, 64\].*fix"),
    ("readonly_output", lambda: add(A, A, np.broadcast_to(np.float32(0), (32, 64))), ValueError, r"output 'c' is a read-only numpy array.*fix"),
    ("hardware_platform", lambda: add(A, A, A.copy(), config=RunConfig(platform="a5")), PyptoError, r"names real Ascend NPU hardware.*fix: run on a simulated chip"),
    ("unknown_platform", lambda: add(A, A, A.copy(), config=RunConfig(platform="910c")), ValueError, r"RunConfig\(platform='910c'\): unknown platform.*fix: use one of"),
    ("unknown_engine", lambda: RunConfig(engine="cuda"), ValueError, r"unknown engine; fix: use one of"),
]


@pytest.mark.parametrize("name,call,exc,message", CALL_CASES, ids=[c[0] for c in CALL_CASES])
def test_call_time_mistakes(name, call, exc, message):
    with pytest.raises(exc) as err:
        call()
    text = str(err.value)
    assert re.search(message, text, re.S), text
    if exc is not PyptoError and name != "unknown_engine":
        assert CALL_SITE.search(text), text  # names the line of the call


def test_readonly_torch_output_requiring_grad():
    torch = pytest.importorskip("torch")
    a = torch.zeros(32, 64)
    c = torch.zeros(32, 64, requires_grad=True)
    with pytest.raises(ValueError, match=r"output 'c' requires grad.*fix: pass c\.detach\(\)"):
        add(a, a, c)


MALFORMED_TEXT = [
    ("not_python", "def (", r"<string>:1: the text is not valid Python"),
    ("null_byte", "x = 1\x00", r"not valid Python"),
    ("no_program", "x = 1\n", r"no @pl\.program class"),
    ("deep_nesting", "x = " + "(" * 500 + ")" * 500, r"not valid Python"),
    ("bad_type", "@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n    def f(self, a: pl.Tensor[[4, 4], pl.FP99]):\n        return a\n", r"<string>:4: unknown name 'pl\.FP99'"),
    ("import_in_text", "@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n    def f(self, a: pl.Tensor[[__import__('os').getpid(), 4], pl.FP32]):\n        return a\n", r"<string>:4: name '__import__' is not defined"),
]


@pytest.mark.parametrize("name,text,message", MALFORMED_TEXT, ids=[c[0] for c in MALFORMED_TEXT])
def test_malformed_text_given_to_the_parser(name, text, message):
    with pytest.raises(PyptoError, match=message):
        pl.parse(text)


# ------------------------------------------------- more mistakes, each at a marked line
# Calls, launches and texts whose mistake is reported at the marked line of this file.

pto = pytest.importorskip("pypto")  # the instruction-level API (`import pypto as pto`)


@pto.kernel
def lane_copy(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i))


@pto.kernel
def warp_barrier_only(src, smem, out):
    i = pto.get_global_id()
    data = pto.load(src + i)
    if i < 128:
        pto.store(smem + i, data)
    pto.barrier()
    v = pto.load(smem + i % 128)  # E:warp_barrier_only
    pto.store(out + i, v)


@pto.kernel
def neighbour_without_block_barrier(src, smem, out):
    i = pto.get_global_id()
    pto.store(smem + i, pto.load(src + i))  # E:neighbour_without_block_barrier
    pto.barrier()
    v = pto.load(smem + (i + 1) % 256)  # E:neighbour_read
    pto.store(out + i, v)


def use_after_free_launch():
    d, o = pto.alloc_tensor(256 * 4), pto.alloc_tensor(256 * 4)
    d.free()
    pto.launch(lane_copy, grid=1, block=256, args=(d, o, 256))  # E:use_after_free_launch


def use_after_free_copy_back():
    d = pto.alloc_tensor(256 * 4)
    pto.sync()
    d.free()
    pto.memcpy_d2h(np.zeros(256, np.float32), d)  # E:use_after_free_copy_back


def use_after_with_block():
    with pto.Tensor(256 * 4) as d:
        pto.memcpy_h2d(d, np.ones(256, np.float32))
    pto.memcpy_h2d(d, np.ones(256, np.float32))  # E:use_after_with_block


def race(kernel):
    a, b, c = (pto.alloc_tensor(256 * 4) for _ in range(3))
    pto.memcpy_h2d(a, np.arange(256, dtype=np.float32))
    pto.launch(kernel, grid=1, block=256, args=(a, b, c), engine="sim")
    pto.sync()


R2, C2 = 32, 64


@pl.jit
def dep_in_zero_trip_loop(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    for k in pl.range(n):
        with pl.at(level=pl.Level.AIV) as step:
            a = pl.store(pl.add(pl.load(x, [0, 0], [R2, C2]), 1.0), [0, 0], a)
    with pl.at(level=pl.Level.AIV, deps=[step]):  # E:dep_in_zero_trip_loop
        b = pl.store(pl.mul(pl.load(x, [0, 0], [R2, C2]), 3.0), [0, 0], b)
    return a, b


@pl.jit
def dep_on_untaken_branch(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    if n > 0:
        with pl.at(level=pl.Level.AIV) as first:
            a = pl.store(pl.add(pl.load(x, [0, 0], [R2, C2]), 1.0), [0, 0], a)
    with pl.at(level=pl.Level.AIV, deps=[first]):  # E:dep_on_untaken_branch
        b = pl.store(pl.add(pl.load(x, [0, 0], [R2, C2]), 2.0), [0, 0], b)
    return a, b


@pl.jit
def dep_before_definition(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    for k in pl.range(2):
        with pl.at(level=pl.Level.AIV, deps=[later]):  # noqa: F821  # E:dep_before_definition
            a = pl.store(pl.add(pl.load(x, [0, 0], [R2, C2]), 1.0), [0, 0], a)
        with pl.at(level=pl.Level.AIV) as later:
            b = pl.store(pl.add(pl.load(x, [0, 0], [R2, C2]), 1.0), [0, 0], b)
    return a, b


def broadcast_output_numpy():
    c = np.lib.stride_tricks.as_strided(np.zeros(64, np.float32), (32, 64), (0, 4), writeable=True)
    add(A, A, c)  # E:broadcast_output_numpy


def expanded_output_torch():
    torch = pytest.importorskip("torch")
    a = torch.zeros(32, 64)
    add(a, a, torch.zeros(1, 64).expand(32, 64))  # E:expanded_output_torch


def interleaved_output():
    buf = np.zeros(32 * 64, np.float32)
    c = np.lib.stride_tricks.as_strided(buf, (32, 64), (8, 4), writeable=True)  # rows overlap
    add(A, A, c)  # E:interleaved_output


def readonly_flag_output():
    c = np.zeros((32, 64), np.float32)
    c.setflags(write=False)
    add(A, A, c)  # E:readonly_flag_output


def compiled_wrong_dtype():
    compiled = add.compile(A, A, A.copy())
    compiled(A.astype(np.float16), A, A.copy())  # E:compiled_wrong_dtype


def compiled_wrong_rank():
    compiled = add.compile(A, A, A.copy())
    compiled(A.reshape(32, 64, 1), A, A.copy())  # E:compiled_wrong_rank


def compiled_wrong_count():
    compiled = add.compile(A, A, A.copy())
    compiled(A, A)  # E:compiled_wrong_count


def compiled_scalar_for_tensor():
    compiled = add.compile(A, A, A.copy())
    compiled(A, 1.0, A.copy())  # E:compiled_scalar_for_tensor


def torch_wrong_dtype_after_compile():
    torch = pytest.importorskip("torch")
    a = torch.zeros(32, 64)
    compiled = add.compile(a, a, a.clone())
    compiled(a.to(torch.bfloat16), a, a.clone())  # E:torch_wrong_dtype_after_compile


def text(lines):
    return "\n".join(lines) + "\n"


GOOD_PROGRAM = [
    "import pypto.language as pl",
    "",
    "@pl.program",
    "class P:",
    "    @pl.function(type=pl.FunctionType.InCore)",
    "    def f(self, a: pl.Tensor[[32, 64], pl.FP32], c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):",
    "        t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [32, 64])",
    "        c = pl.tile.store(t, [0, 0], c)",
    "        return c",
]


def edited(line, new):
    """GOOD_PROGRAM with its 1-based `line` replaced by `new`."""
    lines = list(GOOD_PROGRAM)
    lines[line - 1] = new
    return text(lines)


def parse_text(source, filename="model_ir.py"):
    pl.parse(source, filename=filename)


MARKED = [
    # (name, call, exception, message pattern, fix pattern)
    ("use_after_free_launch", use_after_free_launch, PyptoError,
     r"kernel 'lane_copy' uses tensor '\w+' after it was freed at .*test_catalogue\.py:\d+", r"keep the tensor alive"),
    ("use_after_free_copy_back", use_after_free_copy_back, PyptoError,
     r"pto\.memcpy_d2h uses tensor '\w+' after it was freed", r"keep the tensor alive"),
    ("use_after_with_block", use_after_with_block, PyptoError,
     r"pto\.memcpy_h2d uses tensor '\w+' after it was freed", r"with pto\.Tensor"),
    ("warp_barrier_only", lambda: race(warp_barrier_only), PyptoError,
     r"data race in kernel 'warp_barrier_only'.*different warps.*pto\.barrier\(\) only orders the 32 lanes",
     r"pto\.barrier_block\(\)"),
    ("neighbour_without_block_barrier", lambda: race(neighbour_without_block_barrier), PyptoError,
     r"data race in kernel 'neighbour_without_block_barrier'.*no barrier covering both lanes", r"pto\.barrier_block\(\)"),
    ("dep_in_zero_trip_loop", lambda: dep_in_zero_trip_loop(A, A.copy(), A.copy(), 0), PyptoError,
     r"deadlock: call #1 .* depends on call #0 .*, which has not run before it", r"loop of zero trips"),
    ("dep_on_untaken_branch", lambda: dep_on_untaken_branch(A, A.copy(), A.copy(), 0), PyptoError,
     r"deadlock: call #1 .* depends on call #0", r"arm not taken"),
    ("dep_before_definition", lambda: dep_before_definition(A, A.copy(), A.copy()), PyptoError,
     r"name 'later' is not defined", r"define it before use"),
    ("broadcast_output_numpy", broadcast_output_numpy, ValueError,
     r"output 'c' has elements that share memory: dimension 0 has stride 0", r"its own memory for every element"),
    ("expanded_output_torch", expanded_output_torch, ValueError,
     r"output 'c' has elements that share memory: dimension 0 has stride 0", r"torch\.empty"),
    ("interleaved_output", interleaved_output, ValueError,
     r"output 'c' has elements that share memory: elements \[0, \d+\] and \[\d+, 0\] are at the same address", r"np\.empty"),
    ("readonly_flag_output", readonly_flag_output, ValueError, r"output 'c' is a read-only numpy array", r"\.copy\(\)"),
    ("compiled_wrong_dtype", compiled_wrong_dtype, TypeError,
     r"argument 'a' has shape \[32, 64\] and dtype FP16, but the program was compiled for \[32, 64\] FP32", r"matching array"),
    ("compiled_wrong_rank", compiled_wrong_rank, TypeError,
     r"argument 'a' has shape \[32, 64, 1\].*compiled for \[32, 64\]", r"recompile"),
    ("compiled_wrong_count", compiled_wrong_count, TypeError, r"add\(\) takes 3 arguments \(a, b, c\), got 2", r"one array"),
    ("compiled_scalar_for_tensor", compiled_scalar_for_tensor, TypeError,
     r"argument 'b' must be a numpy array or torch tensor, got float", r"numpy array"),
    ("torch_wrong_dtype_after_compile", torch_wrong_dtype_after_compile, TypeError,
     r"argument 'a' has shape \[32, 64\] and dtype BF16, but the program was compiled for \[32, 64\] FP32", r"matching"),
]


@pytest.mark.parametrize("name,call,exc,message,fix", MARKED, ids=[c[0] for c in MARKED])
def test_mistake_at_a_marked_line(name, call, exc, message, fix):
    with pytest.raises(exc) as err:
        call()
    text_ = str(err.value)
    assert f"{HERE.name}:{line_of(name)}:" in text_, text_
    assert re.search(message, text_, re.S), text_
    assert "fix: " in text_ and re.search(fix, text_.split("fix: ", 1)[1], re.S), text_


def test_a_race_names_both_lines():
    with pytest.raises(PyptoError) as err:
        race(neighbour_without_block_barrier)
    text_ = str(err.value)
    assert f"{HERE.name}:{line_of('neighbour_without_block_barrier')}:" in text_, text_
    assert f"(line {line_of('neighbour_read')})" in text_, text_


# Malformed IR text given to pl.parse: the message names the text's file (the filename
# passed to pl.parse) and the offending line of the text.
TEXT_CASES = [
    # (name, text, line in the text, message pattern, fix pattern)
    ("syntax_error_line", edited(7, "        t = pl.tile.load(a, [0, 0], [32, 64]"), 7, r"not valid Python", r""),
    ("bad_indentation", edited(8, "     c = pl.tile.store(t, [0, 0], c)"), 8, r"not valid Python", r""),
    ("unknown_function_type", edited(5, "    @pl.function(type=pl.FunctionType.Kernel)"), 5,
     r"FunctionType\.Kernel", r""),
    ("unknown_dtype", edited(6, "    def f(self, a: pl.Tensor[[32, 64], pl.FP33], c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):"), 6,
     r"unknown name 'pl\.FP33'", r"did you mean"),
    ("unknown_tile_op", edited(7, "        t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.lod(a, [0, 0], [32, 64])"), 7,
     r"pl\.tile\.lod", r"pl\.tile\.load"),
    ("annotation_disagrees", edited(7, "        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [32, 64])"), 7,
     r"annotated", r"annotation"),
    ("shape_not_a_list", edited(6, "    def f(self, a: pl.Tensor[32, pl.FP32], c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):"), 6,
     r"", r""),
    ("undefined_name_in_text", edited(8, "        c = pl.tile.store(u, [0, 0], c)"), 8, r"name 'u' is not defined", r""),
    ("method_without_self", edited(6, "    def f(a: pl.Tensor[[32, 64], pl.FP32], c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):"), 6,
     r"self", r""),
    ("statement_at_class_level", edited(5, "    x = 1"), 5, r"", r""),
]


@pytest.mark.parametrize("name,source,line,message,fix", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_malformed_program_text_names_its_line(name, source, line, message, fix):
    with pytest.raises(PyptoError) as err:
        parse_text(source)
    text_ = str(err.value)
    assert f"model_ir.py:{line}:" in text_, text_
    assert re.search(message, text_, re.S), text_
    assert "fix: " in text_ and re.search(fix, text_.split("fix: ", 1)[1], re.S), text_


def test_good_program_text_parses():
    assert pl.parse(text(GOOD_PROGRAM), filename="model_ir.py") is not None


def test_non_contiguous_outputs_are_written_in_place():
    """Strided, reversed and transposed outputs whose elements do not share memory are
    fine: the result lands in the caller's memory, element by element."""
    want = A + A
    rng = np.random.default_rng(1)
    a = rng.standard_normal((32, 64), dtype=np.float32)
    want = a + a
    for make in (lambda: np.zeros((64, 128), np.float32)[::2, ::2],
                 lambda: np.zeros((32, 64), np.float32)[::-1],
                 lambda: np.zeros((64, 32), np.float32).T):
        c = make()
        add(a, a, c)
        np.testing.assert_array_equal(c, want)

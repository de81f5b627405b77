"""The catalogue of user mistakes: every one ends in an exception whose message names the
user's file and line (marked `# E:<name>` below), what is wrong, and a `fix:`."""

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
def misaligned_row(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 3])  # E:misaligned_row
        c = pl.store(t, [0, 0], c)
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


CASES = [
    # (name, call, exception, message pattern, fix pattern)
    ("op_outside_kernel", lambda: op_outside_kernel(A, A.copy()), PyptoError, r"works on tiles, which exist only inside kernels", r"pl\.at"),
    ("vec_to_left", lambda: vec_to_left(A, A.copy()), PyptoError, r"cannot move a Vec tile to Left", r"Vec.*Mat"),
    ("load_into_acc", lambda: load_into_acc(A, A.copy()), PyptoError, r"a load lands only in Vec or Mat, not Acc", r"pl\.matmul"),
    ("load_into_left", lambda: load_into_left(A, A.copy()), PyptoError, r"not Left", r"load into Mat, then pl\.move"),
    ("vector_op_on_left_tile", lambda: vector_op_on_left_tile(A, A.copy()), PyptoError, r"is a Left tile; vector ops work on Vec tiles and no move brings", r"matmul result"),
    ("too_big_for_ub", lambda: too_big_for_ub(np.zeros((256, 256), np.float32), np.zeros((256, 256), np.float32)), PyptoError, r"Vec \(UB\) but the a2a3sim chip has 196608 bytes", r"smaller tiles"),
    ("too_big_for_l0a", lambda: too_big_for_l0a(np.zeros((256, 128), np.float32), np.zeros((256, 128), np.float32)), PyptoError, r"Left \(L0A\)", r"smaller tiles"),
    ("misaligned_row", lambda: misaligned_row(A, A.copy()), PyptoError, r"row must be a multiple of 32 bytes", r"valid_shape"),
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
    ("while_never_changes", lambda: while_never_changes(A, A.copy(), 2), PyptoError, r"condition 'i < n' of this while loop never changes", r"rebind a name the condition reads"),
    ("break_in_parallel", lambda: break_in_parallel(A, A.copy(), 2), PyptoError, r"break in a pl\.parallel loop", r"pl\.range"),
    ("endless_while", lambda: endless_while(A, A.copy(), 3), PyptoError, r"while loop ran 16777216 iterations without its condition turning false", r"changes what the condition reads"),
]


@pytest.mark.parametrize("name,call,exc,message,fix", CASES, ids=[c[0] for c in CASES])
def test_mistake_is_reported_at_its_line_with_a_fix(name, call, exc, message, fix):
    with pytest.raises(exc) as err:
        call()
    text = str(err.value)
    assert f"{HERE.name}:{line_of(name)}:" in text, text
    assert re.search(message, text), text
    assert "fix: " in text and re.search(fix, text.split("fix: ", 1)[1]), text


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
    ("unknown_platform", lambda: add(A, A, A.copy(), config=RunConfig(platform="910c")), PyptoError, r"unknown platform '910c'.*fix: use one of"),
    ("unknown_engine", lambda: RunConfig(engine="cuda"), ValueError, r"unknown engine; available"),
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

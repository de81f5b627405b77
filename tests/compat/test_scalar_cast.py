"""Scalar pl.cast (a CastExpr node: INT32/INT64 <-> INDEX, float <-> int, BOOL, narrow ints)
and pl.create_tensor with run-time extents in the orchestration (docs/language.md, "PyPTO
compatibility"). Every program runs on both engines (the `engine` fixture) against
hand-computed values and round-trips through the printer (RunConfig(verify="roundtrip"))."""

import math

import numpy as np
import pypto.language as pl
import pytest
from pypto import ir
from pypto.language.errors import ParseError
from pypto.runtime import RunConfig, jit_compile

torch = pytest.importorskip("torch")

M = pl.dynamic("M")


def run(fn, *args, engine):
    fn(*args, config=RunConfig(engine=engine, verify="roundtrip"))


def roundtrip(program):
    text = ir.print_program(program)
    again = pl.parse(text)
    assert ir.structural_equal(program, again), text
    assert ir.print_program(again) == text
    return text


# -- the conversion rule (one rule: base/scalar_cast.h; this is its Python statement) ------------

def want_cast(x, dtype):
    """What scalar pl.cast gives: ints wrap to the width, floats truncate toward zero and
    saturate (NaN -> 0), BOOL is x != 0."""
    if dtype == "BOOL":
        return int(x != 0)
    if dtype == "INDEX" and isinstance(x, float) and math.isinf(x):
        return (1 << 63) - 1 if x > 0 else -(1 << 63)
    bits, signed = {"INT8": (8, True), "INT16": (16, True), "INT32": (32, True), "INDEX": (64, True),
                    "UINT8": (8, False), "UINT16": (16, False), "UINT32": (32, False)}[dtype]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if isinstance(x, float):
        return 0 if x != x else min(max(math.trunc(x), lo), hi) if not math.isinf(x) else (hi if x > 0 else lo)
    x &= (1 << bits) - 1
    return x - (1 << bits) if signed and x >> (bits - 1) else x


# -- orchestration: a value read from a tensor, cast to INDEX, drives a launch ----------------

@pl.jit.incore
def copy_blocks(src: pl.Tensor, n: pl.Scalar[pl.INDEX], first: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    for i in pl.range(n):
        out = pl.store(pl.load(src, [(first + i) * 8, 0], [8, 32]), [(first + i) * 8, 0], out)
    return out


@pl.jit
def copy_counted(cnt: pl.Tensor, src: pl.Tensor, out: pl.Out[pl.Tensor]):
    n = pl.cast(pl.tensor.read(cnt, [0]), pl.INDEX)        # INT32 element -> INDEX loop bound
    first = pl.cast(pl.tensor.read(cnt, [1]), pl.INDEX)    # ... and an offset
    out = copy_blocks(src, n, first, out)
    return out


@pytest.mark.parametrize("n, first", [(2, 0), (1, 3), (3, 1), (0, 2)])
def test_orchestration_cast_of_a_read_value_drives_a_kernel(engine, n, first):
    src = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.full_like(src, -1.0)
    run(copy_counted, np.array([n, first], np.int32), src, out, engine=engine)
    want = np.full_like(src, -1.0)
    want[first * 8:(first + n) * 8] = src[first * 8:(first + n) * 8]
    np.testing.assert_array_equal(out, want)


@pl.jit.incore
def add_block(src: pl.Tensor, row: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    out = pl.store(pl.adds(pl.load(src, [row, 0], [8, 32]), 1.0), [row, 0], out)
    return out


@pl.jit
def blocks_from_float(cnt: pl.Tensor, src: pl.Tensor, out: pl.Out[pl.Tensor]):
    """A float count (read as FP32) truncated toward zero: the number of launches."""
    n = pl.cast(pl.tensor.read(cnt, [0]), pl.INT64)
    for i in pl.range(pl.cast(n, pl.INDEX)):
        out = add_block(src, i * 8, out)
    return out


@pytest.mark.parametrize("count", [2.9, 3.0, 0.5, -1.5])
def test_orchestration_float_to_int_truncates_toward_zero(engine, count):
    src = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros_like(src)
    run(blocks_from_float, np.array([count], np.float32), src, out, engine=engine)
    n = max(int(count), 0)  # int() truncates toward zero: 2.9 -> 2, -1.5 -> -1 (no iteration)
    want = np.zeros_like(src)
    want[:n * 8] = src[:n * 8] + 1
    np.testing.assert_array_equal(out, want)


# -- kernels: scalar parameters converted for offsets and values ------------------------------

@pl.jit.incore
def shifted_scaled(src: pl.Tensor, row: pl.Scalar[pl.INT32], f: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    r = pl.cast(row, pl.INDEX)                        # INT32 parameter -> INDEX offset
    k = pl.cast(pl.cast(f, pl.INT32), pl.FP32)        # FP32 -> INT32 (truncates) -> FP32
    t = pl.load(src, [r, 0], [8, 32])
    out = pl.store(pl.muls(t, k), [0, 0], out)
    return out


@pl.jit
def shifted_scaled_entry(src: pl.Tensor, out: pl.Out[pl.Tensor], row: pl.Scalar[pl.INT32] = pl.RUNTIME,
                         f: pl.Scalar[pl.FP32] = pl.RUNTIME):
    out = shifted_scaled(src, row, f, out)
    return out


@pytest.mark.parametrize("row, f", [(0, 2.75), (8, -3.5), (16, 0.9), (24, -0.2)])
def test_kernel_int32_parameter_as_offset_and_float_truncation(engine, row, f):
    src = np.arange(32 * 32, dtype=np.float32).reshape(32, 32) / 7
    out = np.zeros((8, 32), np.float32)
    run(shifted_scaled_entry, src, out, row, f, engine=engine)
    np.testing.assert_allclose(out, src[row:row + 8] * float(math.trunc(f)), rtol=1e-6)


@pl.jit.incore
def casts_to_tensor(x: pl.Scalar[pl.INT32], f: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    """Every scalar conversion written into an INDEX tensor with pl.tensor.write."""
    pl.tensor.write(out, [0], pl.cast(x, pl.INT8))
    pl.tensor.write(out, [1], pl.cast(x, pl.UINT8))
    pl.tensor.write(out, [2], pl.cast(x, pl.INT16))
    pl.tensor.write(out, [3], pl.cast(x, pl.BOOL))
    pl.tensor.write(out, [4], pl.cast(f, pl.INT32))
    pl.tensor.write(out, [5], pl.cast(f, pl.UINT8))
    pl.tensor.write(out, [6], pl.cast(f, pl.INT8))
    pl.tensor.write(out, [7], pl.cast(f, pl.BOOL))
    pl.tensor.write(out, [8], pl.cast(pl.cast(x, pl.FP16), pl.INDEX))  # FP16 has 11 significant bits
    return out


@pl.jit
def casts_entry(out: pl.Out[pl.Tensor], x: pl.Scalar[pl.INT32] = pl.RUNTIME, f: pl.Scalar[pl.FP32] = pl.RUNTIME):
    out = casts_to_tensor(x, f, out)
    return out


def test_kernel_scalars_stay_run_time_values():
    c = jit_compile(casts_entry, (np.zeros(9, np.int64), 300, -2.75))
    text = ir.print_program(c.program)
    assert "pl.cast(x, pl.INT8)" in text and "pl.cast(f, pl.INT32)" in text, text  # not folded: run-time casts


def want_casts(x, f):
    f32 = float(np.float32(f))
    with np.errstate(over="ignore"):
        x16 = float(np.float16(x))
    return [want_cast(x, "INT8"), want_cast(x, "UINT8"), want_cast(x, "INT16"), want_cast(x, "BOOL"),
            want_cast(f32, "INT32"), want_cast(f32, "UINT8"), want_cast(f32, "INT8"), want_cast(f32, "BOOL"),
            want_cast(x16, "INDEX")]  # 65535 -> inf in FP16 -> saturates


@pytest.mark.parametrize("x, f", [(300, -2.75), (-129, 1000.5), (65535, 0.0), (0, -300.9), (2049, 127.99)])
def test_kernel_conversions_wrap_truncate_and_saturate(engine, x, f):
    out = np.full(9, -7, np.int64)
    run(casts_entry, out, x, f, engine=engine)
    np.testing.assert_array_equal(out, want_casts(x, f))


@pl.jit
def orch_casts(src: pl.Tensor, out: pl.Out[pl.Tensor]):
    """The same conversions on the host's scalar machine (values read from a tensor)."""
    x = pl.tensor.read(src, [0])
    f = pl.cast(pl.tensor.read(src, [1]), pl.FP32)
    pl.tensor.write(out, [0], pl.cast(x, pl.INT8))
    pl.tensor.write(out, [1], pl.cast(x, pl.UINT8))
    pl.tensor.write(out, [2], pl.cast(f, pl.INT32))
    pl.tensor.write(out, [3], pl.cast(f, pl.UINT8))
    pl.tensor.write(out, [4], pl.cast(pl.cast(f, pl.BF16), pl.INDEX))  # BF16 has 8 significant bits
    return out


def test_orchestration_conversions(engine):
    out = np.zeros(5, np.int64)
    run(orch_casts, np.array([-200, -7], np.int64), out, engine=engine)
    np.testing.assert_array_equal(out, [56, 56, -7, 0, -7])
    out = np.zeros(5, np.int64)
    run(orch_casts, np.array([1000, 257], np.int64), out, engine=engine)
    # 1000 -> INT8 -24, UINT8 232; 257.0 -> INT32 257, UINT8 255 (saturates); BF16(257) = 256
    np.testing.assert_array_equal(out, [-24, 232, 257, 255, 256])


# -- the IR: one node, printed, parsed back, folded on constants ------------------------------

def cast_program():
    @pl.program
    class Casts:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[32, 32], pl.FP32], row: pl.Scalar[pl.INT32],
                   b: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
            t = pl.load(a, [pl.cast(row, pl.INDEX), 0], [8, 32])
            b = pl.store(pl.muls(t, pl.cast(pl.cast(row, pl.INT64), pl.FP32) + pl.cast(3.9, pl.INT32)), [0, 0], b)
            return b

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[32, 32], pl.FP32], c: pl.Tensor[[1], pl.INT32],
                 b: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
            b = self.kernel(a, pl.tensor.read(c, [0]), b)
            return b

    return Casts


def test_cast_prints_parses_back_and_folds_constants():
    text = roundtrip(cast_program())
    assert "pl.cast(row, pl.INDEX)" in text and "pl.cast(pl.cast(row, pl.INT64), pl.FP32)" in text, text
    assert "pl.const(3, pl.INT32)" in text and "pl.cast(3.9" not in text, text  # truncated at parse time


def test_cast_node_kind_and_constant_folds():
    x = ir.Var("x", ir.ScalarType(ir.DataType.INT32))
    c = ir.make_cast(x, ir.DataType.INDEX)
    assert isinstance(c, ir.CastExpr) and c.a.name == "x"
    assert c.type.dtype == ir.DataType.INDEX and str(c) == "pl.cast(x, pl.INDEX)"
    assert ir.make_cast(x, ir.DataType.INT32) is not None and not isinstance(ir.make_cast(x, ir.DataType.INT32), ir.CastExpr)
    assert ir.make_cast(ir.ConstFloat(-2.5, ir.DataType.FP32), ir.DataType.INT32).value == -2
    assert ir.make_cast(ir.ConstInt(300, ir.DataType.INT32), ir.DataType.INT8).value == 44
    assert ir.make_cast(ir.ConstFloat(1e10, ir.DataType.FP32), ir.DataType.INT32).value == 2**31 - 1
    assert ir.make_cast(ir.ConstFloat(float("nan"), ir.DataType.FP32), ir.DataType.INT32).value == 0
    assert ir.make_cast(ir.ConstInt(7, ir.DataType.INDEX), ir.DataType.FP32).value == 7.0
    assert ir.make_cast(ir.ConstInt(2049, ir.DataType.INDEX), ir.DataType.FP16).value == 2048.0
    assert ir.make_cast(ir.ConstInt(2, ir.DataType.INDEX), ir.DataType.BOOL).value is True


def test_python_visitor_sees_visit_cast():
    seen = []

    class V(ir.IRVisitor):
        def visit_cast(self, op):
            seen.append(str(op))
            super().visit_cast(op)

    V().visit_program(cast_program())
    assert "pl.cast(row, pl.INDEX)" in seen and "pl.cast(pl.cast(row, pl.INT64), pl.FP32)" in seen, seen


# -- errors: only mode="round" on a scalar ---------------------------------------------------

def compile_error(fn, *args):
    with pytest.raises(ParseError) as e:
        fn(*args, config=RunConfig())
    return str(e.value)


def test_a_scalar_cast_takes_only_the_round_mode():
    @pl.jit
    def other_mode(c: pl.Tensor, out: pl.Out[pl.Tensor]):
        n = pl.cast(pl.tensor.read(c, [0]), pl.INDEX, mode="floor")
        out = copy_blocks(c, n, 0, out)
        return out

    @pl.jit
    def bad_name(c: pl.Tensor, out: pl.Out[pl.Tensor]):
        n = pl.cast(pl.tensor.read(c, [0]), pl.INDEX, mode="nearest")
        out = copy_blocks(c, n, 0, out)
        return out

    c, out = np.zeros([1], np.int32), np.zeros((8, 32), np.float32)
    msg = compile_error(other_mode, c, out)
    assert "TypeError" in msg and "mode='floor'" in msg and "test_scalar_cast.py:" in msg and "fix:" in msg, msg
    msg = compile_error(bad_name, c, out)
    assert "ValueError" in msg and "'nearest'" in msg and "fix:" in msg, msg


def test_a_scalar_cast_with_mode_round_spelled_out_is_accepted(engine):
    @pl.jit
    def explicit(cnt: pl.Tensor, src: pl.Tensor, out: pl.Out[pl.Tensor]):
        n = pl.cast(pl.tensor.read(cnt, [0]), target_type=pl.INDEX, mode="round")
        out = copy_blocks(src, n, 0, out)
        return out

    src = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros_like(src)
    run(explicit, np.array([1], np.int32), src, out, engine=engine)
    np.testing.assert_array_equal(out[:8], src[:8])
    assert not out[8:].any()


# -- the PyTorch spelling computes the same ---------------------------------------------------

@pytest.mark.parametrize("x, f", [(300, -2.75), (-129, 1000.5), (2049, 127.99)])
def test_torch_script_of_scalar_casts_computes_the_same(x, f):
    import pypto.debug as dbg

    namespace = {}
    out = torch.full((9,), -7, dtype=torch.int64)
    text = dbg.torch_codegen(casts_entry, out.numpy(), x, f)
    exec(compile(text, "<torch script of casts>", "exec"), namespace)
    namespace["ENTRY"](out, x, f)
    namespace.clear()
    np.testing.assert_array_equal(out.numpy(), want_casts(x, f))


# -- pl.create_tensor with run-time extents ---------------------------------------------------

@pl.jit.incore
def rows_scale(a: pl.Tensor, f: pl.Scalar[pl.FP32], c: pl.Out[pl.Tensor]):
    for i in pl.range(pl.tensor.dim(c, 0)):
        c = pl.store(pl.muls(pl.load(a, [i, 0], [1, 16]), f), [i, 0], c)
    return c


@pl.jit
def through_dynamic_tmp(a: pl.Tensor[[M, 16], pl.FP32], c: pl.Out[pl.Tensor[[M, 16], pl.FP32]]):
    tmp = pl.create_tensor([M, 16], dtype=pl.FP32)
    tmp = rows_scale(a, 2.0, tmp)
    c = rows_scale(tmp, 3.0, c)
    return c


@pytest.mark.parametrize("m", [5, 12, 1])
def test_create_tensor_with_a_dynamic_dimension(engine, m):
    a = np.arange(m * 16, dtype=np.float32).reshape(m, 16)
    c = np.zeros_like(a)
    run(through_dynamic_tmp, a, c, engine=engine)
    np.testing.assert_array_equal(c, a * 6)


@pl.jit
def through_read_tmp(cnt: pl.Tensor[[1], pl.INT32], a: pl.Tensor[[16, 16], pl.FP32],
                     c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    """A temporary of pl.tensor.read(cnt, [0]) rows: the first rows of a, doubled, into c."""
    tmp = pl.create_tensor([pl.tensor.read(cnt, [0]), 16], dtype=pl.FP32)  # INT32 extent: converted to INDEX
    tmp = rows_scale(a, 2.0, tmp)
    c = rows_of_source(tmp, c)
    return c


@pl.jit.incore
def rows_of_source(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.range(pl.tensor.dim(a, 0)):  # the run-time extent of the created tensor
        c = pl.store(pl.load(a, [i, 0], [1, 16]), [i, 0], c)
    return c


@pl.jit.incore
def rows_copy_n(a: pl.Tensor, n: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
    for i in pl.range(n):
        c = pl.store(pl.load(a, [i, 0], [1, 16]), [i, 0], c)
    return c


@pl.jit
def through_read_tmp_n(cnt: pl.Tensor[[1], pl.INT32], a: pl.Tensor[[16, 16], pl.FP32],
                       c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    n = pl.cast(pl.tensor.read(cnt, [0]), pl.INDEX)
    tmp = pl.create_tensor([n, 16], dtype=pl.FP32)
    tmp = rows_scale(a, 2.0, tmp)
    c = rows_copy_n(tmp, n, c)
    return c


@pytest.mark.parametrize("fn", [through_read_tmp, through_read_tmp_n])
@pytest.mark.parametrize("n", [3, 16])
def test_create_tensor_with_an_extent_read_at_run_time(engine, fn, n):
    a = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    c = np.full_like(a, -1.0)
    run(fn, np.array([n], np.int32), a, c, engine=engine)
    want = np.full_like(a, -1.0)
    want[:n] = a[:n] * 2
    np.testing.assert_array_equal(c, want)


def test_the_run_time_extent_is_an_operand_of_the_allocation():
    c = jit_compile(through_read_tmp_n, (np.zeros([1], np.int32), np.zeros((16, 16), np.float32),
                                         np.zeros((16, 16), np.float32)))
    text = ir.print_program(c.program)
    assert "pl.create_tensor([n, 16]" in text or "pl.tensor.create([n, 16]" in text, text
    assert any(t.shape == [-1, 16] for t in c.host_program.tensors), [t.shape for t in c.host_program.tensors]


@pytest.mark.parametrize("n, what", [(-3, "extent -3 of dimension 0 is negative"),
                                     (1 << 40, "this machine's memory")])
def test_a_bad_run_time_extent_is_an_error_at_its_line(engine, n, what):
    @pl.jit
    def sized(cnt: pl.Tensor[[1], pl.INT64], a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        tmp = pl.create_tensor([pl.tensor.read(cnt, [0]), 1048576], dtype=pl.FP32)
        c = rows_copy_n(tmp, 0, c)
        return c

    with pytest.raises(Exception) as e:
        sized(np.array([n], np.int64), np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32),
              config=RunConfig(engine=engine))
    msg = str(e.value)
    assert what in msg and "test_scalar_cast.py:" in msg and "fix:" in msg, msg


# -- a cast inside a pl.at body, and the Python mutator ----------------------------------------

@pl.jit
def at_scope_offset(cnt: pl.Tensor, src: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        r = pl.cast(pl.tensor.read(cnt, [0]), pl.INDEX)  # an INT32 element as an offset in the kernel
        t = pl.load(src, [r, 0], [8, 32])
        out = pl.store(pl.muls(t, pl.cast(r, pl.FP32)), [0, 0], out)
    return out


@pytest.mark.parametrize("row", [0, 5, 24])
def test_cast_in_a_pl_at_body(engine, row):
    src = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros((8, 32), np.float32)
    run(at_scope_offset, np.array([row], np.int32), src, out, engine=engine)
    np.testing.assert_array_equal(out, src[row:row + 8] * row)


def test_python_mutator_rebuilds_a_cast():
    class Renamer(ir.IRMutator):
        def visit_cast(self, op):
            if op.type.dtype == ir.DataType.INDEX:  # pl.cast(row, pl.INDEX) -> pl.cast(7, pl.INDEX) folds to 7
                return ir.make_cast(ir.ConstInt(7, ir.DataType.INT32), ir.DataType.INDEX)
            return super().visit_cast(op)

    text = ir.print_program(Renamer().visit_program(cast_program()))
    assert "pl.cast(row, pl.INDEX)" not in text and "pl.tile.load(a, [7, 0]" in text, text
    assert "pl.cast(pl.cast(row, pl.INT64), pl.FP32)" in text, text


def staged_program():
    """Built per use: a module-level program would outlive the bindings at interpreter exit."""
    @pl.program
    class Staged:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
            for i in pl.range(pl.tensor.dim(y, 0)):
                y = pl.store(pl.muls(pl.load(x, [i, 0], [1, 16]), 2.0), [i, 0], y)
            return y

        @pl.function(type=pl.FunctionType.InCore)
        def back(self, t: pl.Tensor[[M, 16], pl.FP32],
                 z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i in pl.range(pl.tensor.dim(t, 0)):
                z = pl.store(pl.load(t, [i, 0], [1, 16]), [i, 0], z)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, c: pl.Tensor[[1], pl.INT32], x: pl.Tensor[[16, 16], pl.FP32],
                 z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            n = pl.cast(pl.tensor.read(c, [0]), pl.INDEX)
            t = pl.create_tensor([n, 16], dtype=pl.FP32)
            t = self.k(x, t)
            z = self.back(t, z)
            return z

    return Staged


@pytest.mark.parametrize("n", [5, 16])
def test_class_form_kernels_with_a_dynamic_dim_take_the_created_tensor(engine, n):
    from pypto.runtime import run as run_program

    program = staged_program()
    text = roundtrip(program)
    assert "pl.tensor.create([n, 16]" in text and "self.k(x, t, n)" in text, text
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    z = np.full_like(x, -1.0)
    run_program(program, np.array([n], np.int32), x, z, config=RunConfig(engine=engine))
    want = np.full_like(x, -1.0)
    want[:n] = 2 * x[:n]
    np.testing.assert_array_equal(z, want)

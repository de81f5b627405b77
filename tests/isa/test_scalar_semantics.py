"""One scalar semantics (include/pypto/base/scalar_ops.h, docs/isa.md "Scalar semantics"): the
same table of (a, b) pairs goes through every implementation of `//` and `%` -- the kernel
scalar machine (sim engine), the generated native kernel, the host's scalar machine (an
orchestration), Simplify's constant folding, the @pto.kernel lane API (tile lowering and
the warp model) and the torch script -- and each result is compared with Python's own `//`
and `%` (integers wrapped to 64 bits) or, for a zero divisor, with the hand-checked rule:
an integer divisor 0 raises "integer division by zero" at run time and is a compile error
when constant; a float divisor 0.0 gives x // 0.0 == floor(x / 0.0), x % 0.0 == NaN."""

import math

import numpy as np
import pypto as pto
import pypto.language as pl
import pytest
from pypto import _core, ir
from pypto._core import PyptoError
from pypto.runtime import RunConfig

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

INT_PAIRS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (0, -3), (6, 3), (-6, 3), (1, 7), (-1, 7),
             (INT64_MIN, -1), (INT64_MIN, 1), (INT64_MIN, 3), (INT64_MAX, -2), (INT64_MIN, INT64_MAX),
             (5, INT64_MIN), (INT64_MAX, INT64_MIN)]
INT_ZERO = [(7, 0), (0, 0), (-7, 0), (INT64_MIN, 0)]
INF, NAN = math.inf, math.nan
FLOAT_PAIRS = [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (6.0, 3.0), (-6.0, 3.0), (0.5, 0.25),
               (-0.0, 1.0), (0.0, -1.0), (-0.0, -1.0), (1.0, INF), (-1.0, INF), (1.0, -INF), (-1.0, -INF),
               (INF, 2.0), (-INF, 2.0), (NAN, 1.0), (5.0, NAN), (3.0, 0.375)]
FLOAT_ZERO = [(5.0, 0.0), (-5.0, 0.0), (0.0, 0.0), (5.0, -0.0), (NAN, 0.0)]


def wrap(x):
    return ((x + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def want_int(a, b):
    return wrap(a // b), wrap(a % b)


def want_float(a, b):
    """Python's float // and %, or the IEEE rule of a zero divisor (where Python raises)."""
    if b == 0:
        q = math.nan if (a != a or a == 0) else math.copysign(math.inf, a) * math.copysign(1.0, b)
        return q, math.nan
    return a // b, a % b


def same_float(got, want):
    got, want = float(got), float(want)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def check_floats(got, want, what):
    assert all(same_float(g, w) for g, w in zip(got, want)), f"{what}: got {list(got)}, want {list(want)}"


# -- the kernel scalar machine (sim) and the native kernel ------------------------------------

@pl.jit.incore
def int_divmod(a: pl.Scalar[pl.INDEX], b: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    pl.tensor.write(out, [0], a // b)
    pl.tensor.write(out, [1], a % b)
    return out


@pl.jit
def int_entry(out: pl.Out[pl.Tensor], a: pl.Scalar[pl.INDEX] = pl.RUNTIME, b: pl.Scalar[pl.INDEX] = pl.RUNTIME):
    out = int_divmod(a, b, out)
    return out


@pl.jit.incore
def float_divmod(a: pl.Scalar[pl.FP32], b: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    pl.tensor.write(out, [0], a // b)
    pl.tensor.write(out, [1], a % b)
    return out


@pl.jit
def float_entry(out: pl.Out[pl.Tensor], a: pl.Scalar[pl.FP32] = pl.RUNTIME, b: pl.Scalar[pl.FP32] = pl.RUNTIME):
    out = float_divmod(a, b, out)
    return out


def test_kernel_integer_floor_division_and_modulo(engine):
    for a, b in INT_PAIRS:
        out = np.full(2, -99, np.int64)
        int_entry(out, a, b, config=RunConfig(engine=engine))
        assert tuple(out.tolist()) == want_int(a, b), (a, b)


def test_kernel_integer_division_by_zero_raises(engine):
    for a, b in INT_ZERO:
        with pytest.raises(PyptoError, match="integer division by zero"):
            int_entry(np.zeros(2, np.int64), a, b, config=RunConfig(engine=engine))


def test_kernel_float_floor_division_and_modulo(engine):
    for a, b in FLOAT_PAIRS + FLOAT_ZERO:
        out = np.full(2, -99, np.float32)
        float_entry(out, a, b, config=RunConfig(engine=engine))
        a32, b32 = float(np.float32(a)), float(np.float32(b))
        check_floats(out, [np.float32(w) for w in want_float(a32, b32)], f"{engine} {a} // {b}, {a} % {b}")


# -- the host's scalar machine (an orchestration) ---------------------------------------------

@pl.jit
def host_int(src: pl.Tensor, out: pl.Out[pl.Tensor]):
    a = pl.tensor.read(src, [0])
    b = pl.tensor.read(src, [1])
    pl.tensor.write(out, [0], a // b)
    pl.tensor.write(out, [1], a % b)
    return out


@pl.jit
def host_float(src: pl.Tensor, out: pl.Out[pl.Tensor]):
    a = pl.tensor.read(src, [0])
    b = pl.tensor.read(src, [1])
    pl.tensor.write(out, [0], a // b)
    pl.tensor.write(out, [1], a % b)
    return out


def test_host_scalar_machine(engine):
    for a, b in INT_PAIRS:
        out = np.zeros(2, np.int64)
        host_int(np.array([a, b], np.int64), out, config=RunConfig(engine=engine))
        assert tuple(out.tolist()) == want_int(a, b), (a, b)
    for a, b in INT_ZERO:
        with pytest.raises(PyptoError, match="integer division by zero"):
            host_int(np.array([a, b], np.int64), np.zeros(2, np.int64), config=RunConfig(engine=engine))
    for a, b in FLOAT_PAIRS + FLOAT_ZERO:
        out = np.zeros(2, np.float32)
        host_float(np.array([a, b], np.float32), out, config=RunConfig(engine=engine))
        check_floats(out, [np.float32(w) for w in want_float(float(np.float32(a)), float(np.float32(b)))], (a, b))


# -- Simplify's constant folding ---------------------------------------------------------------

def folded(op, a, b):
    if isinstance(a, float):
        x, y = ir.ConstFloat(a, pl.FP32), ir.ConstFloat(b, pl.FP32)
    else:
        x, y = ir.ConstInt(a, pl.INDEX), ir.ConstInt(b, pl.INDEX)
    e = _core.simplify_expr(ir.BinaryExpr(op, x, y))
    assert isinstance(e, (ir.ConstInt, ir.ConstFloat)), e
    return e.value


def test_simplify_folds_with_the_same_rules():
    for a, b in INT_PAIRS:
        assert (folded(ir.BinaryOp.FloorDiv, a, b), folded(ir.BinaryOp.Mod, a, b)) == want_int(a, b), (a, b)
    # double constants: 1.0 // 0.1 is 9.0 in Python (floor(1.0 / 0.1) would be 10.0)
    for a, b in FLOAT_PAIRS + [(1.0, 0.1), (-1.0, 0.1), (0.7, 0.1)]:
        check_floats([folded(ir.BinaryOp.FloorDiv, a, b), folded(ir.BinaryOp.Mod, a, b)], want_float(a, b), (a, b))


@pytest.mark.parametrize("a, b", INT_ZERO[:2] + [(5.0, 0.0), (0.0, -0.0)])
@pytest.mark.parametrize("op", ["FloorDiv", "Mod", "Div"])
def test_simplify_constant_zero_divisor_is_a_compile_error(a, b, op):
    with pytest.raises(PyptoError, match="by zero") as e:
        folded(getattr(ir.BinaryOp, op), a, b)
    assert "fix:" in str(e.value)


@pl.jit.incore
def zero_in_dead_branch(a: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    for j in pl.unroll(0, 1, 1):
        d = j * 0
        if d > 0:
            pl.tensor.write(out, [0], a // d)  # never runs: no error (as in Python)
        pl.tensor.write(out, [1], a // (d + 2))
    return out


@pl.jit.incore
def zero_in_live_code(a: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    for j in pl.unroll(0, 1, 1):
        pl.tensor.write(out, [0], a // (j * 0))
    return out


@pl.jit
def dead_entry(out: pl.Out[pl.Tensor], a: pl.Scalar[pl.INDEX] = pl.RUNTIME):
    out = zero_in_dead_branch(a, out)
    return out


@pl.jit
def live_entry(out: pl.Out[pl.Tensor], a: pl.Scalar[pl.INDEX] = pl.RUNTIME):
    out = zero_in_live_code(a, out)
    return out


def test_constant_zero_divisor_in_a_program(engine):
    out = np.full(2, -1, np.int64)
    dead_entry(out, 9, config=RunConfig(engine=engine))
    assert out.tolist() == [-1, 4]
    with pytest.raises(PyptoError, match=r"test_scalar_semantics.py:\d+.*integer division by zero") as e:
        live_entry(np.zeros(2, np.int64), 9, config=RunConfig(engine=engine))
    assert "fix:" in str(e.value)


# -- the @pto.kernel lane API: tile lowering (uniform values fold) and the warp model -------------

@pto.kernel
def lane_divmod(o, a, b):
    i = pto.get_global_id()
    if i < 1:
        pto.store(o + i, a // b)
        pto.store(o + i + 1, a % b)


@pto.kernel
def warp_divmod(o, a, b):
    i = pto.get_global_id()
    q = a // b
    r = a % b
    pto.barrier()  # a barrier: the warp model runs the kernel
    if i < 1:
        pto.store(o + i, q)
        pto.store(o + i + 1, r)


LANE_INTS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (0, -3), (-6, 3), (6, -3), (-1, 7), (1000, -7)]


@pytest.mark.parametrize("kernel", [lane_divmod, warp_divmod], ids=["tiles", "warps"])
def test_lane_api(kernel):
    """Lane values are fp32 numbers: // and % follow Python's float rules on them (equal to the
    integer rules for integer values); an integer divisor 0 is an error at the kernel's line."""
    for a, b in LANE_INTS + FLOAT_PAIRS[:7] + FLOAT_ZERO[:4]:
        with pto.Tensor(8) as d_o:
            pto.launch(kernel, grid=(1, 1, 1), block=(32, 1, 1), args=(d_o, a, b), engine="sim")
            got = np.zeros(2, np.float32)
            pto.memcpy_d2h(got, d_o)
        want = want_int(a, b) if isinstance(a, int) else want_float(a, b)
        check_floats(got, [np.float32(w) for w in want], f"{kernel.name} {a}, {b}")
    for a, b in [(7, 0), (0, 0)]:
        with pto.Tensor(8) as d_o:
            with pytest.raises(PyptoError, match="integer division by zero"):
                pto.launch(kernel, grid=(1, 1, 1), block=(32, 1, 1), args=(d_o, a, b), engine="sim")
                pto.sync()


# -- the torch script ----------------------------------------------------------------------------

def test_torch_script_prelude_states_the_same_rules():
    torch = pytest.importorskip("torch")
    import pypto.debug as dbg

    out = torch.zeros(2, dtype=torch.int64)
    namespace = {}
    exec(compile(dbg.torch_codegen(int_entry, out, 7, 2), "<torch script>", "exec"), namespace)
    entry = namespace["ENTRY"]
    for a, b in INT_PAIRS:
        out = torch.zeros(2, dtype=torch.int64)
        entry(out, a, b)
        assert tuple(out.tolist()) == want_int(a, b), (a, b)
    for a, b in INT_ZERO:
        with pytest.raises(ZeroDivisionError, match="integer division by zero"):
            entry(torch.zeros(2, dtype=torch.int64), a, b)
    namespace = {}
    exec(compile(dbg.torch_codegen(float_entry, torch.zeros(2), 7.5, 2.0), "<torch script>", "exec"), namespace)
    entry = namespace["ENTRY"]
    for a, b in FLOAT_PAIRS + FLOAT_ZERO:
        out = torch.zeros(2)
        entry(out, a, b)
        check_floats(out.tolist(), [np.float32(w) for w in want_float(float(np.float32(a)), float(np.float32(b)))], (a, b))

"""Elementwise instructions (tile-tile, tile-scalar, unary and the two-step ones) against
numpy, over every dtype the instruction table allows and the shapes of isa_cases.CASES
(square, non-square, a valid region smaller than the tile).

What is checked (docs/isa.md, "Precision"):
- +, -, *, /, max, min, remainder, fmod, prelu, abs, neg, relu, sqrt and 1/x are
  correctly rounded: bit-equal to the float64 result rounded to the dtype by
  isa_cases.round_to. The float64 result is exact, or (/, sqrt) correctly rounded in
  float64, which rounds to the same fp32/fp16/bf16 value (53 >= 2 * 24 + 2 bits).
  Integers wrap like numpy's fixed-width arithmetic.
- exp, log, 1/sqrt and pow: within 1 ulp of the correctly rounded value (the bound of
  the reference library, which computes them in double and rounds once).
- TAXPY, TMULADDDST, TADDC, TSUBC are two FP32 steps (no fused multiply-add): bit-equal
  to numpy's float32 steps rounded once to the dtype, and for FP16/BF16 (whose products
  and sums are exact in FP32 here) within 1 ulp of the correctly rounded exact result.
- The scalar of a float instruction has the instruction's dtype: the expected value uses
  the scalar rounded to the dtype first.
Special values (signed zeros, infinities, NaN, exact multiples, fp16 overflow) start
each float tile's valid region; elements outside the valid region must stay unchanged.
"""

import numpy as np
import pytest
from isa_cases import (
    A_SPECIAL,
    B_SPECIAL,
    CASE_IDS,
    CASES,
    FLOATS,
    NP,
    check_exact,
    check_outside_kept,
    check_ulps,
    f32,
    random_tile,
    round_to,
    run,
    table_dtypes,
    values,
    with_specials,
)
from pypto import _core


def operand(rng, shape, dtype, low=-4.0, high=4.0, wide=False):
    """A random tile; wide integers (INT32 up to 2^20) make products wrap."""
    if wide and dtype == "INT32":
        return rng.integers(-(2**20), 2**20, size=shape).astype(np.int32)
    return random_tile(rng, shape, dtype, low, high)


def int_div(a, b):  # truncating toward zero
    return np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))


def int_fmod(a, b):  # sign of the dividend
    return a - int_div(a, b) * b


BINARY = {  # name: (float64 function, int64 function)
    "TADD": (np.add, np.add),
    "TSUB": (np.subtract, np.subtract),
    "TMUL": (np.multiply, np.multiply),
    "TDIV": (np.divide, int_div),
    "TMAX": (np.maximum, np.maximum),
    "TMIN": (np.minimum, np.minimum),
    "TREM": (np.remainder, np.remainder),
    "TFMOD": (np.fmod, int_fmod),
    "TPRELU": (lambda a, b: np.where(a > 0, a, a * b),) * 2,
}
DIVIDING = {"TDIV", "TREM", "TFMOD"}


def binary_cases(names):
    return [(n, d) for n in names for d in table_dtypes(n)]


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name,dtype", binary_cases(BINARY))
def test_tile_tile(rng, name, dtype, shape, valid):
    a = with_specials(operand(rng, shape, dtype, wide=True), dtype, A_SPECIAL, valid)
    b = with_specials(operand(rng, shape, dtype, wide=name not in DIVIDING), dtype, B_SPECIAL, valid)
    if name in DIVIDING and dtype not in FLOATS:
        b = np.where(b == 0, NP[dtype](3), b)  # integer division by zero is an error (tested below)
    out = random_tile(rng, shape, dtype)
    before = out.copy()
    run(name, [out], [a, b], valid_shape=valid)
    fn = BINARY[name][0 if dtype in FLOATS else 1]
    with np.errstate(all="ignore"):
        exact = fn(values(a, dtype), values(b, dtype))
    check_exact(out, exact, dtype, valid, what=f"{name} {dtype}: ")
    check_outside_kept(out, before, valid)


BITWISE = {
    "TAND": np.bitwise_and,
    "TOR": np.bitwise_or,
    "TXOR": np.bitwise_xor,
    "TSHL": np.left_shift,
    "TSHR": np.right_shift,  # arithmetic on the sign-extended int64 value
}


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name,dtype", binary_cases(BITWISE))
def test_bitwise_and_shifts(rng, name, dtype, shape, valid):
    a = operand(rng, shape, dtype, wide=True)
    if name in ("TSHL", "TSHR"):
        b = rng.integers(0, 8, size=shape).astype(NP[dtype])
    else:
        b = operand(rng, shape, dtype, wide=True)
    out = np.zeros(shape, NP[dtype])
    run(name, [out], [a, b], valid_shape=valid)
    check_exact(out, BITWISE[name](values(a, dtype), values(b, dtype)), dtype, valid, what=f"{name}: ")
    check_outside_kept(out, np.zeros_like(out), valid)


def test_integer_wraps_like_numpy():
    a = np.full((4, 8), 120, np.int8)
    out = np.zeros_like(a)
    np.testing.assert_array_equal(run("TADD", [out], [a, a]), a + a)  # wraps to -16


@pytest.mark.parametrize("name", ["TDIV", "TREM", "TFMOD"])
def test_integer_division_by_zero_is_an_error(name):
    a = np.ones((4, 8), np.int32)
    with pytest.raises(_core.PyptoError, match="integer (division|remainder) by zero"):
        run(name, [np.zeros_like(a)], [a, np.zeros_like(a)])


def test_tfmods_by_integer_zero_is_an_error():
    a = np.ones((4, 8), np.int32)
    with pytest.raises(_core.PyptoError, match="integer remainder by zero"):
        run("TFMODS", [np.zeros_like(a)], [a, 0])


SCALAR = {  # name: (float64 function, int64 function) of (a, s)
    "TADDS": (np.add, np.add),
    "TSUBS": (np.subtract, np.subtract),
    "TMULS": (np.multiply, np.multiply),
    "TDIVS": (np.divide, int_div),
    "TMAXS": (np.maximum, np.maximum),
    "TMINS": (np.minimum, np.minimum),
    "TLRELU": (lambda a, s: np.where(a > 0, a, a * s),) * 2,
    "TREMS": (np.remainder, np.remainder),
    "TFMODS": (np.fmod, np.fmod),
}
INT_SCALAR = {"TANDS": np.bitwise_and, "TORS": np.bitwise_or, "TXORS": np.bitwise_xor,
              "TSHLS": np.left_shift, "TSHRS": np.right_shift}


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name,dtype", binary_cases(SCALAR) + binary_cases(INT_SCALAR))
def test_tile_scalar(rng, name, dtype, shape, valid):
    a = with_specials(operand(rng, shape, dtype, wide=True), dtype, A_SPECIAL, valid)
    # -0.3 is not representable in any float dtype: the instruction rounds it to the dtype.
    scalars = [1.75, -0.3] if dtype in FLOATS else ([3, -2] if name not in INT_SCALAR else [3, 5])
    for s in scalars:
        out = np.zeros(shape, NP[dtype])
        run(name, [out], [a, s], valid_shape=valid)
        if dtype in FLOATS:
            sv = values(round_to(np.float64(s), dtype), dtype)
            with np.errstate(all="ignore"):
                exact = SCALAR[name][0](values(a, dtype), sv)
        else:
            fn = INT_SCALAR[name] if name in INT_SCALAR else SCALAR[name][1]
            exact = fn(values(a, dtype), np.int64(s))
        check_exact(out, exact, dtype, valid, what=f"{name} {dtype} s={s}: ")
        check_outside_kept(out, np.zeros_like(out), valid)


UNARY_EXACT = {  # correctly rounded; float64 function (ints: int64)
    "TABS": np.abs,
    "TNEG": np.negative,
    "TRELU": lambda a: np.maximum(a, 0),
    "TNOT": np.invert,
    "TSQRT": np.sqrt,
    "TRECIP": lambda a: 1.0 / a,
}
UNARY_ULP = {  # within 1 ulp: (float64 function, low, high)
    "TEXP": (np.exp, -8, 8),
    "TLOG": (np.log, 0.01, 100),
    "TRSQRT": (lambda a: 1.0 / np.sqrt(a), 0.01, 100),
}
UNARY_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-30, 4.0, 65504.0, 2.0**-24]


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name,dtype", binary_cases(UNARY_EXACT) + binary_cases(UNARY_ULP))
def test_unary(rng, name, dtype, shape, valid):
    fn, lo, hi = UNARY_ULP.get(name, (UNARY_EXACT.get(name), 0 if name == "TSQRT" else -8, 100))
    a = with_specials(operand(rng, shape, dtype, lo, hi, wide=True), dtype, UNARY_SPECIAL, valid)
    out = np.zeros(shape, NP[dtype])
    run(name, [out], [a], valid_shape=valid)
    with np.errstate(all="ignore"):
        exact = fn(values(a, dtype))
    if name in UNARY_ULP:
        check_ulps(out, exact, dtype, valid, ulps=1, what=f"{name} {dtype}: ")
    else:
        check_exact(out, exact, dtype, valid, what=f"{name} {dtype}: ")
    check_outside_kept(out, np.zeros_like(out), valid)


POW_SPECIAL_A = [0.0, -2.0, -2.0, 3.0, np.nan, 1.0, 2.0, 0.5]
POW_SPECIAL_B = [-1.0, 3.0, 0.5, 0.0, 0.0, np.nan, 10.0, -3.0]


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TPOW"))
def test_tpow(rng, dtype, shape, valid):
    a = with_specials(random_tile(rng, shape, dtype, 0.25, 4.0), dtype, POW_SPECIAL_A, valid)
    b = with_specials(random_tile(rng, shape, dtype, -3.0, 3.0), dtype, POW_SPECIAL_B, valid)
    out = np.zeros(shape, NP[dtype])
    run("TPOW", [out], [a, b], valid_shape=valid)
    with np.errstate(all="ignore"):
        exact = np.power(values(a, dtype), values(b, dtype))
    check_ulps(out, exact, dtype, valid, ulps=1, what=f"TPOW {dtype}: ")


TWO_STEP = {  # name: (number of tile inputs, float32 steps / int64 of (a, b, c_or_dst))
    "TADDC": (3, lambda a, b, c: (a + b) + c),
    "TSUBC": (3, lambda a, b, c: (a - b) + c),
    "TMULADDDST": (2, lambda a, b, d: (a * b) + d),
}


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name,dtype", binary_cases(TWO_STEP))
def test_two_step(rng, name, dtype, shape, valid):
    n, fn = TWO_STEP[name]
    a, b, c = (operand(rng, shape, dtype, wide=True) for _ in range(3))
    out = c.copy() if n == 2 else np.zeros(shape, NP[dtype])
    run(name, [out], [a, b] + ([c] if n == 3 else []), valid_shape=valid)
    if dtype in FLOATS:
        steps = fn(f32(a, dtype), f32(b, dtype), f32(c, dtype))  # numpy float32: each step rounded
        check_exact(out, steps.astype(np.float64), dtype, valid, what=f"{name} {dtype}: ")
        if dtype != "FP32":
            check_ulps(out, fn(values(a, dtype), values(b, dtype), values(c, dtype)), dtype, valid, 1)
    else:
        check_exact(out, fn(values(a, dtype), values(b, dtype), values(c, dtype)), dtype, valid)
    check_outside_kept(out, c if n == 2 else np.zeros_like(out), valid)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TAXPY"))
def test_taxpy_accumulates_into_dst(rng, dtype, shape, valid):
    a = operand(rng, shape, dtype, wide=True)
    dst = operand(rng, shape, dtype, wide=True)
    before = dst.copy()
    s = -0.3 if dtype in FLOATS else 3
    run("TAXPY", [dst], [a, s], valid_shape=valid)
    if dtype in FLOATS:
        sv = values(round_to(np.float64(s), dtype), dtype)
        steps = f32(before, dtype) + np.float32(sv) * f32(a, dtype)  # product rounded first
        check_exact(dst, steps.astype(np.float64), dtype, valid, what=f"TAXPY {dtype}: ")
        if dtype != "FP32":
            check_ulps(dst, values(before, dtype) + sv * values(a, dtype), dtype, valid, 1)
    else:
        check_exact(dst, values(before, dtype) + s * values(a, dtype), dtype, valid)
    check_outside_kept(dst, before, valid)


def test_bf16_add_against_torch(rng):
    torch = pytest.importorskip("torch")
    a = torch.tensor(rng.uniform(-4, 4, (8, 16)), dtype=torch.bfloat16)
    b = torch.tensor(rng.uniform(-4, 4, (8, 16)), dtype=torch.bfloat16)
    bits = lambda t: t.view(torch.int16).numpy().view(np.uint16).copy()
    out = np.zeros((8, 16), np.uint16)
    run("TADD", [out], [bits(a), bits(b)])
    np.testing.assert_array_equal(out, bits(a + b))


def test_unsupported_dtype_is_a_user_error(rng):
    a = random_tile(rng, (4, 8), "FP32")
    with pytest.raises(_core.PyptoError, match="TEXP: does not support dtype INT32"):
        run("TEXP", [np.zeros((4, 8), np.int32)], [a.astype(np.int32)])

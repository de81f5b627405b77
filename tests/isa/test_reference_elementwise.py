"""Elementwise instructions (tile-tile, tile-scalar, unary) against numpy, over several
dtypes and shapes, including a valid region smaller than the tile."""

import numpy as np
import pytest
from isa_cases import NP, random_tile, run
from pypto import _core

SHAPES = [(16, 16), (8, 40), (32, 8)]


def trunc_div(a, b):
    return np.trunc(a.astype(np.float64) / b).astype(a.dtype)


BINARY = {
    "TADD": lambda a, b: a + b,
    "TSUB": lambda a, b: a - b,
    "TMUL": lambda a, b: a * b,
    "TDIV": lambda a, b: a / b if a.dtype.kind == "f" else trunc_div(a, b),
    "TMAX": np.maximum,
    "TMIN": np.minimum,
    "TREM": np.remainder,
    "TFMOD": np.fmod,
    "TPRELU": lambda a, b: np.where(a > 0, a, a * b),
}


def nonzero(b):
    return np.where(b == 0, np.ones_like(b), b)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32", "INT16"])
@pytest.mark.parametrize("name", list(BINARY))
def test_tile_tile(rng, name, dtype, shape):
    a, b = random_tile(rng, shape, dtype), nonzero(random_tile(rng, shape, dtype))
    out = np.zeros(shape, NP[dtype])
    run(name, [out], [a, b])
    expected = BINARY[name](a, b).astype(NP[dtype])
    if name in ("TREM", "TFMOD") and dtype == "FP16":
        # numpy computes float16 remainders in float16 steps; ours rounds the float result once
        np.testing.assert_allclose(out, expected, atol=4e-3)
    else:
        np.testing.assert_array_equal(out, expected)


BITWISE = {"TAND": np.bitwise_and, "TOR": np.bitwise_or, "TXOR": np.bitwise_xor}


@pytest.mark.parametrize("dtype", ["INT32", "INT16", "INT8", "UINT8"])
@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise(rng, name, dtype):
    a, b = random_tile(rng, (8, 32), dtype), random_tile(rng, (8, 32), dtype)
    out = np.zeros((8, 32), NP[dtype])
    np.testing.assert_array_equal(run(name, [out], [a, b]), BITWISE[name](a, b))


@pytest.mark.parametrize("dtype", ["INT32", "INT16"])
def test_shifts(rng, dtype):
    a = random_tile(rng, (8, 16), dtype)
    s = rng.integers(0, 8, size=(8, 16)).astype(NP[dtype])
    out = np.zeros_like(a)
    np.testing.assert_array_equal(run("TSHL", [out], [a, s]), np.left_shift(a, s))
    np.testing.assert_array_equal(run("TSHR", [out], [a, s]), np.right_shift(a, s))


def test_integer_wraps_like_numpy():
    a = np.full((4, 8), 120, np.int8)
    out = np.zeros_like(a)
    np.testing.assert_array_equal(run("TADD", [out], [a, a]), a + a)  # wraps to -16


def test_integer_division_by_zero_is_an_error():
    a = np.ones((4, 8), np.int32)
    with pytest.raises(_core.PyptoError, match="integer division by zero"):
        run("TDIV", [np.zeros_like(a)], [a, np.zeros_like(a)])


SCALAR = {
    "TADDS": lambda a, s: a + s,
    "TSUBS": lambda a, s: a - s,
    "TMULS": lambda a, s: a * s,
    "TDIVS": lambda a, s: a / s if a.dtype.kind == "f" else trunc_div(a, s),
    "TMAXS": np.maximum,
    "TMINS": np.minimum,
    "TLRELU": lambda a, s: np.where(a > 0, a, a * s),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
@pytest.mark.parametrize("name", list(SCALAR))
def test_tile_scalar(rng, name, dtype, shape):
    a = random_tile(rng, shape, dtype)
    s = 1.75 if dtype.startswith("FP") else 3
    out = np.zeros(shape, NP[dtype])
    run(name, [out], [a, s])
    sv = NP[dtype](s) if dtype == "FP32" else (np.float32(s) if dtype == "FP16" else s)
    expected = SCALAR[name](a.astype(np.float32) if dtype == "FP16" else a, sv).astype(NP[dtype])
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", ["FP32", "INT32"])
def test_taxpy_accumulates_into_dst(rng, dtype):
    a = random_tile(rng, (8, 16), dtype)
    dst = random_tile(rng, (8, 16), dtype)
    s = 2.5 if dtype == "FP32" else 3
    expected = (dst + NP[dtype](s) * a).astype(NP[dtype])
    np.testing.assert_array_equal(run("TAXPY", [dst], [a, s]), expected)


UNARY_ANY = {"TABS": np.abs, "TNEG": np.negative, "TRELU": lambda a: np.maximum(a, 0)}


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32", "INT8"])
@pytest.mark.parametrize("name", list(UNARY_ANY))
def test_unary_exact(rng, name, dtype):
    a = random_tile(rng, (16, 24), dtype)
    out = np.zeros_like(a)
    np.testing.assert_array_equal(run(name, [out], [a]), UNARY_ANY[name](a).astype(NP[dtype]))


def test_tnot(rng):
    a = random_tile(rng, (8, 8), "INT32")
    np.testing.assert_array_equal(run("TNOT", [np.zeros_like(a)], [a]), np.invert(a))


UNARY_MATH = {
    "TEXP": (np.exp, -3, 3),
    "TLOG": (np.log, 0.1, 8),
    "TSQRT": (np.sqrt, 0.0, 9),
    "TRSQRT": (lambda x: 1 / np.sqrt(x), 0.1, 9),
    "TRECIP": (lambda x: 1 / x, 0.5, 9),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["FP32", "FP16"])
@pytest.mark.parametrize("name", list(UNARY_MATH))
def test_unary_math(rng, name, dtype, shape):
    fn, lo, hi = UNARY_MATH[name]
    a = random_tile(rng, shape, dtype, lo, hi)
    out = np.zeros_like(a)
    run(name, [out], [a])
    exact = fn(a.astype(np.float64))
    if dtype == "FP32":
        np.testing.assert_allclose(out, exact, rtol=2e-7 * 4)  # within a few ulp of the true value
    else:
        # a correctly rounded fp16 result is within half an fp16 ulp (2^-11 relative) plus the float error
        np.testing.assert_allclose(out.astype(np.float64), exact, rtol=2.0**-11 + 1e-6)


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
def test_valid_region_smaller_than_tile(rng, dtype):
    a, b = random_tile(rng, (16, 32), dtype), random_tile(rng, (16, 32), dtype)
    sentinel = NP[dtype](7)
    out = np.full((16, 32), sentinel, NP[dtype])
    run("TADD", [out], [a, b], valid_shape=[5, 19])
    np.testing.assert_array_equal(out[:5, :19], (a + b)[:5, :19])
    assert (out[5:, :] == sentinel).all() and (out[:, 19:] == sentinel).all()


def test_bf16_add_against_torch(rng):
    torch = pytest.importorskip("torch")
    a = torch.tensor(rng.uniform(-4, 4, (8, 16)), dtype=torch.bfloat16)
    b = torch.tensor(rng.uniform(-4, 4, (8, 16)), dtype=torch.bfloat16)
    bits = lambda t: t.view(torch.int16).numpy().view(np.uint16).copy()
    out = np.zeros((8, 16), np.uint16)
    run("TADD", [out], [bits(a), bits(b)], dtypes=["BF16", "BF16", "BF16"])
    np.testing.assert_array_equal(out, bits(a + b))


def test_unsupported_dtype_is_a_user_error(rng):
    a = random_tile(rng, (4, 8), "FP32")
    with pytest.raises(_core.PyptoError, match="TEXP: does not support dtype INT32"):
        run("TEXP", [np.zeros((4, 8), np.int32)], [a.astype(np.int32)])

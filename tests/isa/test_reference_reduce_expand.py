"""Row/column reductions and broadcasts against numpy, including partly valid sources
(reductions iterate the source's valid region)."""

import numpy as np
import pytest
from isa_cases import NP, random_tile, run

REDUCE = {"SUM": np.sum, "MAX": np.max, "MIN": np.min, "PROD": np.prod}


def tolerance(dtype, kind):
    if dtype == "INT32":
        return {"rtol": 0, "atol": 0}
    if dtype == "FP16":
        return {"rtol": 4e-3, "atol": 4e-3}  # fp16 rounds every partial sum
    return {"rtol": 1e-5, "atol": 1e-5} if kind in ("SUM", "PROD") else {"rtol": 0, "atol": 0}


@pytest.mark.parametrize("valid", [None, [5, 13]])
@pytest.mark.parametrize("shape", [(16, 32), (8, 40)])
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
@pytest.mark.parametrize("kind", list(REDUCE))
def test_row_and_column_reductions(rng, kind, dtype, shape, valid):
    lo, hi = (0.8, 1.2) if kind == "PROD" else (-4, 4)
    if kind == "PROD" and dtype == "INT32":
        lo, hi = -0.04, 0.08  # integers in [-1, 2]: products stay small
    src = random_tile(rng, shape, dtype, lo, hi)
    vr, vc = valid or shape
    region = src[:vr, :vc].astype(np.float64 if dtype != "INT32" else np.int64)

    row = np.zeros((shape[0], 1), NP[dtype])
    run("TROW" + kind, [row], [src], valid_shape=valid)
    np.testing.assert_allclose(row[:vr, 0], REDUCE[kind](region, axis=1), **tolerance(dtype, kind))

    col = np.zeros((1, shape[1]), NP[dtype])
    run("TCOL" + kind, [col], [src], valid_shape=valid)
    np.testing.assert_allclose(col[0, :vc], REDUCE[kind](region, axis=0), **tolerance(dtype, kind))


def test_row_reduction_accepts_a_scratch_tile(rng):
    src = random_tile(rng, (8, 16), "FP32")
    out = np.zeros((8, 1), np.float32)
    run("TROWMAX", [out], [src, np.zeros_like(src)])
    np.testing.assert_array_equal(out[:, 0], src.max(axis=1))


EXPAND = {
    "ADD": lambda a, b: a + b,
    "SUB": lambda a, b: a - b,
    "MUL": lambda a, b: a * b,
    "DIV": lambda a, b: a / b,
    "MAX": np.maximum,
    "MIN": np.minimum,
}


@pytest.mark.parametrize("shape", [(16, 16), (8, 40)])
@pytest.mark.parametrize("dtype", ["FP32", "FP16"])
@pytest.mark.parametrize("op", list(EXPAND))
def test_expand_binary(rng, op, dtype, shape):
    a = random_tile(rng, shape, dtype)
    brow = random_tile(rng, (shape[0], 1), dtype, 0.5, 4)
    bcol = random_tile(rng, (1, shape[1]), dtype, 0.5, 4)
    out = np.zeros(shape, NP[dtype])
    run("TROWEXPAND" + op, [out], [a, brow])
    np.testing.assert_array_equal(out, EXPAND[op](a, brow).astype(NP[dtype]))
    run("TCOLEXPAND" + op, [out], [a, bcol])
    np.testing.assert_array_equal(out, EXPAND[op](a, bcol).astype(NP[dtype]))


def test_expand_int32(rng):
    a = random_tile(rng, (8, 16), "INT32")
    b = random_tile(rng, (8, 1), "INT32")
    out = np.zeros_like(a)
    np.testing.assert_array_equal(run("TROWEXPANDMUL", [out], [a, b]), a * b)


@pytest.mark.parametrize("dtype", ["FP32", "FP16"])
def test_expdif(rng, dtype):
    a = random_tile(rng, (16, 24), dtype)
    b = a.max(axis=1, keepdims=True)
    out = np.zeros_like(a)
    run("TROWEXPANDEXPDIF", [out], [a, b])
    rtol = 1e-6 if dtype == "FP32" else 2.0**-11 + 1e-6
    np.testing.assert_allclose(out.astype(np.float64), np.exp(a.astype(np.float64) - b), rtol=rtol)
    bc = a.max(axis=0, keepdims=True)
    run("TCOLEXPANDEXPDIF", [out], [a, bc])
    np.testing.assert_allclose(out.astype(np.float64), np.exp(a.astype(np.float64) - bc), rtol=rtol)


@pytest.mark.parametrize("dtype", ["FP32", "INT32", "FP16"])
def test_plain_expand(rng, dtype):
    col = random_tile(rng, (8, 1), dtype)
    row = random_tile(rng, (1, 24), dtype)
    out = np.zeros((8, 24), NP[dtype])
    np.testing.assert_array_equal(run("TROWEXPAND", [out], [col]), np.broadcast_to(col, (8, 24)))
    np.testing.assert_array_equal(run("TCOLEXPAND", [out], [row]), np.broadcast_to(row, (8, 24)))


def test_expand_with_valid_region(rng):
    a = random_tile(rng, (8, 32), "FP32")
    b = random_tile(rng, (8, 1), "FP32")
    out = np.full((8, 32), -1.0, np.float32)
    run("TROWEXPANDSUB", [out], [a, b], valid_shape=[3, 10])
    np.testing.assert_array_equal(out[:3, :10], (a - b)[:3, :10])
    assert (out[3:] == -1).all() and (out[:, 10:] == -1).all()

"""Row/column reductions and broadcasts against numpy, over every dtype the instruction
table allows and the shapes of isa_cases.CASES (reductions iterate the source's valid
region).

What is checked (docs/isa.md, "Precision"):
- Float reductions accumulate in the element dtype (docs/isa.md, "Reduction order"):
  sequentially in index order without a scratch tile, in a binary tree (upper half folded
  onto the lower half) with one; every step is rounded to the dtype: bit-equal to the
  float64 step rounded by isa_cases.round_values, in the same order. Integers wrap like
  numpy's.
- Broadcast arithmetic is one operation: correctly rounded, bit-equal to round_to of the
  float64 result. EXPDIF rounds a - b to FP32 first (one step) and its exp is within
  1 ulp of the correctly rounded exp of that difference.
"""

import numpy as np
import pytest
from isa_cases import (
    A_SPECIAL,
    CASE_IDS,
    CASES,
    FLOATS,
    NP,
    check_exact,
    check_outside_kept,
    check_ulps,
    random_tile,
    round_values,
    run,
    table_dtypes,
    values,
    with_specials,
    zeros,
)

ACCUMULATE = {"SUM": np.add, "MAX": np.maximum, "MIN": np.minimum, "PROD": np.multiply}
REDUCTIONS = ["TROWSUM", "TCOLSUM", "TROWMAX", "TCOLMAX", "TROWMIN", "TCOLMIN", "TROWPROD", "TCOLPROD"]


def sequential(ufunc, x, axis):
    """ufunc folded over `axis` in index order (numpy's reduce may pair elements up)."""
    return ufunc.accumulate(x, axis=axis).take(-1, axis=axis)


def in_dtype(ufunc, x, axis, dtype, tree=False):
    """ufunc over `axis` of float64 values x, each step rounded to `dtype`: sequential in
    index order, or the binary tree (while n > 1: v[i] = v[i] op v[i + ceil(n/2)] for
    i < n // 2; n = ceil(n/2))."""
    v = np.moveaxis(np.asarray(x, np.float64), axis, 0).copy()
    step = lambda a, b: round_values(ufunc(a, b), dtype)  # noqa: E731
    if not tree:
        acc = v[0]
        for k in range(1, v.shape[0]):
            acc = step(acc, v[k])
        return acc
    n = v.shape[0]
    while n > 1:
        keep, h = (n + 1) // 2, n // 2
        v[:h] = step(v[:h], v[keep:keep + h])
        n = keep
    return v[0]


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name,dtype", [(n, d) for n in REDUCTIONS for d in table_dtypes(n)])
def test_row_and_column_reductions(rng, name, dtype, shape, valid):
    kind, rows = name[4:], name.startswith("TROW")
    lo, hi = (0.8, 1.25) if kind == "PROD" and dtype in FLOATS else (-4, 4)
    src = random_tile(rng, shape, dtype, lo, hi)
    if kind in ("MAX", "MIN"):
        src = with_specials(src, dtype, A_SPECIAL[:6], valid)  # signed zeros and infinities
    vr, vc = valid or shape
    region = values(src, dtype)[:vr, :vc]
    out_shape = (shape[0], 1) if rows else (1, shape[1])
    out = random_tile(rng, out_shape, dtype)
    before = out.copy()
    run(name, [out], [src], valid_shape=valid)
    got = out[:vr, :1] if rows else out[:1, :vc]
    axis = 1 if rows else 0
    if dtype in FLOATS:
        want = in_dtype(ACCUMULATE[kind], region, axis, dtype)
    else:
        want = sequential(ACCUMULATE[kind], region, axis)  # int64, wrapped by check_exact
    check_exact(got.reshape(-1), want, dtype, what=f"{name} {dtype}: ")
    keep = (slice(vr, None), slice(None)) if rows else (slice(None), slice(vc, None))
    np.testing.assert_array_equal(out[keep], before[keep])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["TROWSUM", "TCOLSUM", "TROWPROD", "TCOLPROD"])
@pytest.mark.parametrize("shape,valid", [((8, 16), None), ((13, 37), (11, 29)), ((3, 130), None), ((40, 5), (33, 5))])
def test_scratch_tile_selects_the_binary_tree(rng, name, dtype, shape, valid):
    kind, rows = name[4:], name.startswith("TROW")
    lo, hi = (0.8, 1.25) if kind == "PROD" else (-4, 4)
    src = random_tile(rng, shape, dtype, lo, hi)
    vr, vc = valid or shape
    region = values(src, dtype)[:vr, :vc]
    out = zeros((shape[0], 1) if rows else (1, shape[1]), dtype)
    run(name, [out], [src, zeros(shape, dtype)], valid_shape=valid)
    got = out[:vr, :1] if rows else out[:1, :vc]
    axis = 1 if rows else 0
    check_exact(got.reshape(-1), in_dtype(ACCUMULATE[kind], region, axis, dtype, tree=True), dtype,
                what=f"{name} {dtype} tree: ")


def test_row_reduction_accepts_a_scratch_tile(rng):
    src = random_tile(rng, (8, 16), "FP32")
    out = np.zeros((8, 1), np.float32)
    run("TROWMAX", [out], [src, np.zeros_like(src)])
    np.testing.assert_array_equal(out[:, 0], src.max(axis=1))


def int_div(a, b):
    return np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))


EXPAND = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "DIV": np.divide, "MAX": np.maximum, "MIN": np.minimum}
EXPAND_NAMES = ["TROWEXPANDADD", "TCOLEXPANDADD", "TROWEXPANDSUB", "TCOLEXPANDSUB", "TROWEXPANDMUL", "TCOLEXPANDMUL",
                "TROWEXPANDDIV", "TCOLEXPANDDIV", "TROWEXPANDMAX", "TCOLEXPANDMAX", "TROWEXPANDMIN", "TCOLEXPANDMIN"]


def broadcast_operand(rng, name, shape, dtype):
    rows = name.startswith("TROW")
    b = random_tile(rng, (shape[0], 1) if rows else (1, shape[1]), dtype, 0.5, 4)
    if dtype not in FLOATS:
        b = np.where(b == 0, NP[dtype](3), b)
    return b


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name,dtype", [(n, d) for n in EXPAND_NAMES for d in table_dtypes(n)])
def test_expand_binary(rng, name, dtype, shape, valid):
    a = with_specials(random_tile(rng, shape, dtype), dtype, A_SPECIAL, valid)
    b = broadcast_operand(rng, name, shape, dtype)
    out = random_tile(rng, shape, dtype)
    before = out.copy()
    run(name, [out], [a, b], valid_shape=valid)
    op = name[len("TROWEXPAND"):]
    fn = int_div if (op == "DIV" and dtype not in FLOATS) else EXPAND[op]
    with np.errstate(all="ignore"):
        exact = fn(values(a, dtype), values(b, dtype))  # numpy broadcasts the column / row
    check_exact(out, exact, dtype, valid, what=f"{name} {dtype}: ")
    check_outside_kept(out, before, valid)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name,dtype", [(n, d) for n in ("TROWEXPANDEXPDIF", "TCOLEXPANDEXPDIF") for d in table_dtypes(n)])
def test_expdif(rng, name, dtype, shape, valid):
    a = random_tile(rng, shape, dtype)
    axis = 1 if name.startswith("TROW") else 0
    b = np.take_along_axis(a, np.expand_dims(values(a, dtype).argmax(axis=axis), axis), axis=axis)  # the softmax max
    out = np.zeros(shape, NP[dtype])
    run(name, [out], [a, b], valid_shape=valid)
    diff = values(a, dtype).astype(np.float32) - values(b, dtype).astype(np.float32)  # FP32 step
    check_ulps(out, np.exp(diff.astype(np.float64)), dtype, valid, ulps=1, what=f"{name} {dtype}: ")
    check_outside_kept(out, np.zeros_like(out), valid)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name,dtype", [(n, d) for n in ("TROWEXPAND", "TCOLEXPAND") for d in table_dtypes(n)])
def test_plain_expand(rng, name, dtype, shape, valid):
    rows = name == "TROWEXPAND"
    src = random_tile(rng, (shape[0], 1) if rows else (1, shape[1]), dtype)
    out = np.zeros(shape, NP[dtype])
    run(name, [out], [src], valid_shape=valid)
    r, c = valid or shape
    np.testing.assert_array_equal(out[:r, :c], np.broadcast_to(src[:r, :] if rows else src[:, :c], (r, c)))
    check_outside_kept(out, np.zeros_like(out), valid)

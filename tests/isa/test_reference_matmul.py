"""The cube instructions against numpy: every operand dtype of the table (FP16, BF16, FP32
into an FP32 accumulator, INT8 into INT32), plain / accumulating / bias forms of TMATMUL
and TGEMV, square and non-square shapes, a valid region smaller than the tiles, and the
ND / DN / NZ operand layouts.

Float inputs accumulate in FP32, k in order, each product rounded to FP32 and each sum
rounded to FP32 (docs/isa.md, "Precision"): the result is bit-equal to numpy's float32
steps in that order (and close to the float64 product); INT8 products accumulate exactly
and wrap to INT32.
"""

import numpy as np
import pytest
from isa_cases import FLOATS, check_exact, random_tile, run, table_dtypes, values
from pypto import _core

# (M, K, N) of the operands' tiles and the valid (rows, cols) every tile gets, or None.
MATMUL_CASES = [((16, 16, 16), None), ((16, 32, 48), None), ((48, 64, 8), None), ((16, 24, 24), (5, 13))]
GEMV_CASES = [((1, 16, 16), None), ((1, 32, 48), None), ((1, 64, 8), None), ((1, 24, 24), (1, 13))]
CASE_IDS = ["square", "wide", "tall", "valid"]


def in_order(a, b, start):
    """start + a @ b accumulated k by k in FP32 (each product and sum rounded)."""
    acc = start.astype(np.float32).copy()
    for k in range(a.shape[1]):
        acc = acc + a[:, k:k + 1].astype(np.float32) * b[k:k + 1, :].astype(np.float32)
    return acc


def matmul_case(rng, name, dtype, mkn, valid):
    M, K, N = mkn
    a = random_tile(rng, (M, K), dtype, -1, 1) if dtype != "INT8" else rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = random_tile(rng, (K, N), dtype, -1, 1) if dtype != "INT8" else rng.integers(-128, 128, (K, N)).astype(np.int8)
    acc_dt = "INT32" if dtype == "INT8" else "FP32"
    extra = None
    ins, mems = [a, b], ["Acc", "Left", "Right"]
    if name.endswith("_ACC"):
        extra = random_tile(rng, (M, N), acc_dt)
        ins, mems = [extra] + ins, ["Acc", "Acc", "Left", "Right"]
    if name.endswith("_BIAS"):
        extra = random_tile(rng, (1, N), acc_dt)
        ins, mems = ins + [extra], mems + ["Bias"]
    acc = np.zeros((M, N), np.int32 if acc_dt == "INT32" else np.float32)
    run(name, [acc], ins, memories=mems, valid_shape=valid)
    m, n = valid or (M, N)
    k = valid[1] if valid else K  # K is the left tile's valid columns
    av, bv = values(a, dtype)[:m, :k], values(b, dtype)[:k, :n]
    start = np.zeros((m, n)) if extra is None else np.broadcast_to(extra[:1 if name.endswith("_BIAS") else m, :n], (m, n))
    return acc, av, bv, start, acc_dt, (m, n)


@pytest.mark.parametrize("mkn,valid", MATMUL_CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TMATMUL"))
@pytest.mark.parametrize("name", ["TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS"])
def test_tmatmul(rng, name, dtype, mkn, valid):
    acc, av, bv, start, acc_dt, (m, n) = matmul_case(rng, name, dtype, mkn, valid)
    got = acc[:m, :n]
    if acc_dt == "INT32":
        check_exact(got, start.astype(np.int64) + av.astype(np.int64) @ bv.astype(np.int64), "INT32")
    else:
        check_exact(got, in_order(av, bv, start).astype(np.float64), "FP32", what=f"{name} {dtype}: ")
        np.testing.assert_allclose(got, start + av @ bv, rtol=1e-5, atol=1e-5 * av.shape[1])
    if valid:
        assert (acc[m:, :] == 0).all() and (acc[:, n:] == 0).all()


@pytest.mark.parametrize("mkn,valid", GEMV_CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TGEMV"))
@pytest.mark.parametrize("name", ["TGEMV", "TGEMV_ACC", "TGEMV_BIAS"])
def test_tgemv(rng, name, dtype, mkn, valid):
    acc, av, bv, start, acc_dt, (m, n) = matmul_case(rng, name, dtype, mkn, valid)
    got = acc[:m, :n]
    if acc_dt == "INT32":
        check_exact(got, start.astype(np.int64) + av.astype(np.int64) @ bv.astype(np.int64), "INT32")
    else:
        check_exact(got, in_order(av, bv, start).astype(np.float64), "FP32", what=f"{name} {dtype}: ")


def test_tmatmul_bf16_against_torch(rng):
    torch = pytest.importorskip("torch")
    a = torch.tensor(rng.uniform(-1, 1, (16, 32)), dtype=torch.bfloat16)
    b = torch.tensor(rng.uniform(-1, 1, (32, 16)), dtype=torch.bfloat16)
    bits = lambda t: t.view(torch.int16).numpy().view(np.uint16).copy()
    acc = np.zeros((16, 16), np.float32)
    run("TMATMUL", [acc], [bits(a), bits(b)])
    np.testing.assert_allclose(acc, (a.double() @ b.double()).numpy(), rtol=1e-5, atol=1e-5)


def test_wrong_accumulator_dtype_is_a_user_error(rng):
    a, b = random_tile(rng, (16, 16), "FP16"), random_tile(rng, (16, 16), "FP16")
    with pytest.raises(_core.PyptoError, match="accumulate into FP32"):
        run("TMATMUL", [np.zeros((16, 16), np.float16)], [a, b])


@pytest.mark.parametrize("layout", ["ND", "DN", "NZ"])
@pytest.mark.parametrize("dtype", table_dtypes("TMATMUL"))
@pytest.mark.parametrize("name", ["TMATMUL", "TGEMV"])
def test_cube_layouts(rng, layout, dtype, name):
    M, K, N = (1 if name == "TGEMV" else 32), 32, (32 if dtype == "INT8" else 16)  # NZ: cols fill 32-byte boxes
    a = random_tile(rng, (M, K), dtype, -2, 2)
    b = random_tile(rng, (K, N), dtype, -2, 2)

    def laid(x):
        if layout == "ND":
            return x
        if layout == "DN":
            return np.ascontiguousarray(x.T).reshape(x.shape)
        c0 = 32 // x.itemsize  # NZ: 16 x c0 boxes, down the rows first
        r = max(16, x.shape[0])
        p = np.zeros((r, x.shape[1]), x.dtype)
        p[: x.shape[0]] = x
        boxes = p.reshape(r // 16, 16, x.shape[1] // c0, c0).transpose(2, 0, 1, 3)
        return boxes.reshape(r, x.shape[1])

    acc_dt = np.int32 if dtype == "INT8" else np.float32
    la = laid(a)
    acc = np.zeros((la.shape[0], N), acc_dt)
    run(name, [acc], [la, laid(b)], attrs={"left_layout": layout, "right_layout": layout},
        memories=["Acc", "Left", "Right"], valid_shape=None)
    av, bv = values(a, dtype), values(b, dtype)
    if dtype in FLOATS:
        check_exact(acc[:M], in_order(av, bv, np.zeros((M, N))).astype(np.float64), "FP32")
    else:
        check_exact(acc[:M], av @ bv, "INT32")

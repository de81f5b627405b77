"""The cube instructions against numpy: fp16/bf16/fp32 into an fp32 accumulator, int8 into
int32, with accumulation and bias, and a non-square shape."""

import numpy as np
import pytest
from isa_cases import random_tile, run
from pypto import _core


@pytest.mark.parametrize("mkn", [(16, 32, 16), (32, 16, 48), (128, 128, 128)])
@pytest.mark.parametrize("dtype", ["FP16", "FP32"])
def test_tmatmul_float(rng, dtype, mkn):
    m, k, n = mkn
    a, b = random_tile(rng, (m, k), dtype, -1, 1), random_tile(rng, (k, n), dtype, -1, 1)
    acc = np.zeros((m, n), np.float32)
    run("TMATMUL", [acc], [a, b], memories=["Acc", "Left", "Right"])
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(acc, expected, rtol=1e-5, atol=1e-5 * k)


def test_tmatmul_int8_exact(rng):
    a = rng.integers(-128, 128, size=(16, 64)).astype(np.int8)
    b = rng.integers(-128, 128, size=(64, 32)).astype(np.int8)
    acc = np.zeros((16, 32), np.int32)
    run("TMATMUL", [acc], [a, b])
    np.testing.assert_array_equal(acc, a.astype(np.int32) @ b.astype(np.int32))


def test_tmatmul_acc_and_bias(rng):
    a, b = random_tile(rng, (16, 32), "FP16", -1, 1), random_tile(rng, (32, 24), "FP16", -1, 1)
    acc_in = random_tile(rng, (16, 24), "FP32")
    bias = random_tile(rng, (1, 24), "FP32")
    prod = a.astype(np.float64) @ b.astype(np.float64)
    acc = np.zeros((16, 24), np.float32)
    run("TMATMUL_ACC", [acc], [acc_in, a, b])
    np.testing.assert_allclose(acc, acc_in + prod, rtol=1e-5, atol=1e-4)
    run("TMATMUL_BIAS", [acc], [a, b, bias])
    np.testing.assert_allclose(acc, prod + bias, rtol=1e-5, atol=1e-4)


def test_tmatmul_bf16_against_torch(rng):
    torch = pytest.importorskip("torch")
    a = torch.tensor(rng.uniform(-1, 1, (16, 32)), dtype=torch.bfloat16)
    b = torch.tensor(rng.uniform(-1, 1, (32, 16)), dtype=torch.bfloat16)
    bits = lambda t: t.view(torch.int16).numpy().view(np.uint16).copy()
    acc = np.zeros((16, 16), np.float32)
    run("TMATMUL", [acc], [bits(a), bits(b)], dtypes=["FP32", "BF16", "BF16"])
    np.testing.assert_allclose(acc, (a.double() @ b.double()).numpy(), rtol=1e-5, atol=1e-5)


def test_wrong_accumulator_dtype_is_a_user_error(rng):
    a, b = random_tile(rng, (16, 16), "FP16"), random_tile(rng, (16, 16), "FP16")
    with pytest.raises(_core.PyptoError, match="accumulate into FP32"):
        run("TMATMUL", [np.zeros((16, 16), np.float16)], [a, b])

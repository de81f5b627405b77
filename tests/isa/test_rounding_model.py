"""The tests' rounding model (isa_cases.round_to) against numpy's own casts and torch's
bf16, so that the reference-library tests stand on an independent footing."""

import numpy as np
import pytest
from isa_cases import bf16_bits_to_float, round_to, round_values, ulp_distance


def doubles(rng, n=20000):
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 12, n)
    ties = np.array([1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-24, 1 + 3 * 2.0**-24, 2.0**-25, 3 * 2.0**-26,
                     65519.99, 65520.0, 65536.0, 1e6, 2.0**-150, 2.0**-149 * 1.5, 3.5e38, 0.0, -0.0, np.inf, -np.inf])
    return np.concatenate([x, ties, -ties])


@pytest.mark.parametrize("dtype,np_type,bits", [("FP32", np.float32, np.uint32), ("FP16", np.float16, np.uint16)])
def test_nearest_even_matches_numpy_casts(rng, dtype, np_type, bits):
    x = doubles(rng)
    with np.errstate(over="ignore"):
        want = x.astype(np_type)
    np.testing.assert_array_equal(round_to(x, dtype).view(bits), want.view(bits))


def test_bf16_matches_torch(rng):
    torch = pytest.importorskip("torch")
    x = doubles(rng)
    want = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(round_to(x, "BF16"), want)


def test_bf16_by_hand():
    x = np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-8 + 2.0**-30), 3.4e38, np.nan, 2.0**-133])
    got = round_to(x, "BF16")
    assert list(got[:4]) == [0x3F80, 0x3F82, 0xBF81, 0x7F80]  # ties to even; just past a tie; overflow
    assert got[4] == 0x7FC0 and got[5] == 0x0001  # NaN kept; the smallest subnormal
    np.testing.assert_array_equal(bf16_bits_to_float(got[:2]), [1.0, 1 + 2.0**-6])


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16"])
def test_directed_modes_bracket_the_value(rng, dtype):
    x = rng.uniform(-100, 100, 5000)
    lo, hi = round_values(x, dtype, "floor"), round_values(x, dtype, "ceil")
    assert (lo <= x).all() and (x <= hi).all()
    lo_s, hi_s = round_to(lo, dtype), round_to(hi, dtype)
    assert (ulp_distance(lo_s, hi_s, dtype) == np.where(lo == hi, 0, 1)).all()  # neighbours
    np.testing.assert_array_equal(round_values(x, dtype, "trunc"), np.where(x >= 0, lo, hi))
    odd = round_to(round_values(x, dtype, "odd"), dtype)
    last_bit = (odd.view(np.uint32 if dtype == "FP32" else np.uint16) & 1) == 1
    assert (last_bit | (lo == hi)).all()
    near = round_values(x, dtype, "rint")
    assert (np.abs(near - x) <= np.minimum(x - lo, hi - x)).all()

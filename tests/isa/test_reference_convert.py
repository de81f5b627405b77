"""TCVT against numpy over every pair of table dtypes (BF16 as uint16 bit patterns) and the
shapes of isa_cases.CASES, every round mode from float to narrower floats and to integers
(overflow included). TCMP / TCMPS / TSEL / TSELS and their packed masks are tested in
test_packed_mask.py.

A conversion rounds once: float results are bit-equal to the source value (exact in
float64) rounded by isa_cases.round_to under the mode; float -> integer rounds under the
mode and saturates (NaN -> 0); integer -> integer wraps; anything -> BOOL is value != 0.
"""

import numpy as np
import pytest
from isa_cases import (
    CASE_IDS,
    CASES,
    FLOATS,
    NP,
    check_exact,
    check_outside_kept,
    random_tile,
    round_to,
    round_values,
    run,
    table_dtypes,
    values,
)

MODES = ["none", "rint", "round", "floor", "ceil", "trunc", "odd"]

# Values that exercise ties and signs: halves, near-halves, negatives, large magnitudes.
SPECIAL = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.5000001, 3.7, -3.7, 0.0, -0.0, 1e6 + 0.5, -7.25, 100.5,
           2.0, np.nan, np.inf, -np.inf, 3e9, -3e9, 40000.0, -40000.0, 255.5, 65520.0, 1 + 2.0**-9, 1 + 3 * 2.0**-9]


def source(rng, shape, dtype):
    """Operands of a conversion: the whole integer range, or floats of every magnitude."""
    if dtype == "BOOL":
        return random_tile(rng, shape, dtype)
    if dtype not in FLOATS:
        info = np.iinfo(NP[dtype])
        return rng.integers(info.min, int(info.max) + 1, size=shape).astype(NP[dtype])
    x = rng.uniform(-300, 300, size=shape) * 10.0 ** rng.integers(-3, 4, size=shape)
    flat = x.reshape(-1)
    n = min(len(SPECIAL), flat.size)
    flat[:n] = SPECIAL[:n]
    return round_to(x, dtype)


def to_integer(v, mode):
    """float64 values rounded to integers under a TCVT mode."""
    if mode in ("none", "rint"):
        return np.rint(v)  # ties to even
    if mode in ("floor", "ceil", "trunc"):
        return getattr(np, mode)(v)
    t = np.trunc(v)
    if mode == "round":  # ties away from zero
        return t + np.sign(v) * (np.abs(v - t) >= 0.5)
    lo = np.floor(v)  # odd: a non-integer goes to its odd neighbour
    return np.where(lo == v, v, np.where(np.fmod(lo, 2) != 0, lo, lo + 1))


def converted(v, src, dst, mode="none"):
    """The source's values `v` (float64 / int64) converted to `dst` under `mode`, before
    the wrapping / exact re-rounding that check_exact applies."""
    if dst == "BOOL":
        return v != 0  # NaN != 0
    if dst in FLOATS:
        return round_values(v, dst, mode) if src in FLOATS else v  # integers: nearest even
    if src not in FLOATS:
        return v  # integers wrap
    info = np.iinfo(NP[dst])
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(v), 0, np.clip(to_integer(v, mode), info.min, info.max))  # saturating


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dst", table_dtypes("TCVT"))
@pytest.mark.parametrize("src", table_dtypes("TCVT"))
def test_tcvt_every_dtype_pair(rng, src, dst, shape, valid):
    a = source(rng, shape, src)
    out = random_tile(rng, shape, dst)
    before = out.copy()
    run("TCVT", [out], [a], valid_shape=valid)
    check_exact(out, converted(values(a, src), src, dst), dst, valid, what=f"TCVT {src} -> {dst}: ")
    check_outside_kept(out, before, valid)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("src,dst", [("FP32", "FP16"), ("FP32", "BF16"), ("FP16", "BF16"), ("BF16", "FP16")])
def test_narrowing_float_round_modes(rng, src, dst, mode):
    ulp_ties = 1.0 + 2.0 ** -(11 if dst == "FP16" else 8) * np.arange(-8, 8)  # halfway points of dst
    big = [70000.0, -70000.0, 65519.0, 65520.0, 65536.0, 3.0e38, -3.3e38, 3.3961e38, 1e-8, -3e-8, 2.0**-25]
    x = np.concatenate([SPECIAL, ulp_ties, big, rng.uniform(-70000, 70000, 16), rng.uniform(-1e-6, 1e-6, 16)])
    x = np.resize(x, 96).reshape(8, 12)
    a = round_to(x, src)
    out = np.zeros((8, 12), NP[dst])
    run("TCVT", [out], [a], attrs={"mode": mode})
    check_exact(out, round_values(values(a, src), dst, mode), dst, what=f"{src} -> {dst} {mode}: ")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dst", ["INT32", "INT16", "INT8", "UINT8"])
@pytest.mark.parametrize("src", ["FP32", "FP16", "BF16"])
def test_float_to_int_round_modes(rng, src, dst, mode):
    x = np.concatenate([SPECIAL, rng.uniform(-300, 300, 48 - len(SPECIAL) + 21)])[:64].reshape(8, 8)
    a = round_to(x, src)
    out = np.zeros((8, 8), NP[dst])
    run("TCVT", [out], [a], attrs={"mode": mode})
    check_exact(out, converted(values(a, src), src, dst, mode), dst, what=f"{src} -> {dst} {mode}: ")


def test_float_to_int_saturates():
    src = np.array([[1e10, -1e10, 40000.0, -40000.0]], np.float32)
    out = np.zeros((1, 4), np.int16)
    run("TCVT", [out], [src], attrs={"mode": "trunc"})
    np.testing.assert_array_equal(out, [[32767, -32768, 32767, -32768]])


def test_int32_to_bf16_rounds_once():
    """2^30 + 2^22 + 1 is just above a bf16 halfway point: through float (nearest) it would
    land on the halfway point and round to even, down; rounded once it goes up."""
    v = np.array([[2**30 + 2**22 + 1, -(2**30 + 2**22 + 1), 2**24 + 2**16 + 1, 2**31 - 1]], np.int32)
    out = np.zeros((1, 4), np.uint16)
    run("TCVT", [out], [v])
    np.testing.assert_array_equal(out, round_to(v.astype(np.float64), "BF16"))
    assert out[0, 0] == 0x4E81  # 2^30 * (1 + 2^-7)


def test_fp32_to_bf16_nearest_even_against_torch(rng):
    torch = pytest.importorskip("torch")
    src = rng.standard_normal((16, 16)).astype(np.float32)
    out = np.zeros((16, 16), np.uint16)
    run("TCVT", [out], [src], attrs={"mode": "rint"})
    expected = torch.from_numpy(src).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(out, expected)


def test_widening_and_int_to_float_are_exact(rng):
    h = random_tile(rng, (8, 8), "FP16")
    out = np.zeros((8, 8), np.float32)
    run("TCVT", [out], [h], attrs={"mode": "round"})
    np.testing.assert_array_equal(out, h.astype(np.float32))
    i = random_tile(rng, (8, 8), "INT32")
    run("TCVT", [out], [i])
    np.testing.assert_array_equal(out, i.astype(np.float32))


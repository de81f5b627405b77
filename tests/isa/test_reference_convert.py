"""TCVT round modes against numpy (float -> int, float -> fp16/bf16). TCMP / TCMPS / TSEL /
TSELS and their packed masks are tested in test_packed_mask.py."""

import numpy as np
import pytest
from isa_cases import NP, random_tile, run

# Values that exercise ties and signs: halves, near-halves, negatives, large magnitudes.
SPECIAL = np.array(
    [
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        0.49999997,
        -0.5000001,
        3.7,
        -3.7,
        0.0,
        -0.0,
        1e6 + 0.5,
        -7.25,
        100.5,
        2.0,
    ],
    np.float32,
)


def half_away(x):
    return np.sign(x) * np.floor(np.abs(x.astype(np.float64)) + 0.5)


def round_to_odd_int(x):
    lo = np.floor(x.astype(np.float64))
    return np.where(lo == x, lo, np.where(lo % 2 != 0, lo, lo + 1))


INT_MODES = {
    "rint": np.rint,
    "none": np.rint,
    "round": half_away,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "odd": round_to_odd_int,
}


@pytest.mark.parametrize("dst", ["INT32", "INT16"])
@pytest.mark.parametrize("mode", list(INT_MODES))
def test_float_to_int(rng, mode, dst):
    src = np.concatenate([SPECIAL, rng.uniform(-300, 300, 48).astype(np.float32)]).reshape(8, 8)
    out = np.zeros((8, 8), NP[dst])
    run("TCVT", [out], [src], attrs={"mode": mode})
    info = np.iinfo(NP[dst])
    expected = np.clip(INT_MODES[mode](src.astype(np.float64)), info.min, info.max)  # saturating
    np.testing.assert_array_equal(out, expected.astype(NP[dst]))


def test_float_to_int_saturates():
    src = np.array([[1e10, -1e10, 40000.0, -40000.0]], np.float32)
    out = np.zeros((1, 4), np.int16)
    run("TCVT", [out], [src], attrs={"mode": "trunc"})
    np.testing.assert_array_equal(out, [[32767, -32768, 32767, -32768]])


def neighbours_fp16(x):
    """Largest fp16 <= x and smallest fp16 >= x, via numpy's nearest-even cast and nextafter."""
    r = x.astype(np.float16)
    rf = r.astype(np.float32)
    with np.errstate(over="ignore"):
        down = np.where(rf <= x, r, np.nextafter(r, np.float16(-np.inf)))
        up = np.where(rf >= x, r, np.nextafter(r, np.float16(np.inf)))
    return down, up


def fp16_reference(x, mode):
    down, up = neighbours_fp16(x)
    exact = down.astype(np.float32) == x
    if mode in ("rint", "none"):
        return x.astype(np.float16)
    if mode == "floor":
        return down
    if mode == "ceil":
        return up
    if mode == "trunc":
        return np.where(x >= 0, down, up)
    if mode == "round":
        below = x.astype(np.float64) - down.astype(np.float64)
        above = up.astype(np.float64) - x.astype(np.float64)
        away = np.where(x >= 0, up, down)
        toward = np.where(x >= 0, down, up)
        return np.where(
            exact,
            down,
            np.where(below == above, away, np.where((below < above) == (x >= 0), toward, away)),
        )
    if mode == "odd":
        odd_down = (down.view(np.uint16) & 1) == 1
        return np.where(exact, down, np.where(odd_down, down, up))
    raise AssertionError(mode)


@pytest.mark.parametrize("mode", ["rint", "none", "round", "floor", "ceil", "trunc", "odd"])
def test_fp32_to_fp16(rng, mode):
    ties = (np.float32(1.0) + np.float32(2.0**-11) * np.arange(-8, 8)).astype(
        np.float32
    )  # halfway points
    src = np.concatenate(
        [
            SPECIAL,
            ties,
            rng.uniform(-70000, 70000, 16).astype(np.float32),
            rng.uniform(-1e-6, 1e-6, 16).astype(np.float32),
        ]
    ).reshape(8, 8)
    src = np.clip(src, -65504, 65504).astype(np.float32)
    out = np.zeros((8, 8), np.float16)
    run("TCVT", [out], [src], attrs={"mode": mode})
    np.testing.assert_array_equal(out.view(np.uint16), fp16_reference(src, mode).view(np.uint16))


def test_fp32_to_bf16_nearest_even_against_torch(rng):
    torch = pytest.importorskip("torch")
    src = rng.standard_normal((16, 16)).astype(np.float32)
    out = np.zeros((16, 16), np.uint16)
    run("TCVT", [out], [src], attrs={"mode": "rint"}, dtypes=["BF16", "FP32"])
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


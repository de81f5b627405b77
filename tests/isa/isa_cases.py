"""Helpers for the reference-library tests: operands per dtype (BF16 as uint16 bit
patterns), a runner that executes one instruction on numpy arrays, the instruction table's
dtypes, the shapes every instruction is tested over, and an independent rounding model.

The rounding model is numpy only (never our C++ code): `round_to(x, dtype, mode)` rounds
float64 values to FP32 / FP16 / BF16 by scaling each value by a power of two so that one
unit in the last place of the target format becomes 1, rounding that (exact) multiple to
an integer under the mode, and scaling back. float64 holds every value involved exactly,
so the result is the correctly rounded value of the float64 input.
"""

import numpy as np
from pypto import _core

NP = {
    "FP32": np.float32,
    "FP16": np.float16,
    "BF16": np.uint16,  # bit patterns
    "INT32": np.int32,
    "INT16": np.int16,
    "INT8": np.int8,
    "UINT8": np.uint8,
    "BOOL": np.bool_,
}
FLOATS = ("FP32", "FP16", "BF16")
INTS = ("INT32", "INT16", "INT8", "UINT8")

# The shapes every instruction runs over: (tile shape, valid shape or None for all of it).
# Square, two non-square (one wider than a 16-lane vector, one with 8 columns), and a
# partly valid tile whose valid region is not square either.
CASES = [((8, 8), None), ((16, 48), None), ((40, 8), None), ((16, 24), (5, 13))]
CASE_IDS = ["8x8", "16x48", "40x8", "16x24v5x13"]

# (significand bits p, smallest normal exponent, largest exponent) of each float format.
FORMAT = {"FP32": (24, -126, 127), "FP16": (11, -14, 15), "BF16": (8, -126, 127)}


def table_dtypes(name, exclude=()):
    """The dtypes the instruction table allows for `name` (that numpy can hold)."""
    return [d for d in _core.instruction_signature(name)[2] if d in NP and d not in exclude]


def float_dtypes(name):
    return [d for d in table_dtypes(name) if d in FLOATS]


# ---- rounding model -------------------------------------------------------------------

def _round_integral(q, mode):
    """q (float64, any value) rounded to an integer under `mode`."""
    if mode in ("rint", "none"):
        return np.rint(q)  # ties to even
    if mode == "round":  # ties away from zero
        t = np.trunc(q)
        return t + np.sign(q) * (np.abs(q - t) >= 0.5)  # q - t is exact
    if mode == "floor":
        return np.floor(q)
    if mode == "ceil":
        return np.ceil(q)
    if mode == "trunc":
        return np.trunc(q)
    if mode == "odd":  # non-integers go to the odd neighbour
        lo = np.floor(q)
        return np.where(lo == q, q, np.where(np.fmod(lo, 2) != 0, lo, lo + 1))
    raise ValueError(mode)


def round_values(x, dtype, mode="rint"):
    """float64 values of `x` (float64) rounded to the float format `dtype` under `mode`
    (IEEE overflow: to infinity for rint/round, to the largest finite value when the mode
    rounds toward zero on that side; NaN stays NaN)."""
    p, emin, emax = FORMAT[dtype]
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(x)  # |x| in [2^(e-1), 2^e)
        exp = np.maximum(e - 1, emin)
        ulp = np.ldexp(1.0, exp - (p - 1))
        q = _round_integral(x / ulp, mode)  # x / ulp is exact: a power-of-two scaling
        r = q * ulp
        biggest = np.ldexp(2.0 - 2.0 ** (1 - p), emax)
        over = np.abs(r) > biggest
        to_inf = {"rint": True, "none": True, "round": True, "floor": x < 0, "ceil": x > 0,
                  "trunc": False, "odd": False}[mode]
        r = np.where(over, np.where(to_inf, np.copysign(np.inf, x), np.copysign(biggest, x)), r)
        r = np.where(np.isinf(x), x, r)
        r = np.where(x == 0, x, r)  # keeps the sign of zero
    return np.where(np.isnan(x), np.nan, r)


def round_to(x, dtype, mode="rint"):
    """x (float64) correctly rounded to `dtype`, in the dtype's numpy storage (BF16: uint16
    bits). Integer dtypes: x is already integral and is wrapped to the width."""
    if dtype in FLOATS:
        v = round_values(x, dtype, mode)
        if dtype == "BF16":
            bits = (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # exact: v has 8 bits
            return np.where(np.isnan(v), np.uint16(0x7FC0), bits).astype(np.uint16)
        return v.astype(NP[dtype])  # exact: v is representable
    if dtype == "BOOL":
        return np.asarray(x) != 0
    return np.asarray(x).astype(np.int64).astype(NP[dtype])


def bf16_bits_to_float(bits):
    """uint16 bf16 patterns -> float32 values (exact)."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def float_to_bf16_bits(x):
    """float values -> uint16 bf16 patterns, rounded to nearest even (NaN kept)."""
    return round_to(np.asarray(x, np.float64), "BF16")


def values(a, dtype):
    """Element values of a storage array as float64 (integers: int64)."""
    a = np.asarray(a)
    if dtype == "BF16":
        return bf16_bits_to_float(a).astype(np.float64)
    if dtype in FLOATS:
        return a.astype(np.float64)
    return a.astype(np.int64)


def f32(a, dtype):
    """Element values as float32 (what the reference computes in for float dtypes)."""
    return values(a, dtype).astype(np.float32)


def _ordered(a, dtype):
    """Integers in the order of the float values (for ulp distances)."""
    if dtype == "FP32":
        i = np.asarray(a, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(2**31) - i, i)
    bits = np.asarray(a).view(np.uint16) if dtype == "FP16" else np.asarray(a, np.uint16)
    i = bits.astype(np.int64)
    return np.where(i >= 0x8000, 0x8000 - i, i)


def ulp_distance(a, b, dtype):
    """How many representable values of `dtype` lie between storage arrays a and b."""
    return np.abs(_ordered(a, dtype) - _ordered(b, dtype))


# ---- operands and running -------------------------------------------------------------

def random_tile(rng, shape, dtype, low=-4.0, high=4.0):
    if dtype in FLOATS:
        return round_to(rng.uniform(low, high, size=shape), dtype)
    if dtype == "BOOL":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    info = np.iinfo(NP[dtype])
    lo, hi = max(int(low * 25), info.min), min(int(high * 25), info.max)
    return rng.integers(lo, hi + 1, size=shape).astype(NP[dtype])


def zeros(shape, dtype):
    return np.zeros(shape, NP[dtype])


def run(mnemonic, outs, ins, **kw):
    """Executes one instruction of the reference library; uint16 arrays are BF16."""
    if "dtypes" not in kw:
        ops = list(outs) + list(ins)
        if any(isinstance(o, np.ndarray) and o.dtype == np.uint16 for o in ops):
            kw["dtypes"] = ["BF16" if isinstance(o, np.ndarray) and o.dtype == np.uint16 else None for o in ops]
    if "valid_shape" in kw and kw["valid_shape"] is not None:
        kw["valid_shape"] = list(kw["valid_shape"])
    _core.isa_execute(mnemonic, outs, ins, **kw)
    return outs[0] if outs else None


# ---- checks -----------------------------------------------------------------------------

def _region(a, valid):
    return a if valid is None else a[: valid[0], : valid[1]]


def _describe(out, want, exact, dtype, bad, limit=6):
    idx = np.argwhere(bad)[:limit]
    lines = []
    for i in idx:
        t = tuple(int(k) for k in i)
        e = "" if exact is None else f", exact {float(np.asarray(exact)[t])!r}"
        lines.append(f"  at {t}: got {values(out[t], dtype)!r}, want {values(want[t], dtype)!r}{e}")
    return f"{int(bad.sum())} of {bad.size} elements differ ({dtype}):\n" + "\n".join(lines)


def check_exact(out, exact, dtype, valid=None, what=""):
    """Bit equality of out (storage array) with `exact` (float64 / int64) correctly rounded
    to `dtype` (integers: wrapped); any NaN matches any NaN. Checks out's valid region."""
    out, exact = _region(out, valid), _region(np.asarray(exact), valid)
    want = round_to(exact, dtype)
    if dtype in FLOATS:
        same = (np.asarray(out).view(np.uint16 if dtype != "FP32" else np.uint32)
                == np.asarray(want).view(np.uint16 if dtype != "FP32" else np.uint32))
        same |= np.isnan(values(out, dtype)) & np.isnan(values(want, dtype))
    else:
        same = np.asarray(out) == np.asarray(want)
    assert same.all(), what + _describe(out, want, exact, dtype, ~same)


def check_ulps(out, exact, dtype, valid=None, ulps=1, what=""):
    """out within `ulps` representable values of `exact` (float64) correctly rounded to
    `dtype`; NaN must match NaN and infinities must match exactly."""
    out, exact = _region(out, valid), _region(np.asarray(exact), valid)
    want = round_to(exact, dtype)
    ov, wv = values(out, dtype), values(want, dtype)
    nan = np.isnan(ov) | np.isnan(wv)
    d = np.where(nan, 0, ulp_distance(out, want, dtype))
    bad = (d > ulps) | (np.isnan(ov) != np.isnan(wv)) | ((np.isinf(ov) | np.isinf(wv)) & (ov != wv))
    assert not bad.any(), what + f"(more than {ulps} ulp) " + _describe(out, want, exact, dtype, bad)


def check_outside_kept(out, before, valid):
    """Elements outside the valid region are left as they were."""
    if valid is None:
        return
    keep = np.ones(out.shape, bool)
    keep[: valid[0], : valid[1]] = False
    o = np.asarray(out).view(f"u{out.itemsize}")
    b = np.asarray(before).view(f"u{before.itemsize}")
    assert np.array_equal(o[keep], b[keep]), "an element outside the valid region changed"


# Special float operands (placed at the start of a tile's valid region): signed zeros,
# infinities, NaN, exact multiples and a large value that overflows fp16 when doubled.
A_SPECIAL = [0.0, -0.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -4.0, 3.0, -3.0, 2.0, 6.0, -1.5, 0.5, 65504.0]
B_SPECIAL = [0.0, 0.0, -0.0, -0.0, np.inf, 2.0, 1.0, np.nan, 2.0, -1.5, 1.5, -0.5, 4.0, 0.75, -2.0, 32.0]


def with_specials(a, dtype, specials, valid=None):
    """a with `specials` (rounded to dtype) written row-major into its valid region's start."""
    if dtype not in FLOATS:
        return a
    a = a.copy()
    r, c = valid or a.shape
    n = min(len(specials), r * c)
    region = np.array(a[:r, :c])
    flat = region.reshape(-1)
    flat[:n] = round_to(np.array(specials[:n], np.float64), dtype)
    a[:r, :c] = flat.reshape(r, c)
    return a

"""Differential test of the optimised tile library: every instruction of the table runs
through the reference (engine "sim") and the native engine on the same random operands
(shapes, dtypes and valid shapes drawn per case) and the results are compared: bitwise
for integers and BOOL, within 2 ulp for float elementwise work, and within a relative
tolerance for sums and matmul, whose summation order differs."""

import numpy as np
import pytest
from pypto import _core

NP = {"FP32": np.float32, "FP16": np.float16, "INT32": np.int32, "INT16": np.int16,
      "INT8": np.int8, "UINT8": np.uint8, "BOOL": np.bool_, "BF16": np.uint16}
INT_ONLY_DIVISORS = {"TDIV", "TREM", "TFMOD", "TDIVS", "TROWEXPANDDIV", "TCOLEXPANDDIV"}
REORDERED = {"TROWSUM", "TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS", "TGEMV", "TGEMV_ACC", "TGEMV_BIAS"}  # summation order differs


def rand(rng, shape, dtype, positive=False):
    if dtype == "BOOL":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype == "BF16":  # bit patterns of bf16 values in [-4, 4]
        f = rng.uniform(0.1 if positive else -4, 4, size=shape).astype(np.float32)
        return (f.view(np.uint32) >> 16).astype(np.uint16)
    if dtype in ("FP32", "FP16"):
        return rng.uniform(0.05 if positive else -4, 4, size=shape).astype(NP[dtype])
    info = np.iinfo(NP[dtype])
    lo = 1 if positive else max(-100, int(info.min))
    return rng.integers(lo, min(100, int(info.max)) + 1, size=shape).astype(NP[dtype])


def scalar_for(rng, dtype):
    # Multiples of 1/8: exact in every float dtype, so the native fp32 path and the reference agree.
    return float(rng.integers(4, 17)) / 8 if dtype in ("FP32", "FP16", "BF16") else int(rng.integers(1, 5))


def mask_bytes(cols):
    """Bytes of a packed mask row: one bit per element (include/pypto/isa/instructions.h)."""
    return (cols + 7) // 8


def random_mask(rng, rows, cols):
    return rng.integers(0, 256, size=(rows, mask_bytes(cols))).astype(np.uint8)


def build_case(name, rng):
    """(outs, ins, attrs, kw) for one random case of instruction `name`."""
    outs_sig, ins_sig, dtypes, _ = _core.instruction_signature(name)
    dt = str(rng.choice([d for d in dtypes if d in NP]))
    if rng.random() < 0.5 and "FP32" in dtypes:
        dt = "FP32"  # the fast paths are fp32: weight them
    R, C = int(rng.integers(1, 40)), int(rng.integers(1, 80))
    valid = None if rng.random() < 0.5 else [int(rng.integers(1, R + 1)), int(rng.integers(1, C + 1))]
    attrs, kw, dts = {}, {}, None
    pos = name in INT_ONLY_DIVISORS or name in ("TLOG", "TSQRT", "TRSQRT", "TRECIP")
    t = lambda shape, d=dt, p=False: rand(rng, shape, d, p)  # noqa: E731
    z = lambda shape, d=dt: np.zeros(shape, NP[d])  # noqa: E731
    if name.startswith("TMATMUL"):
        dt = str(rng.choice(["FP32", "FP32", "FP16", "INT8"]))
        acc_dt = "INT32" if dt == "INT8" else "FP32"
        M, N, K = int(rng.integers(1, 70)), int(rng.integers(1, 70)), int(rng.integers(1, 90))
        ins = [t((M, K), dt), t((K, N), dt)]
        if name == "TMATMUL_ACC":
            ins = [t((M, N), acc_dt)] + ins
        if name == "TMATMUL_BIAS":
            ins = ins + [t((1, N), acc_dt)]
        mem = {"TMATMUL": ["Acc", "Left", "Right"], "TMATMUL_ACC": ["Acc", "Acc", "Left", "Right"],
               "TMATMUL_BIAS": ["Acc", "Left", "Right", "Bias"]}[name]
        return [z((M, N), acc_dt)], ins, attrs, {"memories": mem}
    if name == "TLOAD":
        g = t((R + 3, C + 5))
        return [z((R, C))], [g, [2, 3]], attrs, {"valid_shape": valid, "pad": str(rng.choice(["null", "zero", "max", "min"])) if dt == "FP32" else "null"}
    if name == "TSTORE":
        return [z((R + 3, C + 5))], [t((R, C)), [1, 4]], attrs, {"valid_shape": valid}
    if name == "TTRANS":
        return [z((C, R))], [t((R, C))], attrs, {}
    if name == "TEXTRACT":
        return [z((R, C))], [t((R + 4, C + 6)), [3, 5]], attrs, {}
    if name == "TINSERT":
        return [t((R + 4, C + 6))], [t((R, C)), [2, 1]], attrs, {}
    if name == "TCONCAT":
        return [z((R, 2 * C))], [t((R, C)), t((R, C))], attrs, {}
    if name == "TFILLPAD":
        return [z((R, C))], [t((R, C))], attrs, {"valid_shape": valid, "pad": "max"}
    if name == "TCVT":
        src_dt = str(rng.choice(["FP32", "FP16", "INT32", "INT16", "INT8"]))
        attrs["mode"] = str(rng.choice(["none", "rint", "round", "floor", "ceil", "trunc"]))
        return [z((R, C))], [t((R, C), src_dt)], attrs, {"valid_shape": valid}
    if name in ("TCMP", "TCMPS"):
        if dt == "BOOL":
            dt = "FP32"
        attrs["cmp"] = str(rng.choice(["EQ", "NE", "LT", "LE", "GT", "GE"]))
        b = t((R, C), dt) if name == "TCMP" else scalar_for(rng, dt)
        return [z((R, mask_bytes(C)), "UINT8")], [t((R, C), dt), b], attrs, {"valid_shape": valid}
    if name == "TSEL":
        return [z((R, C))], [random_mask(rng, R, C), t((R, C)), t((R, C))], attrs, {"valid_shape": valid}
    if name == "TEXPANDS":
        return [z((R, C))], [scalar_for(rng, dt)], attrs, {"valid_shape": valid}
    if name.startswith("TROW") and "EXPAND" not in name:
        return [z((R, 1))], [t((R, C), p=name == "TROWPROD")], attrs, {"valid_shape": valid}
    if name.startswith("TCOL") and "EXPAND" not in name:
        return [z((1, C))], [t((R, C), p=name == "TCOLPROD")], attrs, {"valid_shape": valid}
    if name in ("TROWEXPAND", "TCOLEXPAND"):
        return [z((R, C))], [t((R, 1) if name == "TROWEXPAND" else (1, C))], attrs, {}
    if "EXPAND" in name:
        b = t((R, 1) if name.startswith("TROW") else (1, C), p=pos)
        return [z((R, C))], [t((R, C)), b], attrs, {}
    if name in ("TSHL", "TSHR"):
        return [z((R, C))], [t((R, C)), rng.integers(0, 7, size=(R, C)).astype(NP[dt])], attrs, {"valid_shape": valid}
    if name == "TSORT32":
        dt = str(rng.choice(["FP32", "FP16", "INT32"]))
        return [z((4, 64), dt), z((4, 64), "INT32")], [t((4, 64), dt)], attrs, {}
    if ins_sig == "TT":
        return [z((R, C))], [t((R, C)), t((R, C), p=pos)], attrs, {"valid_shape": valid}
    if ins_sig == "TS":
        dst = t((R, C)) if name == "TAXPY" else z((R, C))
        return [dst], [t((R, C)), scalar_for(rng, dt)], attrs, {"valid_shape": valid}
    if ins_sig == "T":
        return [z((R, C))], [t((R, C), p=pos)], attrs, {"valid_shape": valid}
    # Instructions added with the complete ISA; the native engine runs them through the
    # reference library unless it has a fast path.
    if name in ("TADDC", "TSUBC"):
        return [z((R, C))], [t((R, C)), t((R, C)), t((R, C))], attrs, {"valid_shape": valid}
    if name.startswith("TGEMV"):
        dt = str(rng.choice(["FP32", "FP16"]))
        N, K = int(rng.integers(1, 70)), int(rng.integers(1, 90))
        ins = [t((1, K), dt), t((K, N), dt)]
        mem = ["Acc", "Left", "Right"]
        if name == "TGEMV_ACC":
            ins, mem = [t((1, N), "FP32")] + ins, ["Acc", "Acc", "Left", "Right"]
        if name == "TGEMV_BIAS":
            ins, mem = ins + [t((1, N), "FP32")], mem + ["Bias"]
        return [z((1, N), "FP32")], ins, attrs, {"memories": mem}
    if name == "TSELS":
        return [z((R, C))], [random_mask(rng, R, C), t((R, C)), scalar_for(rng, dt)], attrs, {"valid_shape": valid}
    if name in ("TCI", "TASSIGN"):
        return [z((R, C))], [int(rng.integers(0, 9))], attrs, {"valid_shape": valid}
    if name == "TTRI":
        attrs["upper"] = bool(rng.integers(0, 2))
        return [z((R, C))], [int(rng.integers(-2, 3))], attrs, {"valid_shape": valid}
    if name == "TRANDOM":
        return [z((R, C))], [int(rng.integers(0, 99)), int(rng.integers(0, 999))], attrs, {"valid_shape": valid}
    if name == "MGATHER":
        return [z((R, C))], [t((3, 50)), rng.integers(0, 150, size=(R, C)).astype(np.int32)], attrs, {}
    if name == "TSUBVIEW":
        return [z((R, C))], [t((R + 4, C + 6)), [3, 5]], attrs, {}
    if name == "TFILLPAD_INPLACE":
        return [t((R, C))], [], attrs, {"valid_shape": valid, "pad": "max"}
    if name == "TPREFETCH":
        return [], [t((R + 3, C + 5)), [1, 2]], attrs, {}
    if name == "TMRGSORT":
        dt = "FP32"
        halves = [t((4, 32), dt), rng.integers(0, 64, size=(4, 32)).astype(np.int32)] * 2
        return [z((4, 64), dt), z((4, 64), "INT32")], halves, attrs, {}
    raise AssertionError(f"no case builder for {name} ({outs_sig} <- {ins_sig})")


def run(name, outs, ins, attrs, kw, engine):
    outs = [o.copy() for o in outs]
    kw = {k: v for k, v in kw.items() if v is not None}
    try:
        _core.isa_execute(name, outs, ins, attrs, engine=engine, **kw)
        return outs, None
    except _core.PyptoError as e:
        return None, str(e)


def ulp_distance(a, b):
    ai = a.view(np.int32).astype(np.int64)
    bi = b.view(np.int32).astype(np.int64)
    ai = np.where(ai < 0, -(2**31) - ai, ai)  # monotonic integer order
    bi = np.where(bi < 0, -(2**31) - bi, bi)
    return np.abs(ai - bi)


def assert_agree(name, ref, nat):
    for r, n in zip(ref, nat):
        if r.dtype != np.float32:
            np.testing.assert_array_equal(n, r, err_msg=name)  # integers, BOOL, fp16/bf16 bits
            continue
        both_nan = np.isnan(r) & np.isnan(n)
        if name in REORDERED:
            np.testing.assert_allclose(np.where(both_nan, 0, n), np.where(both_nan, 0, r), rtol=2e-5, atol=2e-5, err_msg=name)
            continue
        d = np.where(both_nan, 0, ulp_distance(r, n))
        assert d.max(initial=0) <= 2, f"{name}: {int(d.max())} ulp apart"


# Pipe synchronisation (set_flag / wait_flag / pipe_barrier) moves no data: nothing to compare.
# The cross-core FIFO instructions run only inside a mixed task (both engines run them through
# the reference library; tests/isa/test_reference_cross_core.py runs them on each engine).
CROSS_CORE = ("TPUSH", "TPOP", "TFREE")
DATA_INSTRUCTIONS = [n for n in _core.instruction_names()
                     if _core.instruction_signature(n)[:2] != ("", "") and n not in CROSS_CORE]


@pytest.mark.parametrize("name", DATA_INSTRUCTIONS)
def test_native_matches_reference(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(2):
        outs, ins, attrs, kw = build_case(name, rng)
        ref, ref_err = run(name, outs, ins, attrs, kw, "sim")
        nat, nat_err = run(name, outs, ins, attrs, kw, "native")
        assert nat_err == ref_err, f"{name}: errors differ:\nsim: {ref_err}\nnative: {nat_err}"
        if ref is not None:
            assert_agree(name, ref, nat)


def test_native_exp_log_accuracy_over_the_float_range():
    """The vectorised exp/log stay within 2 ulp of numpy's float32 results (checked
    independently of the reference library)."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-100, 88, size=(32, 64)).astype(np.float32)
    out = np.zeros_like(x)
    _core.isa_execute("TEXP", [out], [x], engine="native")
    assert ulp_distance(out, np.exp(x)).max() <= 2
    y = np.ldexp(rng.uniform(0.5, 1, size=(32, 64)), rng.integers(-140, 120, size=(32, 64))).astype(np.float32)
    _core.isa_execute("TLOG", [out], [y], engine="native")
    assert ulp_distance(out, np.log(y)).max() <= 2


# Packed masks over dtypes and shapes (a partly valid tile, non-square tiles, columns not a
# multiple of 8): the native engine's compare / select fast paths against the reference,
# bit for bit, and both against numpy (np.packbits per row, np.where).
MASK_CASES = [((8, 8), None), ((5, 37), None), ((16, 64), (11, 29)), ((3, 130), (3, 9))]
MASK_DTYPES = ["FP32", "FP16", "INT32", "INT16", "INT8", "UINT8"]


@pytest.mark.parametrize("shape,valid", MASK_CASES)
@pytest.mark.parametrize("dtype", MASK_DTYPES)
def test_native_packed_masks_match_reference(shape, valid, dtype):
    rng = np.random.default_rng(sum(map(ord, dtype)) + shape[1])
    R, C = shape
    r, c = valid or shape
    modes = ["EQ", "NE", "LT", "LE", "GT", "GE"]
    cmp, cmps = modes[(R + C) % 6], modes[(R + C + 3) % 6]
    a, b = rand(rng, shape, dtype), rand(rng, shape, dtype)
    b[::2] = a[::2]  # equal elements
    s = scalar_for(rng, dtype)
    sentinel = np.full((R, mask_bytes(C)), 0x5A, np.uint8)
    kw = {"valid_shape": valid}
    x, y = a.astype(np.float64), b.astype(np.float64)
    ops = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal}
    for name, ins, bools, attrs in [("TCMP", [a, b], ops[cmp](x, y), {"cmp": cmp}),
                                    ("TCMPS", [a, s], ops[cmps](x, s), {"cmp": cmps})]:
        ref, ref_err = run(name, [sentinel], ins, attrs, kw, "sim")
        nat, nat_err = run(name, [sentinel], ins, attrs, kw, "native")
        assert ref_err is None and nat_err is None, (ref_err, nat_err)
        np.testing.assert_array_equal(nat[0], ref[0], err_msg=name)
        want = sentinel.copy()
        want[:r, : mask_bytes(c)] = np.packbits(bools[:r, :c], axis=1, bitorder="little")
        np.testing.assert_array_equal(ref[0], want, err_msg=name)
    mask = random_mask(rng, R, C)
    bits = np.unpackbits(mask, axis=1, count=C, bitorder="little").astype(bool)
    dst = np.full(shape, 3, NP[dtype])
    for name, ins, other in [("TSEL", [mask, a, b], b), ("TSELS", [mask, a, s], np.array(s, NP[dtype]))]:
        ref, ref_err = run(name, [dst], ins, {}, kw, "sim")
        nat, nat_err = run(name, [dst], ins, {}, kw, "native")
        assert ref_err is None and nat_err is None, (ref_err, nat_err)
        np.testing.assert_array_equal(nat[0], ref[0], err_msg=name)
        want = dst.copy()
        want[:r, :c] = np.where(bits, a, other)[:r, :c]
        np.testing.assert_array_equal(ref[0], want, err_msg=name)


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.5, -3.75, 1e-40, -1e-40, 3e38], np.float32)


@pytest.mark.parametrize("name", ["TABS", "TNEG", "TRELU", "TSQRT", "TRSQRT", "TRECIP", "TEXP", "TLOG",
                                  "TADD", "TSUB", "TMUL", "TDIV", "TMAX", "TMIN"])
def test_native_matches_reference_on_special_values(name):
    """Signed zeros, infinities, NaN and subnormals through the fp32 fast paths (|-0| = +0,
    relu(NaN) = NaN, ...): the same answers as the reference, NaN for NaN."""
    a = np.resize(SPECIALS, (12, 12))
    b = np.resize(SPECIALS, (12, 12)).T.copy()  # every pair of specials
    ins = [a] if _core.instruction_signature(name)[1] == "T" else [a, b]
    outs = [np.zeros((12, 12), np.float32)]
    ref, _ = run(name, outs, ins, {}, {}, "sim")
    nat, _ = run(name, outs, ins, {}, {}, "native")
    r, n = ref[0], nat[0]
    both_nan = np.isnan(r) & np.isnan(n)
    exact = name in ("TABS", "TNEG", "TRELU", "TMAX", "TMIN", "TADD", "TSUB", "TMUL", "TDIV", "TSQRT")
    if exact:  # bit for bit: +0 and -0 differ
        bad = (r.view(np.uint32) != n.view(np.uint32)) & ~both_nan
    else:
        bad = np.where(both_nan, 0, ulp_distance(r, n)) > 2
    assert not bad.any(), f"{name}: {a[bad][:4]}: {r[bad][:4]} (reference) vs {n[bad][:4]} (native)"

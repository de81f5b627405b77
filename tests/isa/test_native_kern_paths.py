"""The native engine's softmax / streaming fast paths (include/pypto/isa/optimized/), on every
target this CPU runs (PYPTO_NATIVE_ISA = native and the forced lower avx2 / scalar ones),
against the reference library (the sim engine), bit for bit:

- TEXP on fp16 / bf16 tiles reads a table of the reference's result for each of the 65536
  inputs: checked on every bit pattern, NaNs, infinities and subnormals included;
- the half-precision ops computed in fp32 and checked against the narrow format's rounding
  boundaries (TLOG, TRSQRT, TROWEXPANDEXPDIF: half.h `narrow_op`, its test on the low bits of
  the fp32 result) on every bit pattern too;
- fp32 exp (vec.h `vexp`, its fix-up of lanes out of range taken only where a vector has one)
  on values inside and outside the range, mixed in one vector;
- TSTORE's non-temporal stores into a tensor of more than 8 MiB (rows of at least 1 KiB),
  at column offsets that leave the destination unaligned, with the elements around the
  window untouched."""

import os

import numpy as np
import pytest

import pypto.language as pl
from pypto import _core


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


FLAGS = cpu_flags()
X86 = os.uname().machine in ("x86_64", "AMD64")
TARGETS = ["native"] + ([t for t, need in [("avx2", {"avx2", "fma", "f16c"}), ("scalar", set())] if need <= FLAGS]
                        if X86 else [])


@pytest.fixture(params=TARGETS)
def target(request, monkeypatch):
    if request.param == "native":
        monkeypatch.delenv("PYPTO_NATIVE_ISA", raising=False)
    else:
        monkeypatch.setenv("PYPTO_NATIVE_ISA", request.param)
    return request.param


def run(name, outs, ins, engine, dtypes=None):
    outs = [o.copy() for o in outs]
    kw = {"dtypes": dtypes} if dtypes else {}
    _core.isa_execute(name, outs, ins, {}, engine=engine, **kw)
    return outs


def every_half(dtype):
    """All 65536 bit patterns as 4 tiles of 128 x 128 (fp16 values, or bf16 bits as uint16)."""
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16).reshape(4, 128, 128)
    return bits.view(np.float16) if dtype == "FP16" else bits


def assert_bits(name, ref, nat):
    r, n = ref.view(np.uint16), nat.view(np.uint16)
    bad = r != n
    assert not bad.any(), f"{name}: {int(bad.sum())} differ, first input {np.argwhere(bad)[0]}: " \
                          f"reference {hex(r[bad][0])}, native {hex(n[bad][0])}"


@pytest.mark.parametrize("dtype", ["FP16", "BF16"])
@pytest.mark.parametrize("name", ["TEXP", "TLOG", "TRSQRT"])
def test_half_unary_on_every_value(name, dtype, target):
    for tile in every_half(dtype):
        outs = [np.zeros_like(tile)]
        dts = ["BF16", "BF16"] if dtype == "BF16" else None
        assert_bits(name, run(name, outs, [tile], "sim", dts)[0], run(name, outs, [tile], "native", dts)[0])


@pytest.mark.parametrize("dtype", ["FP16", "BF16"])
def test_half_row_expand_expdif_on_every_value(dtype, target):
    """exp(a - b[r]) with every bit pattern as `a` and row values a softmax subtracts (row
    maxima, zero, a NaN, an infinity)."""
    rows = np.array([0.0, 1.5, -3.25, 11.0, 0.0, np.inf, np.nan, 60000.0] * 16, np.float32).reshape(128, 1)
    if dtype == "FP16":
        b = rows.astype(np.float16)
    else:
        b = (rows.view(np.uint32) >> 16).astype(np.uint16)
    dts = ["BF16"] * 3 if dtype == "BF16" else None
    for tile in every_half(dtype):
        outs = [np.zeros_like(tile)]
        ref = run("TROWEXPANDEXPDIF", outs, [tile, b], "sim", dts)[0]
        nat = run("TROWEXPANDEXPDIF", outs, [tile, b], "native", dts)[0]
        # Two NaN operands (a NaN row value and a NaN element): any NaN matches any NaN.
        r, n = ref.view(np.uint16), nat.view(np.uint16)
        nan = (lambda x: (x & 0x7FFF) > (0x7C00 if dtype == "FP16" else 0x7F80))
        bad = (r != n) & ~(nan(r) & nan(n))
        assert not bad.any(), f"{int(bad.sum())} differ, first {np.argwhere(bad)[0]}: {hex(r[bad][0])} vs {hex(n[bad][0])}"


def test_fp32_exp_with_lanes_out_of_range(target):
    """Vectors mixing lanes inside [-103.97, 88.72] with NaN, +-inf and values past either
    bound (the fix-up path) and vectors with none (the fast return): within 2 ulp of float64
    exp, the specials exact."""
    rng = np.random.default_rng(7)
    a = rng.uniform(-100, 85, size=(64, 64)).astype(np.float32)
    a[::3, ::7] = np.array([np.nan, np.inf, -np.inf, 89.0, -104.0, 200.0, -1e30, 88.7], np.float32)[
        np.arange(a[::3, ::7].size) % 8].reshape(a[::3, ::7].shape)
    nat = run("TEXP", [np.zeros_like(a)], [a], "native")[0]
    with np.errstate(over="ignore"):
        want = np.exp(a.astype(np.float64)).astype(np.float32)
    special = ~np.isfinite(a) | (a > 88.72283935546875) | (a < -103.972084045410)
    np.testing.assert_array_equal(nat[special], want[special])
    fin = ~special & (want > 1.2e-38)
    ulps = np.abs(nat[fin].view(np.int32).astype(np.int64) - want[fin].view(np.int32).astype(np.int64))
    assert ulps.max() <= 2


STREAM_ROWS, STREAM_COLS = 1024, 2304  # 9 MiB of fp32: over the 8 MiB that selects streaming stores
SR, SC, SOFF = 2, 2293, 3  # per step: 2 rows of 2293 columns (9172 bytes) at column 3 (unaligned)


@pl.jit
def stream_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(STREAM_ROWS // SR):
            ta = pl.load(a, [i * SR, SOFF], [SR, SC])
            tb = pl.load(b, [i * SR, SOFF], [SR, SC])
            c = pl.store(pl.add(ta, tb), [i * SR, SOFF], c)
    return c


def test_streaming_store_into_a_large_tensor(target):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((STREAM_ROWS, STREAM_COLS)).astype(np.float32)
    b = rng.standard_normal((STREAM_ROWS, STREAM_COLS)).astype(np.float32)
    c = np.full_like(a, -7.0)
    stream_add(a, b, c)
    want = np.full_like(a, -7.0)
    want[:, SOFF:SOFF + SC] = a[:, SOFF:SOFF + SC] + b[:, SOFF:SOFF + SC]
    np.testing.assert_array_equal(c.view(np.uint32), want.view(np.uint32))


def test_library_paths_name_the_store_path():
    """The native target's store path (the report is computed once per process)."""
    paths = _core.native_library_paths()
    native_avx = X86 and "avx" in FLAGS and os.environ.get("PYPTO_NATIVE_ISA", "native") != "scalar"
    assert paths.endswith(" store=" + ("movnt" if native_avx else "plain")), paths

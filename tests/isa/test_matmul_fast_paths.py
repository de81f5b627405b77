"""The native engine's matmul fast paths (include/pypto/isa/optimized/matmul.h), one by one:
every target this CPU can run (PYPTO_NATIVE_ISA = native, and the lower avx512_bf16 / avx512
/ avx2 / scalar it supports) with FP32, FP16 and BF16 operands, on shapes that take each kernel
(the blocked micro-kernel with row / column / K tails and several K blocks; AMX's 32 x 32
blocks with row / column / K tails beside them; B read in place for a few rows; the GEMV
kernel for M <= 16 rows), against float64 numpy of the same operands and against the
reference library (the sim engine).

Tolerance, from the arithmetic: the operands are exact (BF16 / FP16 values, or FP32), every
product of two of them is exact in FP32 (8 + 8 or 11 + 11 significant bits <= 24; FP32 x FP32
products round once), and the K products are added in FP32 in some order, so each result is
within gamma_(K+1) * sum_k |a_ik b_kj| (+ |init|) of the exact sum, gamma_n = n u / (1 - n u),
u = 2^-24 (Higham, Accuracy and Stability, 3.1). The operands here have no subnormals (which
vdpbf16ps flushes to zero)."""

import os

import numpy as np
import pytest

from pypto import _core

U = 2.0 ** -24


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
# The targets this machine runs: native always; the forced lower ones where the CPU has them.
AVX512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl"}
TARGETS = ["native"] + ([t for t, need in [("avx512_bf16", AVX512 | {"avx512_bf16"}), ("avx512", AVX512),
                                          ("avx2", {"avx2", "fma", "f16c"}), ("scalar", set())]
                         if need <= FLAGS] if X86 else [])


def os_grants_amx():
    """Whether Linux supports the AMX tile data state (arch_prctl ARCH_GET_XCOMP_SUPP: bit 18)."""
    import ctypes
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        mask = ctypes.c_uint64(0)
        return libc.syscall(158, 0x1021, ctypes.byref(mask)) == 0 and bool(mask.value >> 18 & 1)
    except (OSError, AttributeError):
        return False


def use_target(monkeypatch, name):
    """Compile kernels for `name`: "native" (PYPTO_NATIVE_ISA unset) or a forced lower target."""
    if name == "native":
        monkeypatch.delenv("PYPTO_NATIVE_ISA", raising=False)
    else:
        monkeypatch.setenv("PYPTO_NATIVE_ISA", name)
    return name


@pytest.fixture(params=TARGETS)
def target(request, monkeypatch):
    return use_target(monkeypatch, request.param)


def bf16_bits(x):
    """Round-to-nearest-even FP32 -> BF16 bit patterns (uint16)."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def operands(rng, shape, dtype):
    """(array passed to the instruction, its exact FP64 values)."""
    x = rng.uniform(-2, 2, size=shape).astype(np.float32)
    if dtype == "BF16":
        b = bf16_bits(x)
        return b, bf16_value(b).astype(np.float64)
    if dtype == "FP16":
        h = x.astype(np.float16)
        return h, h.astype(np.float64)
    return x, x.astype(np.float64)


def execute(name, out, ins, dtype, engine):
    out = out.copy()
    kw = {}
    if dtype == "BF16":
        kw["dtypes"] = [None] * (1 + (name == "TMATMUL_ACC")) + ["BF16", "BF16"] + [None] * (name == "TMATMUL_BIAS")
    mem = {"TMATMUL": ["Acc", "Left", "Right"], "TMATMUL_ACC": ["Acc", "Acc", "Left", "Right"],
           "TMATMUL_BIAS": ["Acc", "Left", "Right", "Bias"]}[name]
    _core.isa_execute(name, [out], ins, {}, engine=engine, memories=mem, **kw)
    return out


# (M, N, K), each operand within a2a3's 64 KiB Left / Right buffers: the blocked kernel with
# every tail and 2 K blocks (KC = 256), GEMV shapes (M <= 16, N a multiple of 16; an odd K:
# vdpbf16ps's lone last k), a few rows whose N is no multiple of the vector (blocked path),
# and single rows / columns.
SHAPES = [(128, 128, 128), (67, 45, 77), (37, 40, 300), (16, 64, 256), (5, 64, 33), (16, 32, 511),
          (9, 40, 70), (1, 16, 7), (1, 1, 1), (20, 33, 2),
          # AMX (whole 32 x 32 blocks of C, K in multiples of 32) with every tail beside it: rows
          # (70 = 2 x 32 + 6), columns (100 = 3 x 32 + 4), K (150 = 4 x 32 + 22; 45 = 32 + 13, odd;
          # 290 = a K block of 256, then 32 + 2).
          (70, 100, 150), (96, 64, 45), (40, 48, 290), (32, 32, 32),
          # B read in place by at most three row panels (M <= 18 on AVX2 / scalar, <= 24 on
          # AVX-512): whole panels in place beside a packed column tail (50, 130: 3 x 16 + 2 and
          # 8 x 16 + 2 on AVX2), two K blocks with an odd second one (271 = 256 + 15), M one past
          # a panel (7, 13) and three whole ones (18 on AVX2, 24 on AVX-512).
          (18, 48, 130), (13, 50, 129), (24, 48, 271), (7, 130, 64),
          # The AVX2 assembly kernels (6 and 4 rows of 16 columns, eight K steps a loop
          # iteration and a one-step tail): seven or eight last rows as 4 + 3 / 4 + 4 (14 = 6 +
          # 4 + 4, 8 = 4 + 4, 31 = 4 x 6 + 4 + 3), K below, at and past eight.
          (14, 32, 9), (8, 48, 23), (31, 64, 8), (26, 16, 1)]


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16"])
@pytest.mark.parametrize("name", ["TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS"])
def test_fast_path_matches_numpy_and_reference(target, name, dtype):
    rng = np.random.default_rng(sum(map(ord, name + dtype)))
    for M, N, K in SHAPES:
        a, a64 = operands(rng, (M, K), dtype)
        b, b64 = operands(rng, (K, N), dtype)
        exact = a64 @ b64
        bound = np.abs(a64) @ np.abs(b64)
        ins = [a, b]
        if name == "TMATMUL_ACC":
            init = rng.uniform(-2, 2, size=(M, N)).astype(np.float32)
            ins = [init] + ins
            exact, bound = exact + init, bound + np.abs(init)
        elif name == "TMATMUL_BIAS":
            bias = rng.uniform(-2, 2, size=(1, N)).astype(np.float32)
            ins = ins + [bias]
            exact, bound = exact + bias, bound + np.abs(bias)
        n = K + 1
        tol = n * U / (1 - n * U) * bound + 1e-30
        zero = np.zeros((M, N), np.float32)
        nat = execute(name, zero, ins, dtype, "native")
        ref = execute(name, zero, ins, dtype, "sim")
        where = f"{name} {dtype} {M}x{N}x{K} on {target}"
        assert np.all(np.abs(nat - exact) <= tol), f"{where}: native {np.max(np.abs(nat - exact) / tol):.2f}x the bound"
        assert np.all(np.abs(ref - exact) <= tol), f"{where}: reference off the bound"
        assert np.all(np.abs(nat - ref) <= 2 * tol), where


@pytest.mark.parametrize("M", [16, 8, 40])
def test_non_finite_weights_stay_in_their_columns(target, M):
    """An inf and a NaN BF16 weight make inf / NaN only in their own columns, on every path
    (AMX GEMV blocks, vdpbf16ps, B split into even / odd columns in place, widened, blocked):
    each product is its own, no padding lane or neighbour column meets them."""
    rng = np.random.default_rng(5 + M)
    a = bf16_bits(np.abs(rng.uniform(-2, 2, size=(M, 64))) + 0.5)
    b = bf16_bits(rng.uniform(-2, 2, size=(64, 128)))
    b[3, 10] = 0x7F80  # +inf
    b[40, 77] = 0x7FC0  # NaN
    a64, b64 = bf16_value(a).astype(np.float64), bf16_value(b).astype(np.float64)
    o = execute("TMATMUL", np.zeros((M, 128), np.float32), [a, b], "BF16", "native")
    with np.errstate(invalid="ignore"):
        want = a64 @ b64
    assert np.all(np.isposinf(o[:, 10])) and np.all(np.isnan(o[:, 77])), target
    finite = np.ones(128, bool)
    finite[[10, 77]] = False
    assert np.all(np.isfinite(o[:, finite])), target
    assert np.allclose(o[:, finite], want[:, finite], rtol=1e-5, atol=1e-4), target


def test_paths_reported_per_target(target):
    """native_matmul_paths names the path each dtype compiles to under the target: the lower
    targets take their own paths, vdpbf16ps only where the target has AVX512_BF16, AMX tiles where
    it has AMX-BF16."""
    p = _core.native_matmul_paths()
    assert p["isa"] == target
    if target == "native":
        if X86 and "avx512f" in FLAGS:
            assert p["FP32"].startswith("avx512 fma")
            want = "avx512_bf16 vdpbf16ps" if "avx512_bf16" in FLAGS else "avx512 widen fma"
            if "amx_bf16" in FLAGS and "avx512_bf16" in FLAGS and os_grants_amx():
                want = "amx tdpbf16ps 32x32"
            assert p["BF16"].startswith(want), p
        return
    if target == "avx512_bf16":  # x86-64-v4 + AVX512_BF16: vdpbf16ps for every block, never AMX
        assert p["FP32"].startswith("avx512 fma"), p
        assert p["BF16"] == "avx512_bf16 vdpbf16ps 8x32", p
        assert p["FP16"].startswith("avx512 f16c widen"), p
        return
    assert p["FP32"].startswith(target), p
    assert p["BF16"].startswith(target + " widen "), p
    assert p["FP16"].startswith(target), p


def test_forced_target_changes_the_compiled_kernel(monkeypatch):
    """The same instruction under two targets compiles twice (the variable is part of the cache
    key, pypto/base/env.h) and both agree with numpy."""
    names = [n for n, _ in _core.cache_key_env_vars()]
    assert "PYPTO_NATIVE_ISA" in names
    if "avx2" not in TARGETS:
        pytest.skip("no lower target on this CPU")
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((16, 64), dtype=np.float32), rng.standard_normal((64, 32), dtype=np.float32)
    outs = []
    for t in ("native", "avx2"):
        monkeypatch.setenv("PYPTO_NATIVE_ISA", t)
        outs.append(execute("TMATMUL", np.zeros((16, 32), np.float32), [a, b], "FP32", "native"))
        assert _core.native_matmul_paths()["isa"] == t
    for o in outs:
        np.testing.assert_allclose(o, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_unknown_target_is_a_user_error(monkeypatch):
    monkeypatch.setenv("PYPTO_NATIVE_ISA", "avx9000")
    a = np.ones((4, 4), np.float32)
    with pytest.raises(_core.PyptoError) as e:
        execute("TMATMUL", np.zeros((4, 4), np.float32), [a, a], "FP32", "native")
    assert "PYPTO_NATIVE_ISA=avx9000" in str(e.value) and "fix:" in str(e.value)

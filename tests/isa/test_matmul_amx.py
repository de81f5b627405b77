"""The AMX BF16 matmul path (include/pypto/isa/optimized/matmul.h, `tdpbf16ps` on the tile
registers) on a CPU that has it: the path report names it (so the branch runs, not only
compiles: the report's probe multiplies on the tiles), and BF16 GEMMs with ragged M / N / K,
valid regions inside larger tiles, and FP32 or BF16 results agree with float64 numpy on the
native target and on the forced lower ones (avx512_bf16: vdpbf16ps for every block; avx512:
the operands widened into the FP32 kernel), and with the reference library (the sim engine).

Tolerance as in test_matmul_fast_paths.py: products of BF16 values are exact in FP32, the K of
them are added in FP32 in some order, so each FP32 result is within gamma_(K+1) * sum_k
|a_ik b_kj| of the exact sum; a BF16 result is that, rounded once (half an ulp of BF16 more).
The operands have no subnormals (which tdpbf16ps / vdpbf16ps flush to zero)."""

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto import _core
from pypto.runtime import RunConfig

from test_matmul_fast_paths import FLAGS, TARGETS, X86, bf16_bits, bf16_value, os_grants_amx, use_target

U = 2.0 ** -24
HAS_AMX = X86 and {"amx_bf16", "amx_tile", "avx512_bf16"} <= FLAGS
LOWER = [t for t in ("avx512_bf16", "avx512") if t in TARGETS]


@pytest.fixture(params=["native"] + LOWER)
def target(request, monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return use_target(monkeypatch, request.param)


def test_amx_path_taken_where_the_cpu_has_it(monkeypatch):
    """With AMX-BF16 on the CPU and the tile data granted by Linux, the native target's BF16
    matmul runs on the tiles (the report's probe product ran there and came out exact); the
    forced lower targets never do."""
    if not HAS_AMX:
        pytest.skip("this CPU has no AMX-BF16")
    if not os_grants_amx():
        pytest.skip("this Linux does not grant the AMX tile data (ARCH_GET_XCOMP_SUPP lacks bit 18)")
    monkeypatch.delenv("PYPTO_NATIVE_ISA", raising=False)
    assert _core.native_matmul_paths()["BF16"] == (
        "amx tdpbf16ps 32x32, M <= 16 64-column blocks (tails: avx512_bf16 vdpbf16ps 8x32)")
    for t in LOWER:
        monkeypatch.setenv("PYPTO_NATIVE_ISA", t)
        assert "amx" not in _core.native_matmul_paths()["BF16"], t


INTERLEAVED = r"""
import numpy as np, torch
from pypto import _core
rng = np.random.default_rng(0)
def bits(x):
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
a, b = bits(rng.uniform(-2, 2, (64, 128))), bits(rng.uniform(-2, 2, (128, 64)))
exact = ((a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
         @ (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64))
t = torch.randn(256, 256).to(torch.bfloat16)
for i in range(4):
    out = np.zeros((64, 64), np.float32)
    _core.isa_execute("TMATMUL", [out], [a, b], {}, engine="native", memories=["Acc", "Left", "Right"],
                      dtypes=[None, "BF16", "BF16"])
    assert np.max(np.abs(out - exact)) < 1e-3, i
    torch.matmul(t, t)  # oneDNN's AMX kernel on this thread: its own tile configuration, then released
print("ok")
"""


def test_amx_matmul_after_another_librarys_amx_on_the_same_thread(tmp_path):
    """Our AMX matmul and torch's (oneDNN's AMX kernels) in turns on one thread: each of our
    calls loads its tile configuration (before: once per thread, and the call after torch's
    released the tiles died of SIGILL). In a child process, so that a fault fails this test."""
    import os
    import subprocess
    import sys
    if not HAS_AMX or not os_grants_amx():
        pytest.skip("no AMX-BF16 here (or Linux does not grant the tile data)")
    env = dict(os.environ, PYPTO_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("PYPTO_NATIVE_ISA", None)
    r = subprocess.run([sys.executable, "-c", INTERLEAVED], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (r.returncode, r.stdout[-2000:], r.stderr[-2000:])


def bf16_operand(rng, shape):
    b = bf16_bits(rng.uniform(-2, 2, size=shape))
    return b, bf16_value(b).astype(np.float64)


@pytest.mark.parametrize("valid", [(100, 70), (64, 64), (33, 33), (96, 45)])
def test_valid_region_inside_larger_tiles(target, valid):
    """TMATMUL_ACC on 128 x 128 BF16 tiles whose valid region is smaller (the row strides stay
    128): M = rows, K = N = cols, so the AMX blocks read A and B at a stride other than K and
    write C at a stride other than N, beside row, column and K tails."""
    rng = np.random.default_rng(valid[0] * 1000 + valid[1])
    r, c = valid
    a, a64 = bf16_operand(rng, (128, 128))
    b, b64 = bf16_operand(rng, (128, 128))
    init = rng.uniform(-2, 2, size=(128, 128)).astype(np.float32)
    exact = a64[:r, :c] @ b64[:c, :c] + init[:r, :c]
    bound = np.abs(a64[:r, :c]) @ np.abs(b64[:c, :c]) + np.abs(init[:r, :c])
    tol = (c + 1) * U / (1 - (c + 1) * U) * bound + 1e-30
    out = np.full((128, 128), 9.0, np.float32)
    kw = dict(dtypes=[None, None, "BF16", "BF16"], memories=["Acc", "Acc", "Left", "Right"], valid_shape=[r, c])
    results = {}
    for engine in ("native", "sim"):
        o = out.copy()
        _core.isa_execute("TMATMUL_ACC", [o], [init, a, b], {}, engine=engine, **kw)
        results[engine] = o
        err = np.abs(o[:r, :c] - exact)
        assert np.all(err <= tol), f"{engine} {valid} on {target}: {np.max(err / tol):.2f}x the bound"
    assert np.array_equal(results["native"][r:], results["sim"][r:])
    assert np.array_equal(results["native"][:, c:], results["sim"][:, c:])


@pl.jit
def gemm_fp32_out(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, b, out_dtype=pl.FP32)
    return c


@pl.jit
def gemm_bf16_out(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, b, out_dtype=pl.BF16)
    return c


# Ragged GEMMs whole programs compile (tiled by the compiler): M, N and K off every multiple of 32.
PROGRAM_SHAPES = [(128, 128, 256), (100, 72, 200), (37, 130, 45), (160, 96, 300)]


@pytest.mark.parametrize("out", ["FP32", "BF16"])
@pytest.mark.parametrize("M,N,K", PROGRAM_SHAPES)
def test_bf16_gemm_program(target, M, N, K, out):
    rng = np.random.default_rng(M * N + K)
    a = torch.from_numpy(rng.uniform(-2, 2, (M, K)).astype(np.float32)).to(torch.bfloat16)
    b = torch.from_numpy(rng.uniform(-2, 2, (K, N)).astype(np.float32)).to(torch.bfloat16)
    a64, b64 = a.double().numpy(), b.double().numpy()
    exact, bound = a64 @ b64, np.abs(a64) @ np.abs(b64)
    tol = (K + 1) * U / (1 - (K + 1) * U) * bound + 1e-30
    results = {}
    for engine in ("native", "sim"):
        if out == "FP32":
            c = torch.zeros(M, N)
            gemm_fp32_out(a, b, c, config=RunConfig(engine=engine))
        else:
            c = torch.zeros(M, N, dtype=torch.bfloat16)
            gemm_bf16_out(a, b, c, config=RunConfig(engine=engine))
        got = c.double().numpy()
        # BF16: the FP32 sum rounded once, half an ulp of BF16 (2^-8 relative) more.
        allowed = tol if out == "FP32" else tol + 2.0 ** -8 * (np.abs(exact) + tol)
        err = np.abs(got - exact)
        assert np.all(err <= allowed), f"{engine} {M}x{N}x{K} -> {out} on {target}: {np.max(err / allowed):.2f}x"
        results[engine] = got
    if out == "BF16":
        # The two engines' FP32 sums differ only in order: the BF16 results by at most one ulp.
        ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(results["sim"]), 1e-30))) - 7)
        assert np.all(np.abs(results["native"] - results["sim"]) <= ulp)


# GEMV shapes (M <= 16 rows against a weight: decode projections): on AMX the rows are the
# tile rows and 64-column blocks of B are pair-interleaved into two alternating buffers; K
# padded to 32, a last chunk under 64 columns staged.
GEMV_SHAPES = [(16, 128, 128), (1, 256, 64), (5, 77, 200), (16, 31, 16), (3, 1, 130), (12, 300, 64), (16, 64, 72)]


@pytest.mark.parametrize("M,K,N", GEMV_SHAPES)
def test_gemv_shapes(target, M, K, N):
    rng = np.random.default_rng(M * 7919 + K * 31 + N)
    a, a64 = bf16_operand(rng, (M, K))
    b, b64 = bf16_operand(rng, (K, N))
    init = rng.uniform(-2, 2, size=(M, N)).astype(np.float32)
    exact = a64 @ b64 + init
    bound = np.abs(a64) @ np.abs(b64) + np.abs(init)
    tol = (K + 1) * U / (1 - (K + 1) * U) * bound + 1e-30
    kw = dict(dtypes=[None, None, "BF16", "BF16"], memories=["Acc", "Acc", "Left", "Right"])
    for engine in ("native", "sim"):
        o = np.zeros((M, N), np.float32)
        _core.isa_execute("TMATMUL_ACC", [o], [init, a, b], {}, engine=engine, **kw)
        err = np.abs(o - exact)
        assert np.all(err <= tol), f"{engine} {M}x{K}x{N} on {target}: {np.max(err / tol):.2f}x the bound"


@pl.jit.incore
def gemv_strip(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    acc = pl.matmul(pl.move(pl.load(x, [0, 0], [16, 160], target_memory=pl.MemorySpace.Mat),
                            target_memory=pl.MemorySpace.Left),
                    pl.move(pl.load(w, [0, n * 192], [160, 192], target_memory=pl.MemorySpace.Mat),
                            target_memory=pl.MemorySpace.Right))
    for k in pl.range(1, 3):
        acc = pl.matmul_acc(acc, pl.move(pl.load(x, [0, k * 160], [16, 160], target_memory=pl.MemorySpace.Mat),
                                         target_memory=pl.MemorySpace.Left),
                            pl.move(pl.load(w, [k * 160, n * 192], [160, 192], target_memory=pl.MemorySpace.Mat),
                                    target_memory=pl.MemorySpace.Right))
    y = pl.store(acc, [0, n * 192], y)
    return y


@pl.jit
def gemv_program(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    for n in pl.parallel(3):
        y = gemv_strip(x, w, y, n)
    return y


def test_gemv_program_reads_the_weight_in_place(target):
    """A decode-style projection: [16, 480] x [480, 576] BF16 in 160 x 192 weight tiles read
    in place (row stride 576; three 64-column chunks per tile), K accumulated over three
    matmul_acc steps, one task per strip."""
    rng = np.random.default_rng(11)
    x = torch.from_numpy(rng.uniform(-2, 2, (16, 480)).astype(np.float32)).to(torch.bfloat16)
    w = torch.from_numpy(rng.uniform(-2, 2, (480, 576)).astype(np.float32)).to(torch.bfloat16)
    x64, w64 = x.double().numpy(), w.double().numpy()
    exact, bound = x64 @ w64, np.abs(x64) @ np.abs(w64)
    tol = 481 * U / (1 - 481 * U) * bound + 1e-30
    y = torch.zeros(16, 576)
    gemv_program(x, w, y)
    err = np.abs(y.double().numpy() - exact)
    assert np.all(err <= tol), f"{np.max(err / tol):.2f}x the bound on {target}"

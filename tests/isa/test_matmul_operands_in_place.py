"""Matmul operands read in place (native_codegen.cpp plan_direct): a kernel that loads a weight
chunk into Mat, moves it to Right (and the activations to Left) and multiplies never copies
them; the matmul reads the global tensor. Checked against float64 numpy on the native target
and a forced lower one, on the paths that must fall back to the copies: a column-strided
weight (its window is not row-contiguous) and activations whose bytes interleave with the
output the kernel writes (the read-only check fails)."""

import glob

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig

Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right
M, K, N, KC, TN = 16, 384, 256, 128, 128
U = 2.0 ** -24


def build():
    @pl.jit.incore
    def proj(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
        acc = pl.matmul(pl.move(pl.load(x, [0, 0], [M, KC], target_memory=Mat), target_memory=Left),
                        pl.move(pl.load(w, [0, n * TN], [KC, TN], target_memory=Mat), target_memory=Right))
        for k in pl.range(1, K // KC):
            acc = pl.matmul_acc(acc, pl.move(pl.load(x, [0, k * KC], [M, KC], target_memory=Mat), target_memory=Left),
                                pl.move(pl.load(w, [k * KC, n * TN], [KC, TN], target_memory=Mat),
                                        target_memory=Right))
        y = pl.store(acc, [0, n * TN], y)
        return y

    @pl.jit
    def layer(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
        for n in pl.parallel(N // TN):
            y = proj(x, w, y, n)
        return y

    return layer


def check(y, x, w):
    x64, w64 = x.double().numpy(), w.double().numpy()
    exact, bound = x64 @ w64, np.abs(x64) @ np.abs(w64)
    tol = (K + 1) * U / (1 - (K + 1) * U) * bound + 1e-30
    err = np.abs(y.double().numpy() - exact)
    assert np.all(err <= tol), f"{np.max(err / tol):.2f}x the FP32 summation bound"


def sources(cache):
    return "".join(open(f).read() for f in glob.glob(str(cache / "**" / "*.cpp"), recursive=True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_weights_read_in_place(kernel_cache, dtype):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(M, K, generator=g).to(dtype)
    w = torch.randn(K, N, generator=g).to(dtype)
    y = torch.zeros(M, N)
    build()(x, w, y, config=RunConfig(engine="native"))  # native sources are inspected
    check(y, x, w)
    src = sources(kernel_cache)
    # The TLOADs of both operands record windows that the TMOVs hand to the matmuls.
    assert src.count("pto_opt::tensor_window(") == 4, src
    assert "dp2 = gp" in src and "dp1 = gp" in src


def test_strided_weight_takes_the_copies(kernel_cache):
    """w viewed transposed (column stride K): no row-contiguous window, the TLOAD copies."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(M, K, generator=g).to(torch.bfloat16)
    w = torch.randn(N, K, generator=g).to(torch.bfloat16).t()
    assert w.stride() == (1, K)
    y = torch.zeros(M, N)
    build()(x, w, y, config=RunConfig(engine="native"))  # native sources are inspected
    check(y, x, w)


def test_operand_overlapping_the_output_takes_the_copies(kernel_cache):
    """x and y are column views of one buffer (their rows interleave): x is not read in place."""
    g = torch.Generator().manual_seed(3)
    buf = torch.zeros(M, K + N)
    buf[:, :K] = torch.randn(M, K, generator=g)
    x, y = buf[:, :K], buf[:, K:]
    w = torch.randn(K, N, generator=g)
    x0 = x.clone()
    build()(x, w, y, config=RunConfig(engine="native"))  # native sources are inspected
    check(y, x0, w)
    assert torch.equal(x, x0)


@pl.jit.incore
def qk_pv(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, p: pl.Tensor, s_out: pl.Out[pl.Tensor], o_out: pl.Out[pl.Tensor]):
    """Attention's two matmuls: K's page is transposed (a copy), then V's page loads into the
    bytes K's used (the memory plan reuses them once K is dead) and is read in place."""
    q_left = pl.move(pl.load(q, [0, 0], [16, 64], target_memory=Mat), target_memory=Left)
    k_t = pl.transpose_view(pl.load(k, [0, 0], [32, 64], target_memory=Mat))
    s_out = pl.store(pl.matmul(q_left, pl.move(k_t, target_memory=Right)), [0, 0], s_out)
    p_left = pl.move(pl.load(p, [0, 0], [16, 32], target_memory=Mat), target_memory=Left)
    v_right = pl.move(pl.load(v, [0, 0], [32, 64], target_memory=Mat), target_memory=Right)
    o_out = pl.store(pl.matmul(p_left, v_right), [0, 0], o_out)
    return s_out, o_out


@pl.jit
def attention_step(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, p: pl.Tensor, s_out: pl.Out[pl.Tensor],
                   o_out: pl.Out[pl.Tensor]):
    s_out, o_out = qk_pv(q, k, v, p, s_out, o_out)
    return s_out, o_out


def test_value_page_in_bytes_the_key_page_used_is_read_in_place(kernel_cache):
    g = torch.Generator().manual_seed(4)
    q, k, v, p = (torch.randn(*s, generator=g).to(torch.bfloat16) for s in ((16, 64), (32, 64), (32, 64), (16, 32)))
    s_out, o_out = torch.zeros(16, 32), torch.zeros(16, 64)
    attention_step(q, k, v, p, s_out, o_out, config=RunConfig(engine="native"))
    for got, a, b in ((s_out, q, k.t()), (o_out, p, v)):
        a64, b64 = a.double().numpy(), b.double().numpy()
        tol = 65 * U / (1 - 65 * U) * (np.abs(a64) @ np.abs(b64)) + 1e-30
        assert np.all(np.abs(got.double().numpy() - a64 @ b64) <= tol)
    src = sources(kernel_cache)
    # V's TLOAD records a window that its TMOV hands to the second matmul (Right: dp2).
    assert src.count("pto_opt::tensor_window(") >= 3 and "dp2 = gp" in src, src

"""GEMM / MLP family programs in PyPTO's idioms (issue 14 follow-up): per-tile launches over
orchestration views, split-K into a run-time-shaped workspace, an in-kernel Acc buffer over K
slices of tensor parameters, bias + activation epilogues, ragged M, pl.dynamic M, an MLP and an
RMSNorm + matmul layer in fp16/bf16 with fp32 accumulation. Each runs on both engines against
numpy (verify="roundtrip")."""

import json

import numpy as np
import pytest

import pypto.language as pl
from pypto import runtime
from pypto.runtime import RunConfig

RNG = np.random.default_rng(1414)


@pytest.fixture(params=["native", "sim"])
def engine(request):
    return request.param


def cfg(engine, **kw):
    kw.setdefault("verify", "roundtrip")
    return RunConfig(engine=engine, **kw)


def f16(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float16)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# -- 1. a tiled GEMM: one pl.at per output tile over orchestration views ------------------------

TM, TN, TK = 64, 64, 64


@pl.jit
def gemm_tiles(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for m in pl.range(0, 128, TM):
        for n in pl.range(0, 128, TN):
            with pl.at(level=pl.Level.CORE_GROUP):
                c[m:m + TM, n:n + TN] = pl.matmul(a[m:m + TM, :], b[:, n:n + TN], out_dtype=pl.FP32)
    return c


def test_gemm_one_launch_per_output_tile(engine, tmp_path):
    a, b = f16(128, 256), f16(256, 128)
    c = np.zeros((128, 128), np.float32)
    gemm_tiles(a, b, c, config=cfg(engine, enable_dep_gen=True, output_dir=str(tmp_path)))
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    edges = json.load(open(tmp_path / "dfx_outputs" / "deps.json"))["edges"]
    assert edges == [], edges  # the four output views are disjoint: no task waits for another


@pl.program
class GemmTilesProgram:
    """The same GEMM as a @pl.program: an InCore tile kernel called per output tile with
    views, offsets from Scalar[INT32] parameters cast to INDEX."""

    @pl.function(type=pl.FunctionType.InCore)
    def tile_mm(self, a: pl.Tensor[[64, 256], pl.FP16], b: pl.Tensor[[256, 64], pl.FP16],
                c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        acc = pl.create_tensor([64, 64], dtype=pl.FP32)
        for k in pl.range(4):
            ta = pl.load(a, [0, k * 64], [64, 64], target_memory=pl.Mem.Mat)
            tb = pl.load(b, [k * 64, 0], [64, 64], target_memory=pl.Mem.Mat)
            if k == 0:
                acc = pl.matmul(ta, tb)
            else:
                acc = pl.matmul_acc(acc, ta, tb)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[192, 256], pl.FP16], b: pl.Tensor[[256, 128], pl.FP16],
             m0: pl.Scalar[pl.INT32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        base = pl.cast(m0, pl.INDEX)
        for mi in pl.range(2):
            for ni in pl.range(2):
                m = mi * 64
                n = ni * 64
                cv = c[m:m + 64, n:n + 64]
                cv = self.tile_mm(a[base + m:base + m + 64, :], b[:, n:n + 64], cv)
        return c


def test_gemm_program_scalar_int32_offsets(engine, tmp_path):
    a, b = f16(192, 256), f16(256, 128)
    c = np.zeros((128, 128), np.float32)
    runtime.run(GemmTilesProgram, a, b, 32, c, config=cfg(engine, enable_dep_gen=True, output_dir=str(tmp_path)))
    np.testing.assert_allclose(c, a[32:160].astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    edges = json.load(open(tmp_path / "dfx_outputs" / "deps.json"))["edges"]
    assert edges == [], edges


# -- 2. in-kernel Acc buffer over K slices of tensor parameters --------------------------------

@pl.jit
def gemm_acc_slices(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.create_tensor([64, 64], dtype=pl.FP32)
        for k in pl.range(0, 256, 64):
            if k == 0:
                acc = pl.matmul(a[:, k:k + 64], b[k:k + 64, :])
            else:
                acc = pl.matmul_acc(acc, a[:, k:k + 64], b[k:k + 64, :])
        c[:] = pl.relu(pl.col_expand_add(acc, bias))
    return c


def test_acc_buffer_over_k_slices_with_bias_relu(engine):
    a, b, bias = f16(64, 256), f16(256, 64), f32(1, 64)
    c = np.zeros((64, 64), np.float32)
    gemm_acc_slices(a, b, bias, c, config=cfg(engine))
    want = np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias, 0)
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)


# -- 3. split-K: partial products into a run-time-shaped workspace, then reduced ---------------

S = pl.dynamic("S")


@pl.program
class SplitKWorkspace:
    @pl.function(type=pl.FunctionType.InCore)
    def partial(self, a: pl.Tensor[[64, 128], pl.FP16], b: pl.Tensor[[128, 64], pl.FP16],
                p: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [128, 64], target_memory=pl.Mem.Mat)
        p = pl.store(pl.matmul(ta, tb), [0, 0], p)
        return p

    @pl.function(type=pl.FunctionType.InCore)
    def reduce(self, ws: pl.Tensor[[S, 64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        s = pl.load(ws, [0, 0, 0], [1, 64, 64])
        s = pl.reshape(s, [64, 64])
        for i in pl.range(1, pl.tensor.dim(ws, 0)):
            t = pl.reshape(pl.load(ws, [i, 0, 0], [1, 64, 64]), [64, 64])
            s = pl.add(s, t)
        c = pl.store(s, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 512], pl.FP16], b: pl.Tensor[[512, 64], pl.FP16],
             splits: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        ws = pl.create_tensor([splits, 64, 64], dtype=pl.FP32)
        for s in pl.range(splits):
            pv = ws[s, :, :]
            pv = self.partial(a[:, s * 128:s * 128 + 128], b[s * 128:s * 128 + 128, :], pv)
        c = self.reduce(ws, c)
        return c


def test_splitk_workspace_runtime_shape(engine, tmp_path):
    a, b = f16(64, 512), f16(512, 64)
    c = np.zeros((64, 64), np.float32)
    runtime.run(SplitKWorkspace, a, b, 4, c, config=cfg(engine, enable_dep_gen=True, output_dir=str(tmp_path)))
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    edges = json.load(open(tmp_path / "dfx_outputs" / "deps.json"))["edges"]
    assert sorted(edges) == [[0, 4], [1, 4], [2, 4], [3, 4]], edges


# -- 4. split-K with atomic add -----------------------------------------------------------------

@pl.jit
def splitk_atomic(a: pl.Tensor, b: pl.Tensor, c: pl.InOut[pl.Tensor]):
    for s in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, s * 64], [64, 64], target_memory=pl.Mem.Mat)
            tb = pl.load(b, [s * 64, 0], [64, 64], target_memory=pl.Mem.Mat)
            c = pl.store(pl.matmul(ta, tb), [0, 0], c, atomic=pl.AtomicType.Add)
    return c


def test_splitk_atomic_add(engine):
    a, b = f16(64, 256), f16(256, 64)
    c = np.zeros((64, 64), np.float32)
    splitk_atomic(a, b, c, config=cfg(engine))
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


# -- 5. an MLP layer: gate/up matmuls, SiLU, elementwise mul, down matmul (bf16, fp32 acc) ----

def bf16(a):
    import torch
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(torch.bfloat16)


HID, INTER, MT = 64, 128, 32


@pl.jit
def mlp_layer(x: pl.Tensor, w_gate: pl.Tensor, w_up: pl.Tensor, w_down: pl.Tensor, y: pl.Out[pl.Tensor]):
    for m in pl.range(0, 96, MT):
        with pl.at(level=pl.Level.CORE_GROUP):
            xm = x[m:m + MT, :]
            g = pl.matmul(xm, w_gate, out_dtype=pl.FP32)
            u = pl.matmul(xm, w_up, out_dtype=pl.FP32)
            silu = pl.div(g, pl.adds(pl.exp(pl.neg(g)), 1.0))
            h = pl.cast(pl.mul(silu, u), pl.BF16)
            y[m:m + MT, :] = pl.matmul(h, w_down, out_dtype=pl.FP32)
    return y


def test_mlp_layer_bf16(engine, tmp_path):
    import torch
    x, wg, wu, wd = (bf16(RNG.standard_normal(s) / 4) for s in ((96, HID), (HID, INTER), (HID, INTER), (INTER, HID)))
    y = torch.zeros(96, HID)
    mlp_layer(x, wg, wu, wd, y, config=cfg(engine, enable_dep_gen=True, output_dir=str(tmp_path)))
    g, u = x.float() @ wg.float(), x.float() @ wu.float()
    h = (torch.nn.functional.silu(g) * u).to(torch.bfloat16)
    torch.testing.assert_close(y, h.float() @ wd.float(), rtol=2e-2, atol=2e-2)
    edges = json.load(open(tmp_path / "dfx_outputs" / "deps.json"))["edges"]
    assert edges == [], edges  # the row bands are disjoint


# -- 6. RMSNorm + matmul (fp16 in, fp32 out) ----------------------------------------------------

@pl.jit
def rmsnorm_matmul(x: pl.Tensor, gamma: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    for m in pl.range(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP):
            xf = pl.cast(x[m:m + 32, :], pl.FP32)
            ss = pl.row_sum(pl.mul(xf, xf))
            r = pl.rsqrt(pl.adds(pl.muls(ss, 1.0 / 128), 1e-6))
            xn = pl.col_expand_mul(pl.row_expand_mul(xf, r), gamma)
            y[m:m + 32, :] = pl.matmul(pl.cast(xn, pl.FP16), w, out_dtype=pl.FP32)
    return y


def test_rmsnorm_matmul_fp16(engine):
    x, w = f16(64, 128), f16(128, 64)
    gamma = RNG.uniform(0.5, 1.5, (1, 128)).astype(np.float32)
    y = np.zeros((64, 64), np.float32)
    rmsnorm_matmul(x, gamma, w, y, config=cfg(engine))
    xf = x.astype(np.float32)
    xn = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6) * gamma
    np.testing.assert_allclose(y, xn.astype(np.float16).astype(np.float32) @ w.astype(np.float32), rtol=1e-2, atol=1e-2)


# -- 7. ragged M: the last row band is shorter than the tile ------------------------------------

@pl.program
class RaggedGemm:
    @pl.function(type=pl.FunctionType.InCore)
    def band(self, a: pl.Tensor[[100, 128], pl.FP16], b: pl.Tensor[[128, 64], pl.FP16], bias: pl.Tensor[[1, 64], pl.FP32],
             m: pl.Scalar[pl.INDEX], rows: pl.Scalar[pl.INDEX],
             c: pl.InOut[pl.Tensor[[100, 64], pl.FP32]]) -> pl.Tensor[[100, 64], pl.FP32]:
        ta = pl.load(a, [m, 0], [32, 128], valid_shape=[rows, 128], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [128, 64], target_memory=pl.Mem.Mat)
        acc = pl.matmul(ta, tb)
        t = pl.col_expand_add(pl.move(acc, target_memory=pl.Mem.Vec), pl.load(bias, [0, 0], [1, 64]))
        t = pl.maxs(t, 0.0)
        c = pl.store(t, [m, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[100, 128], pl.FP16], b: pl.Tensor[[128, 64], pl.FP16], bias: pl.Tensor[[1, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[100, 64], pl.FP32]]) -> pl.Tensor[[100, 64], pl.FP32]:
        for m in pl.range(0, 100, 32):
            rows = pl.min(32, 100 - m)
            c = self.band(a, b, bias, m, rows, c)
        return c


def test_ragged_m_valid_shape(engine):
    a, b, bias = f16(100, 128), f16(128, 64), f32(1, 64)
    c = np.full((100, 64), 9.0, np.float32)
    runtime.run(RaggedGemm, a, b, bias, c, config=cfg(engine))
    np.testing.assert_allclose(c, np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias, 0), rtol=1e-3, atol=1e-3)


@pl.jit
def ragged_views(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for m in pl.range(0, 100, 32):
        with pl.at(level=pl.Level.CORE_GROUP):
            rows = pl.min(32, 100 - m)
            c[m:m + rows, :] = pl.matmul(a[m:m + rows, :], b, out_dtype=pl.FP32)
    return c


def test_ragged_m_views(engine):
    a, b = f16(100, 128), f16(128, 64)
    c = np.zeros((100, 64), np.float32)
    ragged_views(a, b, c, config=cfg(engine))
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


# -- 8. pl.dynamic M ----------------------------------------------------------------------------

DM = pl.dynamic("DM")


@pl.program
class DynamicM:
    @pl.function(type=pl.FunctionType.InCore)
    def band(self, a: pl.Tensor[[DM, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16], m: pl.Scalar[pl.INDEX],
             c: pl.InOut[pl.Tensor[[DM, 64], pl.FP32]]) -> pl.Tensor[[DM, 64], pl.FP32]:
        n = pl.tensor.dim(a, 0)
        rows = pl.min(32, n - m)
        ta = pl.load(a, [m, 0], [32, 64], valid_shape=[rows, 64], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        c = pl.store(pl.matmul(ta, tb), [m, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[DM, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
             c: pl.Out[pl.Tensor[[DM, 64], pl.FP32]]) -> pl.Tensor[[DM, 64], pl.FP32]:
        n = pl.tensor.dim(a, 0)
        for m in pl.range(0, n, 32):
            c = self.band(a, b, m, c)
        return c


@pytest.mark.parametrize("rows", [64, 75])
def test_dynamic_m(engine, rows):
    a, b = f16(rows, 64), f16(64, 64)
    c = np.zeros((rows, 64), np.float32)
    runtime.run(DynamicM, a, b, c, config=cfg(engine))
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


# -- 9. more GEMM forms: SPMD tiles, auto-tiled big matmul, b_trans views, narrow out_dtype ----

def ref(a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


@pl.jit
def gemm_spmd(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.spmd(4):
        i = pl.tile.get_block_idx()
        m = (i // 2) * 64
        n = (i % 2) * 64
        c[m:m + 64, n:n + 64] = pl.matmul(a[m:m + 64, :], b[:, n:n + 64], out_dtype=pl.FP32)
    return c


def test_gemm_spmd_tiles(engine):
    a, b = f16(128, 128), f16(128, 128)
    c = np.zeros((128, 128), np.float32)
    gemm_spmd(a, b, c, config=cfg(engine))
    np.testing.assert_allclose(c, ref(a, b), rtol=1e-3, atol=1e-3)


@pl.jit
def gemm_auto(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, b, out_dtype=pl.FP32)
    return c


def test_auto_tiled_matmul_larger_than_l0(engine):
    a, b = f16(256, 1024), f16(1024, 384)
    c = np.zeros((256, 384), np.float32)
    gemm_auto(a, b, c, config=cfg(engine))
    np.testing.assert_allclose(c, ref(a, b), rtol=1e-3, atol=1e-2)


@pl.jit
def gemm_btrans(a: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor]):
    for n in pl.range(0, 128, 64):
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:, n:n + 64] = pl.matmul(a, w[n:n + 64, :], out_dtype=pl.FP32, b_trans=True)
    return c


def test_b_trans_over_weight_row_views(engine):
    a, w = f16(64, 128), f16(128, 128)
    c = np.zeros((64, 128), np.float32)
    gemm_btrans(a, w, c, config=cfg(engine))
    np.testing.assert_allclose(c, ref(a, w.T), rtol=1e-3, atol=1e-3)


@pl.jit
def gemm_fp16_out(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, b, out_dtype=pl.FP16)
    return c


@pl.jit
def gemm_bf16_out(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, b, out_dtype=pl.BF16)
    return c


def test_tensor_matmul_narrow_out_dtype(engine):
    """out_dtype=FP16 / BF16 on a tensor matmul: accumulated in FP32 (over several K blocks
    here), rounded once at the end (before: 'out_dtype FP16 is not a cube result')."""
    import torch
    a, b = f16(64, 64), f16(64, 64)
    c = np.zeros((64, 64), np.float16)
    gemm_fp16_out(a, b, c, config=cfg(engine))
    # One rounding at the end, but the FP32 sums' order is the engine's (numpy's differs): a
    # sum next to an fp16 rounding boundary may land one fp16 ulp away.
    np.testing.assert_array_max_ulp(c, ref(a, b).astype(np.float16), maxulp=1)
    at = torch.randn(128, 1024).to(torch.bfloat16)
    bt = (torch.randn(1024, 256) / 16).to(torch.bfloat16)
    ct = torch.zeros(128, 256, dtype=torch.bfloat16)
    gemm_bf16_out(at, bt, ct, config=cfg(engine))
    torch.testing.assert_close(ct.float(), (at.float() @ bt.float()).to(torch.bfloat16).float(), rtol=1e-2, atol=1e-2)


@pl.jit
def gemm_bias_relu_fp16(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    for m in pl.range(0, 128, 64):
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.matmul(a[m:m + 64, :], b, out_dtype=pl.FP32)
            c[m:m + 64, :] = pl.cast(pl.maxs(pl.col_expand_add(acc, bias), 0.0), pl.FP16)
    return c


def test_bias_relu_epilogue_cast_fp16(engine):
    a, b, bias = f16(128, 128), f16(128, 64), f32(1, 64)
    c = np.zeros((128, 64), np.float16)
    gemm_bias_relu_fp16(a, b, bias, c, config=cfg(engine))
    np.testing.assert_allclose(c.astype(np.float32), np.maximum(ref(a, b) + bias, 0), rtol=2e-3, atol=2e-3)


# -- 10. an InCore kernel with an Acc buffer (init_cond form), launched per tile ---------------

@pl.jit.incore
def mm_tile(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    acc = pl.create_tensor([64, 64], dtype=pl.FP32)
    for k in pl.range(0, 256, 64):
        acc = pl.matmul_acc(acc, a[:, k:k + 64], b[k:k + 64, :], init_cond=(k == 0))
    c = pl.store(acc, [0, 0], c)
    return c


@pl.jit
def gemm_submit(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for m in pl.range(0, 128, 64):
        for n in pl.range(0, 128, 64):
            cv = c[m:m + 64, n:n + 64]
            cv, _ = pl.submit(mm_tile, a[m:m + 64, :], b[:, n:n + 64], cv)
    return c


@pl.jit
def gemm_call(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for m in pl.range(0, 128, 64):
        for n in pl.range(0, 128, 64):
            cv = c[m:m + 64, n:n + 64]
            cv = mm_tile(a[m:m + 64, :], b[:, n:n + 64], cv)
    return c


@pytest.mark.parametrize("form", [gemm_submit, gemm_call], ids=["submit", "call"])
def test_incore_acc_kernel_per_tile(engine, form, tmp_path):
    a, b = f16(128, 256), f16(256, 128)
    c = np.zeros((128, 128), np.float32)
    form(a, b, c, config=cfg(engine, enable_dep_gen=True, output_dir=str(tmp_path)))
    np.testing.assert_allclose(c, ref(a, b), rtol=1e-3, atol=1e-3)
    assert json.load(open(tmp_path / "dfx_outputs" / "deps.json"))["edges"] == []


@pl.jit
def gemm_scalar_offset(a: pl.Tensor, b: pl.Tensor, m0: pl.Scalar[pl.INT32], c: pl.Out[pl.Tensor]):
    off = pl.cast(m0, pl.INDEX)
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a[off:off + 64, :], b, out_dtype=pl.FP32)
    return c


def test_jit_scalar_int32_offset(engine):
    a, b = f16(128, 64), f16(64, 64)
    c = np.zeros((64, 64), np.float32)
    gemm_scalar_offset(a, b, 40, c, config=cfg(engine))
    np.testing.assert_allclose(c, ref(a[40:104], b), rtol=1e-3, atol=1e-3)


# -- 11. split-K with a tensor-level atomic assemble --------------------------------------------

@pl.jit
def splitk_assemble_atomic(a: pl.Tensor, b: pl.Tensor, c: pl.InOut[pl.Tensor]):
    for s in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            p = pl.matmul(a[:, s * 64:s * 64 + 64], b[s * 64:s * 64 + 64, :], out_dtype=pl.FP32)
            c = pl.assemble(c, p, [0, 0], atomic=pl.AtomicType.Add)
    return c


@pl.jit
def splitk_window_atomic(a: pl.Tensor, b: pl.Tensor, c: pl.InOut[pl.Tensor]):
    for s in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP):
            # a value larger than one block, added into a window of c block by block
            p = pl.matmul(a[:, s * 256:s * 256 + 256], b[s * 256:s * 256 + 256, :], out_dtype=pl.FP32)
            c = pl.assemble(c, p, [32, 64], atomic=pl.AtomicType.Add)
    return c


def test_splitk_tensor_level_atomic_assemble(engine):
    """pl.assemble(c, value, offs, atomic=pl.AtomicType.Add) of a tensor-level value in a
    kernel adds each block into c (before: 'atomic writes of a tensor-level value are not
    supported')."""
    a, b = f16(64, 256), f16(256, 64)
    c = np.ones((64, 64), np.float32)
    splitk_assemble_atomic(a, b, c, config=cfg(engine))
    np.testing.assert_allclose(c, 1 + ref(a, b), rtol=1e-3, atol=1e-3)
    a, b = f16(256, 512), f16(512, 384)
    c = np.full((320, 512), 2.0, np.float32)
    splitk_window_atomic(a, b, c, config=cfg(engine))
    want = np.full((320, 512), 2.0, np.float32)
    want[32:288, 64:448] += ref(a, b)
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-2)


@pl.jit
def matmul_bias_tiles(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        tbias = pl.load(bias, [0, 0], [1, 64], target_memory=pl.Mem.Mat)
        c = pl.store(pl.matmul_bias(ta, tb, tbias), [0, 0], c)
    return c


def test_matmul_bias_epilogue_on_the_cube(engine):
    a, b, bias = f16(64, 64), f16(64, 64), f32(1, 64)
    c = np.zeros((64, 64), np.float32)
    matmul_bias_tiles(a, b, bias, c, config=cfg(engine))
    np.testing.assert_allclose(c, ref(a, b) + bias, rtol=1e-3, atol=1e-3)


# -- 12. the native engine's FP16 / BF16 matmul fast path gives the reference's bits ------------

@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_half_matmul_native_fast_path(dtype):
    """FP16 / BF16 operands into an FP32 Acc (TMATMUL, TMATMUL_ACC over K blocks) take the
    native engine's half fast path (before: the reference library, ~250x slower). Where it widens
    the operands into the FP32 kernel: the bits of the FP32 program on the widened inputs
    (products of halves are exact in FP32); where BF16 takes vdpbf16ps (AVX512_BF16, pairs of k
    added in another order): that result up to summation order. And the sim engine's result up
    to summation order (as for FP32 operands)."""
    import torch
    tdt = torch.float16 if dtype == "fp16" else torch.bfloat16
    a = torch.from_numpy(RNG.standard_normal((128, 256)).astype(np.float32)).to(tdt)
    b = torch.from_numpy(RNG.standard_normal((256, 128)).astype(np.float32) / 8).to(tdt)
    half, wide, sim = torch.zeros(128, 128), torch.zeros(128, 128), torch.zeros(128, 128)
    gemm_call(a, b, half, config=cfg("native", verify="basic"))  # 64-wide K steps whatever the dtype
    gemm_call(a.float(), b.float(), wide, config=cfg("native", verify="basic"))
    gemm_call(a, b, sim, config=cfg("sim", verify="basic"))
    from pypto import _core
    if "widen" in _core.native_matmul_paths()[dtype.upper()]:
        torch.testing.assert_close(half, wide, rtol=0, atol=0)
    else:
        torch.testing.assert_close(half, wide, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(half, sim, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(half, a.float() @ b.float(), rtol=1e-4, atol=1e-3)

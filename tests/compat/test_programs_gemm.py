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
                c[m:m + TM, n:n + TN] = pl.matmul(a[m:m + TM, :], b[:, n:n + TN])
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
            c[m:m + rows, :] = pl.matmul(a[m:m + rows, :], b)
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

"""One LLaMA decoder layer at a small size (32 tokens, hidden 128, 2 heads of 64, FFN 256):

    h   = x + Wo . attention(rope(RMSNorm(x) Wq), rope(RMSNorm(x) Wk), RMSNorm(x) Wv)   (causal)
    out = h + W2 . (silu(RMSNorm(h) W1) * RMSNorm(h) W3)                                (SwiGLU)

as a graph of tasks connected by pl.create_tensor intermediates. The projections and the
residual/SwiGLU elementwise work are written at the tensor level (`y[:] = pl.matmul(x, w)`,
tiled by the compiler); RMSNorm, RoPE (rotate-half form, cos/sin tables) and attention
are tile-level kernels. Attention runs one task per head (they write disjoint columns, so
the runtime runs them concurrently); the causal mask is an additive input.

Run: python examples/models/02_llama_layer.py   (prints OK)
"""

import math
import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

T, H, NH, HD, F = 32, 128, 2, 64, 256
HALF = HD // 2
EPS = 1e-6
SCALE = 1.0 / math.sqrt(HD)
Mat, Left, Right, Vec = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Vec


@pl.jit.incore
def rmsnorm(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [T, H])
    inv_rms = pl.rsqrt(pl.add(pl.mul(pl.row_sum(pl.mul(t, t)), 1.0 / H), EPS))
    y = pl.store(pl.col_expand_mul(pl.row_expand_mul(t, inv_rms), pl.load(w, [0, 0], [1, H])), [0, 0], y)
    return y


@pl.jit.incore
def linear(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    y[:] = pl.matmul(x, w)
    return y


@pl.jit.incore
def rope(x: pl.Tensor, cos: pl.Tensor, sin: pl.Tensor, y: pl.Out[pl.Tensor]):
    c = pl.load(cos, [0, 0], [T, HALF])
    s = pl.load(sin, [0, 0], [T, HALF])
    for h in pl.unroll(NH):
        x1 = pl.load(x, [0, h * HD], [T, HALF])
        x2 = pl.load(x, [0, h * HD + HALF], [T, HALF])
        y = pl.store(pl.sub(pl.mul(x1, c), pl.mul(x2, s)), [0, h * HD], y)
        y = pl.store(pl.add(pl.mul(x2, c), pl.mul(x1, s)), [0, h * HD + HALF], y)
    return y


@pl.jit.incore
def attention(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, mask: pl.Tensor, p_scratch: pl.Out[pl.Tensor],
              o: pl.Out[pl.Tensor], h: pl.Scalar[pl.INDEX]):
    q_left = pl.move(pl.load(q, [0, h * HD], [T, HD], target_memory=Mat), target_memory=Left)
    k_right = pl.move(pl.transpose_view(pl.load(k, [0, h * HD], [T, HD], target_memory=Mat)), target_memory=Right)
    s = pl.add(pl.mul(pl.move(pl.matmul(q_left, k_right), target_memory=Vec), SCALE), pl.load(mask, [0, 0], [T, T]))
    p = pl.row_expand_expdif(s, pl.row_max(s))
    p = pl.row_expand_div(p, pl.row_sum(p))
    p_scratch = pl.store(p, [0, h * T], p_scratch)  # P reaches the cube through global memory
    p_left = pl.move(pl.load(p_scratch, [0, h * T], [T, T], target_memory=Mat), target_memory=Left)
    v_right = pl.move(pl.load(v, [0, h * HD], [T, HD], target_memory=Mat), target_memory=Right)
    o = pl.store(pl.matmul(p_left, v_right), [0, h * HD], o)
    return o


@pl.jit.incore
def residual(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    y[:] = pl.add(a, b)
    return y


@pl.jit.incore
def swiglu(g: pl.Tensor, u: pl.Tensor, y: pl.Out[pl.Tensor]):
    y[:] = pl.mul(pl.div(g, pl.add(pl.exp(pl.neg(g)), 1.0)), u)  # silu(g) * u
    return y


@pl.jit
def llama_layer(x: pl.Tensor, attn_norm: pl.Tensor, wq: pl.Tensor, wk: pl.Tensor, wv: pl.Tensor, wo: pl.Tensor,
                ffn_norm: pl.Tensor, w1: pl.Tensor, w3: pl.Tensor, w2: pl.Tensor, cos: pl.Tensor, sin: pl.Tensor,
                mask: pl.Tensor, out: pl.Out[pl.Tensor]):
    xn = rmsnorm(x, attn_norm, pl.create_tensor([T, H], dtype=pl.FP32))
    q = linear(xn, wq, pl.create_tensor([T, H], dtype=pl.FP32))
    k = linear(xn, wk, pl.create_tensor([T, H], dtype=pl.FP32))
    v = linear(xn, wv, pl.create_tensor([T, H], dtype=pl.FP32))
    q = rope(q, cos, sin, pl.create_tensor([T, H], dtype=pl.FP32))
    k = rope(k, cos, sin, pl.create_tensor([T, H], dtype=pl.FP32))
    p_scratch = pl.create_tensor([T, NH * T], dtype=pl.FP32)
    attn = pl.create_tensor([T, H], dtype=pl.FP32)
    for h in pl.range(NH):
        attn = attention(q, k, v, mask, p_scratch, attn, h)
    hidden = residual(x, linear(attn, wo, pl.create_tensor([T, H], dtype=pl.FP32)), pl.create_tensor([T, H], dtype=pl.FP32))
    hn = rmsnorm(hidden, ffn_norm, pl.create_tensor([T, H], dtype=pl.FP32))
    gate = linear(hn, w1, pl.create_tensor([T, F], dtype=pl.FP32))
    up = linear(hn, w3, pl.create_tensor([T, F], dtype=pl.FP32))
    act = swiglu(gate, up, pl.create_tensor([T, F], dtype=pl.FP32))
    out = residual(hidden, linear(act, w2, pl.create_tensor([T, H], dtype=pl.FP32)), out)
    return out


def make_weights(rng):
    w = lambda *shape: (rng.standard_normal(shape) / math.sqrt(shape[0])).astype(np.float32)
    inv_freq = 1.0 / (10000.0 ** (np.arange(HALF) / HALF))
    angles = np.arange(T)[:, None] * inv_freq[None, :]
    mask = np.triu(np.full((T, T), -1e30, np.float32), k=1)
    return dict(attn_norm=(1 + 0.1 * rng.standard_normal((1, H))).astype(np.float32), wq=w(H, H), wk=w(H, H),
                wv=w(H, H), wo=w(H, H), ffn_norm=(1 + 0.1 * rng.standard_normal((1, H))).astype(np.float32),
                w1=w(H, F), w3=w(H, F), w2=w(F, H), cos=np.cos(angles).astype(np.float32),
                sin=np.sin(angles).astype(np.float32), mask=mask)


def reference_torch(x, p):
    """The layer in plain PyTorch (rotate-half RoPE, causal SDPA, SwiGLU)."""
    import torch
    import torch.nn.functional as F_

    def rms(t, g):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + EPS) * g

    def rope_(t):
        t = t.view(T, NH, HD)
        c, s = p["cos"][:, None, :], p["sin"][:, None, :]
        x1, x2 = t[..., :HALF], t[..., HALF:]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)

    xn = rms(x, p["attn_norm"])
    q, k, v = rope_(xn @ p["wq"]), rope_(xn @ p["wk"]), (xn @ p["wv"]).view(T, NH, HD)
    attn = F_.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True)
    h = x + attn.transpose(0, 1).reshape(T, H) @ p["wo"]
    hn = rms(h, p["ffn_norm"])
    return h + (F_.silu(hn @ p["w1"]) * (hn @ p["w3"])) @ p["w2"]


def reference_numpy(x, p):
    def rms(t, g):
        return t / np.sqrt((t * t).mean(-1, keepdims=True) + EPS) * g

    def rope_(t):
        out = t.copy()
        for h in range(NH):
            x1, x2 = t[:, h * HD:h * HD + HALF], t[:, h * HD + HALF:(h + 1) * HD]
            out[:, h * HD:h * HD + HALF] = x1 * p["cos"] - x2 * p["sin"]
            out[:, h * HD + HALF:(h + 1) * HD] = x2 * p["cos"] + x1 * p["sin"]
        return out

    xn = rms(x, p["attn_norm"])
    q, k, v = rope_(xn @ p["wq"]), rope_(xn @ p["wk"]), xn @ p["wv"]
    attn = np.zeros_like(x)
    for h in range(NH):
        cols = slice(h * HD, (h + 1) * HD)
        s = q[:, cols] @ k[:, cols].T * SCALE + p["mask"]
        e = np.exp(s - s.max(-1, keepdims=True))
        attn[:, cols] = (e / e.sum(-1, keepdims=True)) @ v[:, cols]
    h = x + attn @ p["wo"]
    hn = rms(h, p["ffn_norm"])
    g = hn @ p["w1"]
    return h + (g / (1 + np.exp(-g)) * (hn @ p["w3"])) @ p["w2"]


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(31)
    x = rng.standard_normal((T, H), dtype=np.float32)
    params = make_weights(rng)
    names = ["attn_norm", "wq", "wk", "wv", "wo", "ffn_norm", "w1", "w3", "w2", "cos", "sin", "mask"]
    if backend == "torch":
        import torch

        xt = torch.from_numpy(x)
        pt = {n: torch.from_numpy(a) for n, a in params.items()}
        out = torch.zeros(T, H)
        llama_layer(xt, *(pt[n] for n in names), out, config=config or RunConfig())
        torch.testing.assert_close(out, reference_torch(xt, pt), rtol=1e-4, atol=1e-4)
    else:
        out = np.zeros((T, H), np.float32)
        llama_layer(x, *(params[n] for n in names), out, config=config or RunConfig())
        np.testing.assert_allclose(out, reference_numpy(x, params), rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

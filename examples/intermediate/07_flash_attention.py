"""Flash attention for one head, softmax(Q K^T / sqrt(D)) V with Q: 64x64, K, V: 256x64, at
tile level: the KV sequence is walked in 64-row blocks with the online softmax, whose running
row max m, row sum l and output accumulator o are loop-carried tiles. Per block the cube
computes S = Q K^T (K^T through pl.transpose_view) and P V; the vector core rescales the running state by
exp(m_old - m_new) (the compiler copies m_new before it becomes the next m, since m is
still read after m_new is computed). P goes to the cube through a scratch tensor in global memory.

Run: python examples/intermediate/07_flash_attention.py   (prints OK)
"""

import math
import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

SQ, SKV, D, B = 64, 256, 64, 64
SCALE = 1.0 / math.sqrt(D)


@pl.jit
def flash_attention(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
    p_scratch = pl.create_tensor([SQ, B], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        q_left = pl.move(pl.load(q, [0, 0], [SQ, D], target_memory=pl.MemorySpace.Mat),
                         target_memory=pl.MemorySpace.Left)
        row_max = pl.full([SQ, 1], dtype=pl.FP32, value=-1e30)
        row_sum = pl.full([SQ, 1], dtype=pl.FP32, value=0.0)
        acc = pl.full([SQ, D], dtype=pl.FP32, value=0.0)
        for j in pl.range(SKV // B):
            k_t = pl.transpose_view(pl.load(k, [j * B, 0], [B, D], target_memory=pl.MemorySpace.Mat))
            k_right = pl.move(k_t, target_memory=pl.MemorySpace.Right)
            s = pl.mul(pl.move(pl.matmul(q_left, k_right), target_memory=pl.MemorySpace.Vec), SCALE)
            new_max = pl.maximum(row_max, pl.row_max(s))
            p = pl.row_expand_expdif(s, new_max)
            alpha = pl.exp(pl.sub(row_max, new_max))
            row_sum = pl.add(pl.mul(row_sum, alpha), pl.row_sum(p))
            p_scratch = pl.store(p, [0, 0], p_scratch)
            p_left = pl.move(pl.load(p_scratch, [0, 0], [SQ, B], target_memory=pl.MemorySpace.Mat),
                             target_memory=pl.MemorySpace.Left)
            v_right = pl.move(pl.load(v, [j * B, 0], [B, D], target_memory=pl.MemorySpace.Mat),
                              target_memory=pl.MemorySpace.Right)
            pv = pl.move(pl.matmul(p_left, v_right), target_memory=pl.MemorySpace.Vec)
            acc = pl.add(pl.row_expand_mul(acc, alpha), pv)
            row_max = new_max
        o = pl.store(pl.row_expand_div(acc, row_sum), [0, 0], o)
    return o


def reference(q, k, v):
    s = q @ k.T * SCALE
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(15)
    q, k, v = (rng.standard_normal((n, D), dtype=np.float32) for n in (SQ, SKV, SKV))
    if backend == "torch":
        import torch
        import torch.nn.functional as F

        qt, kt, vt = (torch.from_numpy(a) for a in (q, k, v))
        o = torch.zeros(SQ, D)
        flash_attention(qt, kt, vt, o, config=config or RunConfig())
        torch.testing.assert_close(o, F.scaled_dot_product_attention(qt, kt, vt), rtol=1e-4, atol=1e-4)
    else:
        o = np.zeros((SQ, D), dtype=np.float32)
        flash_attention(q, k, v, o, config=config or RunConfig())
        np.testing.assert_allclose(o, reference(q, k, v), rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

"""A feed-forward block y = gelu(x @ w1) @ w2 as three tasks: an up-projection on the
cube, a GELU on a vector core and a down-projection on the cube. The intermediates are
global tensors made with pl.create_tensor; the runtime orders the tasks by which tensors
each call reads and writes.

Run: python examples/models/01_ffn.py   (prints OK)
"""

import math
import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

TOKENS, HIDDEN, FFN = 64, 64, 128
GELU_SCALE = -2.0 * math.sqrt(2.0 / math.pi)


@pl.jit.incore
def up_proj(x: pl.Tensor, w: pl.Tensor, h: pl.Out[pl.Tensor]):
    tx = pl.load(x, [0, 0], [TOKENS, HIDDEN], target_memory=pl.MemorySpace.Mat)
    tw = pl.load(w, [0, 0], [HIDDEN, FFN], target_memory=pl.MemorySpace.Mat)
    acc = pl.matmul(
        pl.move(tx, target_memory=pl.MemorySpace.Left),
        pl.move(tw, target_memory=pl.MemorySpace.Right),
    )
    h = pl.store(acc, [0, 0], h)
    return h


@pl.jit.incore
def gelu(h: pl.Tensor, a: pl.Out[pl.Tensor]):
    t = pl.load(h, [0, 0], [TOKENS, FFN])
    inner = pl.mul(t, pl.add(pl.mul(pl.mul(t, t), 0.044715), 1.0))
    g = pl.div(t, pl.add(pl.exp(pl.mul(inner, GELU_SCALE)), 1.0))
    a = pl.store(g, [0, 0], a)
    return a


@pl.jit.incore
def down_proj(a: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    ta = pl.load(a, [0, 0], [TOKENS, FFN], target_memory=pl.MemorySpace.Mat)
    tw = pl.load(w, [0, 0], [FFN, HIDDEN], target_memory=pl.MemorySpace.Mat)
    acc = pl.matmul(
        pl.move(ta, target_memory=pl.MemorySpace.Left),
        pl.move(tw, target_memory=pl.MemorySpace.Right),
    )
    y = pl.store(acc, [0, 0], y)
    return y


@pl.jit
def ffn(x: pl.Tensor, w1: pl.Tensor, w2: pl.Tensor, y: pl.Out[pl.Tensor]):
    h = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    h = up_proj(x, w1, h)
    a = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    a = gelu(h, a)
    y = down_proj(a, w2, y)
    return y


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(7)
    x = rng.standard_normal((TOKENS, HIDDEN), dtype=np.float32)
    w1 = rng.standard_normal((HIDDEN, FFN), dtype=np.float32) / 8
    w2 = rng.standard_normal((FFN, HIDDEN), dtype=np.float32) / 8
    expected = F.gelu(
        torch.from_numpy(x) @ torch.from_numpy(w1), approximate="tanh"
    ) @ torch.from_numpy(w2)
    if backend == "torch":
        y = torch.zeros(TOKENS, HIDDEN)
        ffn(*(torch.from_numpy(v) for v in (x, w1, w2)), y, config=config or RunConfig())
        torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-4)
    else:
        y = np.zeros((TOKENS, HIDDEN), dtype=np.float32)
        ffn(x, w1, w2, y, config=config or RunConfig())
        np.testing.assert_allclose(y, expected.numpy(), rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

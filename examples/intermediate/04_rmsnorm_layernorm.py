"""RMSNorm and LayerNorm over the last dimension of a 128x256 fp32 matrix, 32 rows per step:
row reductions (row_sum), per-row broadcasts (row_expand_*) and the per-column weights
gamma/beta as 1x256 tiles (col_expand_*).

Run: python examples/intermediate/04_rmsnorm_layernorm.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

ROWS, DIM, BLOCK = 128, 256, 32
EPS = 1e-6


@pl.jit
def rms_norm(x: pl.Tensor, gamma: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g = pl.load(gamma, [0, 0], [1, DIM])
        for i in pl.range(ROWS // BLOCK):
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, DIM])
            mean_sq = pl.mul(pl.row_sum(pl.mul(t, t)), 1.0 / DIM)
            inv_rms = pl.rsqrt(pl.add(mean_sq, EPS))
            out = pl.col_expand_mul(pl.row_expand_mul(t, inv_rms), g)
            y = pl.store(out, [i * BLOCK, 0], y)
    return y


@pl.jit
def layer_norm(x: pl.Tensor, gamma: pl.Tensor, beta: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g = pl.load(gamma, [0, 0], [1, DIM])
        b = pl.load(beta, [0, 0], [1, DIM])
        for i in pl.range(ROWS // BLOCK):
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, DIM])
            mean = pl.mul(pl.row_sum(t), 1.0 / DIM)
            centered = pl.row_expand_sub(t, mean)
            var = pl.mul(pl.row_sum(pl.mul(centered, centered)), 1.0 / DIM)
            inv_std = pl.rsqrt(pl.add(var, EPS))
            out = pl.col_expand_add(pl.col_expand_mul(pl.row_expand_mul(centered, inv_std), g), b)
            y = pl.store(out, [i * BLOCK, 0], y)
    return y


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(12)
    x = rng.standard_normal((ROWS, DIM), dtype=np.float32) * 3 + 1
    gamma = rng.standard_normal((1, DIM), dtype=np.float32)
    beta = rng.standard_normal((1, DIM), dtype=np.float32)
    cfg = config or RunConfig()
    if backend == "torch":
        import torch
        import torch.nn.functional as F

        xt, gt, bt = (torch.from_numpy(v) for v in (x, gamma, beta))
        y = torch.zeros(ROWS, DIM)
        rms_norm(xt, gt, y, config=cfg)
        want = xt * torch.rsqrt(xt.pow(2).mean(-1, keepdim=True) + EPS) * gt
        torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)
        layer_norm(xt, gt, bt, y, config=cfg)
        want = F.layer_norm(xt, (DIM,), gt[0], bt[0], eps=EPS)
        torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)
    else:
        y = np.zeros((ROWS, DIM), dtype=np.float32)
        rms_norm(x, gamma, y, config=cfg)
        want = x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * gamma
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
        layer_norm(x, gamma, beta, y, config=cfg)
        mu = x.mean(-1, keepdims=True)
        want = (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + EPS) * gamma + beta
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

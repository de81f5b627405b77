"""Split-K GEMM over tensor slices, written as PyPTO writes it: Y = relu(X @ W + bias) with
X[128x512], W[512x128], in 64x64 output tiles. Each output tile takes the row band
`x[mi*T : mi*T + T, :]` and the column band `w[:, ni*T : ni*T + T]` as tensor views, and
walks K in 64-wide slices of those views:

    acc = pl.matmul(rows[:, 0:TK], cols[0:TK, :])
    for k in pl.range(TK, K, TK):
        acc = pl.matmul_acc(acc, rows[:, k:k + TK], cols[k:k + TK, :])

Inside the kernel the views are folded away by the compiler (LowerTensorOps): each slice is
a load of X or W at the composed offsets straight into Mat, the carried `acc` is one Acc
tile, and the epilogue's bias slice is a load of `bias` at the band's column offset. A second
kernel runs the same product with `init_cond=(k == 0)` (PyPTO's first-step form).

Run: python examples/advanced/02_splitk_slices.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N, T, TK = 128, 512, 128, 64, 64


@pl.jit
def gemm_splitk(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for mi in pl.range(M // T):
            for ni in pl.range(N // T):
                rows = x[mi * T:mi * T + T, :]  # [T, K] view of x
                cols = w[:, ni * T:ni * T + T]  # [K, T] view of w
                acc = pl.matmul(rows[:, 0:TK], cols[0:TK, :])
                for k in pl.range(TK, K, TK):
                    acc = pl.matmul_acc(acc, rows[:, k:k + TK], cols[k:k + TK, :])
                y[mi * T:mi * T + T, ni * T:ni * T + T] = pl.relu(pl.col_expand_add(acc, bias[:, ni * T:ni * T + T]))
    return y


@pl.jit
def gemm_splitk_init_cond(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for mi in pl.range(M // T):
            band = x[mi * T:mi * T + T, :]
            acc = pl.matmul(band[:, 0:TK], w[0:TK, :])
            for k in pl.range(0, K, TK):
                acc = pl.matmul_acc(acc, band[:, k:k + TK], w[k:k + TK, :], init_cond=(k == 0))
            y[mi * T:mi * T + T, :] = acc
    return y


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(23)
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32)
    bias = rng.standard_normal((1, N), dtype=np.float32)
    cfg = config or RunConfig()
    if backend == "torch":
        import torch

        xt, wt, bt = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
        y, y2 = torch.zeros(M, N), torch.zeros(M, N)
        gemm_splitk(xt, wt, bt, y, config=cfg)
        gemm_splitk_init_cond(xt, wt, y2, config=cfg)
        torch.testing.assert_close(y, torch.relu(xt @ wt + bt), rtol=1e-4, atol=1e-3)
        torch.testing.assert_close(y2, xt @ wt, rtol=1e-4, atol=1e-3)
    else:
        y, y2 = np.zeros((M, N), np.float32), np.zeros((M, N), np.float32)
        gemm_splitk(x, w, bias, y, config=cfg)
        gemm_splitk_init_cond(x, w, y2, config=cfg)
        np.testing.assert_allclose(y, np.maximum(x @ w + bias, 0), rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(y2, x @ w, rtol=1e-4, atol=1e-3)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

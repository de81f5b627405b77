"""Fused linear layer y = relu(x @ w + bias) in one kernel: the cube computes each 64x64
Acc tile (K = 128 in two chunks), pl.move brings it to the vector core's UB, where the bias
row is broadcast over the columns (col_expand_add) and ReLU is applied before the store.

Run: python examples/intermediate/05_fused_linear.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N, T = 128, 128, 128, 64


@pl.jit
def fused_linear(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for mi in pl.range(M // T):
            for ni in pl.range(N // T):
                acc = pl.matmul(
                    pl.move(pl.load(x, [mi * T, 0], [T, T], target_memory=pl.MemorySpace.Mat),
                            target_memory=pl.MemorySpace.Left),
                    pl.move(pl.load(w, [0, ni * T], [T, T], target_memory=pl.MemorySpace.Mat),
                            target_memory=pl.MemorySpace.Right))
                for ki in pl.range(1, K // T):
                    acc = pl.matmul_acc(
                        acc,
                        pl.move(pl.load(x, [mi * T, ki * T], [T, T], target_memory=pl.MemorySpace.Mat),
                                target_memory=pl.MemorySpace.Left),
                        pl.move(pl.load(w, [ki * T, ni * T], [T, T], target_memory=pl.MemorySpace.Mat),
                                target_memory=pl.MemorySpace.Right))
                h = pl.move(acc, target_memory=pl.MemorySpace.Vec)
                b = pl.load(bias, [0, ni * T], [1, T])
                y = pl.store(pl.relu(pl.col_expand_add(h, b)), [mi * T, ni * T], y)
    return y


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(13)
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32) / 8
    bias = rng.standard_normal((1, N), dtype=np.float32)
    if backend == "torch":
        import torch

        xt, wt, bt = (torch.from_numpy(v) for v in (x, w, bias))
        y = torch.zeros(M, N)
        fused_linear(xt, wt, bt, y, config=config or RunConfig())
        torch.testing.assert_close(y, torch.relu(torch.nn.functional.linear(xt, wt.T, bt[0])), rtol=1e-4, atol=1e-4)
    else:
        y = np.zeros((M, N), dtype=np.float32)
        fused_linear(x, w, bias, y, config=config or RunConfig())
        np.testing.assert_allclose(y, np.maximum(x @ w + bias, 0), rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

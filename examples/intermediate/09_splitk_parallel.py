"""Split-K matmul with pl.parallel: C[64x64] = A[64x512] @ B[512x64]. Each of the 4
parallel iterations is its own cube task that multiplies one 128-wide K slice (two
matmul/matmul_acc steps) and stores its partial product into a workspace; one vector task
then sums the 4 partials. The runtime orders the reduction after all partial tasks.

Run: python examples/intermediate/09_splitk_parallel.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N, SPLITS, T = 64, 512, 64, 4, 64
KS = K // SPLITS


@pl.jit
def splitk_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    partial = pl.create_tensor([SPLITS * M, N], dtype=pl.FP32)
    for s in pl.parallel(SPLITS):
        with pl.at(level=pl.Level.AIC):
            acc = pl.matmul(
                pl.move(pl.load(a, [0, s * KS], [M, T], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left),
                pl.move(pl.load(b, [s * KS, 0], [T, N], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right))
            for ki in pl.range(1, KS // T):
                acc = pl.matmul_acc(
                    acc,
                    pl.move(pl.load(a, [0, s * KS + ki * T], [M, T], target_memory=pl.MemorySpace.Mat),
                            target_memory=pl.MemorySpace.Left),
                    pl.move(pl.load(b, [s * KS + ki * T, 0], [T, N], target_memory=pl.MemorySpace.Mat),
                            target_memory=pl.MemorySpace.Right))
            partial = pl.store(acc, [s * M, 0], partial)
    with pl.at(level=pl.Level.AIV):
        total = pl.load(partial, [0, 0], [M, N])
        for s in pl.range(1, SPLITS):
            total = pl.add(total, pl.load(partial, [s * M, 0], [M, N]))
        c = pl.store(total, [0, 0], c)
    return c


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(17)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    if backend == "torch":
        import torch

        at, bt, c = torch.from_numpy(a), torch.from_numpy(b), torch.zeros(M, N)
        splitk_matmul(at, bt, c, config=config or RunConfig())
        torch.testing.assert_close(c, at @ bt, rtol=1e-4, atol=1e-3)
    else:
        c = np.zeros((M, N), dtype=np.float32)
        splitk_matmul(a, b, c, config=config or RunConfig())
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

"""K-split matmul C[128x128] = A[128x256] @ B[256x128] in 64x64 output tiles: for each output
tile the K dimension is walked in 64-wide chunks, the first chunk with pl.matmul and the rest
with pl.matmul_acc into the loop-carried Acc (L0C) tile. Both loops are software-pipelined
(`pl.pipeline(..., stage=2)`), so the next chunk's loads overlap the cube's work.

Run: python examples/intermediate/03_matmul_ksplit.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N, T = 128, 256, 128, 64


@pl.jit
def matmul_ksplit(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for mi in pl.range(M // T):
            for ni in pl.pipeline(N // T, stage=2):
                ta = pl.load(a, [mi * T, 0], [T, T], target_memory=pl.MemorySpace.Mat)
                tb = pl.load(b, [0, ni * T], [T, T], target_memory=pl.MemorySpace.Mat)
                acc = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left),
                                pl.move(tb, target_memory=pl.MemorySpace.Right))
                for ki in pl.pipeline(1, K // T, stage=2):
                    ta = pl.load(a, [mi * T, ki * T], [T, T], target_memory=pl.MemorySpace.Mat)
                    tb = pl.load(b, [ki * T, ni * T], [T, T], target_memory=pl.MemorySpace.Mat)
                    acc = pl.matmul_acc(acc, pl.move(ta, target_memory=pl.MemorySpace.Left),
                                        pl.move(tb, target_memory=pl.MemorySpace.Right))
                c = pl.store(acc, [mi * T, ni * T], c)
    return c


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(11)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    if backend == "torch":
        import torch

        at, bt, c = torch.from_numpy(a), torch.from_numpy(b), torch.zeros(M, N)
        matmul_ksplit(at, bt, c, config=config or RunConfig())
        torch.testing.assert_close(c, at @ bt, rtol=1e-4, atol=1e-3)
    else:
        c = np.zeros((M, N), dtype=np.float32)
        matmul_ksplit(a, b, c, config=config or RunConfig())
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

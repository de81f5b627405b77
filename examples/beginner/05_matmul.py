"""Matmul on the cube core: 64x64 fp32 operands travel Mat (L1) -> Left/Right (L0A/L0B),
the cube writes the Acc (L0C) tile, which is stored to global memory.

Run: python examples/beginner/05_matmul.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        left = pl.move(ta, target_memory=pl.MemorySpace.Left)
        right = pl.move(tb, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(left, right)
        c = pl.store(acc, [0, 0], c)
    return c


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 64), dtype=np.float32)
    b = rng.standard_normal((64, 64), dtype=np.float32)
    if backend == "torch":
        import torch

        at, bt, c = torch.from_numpy(a), torch.from_numpy(b), torch.zeros(64, 64)
        matmul(at, bt, c, config=config or RunConfig())
        torch.testing.assert_close(c, at @ bt, rtol=1e-4, atol=1e-4)
    else:
        c = np.zeros((64, 64), dtype=np.float32)
        matmul(a, b, c, config=config or RunConfig())
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

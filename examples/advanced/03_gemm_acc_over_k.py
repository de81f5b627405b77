"""GEMM C[256x256] (fp32) = A[256x512] @ B[512x256] (fp16) with an in-kernel accumulator, in
PyPTO's idiom: for each 128x128 output tile `acc = pl.create_tensor(...)` makes an on-chip
buffer; the K loop starts it with pl.matmul in its first iteration and adds every further
64-wide chunk with pl.matmul_acc. A buffer that a matmul accumulates lands in Acc (L0C) and
is updated in place: the two arms of the `if` are exclusive, so the carried tile is never
copied. The operands go DDR -> Mat (L1) and the compiler moves them to Left/Right.

Run: python examples/advanced/03_gemm_acc_over_k.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N = 256, 512, 256
TM, TN, BK = 128, 128, 64


@pl.jit
def gemm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for mi in pl.range(M // TM):
            for ni in pl.range(N // TN):
                acc = pl.create_tensor([TM, TN], dtype=pl.FP32)
                for k in pl.range(K // BK):
                    ta = pl.load(a, [mi * TM, k * BK], [TM, BK], target_memory=pl.Mem.Mat)
                    tb = pl.load(b, [k * BK, ni * TN], [BK, TN], target_memory=pl.Mem.Mat)
                    if k == 0:
                        acc = pl.matmul(ta, tb)
                    else:
                        acc = pl.matmul_acc(acc, ta, tb)
                c = pl.store(acc, [mi * TM, ni * TN], c)
    return c


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(21)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    if backend == "torch":
        import torch

        at, bt, c = torch.from_numpy(a), torch.from_numpy(b), torch.zeros(M, N)
        gemm(at, bt, c, config=config or RunConfig())
        torch.testing.assert_close(c, at.float() @ bt.float(), rtol=1e-4, atol=1e-3)
    else:
        c = np.zeros((M, N), dtype=np.float32)
        gemm(a, b, c, config=config or RunConfig())
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

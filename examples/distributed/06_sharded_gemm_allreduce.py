"""Sharded GEMM with allreduce: C = A @ B with K split over the ranks. Rank r multiplies its
K-slice A[:, r] @ B[r, :] into its window, pld.tensor.allreduce sums the partial products
over the ranks, and every rank writes the full C (also shown: Max over the ranks).

Run: python examples/distributed/06_sharded_gemm_allreduce.py -n 2   (prints OK)
"""

import sys

import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld
from pypto.runtime.distributed_runner import example_config

M, KS, N = 16, 32, 64  # KS: the K extent of one rank's shard
MAXR = 8


@pl.jit
def gemm_shard(a: pl.Tensor, b: pl.Tensor, part: pld.DistributedTensor[[M, N], pl.FP32],
               sig: pld.DistributedTensor[[MAXR], pl.INT32], c: pl.Out[pl.Tensor], cmax: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [M, KS], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [KS, N], target_memory=pl.MemorySpace.Mat)
        left = pl.move(ta, target_memory=pl.MemorySpace.Left)
        right = pl.move(tb, target_memory=pl.MemorySpace.Right)
        pl.store(pl.matmul(left, right), [0, 0], part)
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.tensor.allreduce(part, sig, op=pld.ReduceOp.Sum)
        pl.store(pl.load(part, [0, 0], [M, N]), [0, 0], c)
        pld.tensor.allreduce(part, sig, op=pld.ReduceOp.Max)  # of equal sums: the sum again
        pl.store(pl.load(part, [0, 0], [M, N]), [0, 0], cmax)
    return c


@pl.jit.host
def host(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], cmax: pl.Out[pl.Tensor]):
    part_buf = pld.alloc_window_buffer(M * N * 4)
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        gemm_shard(a[r], b[r], pld.window(part_buf, [M, N], dtype=pl.FP32), pld.window(sig_buf, [MAXR], dtype=pl.INT32),
                   c[r], cmax[r], device=r)
    return c


def main(backend="numpy", config=None, argv=None):
    """Runs on numpy arrays (either backend), at 2 ranks unless config or argv (-n 3, -d 0,1,2) says otherwise."""
    config, opts = example_config(config, argv)
    n = config.distributed_config.world_size
    rng = np.random.default_rng(5)
    a_full = rng.random((M, n * KS), dtype=np.float32) - 0.5
    b_full = rng.random((n * KS, N), dtype=np.float32) - 0.5
    a = np.ascontiguousarray(a_full.reshape(M, n, KS).transpose(1, 0, 2))  # [n, M, KS]: rank r's A columns
    b = np.ascontiguousarray(b_full.reshape(n, KS, N))                     # [n, KS, N]: rank r's B rows
    c = np.zeros((n, M, N), np.float32)
    cmax = np.zeros((n, M, N), np.float32)
    host(a, b, c, cmax, config=config)
    ref = a_full @ b_full
    for r in range(n):
        np.testing.assert_allclose(c[r], ref, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(cmax[r], ref, rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main(argv=sys.argv[1:])

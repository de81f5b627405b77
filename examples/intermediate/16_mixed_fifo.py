"""A mixed AIC+AIV task: out = relu(x @ w + bias) for x [128x128], w [128x64], fp32, on one
cluster (1 cube core + 2 vector cores) that passes tiles through the cross-core FIFOs.

    @pl.function(type=pl.FunctionType.AIC)      # the cube core
        acc = x_block @ w                        # K in two chunks: matmul, matmul_acc
        pl.tpush_to_aiv(acc, aiv=0 or 1)         # Acc (L0C) -> that AIV's UB, no trip to DDR

    @pl.function(type=pl.FunctionType.AIV)      # each vector core, told its first row
        t = pl.tpop_from_aic([32, 64], pl.FP32)  # waits for the cube's tile
        r = relu(t + bias_block); pl.tfree_to_aic(t); store r

    @pl.function(type=pl.FunctionType.Group)    # one mixed task: AIC + AIV 0 + AIV 1
        self.cube(x, w); self.epilogue(bias, out, 0); self.epilogue(bias, out, 32)

The cube core alternates 32-row blocks between the vector cores (rows 0-31 to AIV 0, 32-63
to AIV 1, 64-95 to AIV 0, ...). Each FIFO holds 2 tiles: the cube runs ahead of a vector
core by at most 2 blocks, and waits on its TFREE after that. The matmul result never goes
through global memory.

Run: python examples/intermediate/16_mixed_fifo.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig, run

M, K, N = 128, 128, 64
BR, BK = 32, 64  # a block of rows; a chunk of K
PAIRS = M // (2 * BR)  # pairs of blocks: one for each vector core
Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right


@pl.program
class MixedLinearRelu:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[M, K], pl.FP32], w: pl.Tensor[[K, N], pl.FP32]):
        for j in pl.range(PAIRS):
            for half in pl.unroll(2):  # unrolled: the AIV index of a push is a constant
                row = (2 * j + half) * BR
                acc = pl.matmul(pl.move(pl.load(x, [row, 0], [BR, BK], target_memory=Mat), target_memory=Left),
                                pl.move(pl.load(w, [0, 0], [BK, N], target_memory=Mat), target_memory=Right))
                acc = pl.matmul_acc(acc,
                                    pl.move(pl.load(x, [row, BK], [BR, BK], target_memory=Mat), target_memory=Left),
                                    pl.move(pl.load(w, [BK, 0], [BK, N], target_memory=Mat), target_memory=Right))
                if half == 0:
                    pl.tpush_to_aiv(acc, aiv=0)
                else:
                    pl.tpush_to_aiv(acc, aiv=1)

    @pl.function(type=pl.FunctionType.AIV)
    def epilogue(self, bias: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
                 row0: pl.Scalar[pl.INDEX]):
        for j in pl.range(PAIRS):
            row = row0 + j * 2 * BR
            t = pl.tpop_from_aic([BR, N], pl.FP32)
            r = pl.relu(pl.add(t, pl.load(bias, [row, 0], [BR, N])))
            pl.tfree_to_aic(t)
            out = pl.store(r, [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def linear_relu(self, x: pl.Tensor[[M, K], pl.FP32], w: pl.Tensor[[K, N], pl.FP32],
                    bias: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
        self.cube(x, w)
        out = self.epilogue(bias, out, 0)  # AIV 0: blocks 0, 2
        out = self.epilogue(bias, out, BR)  # AIV 1: blocks 1, 3
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, K], pl.FP32], w: pl.Tensor[[K, N], pl.FP32],
             bias: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
        out = self.linear_relu(x, w, bias, out)
        return out


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(16)
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32)
    bias = rng.standard_normal((M, N), dtype=np.float32)
    cfg = config or RunConfig()
    if backend == "torch":
        import torch

        xt, wt, bt = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
        out = torch.zeros(M, N)
        compiled = run(MixedLinearRelu, xt, wt, bt, out, config=cfg)
        torch.testing.assert_close(out, torch.relu(xt @ wt + bt), rtol=1e-4, atol=1e-3)
    else:
        out = np.zeros((M, N), dtype=np.float32)
        compiled = run(MixedLinearRelu, x, w, bias, out, config=cfg)
        np.testing.assert_allclose(out, np.maximum(x @ w + bias, 0), rtol=1e-4, atol=1e-3)
    group = next(k for k in compiled.host_program.kernels if k.name == "linear_relu")
    assert [p.role for p in group.parts] == ["AIC", "AIV 0", "AIV 1"]  # one mixed task
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

"""Tensor-level programming: `out[:] = pl.mul(x, x)` on a whole 1024x1024 tensor. No tiles are
written by hand: the LowerTensorOps pass splits the tensor into blocks that fit the vector
core's buffer (UB), loads each block, multiplies it and stores it. A second kernel shows a
fused expression with a row reduction: y = exp(x - rowmax(x)) computed block by block.

Run: python examples/intermediate/10_tensor_quickstart.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

N = 1024


@pl.jit
def square(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(x, x)
    return out


@pl.jit
def shifted_exp(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:] = pl.exp(pl.row_expand_sub(x, pl.row_max(x)))
    return y


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(10)
    x = rng.standard_normal((N, N), dtype=np.float32)
    z = rng.standard_normal((96, 1000), dtype=np.float32)
    if backend == "torch":
        import torch

        xt, out = torch.from_numpy(x), torch.zeros(N, N)
        square(xt, out, config=config or RunConfig())
        torch.testing.assert_close(out, xt * xt, rtol=1e-6, atol=1e-6)
        zt, y = torch.from_numpy(z), torch.zeros(96, 1000)
        shifted_exp(zt, y, config=config or RunConfig())
        torch.testing.assert_close(y, torch.exp(zt - zt.max(dim=1, keepdim=True).values), rtol=1e-5, atol=1e-6)
    else:
        out = np.zeros((N, N), dtype=np.float32)
        square(x, out, config=config or RunConfig())
        np.testing.assert_allclose(out, x * x, rtol=1e-6, atol=1e-6)
        y = np.zeros((96, 1000), dtype=np.float32)
        shifted_exp(z, y, config=config or RunConfig())
        np.testing.assert_allclose(y, np.exp(z - z.max(axis=1, keepdims=True)), rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

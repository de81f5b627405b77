"""A DAG of five vector tasks on 128x128 fp32 tensors, each its own pl.at scope:

    a = exp(x)          (1)      b = y * 2            (2)
    s = a + b           (3, after 1 and 2)
    r = relu(a - 1)     (4, after 1)
    out = s * r         (5, after 3 and 4)

Intermediates are global tensors from pl.create_tensor; the runtime derives the edges from
which tensor regions each task reads and writes, so tasks 2 and 1, and 3 and 4, may overlap.

Run: python examples/intermediate/06_vector_dag.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

R, C, BLOCK = 128, 128, 64


@pl.jit
def vector_dag(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    a = pl.create_tensor([R, C], dtype=pl.FP32)
    b = pl.create_tensor([R, C], dtype=pl.FP32)
    s = pl.create_tensor([R, C], dtype=pl.FP32)
    r = pl.create_tensor([R, C], dtype=pl.FP32)
    with pl.at(level=pl.Level.AIV):
        for i in pl.range(R // BLOCK):
            a = pl.store(pl.exp(pl.load(x, [i * BLOCK, 0], [BLOCK, C])), [i * BLOCK, 0], a)
    with pl.at(level=pl.Level.AIV):
        for i in pl.range(R // BLOCK):
            b = pl.store(pl.mul(pl.load(y, [i * BLOCK, 0], [BLOCK, C]), 2.0), [i * BLOCK, 0], b)
    with pl.at(level=pl.Level.AIV):
        for i in pl.range(R // BLOCK):
            ta = pl.load(a, [i * BLOCK, 0], [BLOCK, C])
            tb = pl.load(b, [i * BLOCK, 0], [BLOCK, C])
            s = pl.store(pl.add(ta, tb), [i * BLOCK, 0], s)
    with pl.at(level=pl.Level.AIV):
        for i in pl.range(R // BLOCK):
            ta = pl.load(a, [i * BLOCK, 0], [BLOCK, C])
            r = pl.store(pl.relu(pl.sub(ta, 1.0)), [i * BLOCK, 0], r)
    with pl.at(level=pl.Level.AIV):
        for i in pl.range(R // BLOCK):
            ts = pl.load(s, [i * BLOCK, 0], [BLOCK, C])
            tr = pl.load(r, [i * BLOCK, 0], [BLOCK, C])
            out = pl.store(pl.mul(ts, tr), [i * BLOCK, 0], out)
    return out


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(14)
    x = rng.standard_normal((R, C), dtype=np.float32)
    y = rng.standard_normal((R, C), dtype=np.float32)
    cfg = config or RunConfig()
    if backend == "torch":
        import torch

        xt, yt = torch.from_numpy(x), torch.from_numpy(y)
        out = torch.zeros(R, C)
        compiled = vector_dag.compile(xt, yt, out)
        assert len(compiled.host_program.kernels) == 5
        vector_dag(xt, yt, out, config=cfg)
        a = torch.exp(xt)
        torch.testing.assert_close(out, (a + yt * 2) * torch.relu(a - 1), rtol=1e-5, atol=1e-5)
    else:
        out = np.zeros((R, C), dtype=np.float32)
        vector_dag(x, y, out, config=cfg)
        a = np.exp(x)
        np.testing.assert_allclose(out, (a + y * 2) * np.maximum(a - 1, 0), rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

"""Explicit task edges next to inferred ones, on 64x128 fp32 tensors:

    with pl.at(...) as t_scale:   a = x * 2            (1)
    with pl.at(..., deps=[t_scale]): b = y + 1         (2, after 1: declared, no shared data)
    with pl.at(...):              out = a * b          (3, after 1 and 2: inferred from a and b)

Tasks 1 and 2 touch disjoint tensors, so the runtime would run them side by side; the
`deps=[t_scale]` list orders them anyway (for example when task 1 has an effect the
runtime cannot see). Task 3's edges come from the tensors it reads.

Run: python examples/intermediate/13_task_graph_edges.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

R, C, BLOCK = 64, 128, 32


@pl.jit
def task_graph_edges(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    a = pl.create_tensor([R, C], dtype=pl.FP32)
    b = pl.create_tensor([R, C], dtype=pl.FP32)
    with pl.at(level=pl.Level.AIV) as t_scale:
        for i in pl.range(R // BLOCK):
            a = pl.store(pl.mul(pl.load(x, [i * BLOCK, 0], [BLOCK, C]), 2.0), [i * BLOCK, 0], a)
    with pl.at(level=pl.Level.AIV, deps=[t_scale]):
        for i in pl.range(R // BLOCK):
            b = pl.store(pl.add(pl.load(y, [i * BLOCK, 0], [BLOCK, C]), 1.0), [i * BLOCK, 0], b)
    with pl.at(level=pl.Level.AIV):
        for i in pl.range(R // BLOCK):
            ta = pl.load(a, [i * BLOCK, 0], [BLOCK, C])
            tb = pl.load(b, [i * BLOCK, 0], [BLOCK, C])
            out = pl.store(pl.mul(ta, tb), [i * BLOCK, 0], out)
    return out


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(13)
    x = rng.standard_normal((R, C), dtype=np.float32)
    y = rng.standard_normal((R, C), dtype=np.float32)
    cfg = config or RunConfig()
    if backend == "torch":
        import torch

        xt, yt = torch.from_numpy(x), torch.from_numpy(y)
        out = torch.zeros(R, C)
        compiled = task_graph_edges.compile(xt, yt, out)
        calls = [i for i in compiled.host_program.code if str(i.kind).endswith("Call")]
        assert [list(c.attrs.get("deps", [])) for c in calls] == [[], [0], []]
        task_graph_edges(xt, yt, out, config=cfg)
        torch.testing.assert_close(out, (xt * 2) * (yt + 1), rtol=1e-6, atol=1e-6)
    else:
        out = np.zeros((R, C), dtype=np.float32)
        task_graph_edges(x, y, out, config=cfg)
        np.testing.assert_allclose(out, (x * 2) * (y + 1), rtol=1e-6, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

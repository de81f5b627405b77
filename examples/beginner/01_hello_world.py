"""Hello world: add two 128x128 fp32 matrices on one core.

Run: python examples/beginner/01_hello_world.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [128, 128])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    if backend == "torch":
        import torch

        a, b = torch.rand(128, 128), torch.rand(128, 128)
        c = torch.zeros(128, 128)
        tile_add(a, b, c, config=config or RunConfig())
        assert torch.allclose(c, a + b), "tile_add differs from torch"
    else:
        rng = np.random.default_rng(0)
        a = rng.random((128, 128), dtype=np.float32)
        b = rng.random((128, 128), dtype=np.float32)
        c = np.zeros((128, 128), dtype=np.float32)
        tile_add(a, b, c, config=config or RunConfig())
        np.testing.assert_allclose(c, a + b)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

"""Elementwise ops: add and mul of 128x128 tiles, and a 512x128 add that loops over
128-row chunks inside one kernel.

Run: python examples/beginner/02_elementwise.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

ROWS, COLS, CHUNK = 512, 128, 128


@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [128, 128])
        c = pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def tile_mul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [128, 128])
        c = pl.store(pl.mul(ta, tb), [0, 0], c)
    return c


@pl.jit
def chunked_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(ROWS // CHUNK):
            row = i * CHUNK
            ta = pl.load(a, [row, 0], [CHUNK, COLS])
            tb = pl.load(b, [row, 0], [CHUNK, COLS])
            c = pl.store(pl.add(ta, tb), [row, 0], c)
    return c


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    config = config or RunConfig()
    rng = np.random.default_rng(1)
    a128, b128 = (rng.standard_normal((128, 128), dtype=np.float32) for _ in range(2))
    a512, b512 = (rng.standard_normal((ROWS, COLS), dtype=np.float32) for _ in range(2))
    if backend == "torch":
        import torch

        a128, b128, a512, b512 = map(torch.from_numpy, (a128, b128, a512, b512))
        zeros = torch.zeros
        check = torch.testing.assert_close
    else:
        zeros = lambda *shape: np.zeros(shape, dtype=np.float32)
        check = np.testing.assert_allclose

    c = zeros(128, 128)
    tile_add(a128, b128, c, config=config)
    check(c, a128 + b128)
    c = zeros(128, 128)
    tile_mul(a128, b128, c, config=config)
    check(c, a128 * b128)
    c = zeros(ROWS, COLS)
    chunked_add(a512, b512, c, config=config)
    check(c, a512 + b512)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

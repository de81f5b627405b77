"""Ragged tails with valid shapes: a row softmax of a 200x96 matrix in 64-row blocks. The
last block holds only 8 valid rows; its tile keeps the static 64x96 shape while
valid_shape=[rows, 96] (rows = min(64, 200 - i*64), computed at run time) limits what is
loaded, computed and stored, so nothing outside the tensor is read or written.

Run: python examples/intermediate/08_ragged_tail.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

ROWS, COLS, BLOCK = 200, 96, 64


@pl.jit
def ragged_softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range((ROWS + BLOCK - 1) // BLOCK):
            rows = pl.min(BLOCK, ROWS - i * BLOCK)
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, COLS], valid_shape=[rows, COLS])
            e = pl.row_expand_expdif(t, pl.row_max(t))
            y = pl.store(pl.row_expand_div(e, pl.row_sum(e)), [i * BLOCK, 0], y)
    return y


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(16)
    x = rng.standard_normal((ROWS, COLS), dtype=np.float32) * 3
    if backend == "torch":
        import torch

        xt, y = torch.from_numpy(x), torch.zeros(ROWS, COLS)
        ragged_softmax(xt, y, config=config or RunConfig())
        torch.testing.assert_close(y, torch.softmax(xt, dim=-1), rtol=1e-5, atol=1e-6)
    else:
        y = np.zeros((ROWS, COLS), dtype=np.float32)
        ragged_softmax(x, y, config=config or RunConfig())
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

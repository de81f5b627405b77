"""Row softmax of a 256x128 fp32 matrix, 64 rows per iteration:
max per row, subtract it, exp, sum per row, divide. The loop is software-pipelined
(`pl.pipeline(..., stage=2)`: ping-pong buffers), so on the chip the next block's load
overlaps this block's vector work and the previous block's store.

Run: python examples/intermediate/02_softmax.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

ROWS, COLS, BLOCK = 256, 128, 64


@pl.jit
def softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.pipeline(ROWS // BLOCK, stage=2):
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, COLS])
            row_max = pl.row_max(t)
            shifted = pl.row_expand_sub(t, row_max)
            e = pl.exp(shifted)
            row_sum = pl.row_sum(e)
            out = pl.row_expand_div(e, row_sum)
            y = pl.store(out, [i * BLOCK, 0], y)
    return y


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((ROWS, COLS), dtype=np.float32) * 4
    if backend == "torch":
        import torch

        xt, y = torch.from_numpy(x), torch.zeros(ROWS, COLS)
        softmax(xt, y, config=config or RunConfig())
        torch.testing.assert_close(y, torch.softmax(xt, dim=-1), rtol=1e-5, atol=1e-6)
    else:
        y = np.zeros((ROWS, COLS), dtype=np.float32)
        softmax(x, y, config=config or RunConfig())
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

"""Scalar operands: tile-scalar ops with Python numbers, a scalar parameter passed at
call time, and scalar arithmetic inside the kernel.

y = max(x * alpha + 1.5, 0) - alpha / 2

Run: python examples/beginner/03_scalar_ops.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def scale_shift(x: pl.Tensor, y: pl.Out[pl.Tensor], alpha: pl.Scalar[pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 128])
        t = pl.mul(t, alpha)
        t = pl.add(t, 1.5)
        t = pl.maximum(t, 0.0)
        half = alpha / 2.0
        t = pl.sub(t, half)
        y = pl.store(t, [0, 0], y)
    return y


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    alpha = 0.75
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 128), dtype=np.float32)
    expected = np.maximum(x * np.float32(alpha) + np.float32(1.5), 0) - np.float32(alpha / 2)
    if backend == "torch":
        import torch

        xt, y = torch.from_numpy(x), torch.zeros(64, 128)
        scale_shift(xt, y, alpha, config=config or RunConfig())
        torch.testing.assert_close(y, torch.from_numpy(expected))
    else:
        y = np.zeros((64, 128), dtype=np.float32)
        scale_shift(x, y, alpha, config=config or RunConfig())
        np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

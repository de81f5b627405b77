"""Activations on 64x128 fp32 tiles: ReLU, SiLU, GELU (tanh form), SwiGLU and GeGLU,
each one kernel built from tile ops.

silu(x) = x / (1 + exp(-x))
gelu(x) = x / (1 + exp(-2 * sqrt(2/pi) * (x + 0.044715 x^3)))   (= the tanh approximation)
swiglu(g, u) = silu(g) * u;  geglu(g, u) = gelu(g) * u

Run: python examples/beginner/04_activation.py   (prints OK)
"""

import math
import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

M, N = 64, 128
GELU_SCALE = -2.0 * math.sqrt(2.0 / math.pi)
GELU_CUBIC = 0.044715


@pl.jit
def relu(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [M, N])
        y = pl.store(pl.relu(t), [0, 0], y)
    return y


@pl.jit
def silu(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [M, N])
        e = pl.exp(pl.neg(t))
        s = pl.div(t, pl.add(e, 1.0))
        y = pl.store(s, [0, 0], y)
    return y


@pl.jit
def gelu(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [M, N])
        x2 = pl.mul(t, t)
        inner = pl.mul(t, pl.add(pl.mul(x2, GELU_CUBIC), 1.0))
        e = pl.exp(pl.mul(inner, GELU_SCALE))
        g = pl.div(t, pl.add(e, 1.0))
        y = pl.store(g, [0, 0], y)
    return y


@pl.jit
def swiglu(gate: pl.Tensor, up: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g = pl.load(gate, [0, 0], [M, N])
        u = pl.load(up, [0, 0], [M, N])
        e = pl.exp(pl.neg(g))
        s = pl.div(g, pl.add(e, 1.0))
        y = pl.store(pl.mul(s, u), [0, 0], y)
    return y


@pl.jit
def geglu(gate: pl.Tensor, up: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g = pl.load(gate, [0, 0], [M, N])
        u = pl.load(up, [0, 0], [M, N])
        g2 = pl.mul(g, g)
        inner = pl.mul(g, pl.add(pl.mul(g2, GELU_CUBIC), 1.0))
        e = pl.exp(pl.mul(inner, GELU_SCALE))
        act = pl.div(g, pl.add(e, 1.0))
        y = pl.store(pl.mul(act, u), [0, 0], y)
    return y


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    import torch
    import torch.nn.functional as F

    config = config or RunConfig()
    rng = np.random.default_rng(4)
    x, up = (rng.standard_normal((M, N), dtype=np.float32) * 3 for _ in range(2))
    xt, upt = torch.from_numpy(x), torch.from_numpy(up)
    references = {
        "relu": (relu, (x,), F.relu(xt)),
        "silu": (silu, (x,), F.silu(xt)),
        "gelu": (gelu, (x,), F.gelu(xt, approximate="tanh")),
        "swiglu": (swiglu, (x, up), F.silu(xt) * upt),
        "geglu": (geglu, (x, up), F.gelu(xt, approximate="tanh") * upt),
    }
    for name, (kernel, inputs, expected) in references.items():
        if backend == "torch":
            y = torch.zeros(M, N)
            kernel(*(torch.from_numpy(i) for i in inputs), y, config=config)
            torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5, msg=name)
        else:
            y = np.zeros((M, N), dtype=np.float32)
            kernel(*inputs, y, config=config)
            np.testing.assert_allclose(y, expected.numpy(), rtol=1e-5, atol=1e-5, err_msg=name)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

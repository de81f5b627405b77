"""Hello rank: each rank r computes y = x + r on its own virtual chip.

Run: python examples/distributed/01_hello_rank.py -n 3   (prints OK)
"""

import sys

import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld
from pypto.runtime.distributed_runner import example_config

R, C = 8, 64


@pl.jit
def hello_chip(x: pl.Tensor, y: pl.Out[pl.Tensor], rank: pl.Scalar[pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        pl.store(pl.add(t, rank), [0, 0], y)
    return y


@pl.jit.host
def hello(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(pld.world_size()):
        hello_chip(x[r], y[r], float(r), device=r)
    return y


def main(backend="numpy", config=None, argv=None):
    """Runs on numpy arrays (either backend), at 2 ranks unless config or argv (-n 3, -d 0,1,2) says otherwise."""
    config, opts = example_config(config, argv)
    n = config.distributed_config.world_size
    x = np.random.default_rng(0).random((n, R, C), dtype=np.float32)
    y = np.zeros_like(x)
    hello(x, y, config=config)
    np.testing.assert_allclose(y, x + np.arange(n, dtype=np.float32)[:, None, None], rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(argv=sys.argv[1:])

"""Window round trip: each rank writes x into its window buffer and reads it back into y,
then adds its rank read with pld.rank(pld.get_comm_ctx(window)).

Run: python examples/distributed/02_window_buffer.py -n 2   (prints OK)
"""

import sys

import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld
from pypto.runtime.distributed_runner import example_config

R, C = 8, 64


@pl.jit
def round_trip(x: pl.Tensor, win: pld.DistributedTensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], win)
    with pl.at(level=pl.Level.CORE_GROUP):
        me = pld.rank(pld.get_comm_ctx(win))
        t = pl.load(win, [0, 0], [R, C])
        pl.store(pl.add(t, float(me)), [0, 0], y)
    return y


@pl.jit.host
def host(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    buf = pld.alloc_window_buffer(R * C * 4)
    for r in pl.range(pld.world_size()):
        win = pld.window(buf, [R, C], dtype=pl.FP32)
        round_trip(x[r], win, y[r], device=r)
    return y


def main(backend="numpy", config=None, argv=None):
    """Runs on numpy arrays (either backend), at 2 ranks unless config or argv (-n 3, -d 0,1,2) says otherwise."""
    config, opts = example_config(config, argv)
    n = config.distributed_config.world_size
    x = np.random.default_rng(1).random((n, R, C), dtype=np.float32)
    y = np.zeros_like(x)
    host(x, y, config=config)
    np.testing.assert_allclose(y, x + np.arange(n, dtype=np.float32)[:, None, None], rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(argv=sys.argv[1:])

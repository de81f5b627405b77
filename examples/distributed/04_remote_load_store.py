"""Ring shift: rank r ends with x of rank r - 1, by remote load (--mode load: r reads r - 1's
window) or by remote store (--mode store: r writes into r + 1's window).

Run: python examples/distributed/04_remote_load_store.py -n 4 --mode store   (prints OK)
"""

import sys

import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld
from pypto.runtime.distributed_runner import example_config

R, C = 8, 64
MAXR = 8


@pl.jit
def shift_by_load(x: pl.Tensor, data: pld.DistributedTensor[[R, C], pl.FP32],
                  sig: pld.DistributedTensor[[MAXR], pl.INT32], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
        pld.tensor.barrier(sig)
        t = pld.tile.remote_load(data, (me + n - 1) % n, [0, 0], [R, C])
        pl.store(t, [0, 0], y)
    return y


@pl.jit
def shift_by_store(x: pl.Tensor, data: pld.DistributedTensor[[R, C], pl.FP32],
                   sig: pld.DistributedTensor[[MAXR], pl.INT32], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        pld.tile.remote_store(pl.load(x, [0, 0], [R, C]), data, (me + 1) % n, [0, 0])
        pld.tensor.barrier(sig)
        pl.store(pl.load(data, [0, 0], [R, C]), [0, 0], y)
    return y


@pl.jit.host
def host_load(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    data_buf = pld.alloc_window_buffer(R * C * 4)
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        shift_by_load(x[r], pld.window(data_buf, [R, C], dtype=pl.FP32), pld.window(sig_buf, [MAXR], dtype=pl.INT32),
                      y[r], device=r)
    return y


@pl.jit.host
def host_store(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    data_buf = pld.alloc_window_buffer(R * C * 4)
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        shift_by_store(x[r], pld.window(data_buf, [R, C], dtype=pl.FP32), pld.window(sig_buf, [MAXR], dtype=pl.INT32),
                       y[r], device=r)
    return y


def main(backend="numpy", config=None, mode=None, argv=None):
    """Runs on numpy arrays (either backend), at 2 ranks unless config or argv (-n 3, -d 0,1,2) says otherwise."""
    config, opts = example_config(config, argv)
    mode = mode or opts.mode or "load"
    n = config.distributed_config.world_size
    x = np.random.default_rng(3).random((n, R, C), dtype=np.float32)
    y = np.zeros_like(x)
    (host_load if mode == "load" else host_store)(x, y, config=config)
    np.testing.assert_allclose(y, np.roll(x, 1, axis=0), rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(argv=sys.argv[1:])

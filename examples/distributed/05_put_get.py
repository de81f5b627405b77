"""Put / get with notify / wait: rank r sends x to rank r + 1 (--mode put: pld.tensor.put into
the peer's window, then a notify of the peer's signal; the peer waits on its own cell) or
fetches it from rank r - 1 (--mode get: the owner publishes and notifies, the reader waits and
pld.tensor.get's the peer's window into y).

Run: python examples/distributed/05_put_get.py -n 3 --mode get   (prints OK)
"""

import sys

import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld
from pypto.runtime.distributed_runner import example_config

R, C = 8, 64


@pl.jit
def by_put(x: pl.Tensor, data: pld.DistributedTensor[[R, C], pl.FP32],
           sig: pld.DistributedTensor[[1], pl.INT32], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(data)
        right = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        pld.tensor.put(data, right, x, [0, 0], [0, 0], [R, C])
        pld.system.notify(sig, right, [0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(sig, [0], 1, cmp=pld.WaitCmp.Eq)
        pl.store(pl.load(data, [0, 0], [R, C]), [0, 0], y)
    return y


@pl.jit
def by_get(x: pl.Tensor, data: pld.DistributedTensor[[R, C], pl.FP32],
           sig: pld.DistributedTensor[[1], pl.INT32], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(data)
        n = pld.nranks(ctx)
        me = pld.rank(ctx)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
        pld.system.notify(sig, (me + 1) % n, [0], 1, op=pld.NotifyOp.Set)  # "my data is ready" to the reader
        pld.system.wait(sig, [0], 1, cmp=pld.WaitCmp.Ge)
        pld.tensor.get(y, (me + n - 1) % n, data)
    return y


@pl.jit.host
def host_put(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    data_buf = pld.alloc_window_buffer(R * C * 4)
    sig_buf = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        by_put(x[r], pld.window(data_buf, [R, C], dtype=pl.FP32), pld.window(sig_buf, [1], dtype=pl.INT32), y[r],
               device=r)
    return y


@pl.jit.host
def host_get(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    data_buf = pld.alloc_window_buffer(R * C * 4)
    sig_buf = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        by_get(x[r], pld.window(data_buf, [R, C], dtype=pl.FP32), pld.window(sig_buf, [1], dtype=pl.INT32), y[r],
               device=r)
    return y


def main(backend="numpy", config=None, mode=None, argv=None):
    """Runs on numpy arrays (either backend), at 2 ranks unless config or argv (-n 3, -d 0,1,2) says otherwise."""
    config, opts = example_config(config, argv)
    mode = mode or opts.mode or "put"
    n = config.distributed_config.world_size
    x = np.random.default_rng(4).random((n, R, C), dtype=np.float32)
    y = np.zeros_like(x)
    (host_put if mode == "put" else host_get)(x, y, config=config)
    np.testing.assert_allclose(y, np.roll(x, 1, axis=0), rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(argv=sys.argv[1:])

"""A rank count that is pl.dynamic: the chip function's windows are [NR, C] with NR =
pl.dynamic("NR"), so one program serves 2, 3 or 4 ranks. Each rank writes its row (x + rank)
into row `rank` of every rank's table (remote stores), counts the arrivals on its own signal
cell, and copies the whole table out.

Run: python examples/distributed/07_dynamic_rank_count.py -n 4   (prints OK)
"""

import sys

import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld
from pypto.runtime.distributed_runner import example_config

C = 64
NR = pl.dynamic("NR")


@pl.jit
def exchange(x: pl.Tensor, table: pld.DistributedTensor[[NR, C], pl.FP32], sig: pld.DistributedTensor[[1], pl.INT32],
             y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(table)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        row = pl.add(pl.load(x, [0, 0], [1, C]), float(me))
        for p in pl.range(n):
            pld.tile.remote_store(row, table, p, [me, 0])
            pld.system.notify(sig, p, [0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(sig, [0], n, cmp=pld.WaitCmp.Ge)
        for p in pl.range(n):
            pl.store(pl.load(table, [p, 0], [1, C]), [p, 0], y)
    return y


@pl.jit.host
def host(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    n = pld.world_size()
    table_buf = pld.alloc_window_buffer([n, C], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer(4)
    for r in pl.range(n):
        exchange(x[r], pld.window(table_buf, [n, C], dtype=pl.FP32), pld.window(sig_buf, [1], dtype=pl.INT32), y[r],
                 device=r)
    return y


def main(backend="numpy", config=None, argv=None):
    """Runs on numpy arrays (either backend), at 2 ranks unless config or argv (-n 3, -d 0,1,2) says otherwise."""
    config, opts = example_config(config, argv)
    n = config.distributed_config.world_size
    x = np.random.default_rng(6).random((n, 1, C), dtype=np.float32)
    y = np.zeros((n, n, C), np.float32)
    host(x, y, config=config)
    want = x[:, 0, :] + np.arange(n, dtype=np.float32)[:, None]
    for r in range(n):
        np.testing.assert_allclose(y[r], want, rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(argv=sys.argv[1:])

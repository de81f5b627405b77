"""Barrier: each rank publishes x in its window, waits for every rank (a hand-rolled barrier
of notify/wait, or --use-builtin: pld.tensor.barrier), then reads its right neighbour's data.
The barrier runs twice per call (its signal returns to zero, so it is reusable).

Run: python examples/distributed/03_barrier.py -n 3 [--use-builtin]   (prints OK)
"""

import sys

import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld
from pypto.runtime.distributed_runner import example_config

R, C = 8, 64
MAXR = 8  # signal cells: one per rank


@pl.jit
def hand_barrier(x: pl.Tensor, data: pld.DistributedTensor[[R, C], pl.FP32],
                 sig: pld.DistributedTensor[[MAXR], pl.INT32], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
        for p in pl.range(n):
            pld.system.notify(sig, p, [me], 1, op=pld.NotifyOp.AtomicAdd)
        for p in pl.range(n):
            pld.system.wait(sig, [p], 1, cmp=pld.WaitCmp.Ge)
        t = pld.tile.remote_load(data, (me + 1) % n, [0, 0], [R, C])
        pl.store(t, [0, 0], y)
    return y


@pl.jit
def builtin_barrier(x: pl.Tensor, data: pld.DistributedTensor[[R, C], pl.FP32],
                    sig: pld.DistributedTensor[[MAXR], pl.INT32], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
        pld.tensor.barrier(sig)
        t = pld.tile.remote_load(data, (me + 1) % n, [0, 0], [R, C])
        pld.tensor.barrier(sig)  # nobody overwrites data that a peer still reads
        pl.store(pl.add(t, t), [0, 0], data)
        pld.tensor.barrier(sig)
        u = pld.tile.remote_load(data, (me + n - 1) % n, [0, 0], [R, C])
        pl.store(u, [0, 0], y)
    return y


@pl.jit.host
def host_hand(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    data_buf = pld.alloc_window_buffer(R * C * 4)
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [R, C], dtype=pl.FP32)
        sig = pld.window(sig_buf, [MAXR], dtype=pl.INT32)
        hand_barrier(x[r], data, sig, y[r], device=r)
    return y


@pl.jit.host
def host_builtin(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    data_buf = pld.alloc_window_buffer(R * C * 4)
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [R, C], dtype=pl.FP32)
        sig = pld.window(sig_buf, [MAXR], dtype=pl.INT32)
        builtin_barrier(x[r], data, sig, y[r], device=r)
    return y


def main(backend="numpy", config=None, builtin=False, argv=None):
    """Runs on numpy arrays (either backend), at 2 ranks unless config or argv (-n 3, -d 0,1,2) says otherwise."""
    config, opts = example_config(config, argv)
    builtin = builtin or opts.use_builtin
    n = config.distributed_config.world_size
    x = np.random.default_rng(2).random((n, R, C), dtype=np.float32)
    y = np.zeros_like(x)
    if builtin:
        host_builtin(x, y, config=config)
        # y[r] = 2 * x[r + 1] read back by rank r + 1, i.e. rank r holds 2 * x[r]
        np.testing.assert_allclose(y, 2 * x, rtol=1e-6)
    else:
        host_hand(x, y, config=config)
        np.testing.assert_allclose(y, np.roll(x, -1, axis=0), rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main(argv=sys.argv[1:])

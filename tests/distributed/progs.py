"""Chip functions of tests/distributed (module level: rank processes import them by name)."""

import pypto.language as pl
import pypto.language.distributed as pld

R, C = 8, 64
MAXR = 8


@pl.jit
def reduce_all(x: pl.Tensor, data: pld.DistributedTensor, sig: pld.DistributedTensor[[MAXR], pl.INT32],
               ys: pl.Out[pl.Tensor]):
    # ys: [4, R, C]: Sum, Max, Min, Prod allreduce of x over the ranks in data's dtype (a bare
    # annotation: shape and dtype from the window); the signal is reused 8 times.
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
        pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Sum)
        pl.store(pl.load(data, [0, 0], [R, C]), [0, 0, 0], ys)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
        pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max)
        pl.store(pl.load(data, [0, 0], [R, C]), [1, 0, 0], ys)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
        pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Min, mode="ring")
        pl.store(pl.load(data, [0, 0], [R, C]), [2, 0, 0], ys)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
        pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Prod)
        pl.store(pl.load(data, [0, 0], [R, C]), [3, 0, 0], ys)
    return ys


@pl.jit.host
def host_reduce_all(x: pl.Tensor, ys: pl.Out[pl.Tensor]):
    data_buf = pld.alloc_window_buffer(R * C * 4)
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        reduce_all(x[r], pld.window(data_buf, [R, C], dtype=pl.FP32), pld.window(sig_buf, [MAXR], dtype=pl.INT32),
                   ys[r], device=r)
    return ys


@pl.jit
def gather_scatter_bcast(x: pl.Tensor, rows: pld.DistributedTensor[[MAXR, C], pl.FP32],
                         data: pld.DistributedTensor[[R, C], pl.FP32], sig: pld.DistributedTensor[[MAXR], pl.INT32],
                         gathered: pl.Out[pl.Tensor], scattered: pl.Out[pl.Tensor], bcast: pl.Out[pl.Tensor],
                         a2a: pl.Out[pl.Tensor]):
    # x: [MAXR, C] per rank. allgather of row 0 into rows; reduce_scatter (Sum) of x's rows; broadcast of
    # root 1; all_to_all of x's rows.
    with pl.at(level=pl.Level.CORE_GROUP):
        me = pld.rank(pld.get_comm_ctx(rows))
        pl.store(pl.load(x, [0, 0], [1, C]), [0, 0], data)
        pld.tensor.allgather(data, rows, sig)
        pl.store(pl.load(rows, [0, 0], [MAXR, C]), [0, 0], gathered)
        pld.tensor.barrier(sig)
        pl.store(pl.load(x, [0, 0], [MAXR, C]), [0, 0], rows)
        pld.tensor.reduce_scatter(rows, sig, op=pld.ReduceOp.Sum)
        pl.store(pl.load(rows, [me, 0], [1, C]), [0, 0], scattered)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
        pld.tensor.broadcast(data, sig, root=1)
        pl.store(pl.load(data, [0, 0], [R, C]), [0, 0], bcast)
        pld.tensor.all_to_all(x, rows, sig)
        pl.store(pl.load(rows, [0, 0], [MAXR, C]), [0, 0], a2a)
    return bcast


@pl.jit.host
def host_gather(x: pl.Tensor, gathered: pl.Out[pl.Tensor], scattered: pl.Out[pl.Tensor], bcast: pl.Out[pl.Tensor],
                a2a: pl.Out[pl.Tensor]):
    rows_buf = pld.alloc_window_buffer([MAXR, C], dtype=pl.FP32)
    data_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        gather_scatter_bcast(x[r], pld.window(rows_buf, [MAXR, C], dtype=pl.FP32),
                             pld.window(data_buf, [R, C], dtype=pl.FP32), pld.window(sig_buf, [MAXR], dtype=pl.INT32),
                             gathered[r], scattered[r], bcast[r], a2a[r], device=r)
    return bcast


@pl.jit
def waits_forever(x: pl.Tensor, sig: pld.DistributedTensor[[MAXR], pl.INT32], y: pl.Out[pl.Tensor]):
    # Rank 0 waits for a notify nobody sends: the watchdog reports a deadlock.
    with pl.at(level=pl.Level.CORE_GROUP):
        me = pld.rank(pld.get_comm_ctx(sig))
        pld.system.wait(sig, [3], me + 1, cmp=pld.WaitCmp.Eq)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], y)
    return y


@pl.jit.host
def host_deadlock(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        waits_forever(x[r], pld.window(sig_buf, [MAXR], dtype=pl.INT32), y[r], device=r)
    return y


@pl.jit
def bad_peer(x: pl.Tensor, data: pld.DistributedTensor[[R, C], pl.FP32], sig: pld.DistributedTensor[[MAXR], pl.INT32],
             y: pl.Out[pl.Tensor]):
    # Rank 1 reads a peer outside the domain (it fails); rank 0 waits on it and is stopped.
    with pl.at(level=pl.Level.CORE_GROUP):
        me = pld.rank(pld.get_comm_ctx(data))
        t = pld.tile.remote_load(data, me * 7, [0, 0], [R, C])
        pld.system.notify(sig, 0, [0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(sig, [0], 2, cmp=pld.WaitCmp.Ge)
        pl.store(t, [0, 0], y)
    return y


@pl.jit.host
def host_bad_peer(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    data_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        bad_peer(x[r], pld.window(data_buf, [R, C], dtype=pl.FP32), pld.window(sig_buf, [MAXR], dtype=pl.INT32), y[r],
                 device=r)
    return y


@pl.jit.incore
def shift_kernel(x: pl.Tensor, data: pld.DistributedTensor, sig: pld.DistributedTensor, y: pl.Out[pl.Tensor],
                 scale: pl.Scalar[pl.FP32]):
    ctx = pld.get_comm_ctx(data)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    for i in pl.range(2):  # the barrier's signal is reused in a loop
        t = pl.load(x, [0, 0], [R, C])
        pld.tile.remote_store(pl.mul(t, scale), data, (me + 1) % n, [0, 0], atomic=pld.AtomicType.Add)
        pld.tensor.barrier(sig)
    y = pl.store(pl.load(data, [0, 0], [R, C]), [0, 0], y)
    return y


@pl.jit
def shift_chip(x: pl.Tensor, data: pld.DistributedTensor[[R, C], pl.FP32], sig: pld.DistributedTensor[[1], pl.INT32],
               y: pl.Out[pl.Tensor], scale: pl.Scalar[pl.FP32]):
    y = shift_kernel(x, data, sig, y, scale)
    return y


@pl.jit.host
def host_shift(x: pl.Tensor, y: pl.Out[pl.Tensor], scale):
    data_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer(4)
    nr = pld.world_size()
    for r in pl.range(nr):
        shift_chip(x[r], pld.window(data_buf, [R, C], dtype=pl.FP32), pld.window(sig_buf, [1], dtype=pl.INT32), y[r],
                   scale * 1.0, device=r)
    return y


@pl.jit
def fill_rank(data: pld.DistributedTensor[[R, C], pl.FP32], x: pl.Tensor):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], data)
    return data


@pl.jit
def read_back(data: pld.DistributedTensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(data, [0, 0], [R, C]), [0, 0], y)
    return y


@pl.jit.host
def host_level_collectives(x: pl.Tensor, ysum: pl.Out[pl.Tensor], ymax: pl.Out[pl.Tensor]):
    buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([1], dtype=pl.INT32)
    data = pld.window(buf, [R, C], dtype=pl.FP32)
    sig = pld.window(sig_buf, [1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        fill_rank(data, x[r], device=r)
    pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Sum)
    for r in pl.range(pld.world_size()):
        read_back(data, ysum[r], device=r)
    for r in pl.range(pld.world_size()):
        fill_rank(data, x[r], device=r)
    pld.tensor.barrier(sig)
    pld.tensor.allreduce(data, op=pld.ReduceOp.Max)
    for r in pl.range(pld.world_size()):
        read_back(data, ymax[r], device=r)
    return ysum


@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
def host_function_form(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    data_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        fill_rank(pld.window(data_buf, [R, C], dtype=pl.FP32), x[r], device=r)
    for r in pl.range(pld.world_size()):
        read_back(pld.window(data_buf, [R, C], dtype=pl.FP32), y[r], device=r)
    return y


@pl.jit
def a2av_chip(x: pl.Tensor, send_a: pl.Tensor, recv_a: pl.Tensor, send_b: pl.Tensor, recv_b: pl.Tensor,
              rows: pld.DistributedTensor[[MAXR, C], pl.FP32], sig: pld.DistributedTensor[[1], pl.INT32],
              ys: pl.Out[pl.Tensor]):
    # Two rounds of all_to_all_v on one target and signal (counts a, then b): ys[k] = the target after round k.
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.tensor.all_to_all_v(x, rows, sig, send_a, recv_a)
        pl.store(pl.load(rows, [0, 0], [MAXR, C]), [0, 0, 0], ys)
        pld.tensor.all_to_all_v(x, rows, sig, send_b, recv_b)
        pl.store(pl.load(rows, [0, 0], [MAXR, C]), [1, 0, 0], ys)
    return ys


@pl.jit.host
def host_a2av(x: pl.Tensor, send_a: pl.Tensor, recv_a: pl.Tensor, send_b: pl.Tensor, recv_b: pl.Tensor,
              ys: pl.Out[pl.Tensor]):
    rows_buf = pld.alloc_window_buffer([MAXR, C], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        a2av_chip(x[r], send_a[r], recv_a[r], send_b[r], recv_b[r], pld.window(rows_buf, [MAXR, C], dtype=pl.FP32),
                  pld.window(sig_buf, [1], dtype=pl.INT32), ys[r], device=r)
    return ys


@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
def host_combine(data, mid, factor):
    ...


@pl.jit
def add_rank(mid: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        me = pld.rank(pld.get_comm_ctx(mid))
        pl.store(pl.add(pl.load(mid, [0, 0], [R, C]), me * 1.0), [0, 0], y)
    return y


@pl.jit.host
def host_with_callback(x: pl.Tensor, mid: pl.Tensor, y: pl.Out[pl.Tensor], factor):
    # chip phase (windows <- x[r]), host callback (mid <- f(every rank's window)), chip phase (y[r] <- mid[r] + r)
    buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    data = pld.window(buf, [R, C], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        fill_rank(data, x[r], device=r)
    host_combine(data, mid, factor)
    for r in pl.range(pld.world_size()):
        add_rank(mid[r], y[r], device=r)
    return y


@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
def host_part(mid, k):
    ...


@pl.jit.host
def host_two_callbacks(x: pl.Tensor, mid: pl.Tensor, y: pl.Out[pl.Tensor]):
    # two callbacks with no dispatch between (concurrent on num_sub_workers threads), then a chip phase
    host_part(mid, 0)
    host_part(mid, 1)
    for r in pl.range(pld.world_size()):
        add_rank(mid[r], y[r], device=r)
    return y


@pl.jit
def defer_chip(x: pl.Tensor, wait_sig: pld.DistributedTensor[[1], pl.INT32],
               send_sig: pld.DistributedTensor[[1], pl.INT32], data: pld.DistributedTensor[[R, C], pl.FP32],
               y: pl.Out[pl.Tensor]):
    # Three tasks per rank on one worker: A waits for the left neighbour's notify, B sends mine to the
    # right neighbour (it touches neither of A's tensors), C (after A: y) adds the neighbour's data.
    # A deferred wait frees the only core for B; a blocking one (blocking_chip) holds it: every rank deadlocks.
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.system.defer_wait(wait_sig, [0], 1, cmp=pld.WaitCmp.Ge)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], y)
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(data)
        right = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        pld.tile.remote_store(pl.load(x, [0, 0], [R, C]), data, right, [0, 0])
        pld.system.notify(send_sig, right, [0], 1, op=pld.NotifyOp.AtomicAdd)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(data, [0, 0], [R, C]), pl.load(y, [0, 0], [R, C])), [0, 0], y)
    return y


@pl.jit
def blocking_chip(x: pl.Tensor, wait_sig: pld.DistributedTensor[[1], pl.INT32],
                  send_sig: pld.DistributedTensor[[1], pl.INT32], data: pld.DistributedTensor[[R, C], pl.FP32],
                  y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.system.wait(wait_sig, [0], 1, cmp=pld.WaitCmp.Ge)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], y)
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(data)
        right = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        pld.tile.remote_store(pl.load(x, [0, 0], [R, C]), data, right, [0, 0])
        pld.system.notify(send_sig, right, [0], 1, op=pld.NotifyOp.AtomicAdd)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(data, [0, 0], [R, C]), pl.load(y, [0, 0], [R, C])), [0, 0], y)
    return y


@pl.jit.host
def host_defer(x: pl.Tensor, y: pl.Out[pl.Tensor], blocking):
    # an even rank count: rank r waits on buffer r % 2, the neighbour notifies it through its own view of it
    bufs = [pld.alloc_window_buffer([1], dtype=pl.INT32), pld.alloc_window_buffer([1], dtype=pl.INT32)]
    data_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        if blocking:
            blocking_chip(x[r], pld.window(bufs[r % 2], [1], dtype=pl.INT32),
                          pld.window(bufs[(r + 1) % 2], [1], dtype=pl.INT32),
                          pld.window(data_buf, [R, C], dtype=pl.FP32), y[r], device=r)
        else:
            defer_chip(x[r], pld.window(bufs[r % 2], [1], dtype=pl.INT32),
                       pld.window(bufs[(r + 1) % 2], [1], dtype=pl.INT32),
                       pld.window(data_buf, [R, C], dtype=pl.FP32), y[r], device=r)
    return y


@pl.jit
def short_count(x: pl.Tensor, sig: pld.DistributedTensor[[MAXR], pl.INT32], y: pl.Out[pl.Tensor]):
    # Each rank adds 1 to its right neighbour's cell 2 but waits for 2 on its own: the report names the notifier.
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pld.get_comm_ctx(sig)
        pld.system.notify(sig, (pld.rank(ctx) + 1) % pld.nranks(ctx), [2], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(sig, [2], 2, cmp=pld.WaitCmp.Eq)
        pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], y)
    return y


@pl.jit.host
def host_short_count(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        short_count(x[r], pld.window(sig_buf, [MAXR], dtype=pl.INT32), y[r], device=r)
    return y


BR, BC, BN = 300, 1000, 10000  # larger than one tile: [BR, BC] windows, [BN] rows


@pl.jit
def big_collectives(x: pl.Tensor, v: pl.Tensor, xi: pl.Tensor, send: pl.Tensor, recv: pl.Tensor,
                    big: pl.InOut[pld.DistributedTensor[[BR, BC], pl.FP32]],
                    big_i: pl.InOut[pld.DistributedTensor[[BR, BC], pl.INT32]],
                    flat: pl.InOut[pld.DistributedTensor[[BN], pl.FP32]], rows: pl.InOut[pld.DistributedTensor[[4, BN], pl.FP32]],
                    rows2: pl.InOut[pld.DistributedTensor[[4, BN], pl.FP32]], sig: pld.DistributedTensor[[1], pl.INT32],
                    out_sum: pl.Out[pl.Tensor], out_max_i: pl.Out[pl.Tensor], out_bcast: pl.Out[pl.Tensor],
                    out_flat: pl.Out[pl.Tensor], out_gather: pl.Out[pl.Tensor], out_rs: pl.Out[pl.Tensor],
                    out_a2a: pl.Out[pl.Tensor], out_a2av: pl.Out[pl.Tensor]):
    # x: [BR, BC], v: [4, BN] (row r = what rank r ... sends), xi: [BR, BC] INT32, send/recv: [4] counts.
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.tensor.allreduce(big, sig, op=pld.ReduceOp.Sum)          # big holds x (a chip task before)
        pld.tensor.allreduce(big_i, sig, op=pld.ReduceOp.Max)
        pld.tensor.allreduce(flat, sig, op=pld.ReduceOp.Prod)
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(BR // 20):
            pl.store(pl.load(big, [i * 20, 0], [20, BC]), [i * 20, 0], out_sum)
            pl.store(pl.load(big_i, [i * 20, 0], [20, BC]), [i * 20, 0], out_max_i)
            pl.store(pl.load(x, [i * 20, 0], [20, BC]), [i * 20, 0], big)
        for j in pl.range(BN // 2000):
            pl.store(pl.load(flat, [j * 2000], [1, 2000]), [j * 2000], out_flat)
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.tensor.broadcast(big, sig, root=1)
        pld.tensor.allgather(v, rows, sig)                             # row 0 of v of every rank
        pld.tensor.reduce_scatter(rows2, sig, op=pld.ReduceOp.Sum)     # rows2 holds v
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(BR // 20):
            pl.store(pl.load(big, [i * 20, 0], [20, BC]), [i * 20, 0], out_bcast)
        for r in pl.range(4):
            for j in pl.range(BN // 2000):
                pl.store(pl.load(rows, [r, j * 2000], [1, 2000]), [r, j * 2000], out_gather)
                pl.store(pl.load(rows2, [r, j * 2000], [1, 2000]), [r, j * 2000], out_rs)
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.tensor.all_to_all(v, rows, sig)
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(4):
            for j in pl.range(BN // 2000):
                pl.store(pl.load(rows, [r, j * 2000], [1, 2000]), [r, j * 2000], out_a2a)
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.tensor.all_to_all_v(v, rows, sig, send, recv)
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(4):
            for j in pl.range(BN // 2000):
                pl.store(pl.load(rows, [r, j * 2000], [1, 2000]), [r, j * 2000], out_a2av)
    return out_sum


@pl.jit
def fill_big(x: pl.Tensor, v: pl.Tensor, xi: pl.Tensor, f: pl.Tensor, big: pl.Out[pld.DistributedTensor[[BR, BC], pl.FP32]],
             big_i: pl.Out[pld.DistributedTensor[[BR, BC], pl.INT32]], flat: pl.Out[pld.DistributedTensor[[BN], pl.FP32]],
             rows2: pl.Out[pld.DistributedTensor[[4, BN], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(BR // 20):
            pl.store(pl.load(x, [i * 20, 0], [20, BC]), [i * 20, 0], big)
            pl.store(pl.load(xi, [i * 20, 0], [20, BC]), [i * 20, 0], big_i)
        for j in pl.range(BN // 2000):
            pl.store(pl.load(f, [j * 2000], [1, 2000]), [j * 2000], flat)
            for r in pl.range(4):
                pl.store(pl.load(v, [r, j * 2000], [1, 2000]), [r, j * 2000], rows2)
    return big


@pl.jit.host
def host_big(x: pl.Tensor, v: pl.Tensor, xi: pl.Tensor, f: pl.Tensor, send: pl.Tensor, recv: pl.Tensor,
             out_sum: pl.Out[pl.Tensor], out_max_i: pl.Out[pl.Tensor], out_bcast: pl.Out[pl.Tensor],
             out_flat: pl.Out[pl.Tensor], out_gather: pl.Out[pl.Tensor], out_rs: pl.Out[pl.Tensor],
             out_a2a: pl.Out[pl.Tensor], out_a2av: pl.Out[pl.Tensor]):
    big = pld.window(pld.alloc_window_buffer([BR, BC], dtype=pl.FP32), [BR, BC], dtype=pl.FP32)
    big_i = pld.window(pld.alloc_window_buffer([BR, BC], dtype=pl.INT32), [BR, BC], dtype=pl.INT32)
    flat = pld.window(pld.alloc_window_buffer([BN], dtype=pl.FP32), [BN], dtype=pl.FP32)
    rows = pld.window(pld.alloc_window_buffer([4, BN], dtype=pl.FP32), [4, BN], dtype=pl.FP32)
    rows2 = pld.window(pld.alloc_window_buffer([4, BN], dtype=pl.FP32), [4, BN], dtype=pl.FP32)
    sig = pld.window(pld.alloc_window_buffer([1], dtype=pl.INT32), [1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        fill_big(x[r], v[r], xi[r], f[r], big, big_i, flat, rows2, device=r)
    for r in pl.range(pld.world_size()):
        big_collectives(x[r], v[r], xi[r], send[r], recv[r], big, big_i, flat, rows, rows2, sig, out_sum[r],
                        out_max_i[r], out_bcast[r], out_flat[r], out_gather[r], out_rs[r], out_a2a[r], out_a2av[r],
                        device=r)
    return out_sum


@pl.jit.host
def host_reduce_typed(x: pl.Tensor, ys: pl.Out[pl.Tensor], dtype):
    # reduce_all over a window of `dtype` (pl.INT32, pl.FP16, pl.BF16, ...)
    data_buf = pld.alloc_window_buffer([R, C], dtype=dtype)
    sig_buf = pld.alloc_window_buffer([MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        reduce_all(x[r], pld.window(data_buf, [R, C], dtype=dtype), pld.window(sig_buf, [MAXR], dtype=pl.INT32),
                   ys[r], device=r)
    return ys


def check_collectives_over_many_tiles(n, config):
    """Runs host_big on n ranks and checks every collective against numpy (tests/distributed:
    both transports)."""
    import numpy as np

    # Windows far larger than one tile ([300, 1000] FP32 and INT32, [10000] and [4, 10000] FP32): the
    # collectives walk them in tiles with ragged tails.
    R, C, N = BR, BC, BN
    rng = np.random.default_rng(50 + n)
    x = rng.random((n, R, C), dtype=np.float32)
    xi = rng.integers(-1000, 1000, (n, R, C)).astype(np.int32)
    v = np.zeros((n, 4, N), np.float32)
    v[:, :n] = rng.random((n, n, N), dtype=np.float32)
    f = (rng.random((n, N), dtype=np.float32) * 0.5 + 0.75).astype(np.float32)
    send = np.zeros((n, 4), np.int32)
    send[:, :n] = rng.integers(0, N + 1, (n, n))
    send[0, n - 1] = N  # a full row, and (below) one empty row and one ending inside the last tile
    send[n - 1, 0] = 0
    send[1, 0] = 4097 + 11
    recv = np.zeros_like(send)
    recv[:, :n] = send[:, :n].T
    outs = [np.zeros((n, R, C), np.float32), np.zeros((n, R, C), np.int32), np.zeros((n, R, C), np.float32),
            np.zeros((n, N), np.float32)] + [np.zeros((n, 4, N), np.float32) for _ in range(4)]
    host_big(x, v, xi, f, send, recv, *outs, config=config)
    out_sum, out_max_i, out_bcast, out_flat, out_gather, out_rs, out_a2a, out_a2av = outs
    for r in range(n):
        np.testing.assert_allclose(out_sum[r], x.sum(0), rtol=1e-5)
        np.testing.assert_array_equal(out_max_i[r], xi.max(0))
        np.testing.assert_allclose(out_flat[r], f.prod(0), rtol=1e-5)
        np.testing.assert_array_equal(out_bcast[r], x[1])
        np.testing.assert_array_equal(out_gather[r, :n], v[:, 0])       # row 0 of every rank's v
        np.testing.assert_allclose(out_rs[r, r], v[:, r].sum(0), rtol=1e-5)
        np.testing.assert_array_equal(out_a2a[r, :n], v[:, r])          # row p from rank p
        for p in range(n):
            c = send[p, r]
            np.testing.assert_array_equal(out_a2av[r, p, :c], v[p, r, :c])
            np.testing.assert_array_equal(out_a2av[r, p, c:], 0)

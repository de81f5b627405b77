"""pld's tensor-level operations and collectives inside kernels, built from the primitives
(remote_load / remote_store / notify / wait). Each is a @pl.jit.inline body spliced into the
calling kernel (the parser calls `_pl_splice` to pick the body and bind its constants):

- barrier(signal): every rank adds 1 to cell 0 of every rank's signal, waits until its own
  cell reaches nranks, then takes nranks off again. The count is consumed in units of nranks,
  so the signal returns to zero and early arrivals of the next barrier are kept: reusable in
  loops with no reset.
- allreduce(target, signal, op=, mode=): barrier; block b of the target (tiles of at most
  _TILE_BYTES) is combined by rank b % nranks, which reads block b of every rank in rank order
  and writes the result into every rank's block b (only a block's owner reads it, so the
  writes need no second barrier before them); barrier. Every rank gets bitwise the same
  result. mode="ring" is accepted and computed the same way.
- broadcast(target, signal, root=): barrier; every rank copies root's blocks; barrier.
- allgather(local, target[NR, S], signal): a barrier (nobody still reads its target), each rank
  stores its row into every rank's target (remote stores), a barrier.
- reduce_scatter(target[NR, S], signal, op=): barrier; row r of rank r becomes the combination
  of row r of every rank (only rank r reads row r, so it stores at once); barrier.
- all_to_all(input[NR, S], target[NR, S], signal): row p of rank r's input lands in row r of
  rank p's target (remote stores) between two barriers.
- all_to_all_v(input[NR, S], target[NR, S], signal, send_counts[NR], recv_counts[NR]): the
  first send_counts[p] elements of row p of rank r's input land in row r of rank p's target;
  afterwards row p of my target holds recv_counts[p] received elements, the rest of the row is
  zero. Barrier, remote stores, barrier, zero the tails (the first barrier keeps a peer's next
  round from landing before my tails are cleared: reusable in loops).
- put / get: one tile between this rank's tensor and a peer's window.
Targets are static 1-D or 2-D windows of any size: the collectives walk them in tiles of at
most _TILE_BYTES (ragged tails by run-time valid shapes).
"""

from pypto import language as pl

from . import ops as _ops
from .decorators import jit
from .distributed_names import AtomicType, NotifyOp, ReduceOp, WaitCmp, get_comm_ctx, nranks, rank

_remote_load = _ops.OpStub("dist.remote_load")
_remote_store = _ops.OpStub("dist.remote_store")
_notify = _ops.OpStub("dist.notify")
_wait = _ops.OpStub("dist.wait")
_defer_wait = _ops.OpStub("dist.defer_wait")


class _Splice:
    """A pld name whose call the parser splices (expr_parser.eval_Call: `_pl_splice`)."""

    def __init__(self, name, bind):
        self.name, self._bind = name, bind

    def _pl_splice(self, args, kwargs):
        return self._bind(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"pld.tensor.{self.name} can only be used inside a kernel (@pl.jit.incore) body")

    def __repr__(self):
        return f"pld.tensor.{self.name}"


def _shape(t, what):
    ty = getattr(t, "type", None)
    shape = getattr(ty, "shape", None)
    if shape is None:
        raise TypeError(f"pld.tensor.{what} takes window tensors (pld.DistributedTensor parameters), got {t!r}")
    dims = []
    for d in shape:
        v = getattr(d, "value", d)
        if not isinstance(v, int):
            raise TypeError(f"pld.tensor.{what}: the window has a run-time extent; collectives need static shapes")
        dims.append(v)
    return dims


def _tile2d(t, what):
    dims = _shape(t, what)
    if len(dims) == 1:
        return [1, dims[0]]
    if len(dims) != 2:
        raise TypeError(f"pld.tensor.{what}: the window must be 1-D or 2-D, got shape {dims}")
    return dims


_COMBINE = {ReduceOp.Sum: pl.tile.add, ReduceOp.Max: pl.tile.maximum, ReduceOp.Min: pl.tile.minimum,
            ReduceOp.Prod: pl.tile.mul}


def _combine(op, what):
    try:
        return _COMBINE[ReduceOp(op)]
    except (ValueError, KeyError):
        raise TypeError(f"pld.tensor.{what}: op={op!r} is not a ReduceOp (Sum, Max, Min, Prod)") from None


@jit.inline
def _barrier(signal, zeros):
    ctx = get_comm_ctx(signal)
    n = nranks(ctx)
    for p in pl.range(n):
        _notify(signal, p, zeros, 1, op=NotifyOp.AtomicAdd)
    _wait(signal, zeros, n, cmp=WaitCmp.Ge)
    _notify(signal, rank(ctx), zeros, 0 - n, op=NotifyOp.AtomicAdd)


# -- blocks: a window larger than one tile is walked in tiles of at most _TILE_BYTES ----------

_TILE_BYTES = 16 * 1024
_BIG = 1 << 30


class _Blocks:
    """The tiling of a [rows, cols] (or 1-D [cols]) window: tiles of [tr, tc], nbr x nbc of
    them, the last ones ragged (valid shapes computed at run time)."""

    def __init__(self, t, what, cols=None, rows=None):
        from pypto._core import ir
        dims = _shape(t, what)
        self.one_d = len(dims) == 1
        self.rows = rows if rows is not None else (1 if self.one_d else dims[0])
        self.cols = cols if cols is not None else dims[-1]
        elem = max(1, ir.dtype_bytes(t.type.dtype))
        per_row = _TILE_BYTES // elem
        self.tc = self.cols if self.cols <= per_row else per_row
        self.tr = max(1, min(self.rows, _TILE_BYTES // (self.tc * elem)))
        self.nbr = (self.rows + self.tr - 1) // self.tr
        self.nbc = (self.cols + self.tc - 1) // self.tc

    def args(self):
        return [self.one_d, self.rows, self.cols, self.tr, self.tc, self.nbr, self.nbc]


@jit.inline
def _allreduce(target, signal, zeros, one_d, rows, cols, tr, tc, nbr, nbc, combine):
    # Block b is combined by rank b % n: it reads block b of every rank, then writes the result
    # into every rank's block b (only its owner reads a block, so nobody reads it afterwards).
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    _barrier(signal, zeros)
    for b in pl.range(me, nbr * nbc, n):
        r0 = (b // nbc) * tr
        c0 = (b % nbc) * tc
        vr = pl.min(tr, rows - r0)
        vc = pl.min(tc, cols - c0)
        if one_d:
            offs = [c0]
        else:
            offs = [r0, c0]
        acc = _remote_load(target, 0, offs, [tr, tc], valid_shape=[vr, vc])
        for k in pl.range(1, n):
            acc = combine(acc, _remote_load(target, k, offs, [tr, tc], valid_shape=[vr, vc]))
        for p in pl.range(n):
            _remote_store(acc, target, p, offs)
    _barrier(signal, zeros)


@jit.inline
def _broadcast(target, signal, zeros, one_d, rows, cols, tr, tc, nbr, nbc, root):
    # Every rank copies root's blocks into its own target (root copies onto itself: the same
    # values); nobody but root is read, and the last barrier keeps root's copy until all are done.
    _barrier(signal, zeros)
    for b in pl.range(nbr * nbc):
        r0 = (b // nbc) * tr
        c0 = (b % nbc) * tc
        if one_d:
            offs = [c0]
        else:
            offs = [r0, c0]
        data = _remote_load(target, root, offs, [tr, tc], valid_shape=[pl.min(tr, rows - r0), pl.min(tc, cols - c0)])
        pl.store(data, offs, target)
    _barrier(signal, zeros)


@jit.inline
def _allgather(local, target, signal, zeros, local_1d, cols, tc, nbc):
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    _barrier(signal, zeros)  # nobody still reads its target from an earlier use
    for j in pl.range(nbc):
        c0 = j * tc
        if local_1d:
            offs = [c0]
        else:
            offs = [0, c0]
        data = pl.load(local, offs, [1, tc], valid_shape=[1, pl.min(tc, cols - c0)])
        for p in pl.range(n):
            _remote_store(data, target, p, [me, c0])
    _barrier(signal, zeros)


@jit.inline
def _reduce_scatter(target, signal, zeros, cols, tc, nbc, combine):
    # Row r of every rank is read by rank r only, so rank r stores its combination at once.
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    _barrier(signal, zeros)
    for j in pl.range(nbc):
        c0 = j * tc
        vc = pl.min(tc, cols - c0)
        acc = _remote_load(target, 0, [me, c0], [1, tc], valid_shape=[1, vc])
        for k in pl.range(1, n):
            acc = combine(acc, _remote_load(target, k, [me, c0], [1, tc], valid_shape=[1, vc]))
        pl.store(acc, [me, c0], target)
    _barrier(signal, zeros)


@jit.inline
def _all_to_all(src, target, signal, zeros, cols, tc, nbc):
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    _barrier(signal, zeros)  # nobody still reads its target from an earlier use
    for p in pl.range(n):
        for j in pl.range(nbc):
            c0 = j * tc
            row = pl.load(src, [p, c0], [1, tc], valid_shape=[1, pl.min(tc, cols - c0)])
            _remote_store(row, target, p, [me, c0])
    _barrier(signal, zeros)


@jit.inline
def _count_block(count, j, tc, nbc):
    # The valid columns of column block j of a row holding `count` elements: clipped to the
    # block, except that a negative count (first block) or one past the row (last block) is
    # kept, so that the load reports it.
    first = 1 - pl.min(j, 1)
    last = (j + 1) // nbc
    return pl.max(pl.min(count - j * tc, tc + last * _BIG), 0 - first * _BIG)


@jit.inline
def _all_to_all_v(src, target, signal, zeros, cols, tc, nbc, send_counts, recv_counts):
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    _barrier(signal, zeros)  # every rank is done with its target (a previous round's cleanup)
    for p in pl.range(n):
        sent = pl.read(send_counts, [p])
        for j in pl.range(nbc):
            c0 = j * tc
            row = pl.load(src, [p, c0], [1, tc], valid_shape=[1, _count_block(sent, j, tc, nbc)])
            _remote_store(row, target, p, [me, c0])
    _barrier(signal, zeros)
    for p in pl.range(n):
        got = pl.read(recv_counts, [p])
        for j in pl.range(nbc):
            c0 = j * tc
            part = pl.load(target, [p, c0], [1, tc], valid_shape=[1, _count_block(got, j, tc, nbc)])
            row = pl.tile.fillpad(part, pad_value=pl.PadValue.zero)
            pl.store(pl.tile.set_validshape(row, 1, pl.min(tc, cols - c0)), [p, c0], target)


@jit.inline
def _put(dst, peer, src, dst_offsets, src_offsets, shape, atomic):
    data = pl.load(src, src_offsets, shape)
    _remote_store(data, dst, peer, dst_offsets, atomic=atomic)


@jit.inline
def _get(dst, peer, src, dst_offsets, src_offsets, shape):
    data = _remote_load(src, peer, src_offsets, shape)
    pl.store(data, dst_offsets, dst)


def _zeros(t, what):
    return [0] * len(_shape(t, what))


def _bind_barrier(signal):
    return _barrier, [signal, _zeros(signal, "barrier")]


def _bind_allreduce(target, signal=None, *, op=ReduceOp.Sum, mode="mesh", core_num=1):
    if signal is None:
        raise TypeError("pld.tensor.allreduce(target, signal): inside a kernel it needs the signal window")
    if mode not in ("mesh", "ring"):
        raise ValueError(f"pld.tensor.allreduce: mode={mode!r} is not 'mesh' or 'ring'")
    _tile2d(target, "allreduce")
    return _allreduce, [target, signal, _zeros(signal, "allreduce"), *_Blocks(target, "allreduce").args(),
                        _combine(op, "allreduce")]


def _bind_broadcast(target, signal, *, root=None):
    if root is None:
        raise TypeError("pld.tensor.broadcast(target, signal, root=r): root= is required")
    _tile2d(target, "broadcast")
    return _broadcast, [target, signal, _zeros(signal, "broadcast"), *_Blocks(target, "broadcast").args(), root]


def _rows_of(t, what):
    dims = _shape(t, what)
    if len(dims) != 2:
        raise TypeError(f"pld.tensor.{what}: the target is [nranks, S], got shape {dims}")
    return dims


def _bind_allgather(local_data, target, signal):
    local = _shape(local_data, "allgather")
    dims = _rows_of(target, "allgather")
    if len(local) > 2 or local[-1] < dims[1]:
        raise TypeError(f"pld.tensor.allgather: the local data ({local}) must hold a row of the target's {dims[1]} "
                        "elements (its first row is sent)")
    b = _Blocks(target, "allgather", rows=1)
    return _allgather, [local_data, target, signal, _zeros(signal, "allgather"), len(local) == 1, b.cols, b.tc, b.nbc]


def _bind_reduce_scatter(target, signal, *, op=ReduceOp.Sum):
    _rows_of(target, "reduce_scatter")
    b = _Blocks(target, "reduce_scatter", rows=1)
    return _reduce_scatter, [target, signal, _zeros(signal, "reduce_scatter"), b.cols, b.tc, b.nbc,
                             _combine(op, "reduce_scatter")]


def _bind_all_to_all(input, target, signal):
    dims = _shape(target, "all_to_all")
    if len(dims) != 2 or len(_shape(input, "all_to_all")) != 2:
        raise TypeError(f"pld.tensor.all_to_all: input and target are [nranks, S], got {_shape(input, 'all_to_all')} "
                        f"and {dims}")
    b = _Blocks(target, "all_to_all", rows=1)
    return _all_to_all, [input, target, signal, _zeros(signal, "all_to_all"), b.cols, b.tc, b.nbc]


def _counts(t, what, name):
    ty = getattr(t, "type", None)
    dims = getattr(ty, "shape", None)
    dtype = getattr(ty, "dtype", None)
    if dims is None or len(dims) != 1 or getattr(dtype, "name", "") not in ("INT32", "INT64"):
        raise TypeError(f"pld.tensor.{what}: {name} is a 1-D INT32 (or INT64) tensor with one element count per rank, "
                        f"got {t!r}; fix: pass a pl.Tensor[[nranks], pl.INT32] (a kernel parameter or a window)")
    return t


def _bind_all_to_all_v(input, target, signal, send_counts, recv_counts):
    dims = _shape(target, "all_to_all_v")
    if len(dims) != 2 or _shape(input, "all_to_all_v") != dims:
        raise TypeError(f"pld.tensor.all_to_all_v: input and target are [nranks, S] of one shape, got "
                        f"{_shape(input, 'all_to_all_v')} and {dims}")
    b = _Blocks(target, "all_to_all_v", rows=1)
    return _all_to_all_v, [input, target, signal, _zeros(signal, "all_to_all_v"), b.cols, b.tc, b.nbc,
                           _counts(send_counts, "all_to_all_v", "send_counts"),
                           _counts(recv_counts, "all_to_all_v", "recv_counts")]


def _region(dst, src, dst_offsets, src_offsets, shape, what):
    if shape is None:
        shape = _shape(src, what)
    shape = list(shape)
    dst_offsets = list(dst_offsets) if dst_offsets is not None else [0] * len(_shape(dst, what))
    src_offsets = list(src_offsets) if src_offsets is not None else [0] * len(_shape(src, what))
    return dst_offsets, src_offsets, shape


def _bind_put(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, *, atomic=AtomicType.None_,
              chunk_rows=0, chunk_cols=0, pipeline=False):
    d, s, shp = _region(dst, src, dst_offsets, src_offsets, shape, "put")
    return _put, [dst, peer, src, d, s, shp, atomic]


def _bind_get(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, *, chunk_rows=0, chunk_cols=0,
              pipeline=False):
    d, s, shp = _region(dst, src, dst_offsets, src_offsets, shape, "get")
    return _get, [dst, peer, src, d, s, shp]


def _bind_tile_put(dst, peer, src, stage, stage2=None, dst_offsets=None, src_offsets=None, shape=None, *,
                   atomic=AtomicType.None_):
    return _bind_put(dst, peer, src, dst_offsets, src_offsets, shape, atomic=atomic)


def _bind_tile_get(dst, peer, src, stage, stage2=None, dst_offsets=None, src_offsets=None, shape=None):
    return _bind_get(dst, peer, src, dst_offsets, src_offsets, shape)


def _not_yet(name):
    def bind(*args, **kwargs):
        raise NotImplementedError(f"pld.tensor.{name} is not implemented yet (docs/distributed.md, 'Missing'); fix: "
                                  "build it from _remote_store and pld.tensor.barrier")
    return bind


for _body in (_barrier, _count_block, _allreduce, _broadcast, _allgather, _reduce_scatter, _all_to_all, _all_to_all_v, _put, _get):
    _body._pl_user_span = True  # errors and deadlock reports name the user's call line (program_builder)

barrier = _Splice("barrier", _bind_barrier)
allreduce = _Splice("allreduce", _bind_allreduce)
broadcast = _Splice("broadcast", _bind_broadcast)
allgather = _Splice("allgather", _bind_allgather)
reduce_scatter = _Splice("reduce_scatter", _bind_reduce_scatter)
put = _Splice("put", _bind_put)
get = _Splice("get", _bind_get)
tile_put = _Splice("put", _bind_tile_put)
tile_get = _Splice("get", _bind_tile_get)
all_to_all = _Splice("all_to_all", _bind_all_to_all)
all_to_all_v = _Splice("all_to_all_v", _bind_all_to_all_v)

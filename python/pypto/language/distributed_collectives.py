"""pld's tensor-level operations and collectives inside kernels, built from the primitives
(remote_load / remote_store / notify / wait). Each is a @pl.jit.inline body spliced into the
calling kernel (the parser calls `_pl_splice` to pick the body and bind its constants):

- barrier(signal): every rank adds 1 to cell 0 of every rank's signal, waits until its own
  cell reaches nranks, then takes nranks off again. The count is consumed in units of nranks,
  so the signal returns to zero and early arrivals of the next barrier are kept: reusable in
  loops with no reset.
- allreduce(target, signal, op=, mode=): barrier; each rank combines its tile with every
  peer's (remote loads, mesh); barrier (nobody overwrites what a peer still reads); store.
  mode="ring" is accepted and computed the same way (the result is identical).
- broadcast(target, signal, root=): barrier; every rank loads root's copy; barrier; store.
- allgather(local, target[NR, S], signal): each rank stores its row into every rank's target
  (remote stores), then a barrier.
- reduce_scatter(target[NR, S], signal, op=): row r of rank r becomes the combination of row r
  of every rank.
- all_to_all(input[NR, S], target[NR, S], signal): row p of rank r's input lands in row r of
  rank p's target (remote stores), then a barrier.
- all_to_all_v(input[NR, S], target[NR, S], signal, send_counts[NR], recv_counts[NR]): the
  first send_counts[p] elements of row p of rank r's input land in row r of rank p's target;
  afterwards row p of my target holds recv_counts[p] received elements, the rest of the row is
  zero. Barrier, remote stores, barrier, zero the tails (the first barrier keeps a peer's next
  round from landing before my tails are cleared: reusable in loops).
- put / get: one tile between this rank's tensor and a peer's window.
Targets are one static tile (2-D, fitting the vector buffer).
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


@jit.inline
def _allreduce(target, signal, zeros, origin, shape, combine):
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    _barrier(signal, zeros)
    acc = pl.load(target, origin, shape)
    for k in pl.range(1, n):
        other = _remote_load(target, (me + k) % n, origin, shape)
        acc = combine(acc, other)
    _barrier(signal, zeros)
    pl.store(acc, origin, target)


@jit.inline
def _broadcast(target, signal, zeros, origin, shape, root):
    _barrier(signal, zeros)
    data = _remote_load(target, root, origin, shape)
    _barrier(signal, zeros)
    pl.store(data, origin, target)


@jit.inline
def _allgather(local, target, signal, zeros, origin, row, shape):
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    data = pl.load(local, origin, shape)
    for p in pl.range(n):
        _remote_store(data, target, p, [me, 0])
    _barrier(signal, zeros)


@jit.inline
def _reduce_scatter(target, signal, zeros, shape, combine):
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    _barrier(signal, zeros)
    acc = pl.load(target, [me, 0], shape)
    for k in pl.range(1, n):
        other = _remote_load(target, (me + k) % n, [me, 0], shape)
        acc = combine(acc, other)
    _barrier(signal, zeros)
    pl.store(acc, [me, 0], target)


@jit.inline
def _all_to_all(src, target, signal, zeros, shape):
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    for p in pl.range(n):
        row = pl.load(src, [p, 0], shape)
        _remote_store(row, target, p, [me, 0])
    _barrier(signal, zeros)


@jit.inline
def _all_to_all_v(src, target, signal, zeros, shape, send_counts, recv_counts):
    ctx = get_comm_ctx(signal)
    me = rank(ctx)
    n = nranks(ctx)
    _barrier(signal, zeros)  # every rank is done with its target (a previous round's cleanup)
    for p in pl.range(n):
        sent = pl.read(send_counts, [p])
        row = pl.load(src, [p, 0], shape, valid_shape=[1, sent])
        _remote_store(row, target, p, [me, 0])
    _barrier(signal, zeros)
    for p in pl.range(n):
        got = pl.read(recv_counts, [p])
        row = pl.tile.fillpad(pl.load(target, [p, 0], shape, valid_shape=[1, got]), pad_value=pl.PadValue.zero)
        pl.store(row, [p, 0], target)


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
    return _allreduce, [target, signal, _zeros(signal, "allreduce"), _zeros(target, "allreduce"),
                        _shape(target, "allreduce"), _combine(op, "allreduce")]


def _bind_broadcast(target, signal, *, root=None):
    if root is None:
        raise TypeError("pld.tensor.broadcast(target, signal, root=r): root= is required")
    return _broadcast, [target, signal, _zeros(signal, "broadcast"), _zeros(target, "broadcast"),
                        _shape(target, "broadcast"), root]


def _bind_allgather(local_data, target, signal):
    local = _shape(local_data, "allgather")
    dims = _shape(target, "allgather")
    if len(dims) != 2:
        raise TypeError(f"pld.tensor.allgather: the target is [nranks, S], got shape {dims}")
    row = [dims[1]] if len(local) == 1 else [1, dims[1]]  # the first S elements of the local data
    return _allgather, [local_data, target, signal, _zeros(signal, "allgather"), [0] * len(local), None, row]


def _bind_reduce_scatter(target, signal, *, op=ReduceOp.Sum):
    dims = _shape(target, "reduce_scatter")
    if len(dims) != 2:
        raise TypeError(f"pld.tensor.reduce_scatter: the target is [nranks, S], got shape {dims}")
    return _reduce_scatter, [target, signal, _zeros(signal, "reduce_scatter"), [1, dims[1]],
                             _combine(op, "reduce_scatter")]


def _bind_all_to_all(input, target, signal):
    dims = _shape(target, "all_to_all")
    if len(dims) != 2 or len(_shape(input, "all_to_all")) != 2:
        raise TypeError(f"pld.tensor.all_to_all: input and target are [nranks, S], got {_shape(input, 'all_to_all')} "
                        f"and {dims}")
    return _all_to_all, [input, target, signal, _zeros(signal, "all_to_all"), [1, dims[1]]]


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
    return _all_to_all_v, [input, target, signal, _zeros(signal, "all_to_all_v"), [1, dims[1]],
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


for _body in (_barrier, _allreduce, _broadcast, _allgather, _reduce_scatter, _all_to_all, _all_to_all_v, _put, _get):
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

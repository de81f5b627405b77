"""`import pypto.language.distributed as pld`: PyPTO's distributed names (docs/distributed.md).

Three levels: a `@pl.jit.host` function runs in the user's process (it allocates window buffers
and dispatches chip functions with `device=r`), a `@pl.jit` chip function runs on rank r's
virtual chip (a process of its own), and `@pl.jit.incore` kernels read and write peers' windows
and signal. Here:

- the kernel operations are ops of the registry (`src/ops/families/distributed.cpp`, printed as
  `pl.dist.*`): `pld.tile.remote_load` / `remote_store`, `pld.system.notify` / `wait` /
  `defer_wait`; `pld.tensor.put` / `get` and the collectives are spliced from them at parse
  time (`pypto.language.distributed_collectives`);
- `pld.rank(ctx)`, `pld.nranks(ctx)` and `pld.world_size()` are constants of the rank that
  parses (each rank process compiles its own chip program), `pld.get_comm_ctx(t)` names the
  domain of a window tensor;
- `pld.DistributedTensor[[shape], dtype]` is a tensor parameter (the rank's own window; the
  instructions reach peers' copies at run time);
- the host side (`alloc_window_buffer`, `window`, dispatch) is the jit package's
  (`pypto.jit.distributed`), reached through `_HOST`.
"""

import enum

from pypto._core import ir

from . import ops as _ops
from .types import Tensor as _Tensor

# -- enums (PyPTO's members and values) ------------------------------------------------------


class NotifyOp(enum.IntEnum):
    """How pld.system.notify changes the peer's cell: add (atomic) or set (a plain store)."""

    AtomicAdd = 0
    Set = 1


class WaitCmp(enum.IntEnum):
    """pld.system.wait's condition on the cell: == expected or >= expected (signed INT32)."""

    Eq = 0
    Ge = 1


class AtomicType(enum.IntEnum):
    """Remote stores / puts: plain (None_) or atomic add (Add)."""

    None_ = 0
    Add = 1


class ReduceOp(enum.IntEnum):
    """The combining operation of allreduce / reduce_scatter."""

    Sum = 0
    Max = 1
    Min = 2
    Prod = 3


class CommCtxType(enum.IntEnum):
    """The kind of a communication context (one kind: a window domain)."""

    Window = 0


# -- types ----------------------------------------------------------------------------------


class _DistributedTensorMeta(type):
    def __getitem__(cls, key):
        return _Tensor[key]


class DistributedTensor(metaclass=_DistributedTensorMeta):
    """`pld.DistributedTensor[[M, N], pl.FP32]`: a window tensor parameter. In a chip function or
    kernel it is this rank's copy (pl.load / store / read / write / slice act on it); the
    pld ops reach the same offsets of a peer's copy. Bare `pld.DistributedTensor` takes the
    argument's shape and dtype, as bare pl.Tensor does."""

    _pl_tensor_alias = True


class CommCtx:
    """What `pld.get_comm_ctx(window)` gives: the domain of a window tensor, as seen by this rank."""

    def __init__(self, rank, nranks):
        self.rank, self.nranks = rank, nranks

    def __repr__(self):
        return f"pld.CommCtx(rank={self.rank}, nranks={self.nranks})"


# -- the rank that parses (set in each rank process), the host session (set by the driver) ---

_RANK = None  # (rank, nranks) in a rank process
_HOST = None  # the running host session (pypto.jit.distributed.HostSession) in the driver


def _set_rank(rank, nranks):
    global _RANK
    _RANK = None if rank is None else (int(rank), int(nranks))


def _rank_or_fail(what):
    if _RANK is None:
        raise RuntimeError(f"pld.{what} is only known on a rank: use it in a chip function (@pl.jit) or kernel "
                           "dispatched by a @pl.jit.host function with device=r; fix: run the program through its "
                           "@pl.jit.host function with RunConfig(distributed_config=pypto.runtime.DistributedConfig("
                           "device_ids=[0, 1]))")
    return _RANK


def _marked(f):
    f._pl_marker = True  # the parser calls it at parse time, with IR values as arguments
    return f


@_marked
def world_size():
    """The number of ranks of the domain (host functions, chip functions and kernels)."""
    if _HOST is not None:
        return _HOST.world_size()
    return _rank_or_fail("world_size()")[1]


@_marked
def get_comm_ctx(dist_tensor):
    """The communication context of a window tensor (its domain, as this rank sees it)."""
    rank, nranks = _rank_or_fail("get_comm_ctx(t)")
    return CommCtx(rank, nranks)


def _ctx(ctx, what):
    if ctx is None:
        return _rank_or_fail(what)
    if isinstance(ctx, CommCtx):
        return ctx.rank, ctx.nranks
    raise TypeError(f"pld.{what} takes a pld.CommCtx (pld.get_comm_ctx(window)), got {ctx!r}")


@_marked
def rank(ctx=None):
    """This rank's index in the domain of `ctx` (a constant of the rank's program)."""
    return _ctx(ctx, "rank(ctx)")[0]


@_marked
def nranks(ctx=None):
    """The number of ranks in the domain of `ctx`."""
    return _ctx(ctx, "nranks(ctx)")[1]


def _host(what):
    if _HOST is None:
        raise RuntimeError(f"pld.{what} is a host-level call: use it in a @pl.jit.host function (the one that "
                           "dispatches chip functions with device=r)")
    return _HOST


def alloc_window_buffer(size=None, *, dtype=None, name="", shape=None):
    """A window buffer of `size` bytes, or of `shape` elements of `dtype` (alloc_window_buffer(
    [N], dtype=pl.FP32) or (N * 4)); every rank has one at the same offset of its window."""
    return _host("alloc_window_buffer(...)").alloc_window_buffer(size, dtype=dtype, name=name, shape=shape)


def window(buf, shape, *, dtype=None):
    """The `pld.DistributedTensor` view of window buffer `buf` with `shape` and `dtype`; passed to
    a chip function, it is that rank's copy."""
    return _host("window(buf, shape, dtype=)").window(buf, shape, dtype)


# -- kernel ops (the registry's dist.* records) --------------------------------------------


class _Namespace:
    def __init__(self, name, members):
        self._name = name
        self.__dict__.update(members)

    def __repr__(self):
        return f"pld.{self._name}"


_remote_load = _ops.OpStub("dist.remote_load")
_remote_store = _ops.OpStub("dist.remote_store")
_notify = _ops.OpStub("dist.notify")
_wait = _ops.OpStub("dist.wait")
_defer_wait = _ops.OpStub("dist.defer_wait")

from . import distributed_collectives as _coll  # noqa: E402

system = _Namespace("system", {
    "world_size": world_size, "get_comm_ctx": get_comm_ctx, "rank": rank, "nranks": nranks,
    "notify": _notify, "wait": _wait, "defer_wait": _defer_wait,
})
tile = _Namespace("tile", {"remote_load": _remote_load, "remote_store": _remote_store, "get": _coll.tile_get,
                           "put": _coll.tile_put})
tensor = _Namespace("tensor", {
    "alloc_window_buffer": alloc_window_buffer, "window": window, "remote_store": _remote_store,
    "put": _coll.put, "get": _coll.get, "barrier": _coll.barrier, "allreduce": _coll.allreduce,
    "broadcast": _coll.broadcast, "allgather": _coll.allgather, "reduce_scatter": _coll.reduce_scatter,
    "all_to_all": _coll.all_to_all, "all_to_all_v": _coll.all_to_all_v,
})
remote_load = _remote_load
remote_store = _remote_store

__all__ = ["AtomicType", "CommCtx", "CommCtxType", "DistributedTensor", "NotifyOp", "ReduceOp", "WaitCmp",
           "alloc_window_buffer", "get_comm_ctx", "nranks", "rank", "remote_load", "remote_store", "system", "tensor",
           "tile", "window", "world_size"]
del ir

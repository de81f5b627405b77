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

from . import distributed_collectives as _coll
from . import distributed_names as _names
from .distributed_collectives import _defer_wait, _notify, _remote_load, _remote_store, _wait
from .distributed_names import (  # noqa: F401
    AtomicType,
    CommCtx,
    CommCtxType,
    DistributedTensor,
    NotifyOp,
    ReduceOp,
    WaitCmp,
    alloc_window_buffer,
    get_comm_ctx,
    nranks,
    rank,
    window,
    world_size,
)


def _set_rank(rank, nranks):
    """Makes this process rank `rank` of `nranks` (the rank processes of pypto.jit.distributed)."""
    _names._set_rank(rank, nranks)


def _set_host(session):
    """Installs (or, None, removes) the running host session; returns the previous one."""
    prev, _names._HOST = _names._HOST, session
    return prev


# -- kernel ops (the registry's dist.* records) --------------------------------------------


class _Namespace:
    def __init__(self, name, members):
        self._name = name
        self.__dict__.update(members)

    def __repr__(self):
        return f"pld.{self._name}"


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

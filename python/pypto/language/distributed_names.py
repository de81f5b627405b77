"""The names of pld that need no op: enums, types, the rank that parses and the host session
slot (pypto.language.distributed re-exports them; distributed_collectives uses them)."""

import enum

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
        spec = _Tensor[key]
        spec.window = True
        return spec


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



"""The operations a @pto.kernel body may call. They are markers: the lane parser recognises
them in the kernel's source; calling one from ordinary Python is an error that says so."""

from pypto._core import PyptoError


def _outside(name):
    raise PyptoError(f"pto.{name}() can only be used inside a @pto.kernel function\n"
                     "  fix: call it in a kernel body and run the kernel with pto.launch(...)")


def get_global_id():
    """This lane's index in the whole launch: block id * block size + lane id."""
    _outside("get_global_id")


def get_block_id():
    """The index of this lane's block in the grid (a pipeline's iteration)."""
    _outside("get_block_id")


def get_lane_id():
    """This lane's index inside its block."""
    _outside("get_lane_id")


def load(ptr):
    """The fp32 element at `ptr` (`tensor + index`)."""
    _outside("load")


def store(ptr, value, nbytes=None):
    """Writes `value` at `ptr`; with `nbytes`, writes a local buffer (pipelines)."""
    _outside("store")


def fma(dst, a, b, c):
    """Stores a + b + c at `dst` (the seed's vector_add form: one instruction adds and stores)."""
    _outside("fma")


def mad(dst, a, b, c):
    """Stores a * b + c at `dst` (a true multiply-add)."""
    _outside("mad")


def barrier():
    """Orders the 32 lanes of the calling warp."""
    _outside("barrier")


def barrier_block():
    """Orders every lane of the block."""
    _outside("barrier_block")


def alloc_local(n):
    """An on-chip buffer of `n` fp32 elements (double-buffered in a pipeline)."""
    _outside("alloc_local")


def async_load(dst, ptr, nbytes):
    """Starts copying `nbytes` at `ptr` into local buffer `dst`."""
    _outside("async_load")


def wait_all():
    """Waits for this iteration's async loads."""
    _outside("wait_all")


def mma(c, a, b, m, n, k):
    """c[m, n] += a[m, k] @ b[k, n] on the cube unit."""
    _outside("mma")


def pipeline():
    """`with pto.pipeline() as pl:` declares pipeline stages; pl.run() runs them."""
    _outside("pipeline")


# function -> (lane op kind, accepted argument counts, returns a value)
SPECS = {
    get_global_id: ("global_id", (0,), True),
    get_block_id: ("block_id", (0,), True),
    get_lane_id: ("lane_id", (0,), True),
    load: ("load", (1,), True),
    store: ("store", (2, 3), False),
    fma: ("fma", (4,), False),
    mad: ("mad", (4,), False),
    barrier: ("barrier", (0,), False),
    barrier_block: ("barrier_block", (0,), False),
    alloc_local: ("alloc_local", (1,), True),
    async_load: ("async_load", (3,), False),
    wait_all: ("wait_all", (0,), False),
    mma: ("mma", (6,), False),
}

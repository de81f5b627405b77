"""@pto.kernel and pto.launch: the decorator parses the body into a lane program (C++),
launches lower it for their arguments and run as SPMD block tasks of the launch stream's task
pool (src/kernel/launch_queue.cpp; docs/kernel-api.md "How launches run")."""

import atexit
import math
import operator

from pypto._core import PyptoError
from pypto._core import kernel as _k

from .lane_parser import LaneParser
from .memory import Tensor, at_user_line


class Kernel:
    """A parsed @pto.kernel lane program. Remembers its last launch shape for the debugger
    and the profiler."""

    def __init__(self, fn):
        self.fn = fn
        self.name = fn.__name__
        name, params, ops, num_values = LaneParser(fn).parse()
        self.params = params
        self.program = _k.lane_program(name, params, ops, num_values)
        self.last_shape = None

    def __call__(self, *args, **kwargs):
        raise PyptoError(f"kernel '{self.name}' runs on the device; it cannot be called directly\n"
                         f"  fix: pto.launch({self.name}, grid=(blocks, 1, 1), block=(lanes, 1, 1), args=(...))")

    def __repr__(self):
        return f"<pto.kernel {self.name}({', '.join(self.params)})>"


def kernel(fn):
    """Decorator: a lane program run by every lane of a launch (see docs/kernel-api.md)."""
    return Kernel(fn)


def _size(v, what):
    if isinstance(v, int):
        v = (v,)
    try:
        dims = tuple(operator.index(x) for x in v)  # 2.5 blocks is an error, not 2
    except TypeError:
        raise PyptoError(f"pto.launch: {what} must be an int or a tuple of ints, got {v!r}\n"
                         f"  fix: e.g. {what}=(4, 1, 1); round a computed size with int(...) or math.ceil(...)") from None
    if not dims or any(d < 1 for d in dims):
        raise PyptoError(f"pto.launch: {what}={v!r} must have positive sizes\n  fix: e.g. {what}=(4, 1, 1)")
    n = math.prod(dims)
    if n >= 2**63:  # not a 64-bit size (the lane limit itself is checked in C++: check_launch_shape)
        raise PyptoError(f"pto.launch: {what}={v!r} is {n} in all, more than a 64-bit size\n"
                         f"  fix: launch ceil(n / block) blocks for n elements")
    return n


def kernel_args(k, args):
    if not isinstance(k, Kernel):
        raise PyptoError(f"expected a @pto.kernel function, got {type(k).__name__}\n  fix: decorate it with @pto.kernel")
    args = tuple(args)
    if len(args) != len(k.params):
        raise PyptoError(f"kernel '{k.name}' takes {len(k.params)} arguments ({', '.join(k.params)}), got {len(args)}\n"
                         "  fix: pass args=(...) with one entry per parameter")
    for name, a in zip(k.params, args):
        if isinstance(a, Tensor):
            a._check_alive(f"kernel '{k.name}'")
        elif isinstance(a, int) and not -(2**63) <= a < 2**63:
            from .memory import _call_site

            raise PyptoError(f"{_call_site()}: argument '{name}' of kernel '{k.name}' = {a} does not fit in 64 bits\n"
                             "  fix: pass a value between -2**63 and 2**63 - 1")
    return [a._buf if isinstance(a, Tensor) else a for a in args]


def launch_shape(k, grid, block):
    if grid is None and block is None:
        if k.last_shape is None:
            raise PyptoError(f"kernel '{k.name}' has not been launched yet, so its grid and block are unknown\n"
                             "  fix: pass grid=(...) and block=(...)")
        return k.last_shape
    return _size(grid if grid is not None else 1, "grid"), _size(block if block is not None else 1, "block")


@at_user_line
def launch(k, grid=(1, 1, 1), block=(1, 1, 1), args=(), engine=None, platform="a2a3sim"):
    """Queues `k` on the launch stream over grid x block lanes and returns at once; use
    pto.sync() or pto.memcpy_d2h to wait. The launch keeps its tensors alive until it ends.
    engine: "native" (default, or $PYPTO_ENGINE) or "sim"."""
    if engine is None:
        from pypto.runtime.config import default_engine

        engine = default_engine()
    values = kernel_args(k, args)
    g, b = launch_shape(k, grid, block)
    k.last_shape = (g, b)
    _k.launch(k.program, values, g, b, platform, engine)


def sync():
    """Waits for every launched kernel; raises the first launch error (e.g. a data race)."""
    _k.sync()


def _drain_at_exit():
    """Lets queued launches finish before the interpreter tears down; after an uncaught
    KeyboardInterrupt (Ctrl-C outside pto.sync) they are cancelled instead."""
    import sys

    try:
        if isinstance(getattr(sys, "last_value", None), KeyboardInterrupt):
            _k.cancel_launches()
        _k.sync()
    except Exception:  # noqa: BLE001  (an unreported launch error at exit is dropped)
        pass


atexit.register(_drain_at_exit)

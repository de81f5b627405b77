"""Device memory of the instruction-level API: pto.Tensor / pto.alloc_tensor and the host
copies. The bytes live in C++ (DeviceBuffer); launches hold their own references, so
dropping a Tensor while a kernel runs is safe, and a freed tensor raises a clear error."""

import functools
import itertools
import operator
import re

import numpy as np

from pypto._core import PyptoError
from pypto._core import kernel as _k

_ids = itertools.count()


def _call_site():
    """`file:line` of the user's code that called into pypto."""
    from pypto.runtime import _call_site as site

    return site()


_SITED = re.compile(r"^\S+:\d+: ")


def at_user_line(fn):
    """Errors raised by `fn` (a public call of the lane API) name the user's line that called
    it, in front of the message, unless the message starts at a line already (a kernel's)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (PyptoError, TypeError, ValueError) as e:
            if _SITED.match(str(e)):
                raise
            raise type(e)(f"{_call_site()}: {e}") from None

    return wrapper


class Tensor:
    """`nbytes` of device memory, zero-filled. `with pto.Tensor(n) as t:` waits for the
    kernels using `t` when the block ends, then frees it."""

    @at_user_line
    def __init__(self, nbytes, name=None):
        try:
            size = operator.index(nbytes)  # ints and numpy ints; 4.5 or "64" is not a size
        except TypeError:
            raise PyptoError(
                f"pto.alloc_tensor({nbytes!r}): the size must be an int number of bytes, got "
                f"{type(nbytes).__name__}\n  fix: pass n * 4 for n fp32 elements, e.g. pto.alloc_tensor(x.nbytes)"
            ) from None
        self._buf = _k.DeviceBuffer(size, name or f"tensor{next(_ids)}")
        self._freed_at = None  # file:line of the user's free (or the end of its with block)

    @property
    def nbytes(self):
        return self._buf.nbytes

    @property
    def freed(self):
        return self._buf.freed

    @property
    def name(self):
        return self._buf.label

    def free(self):
        """Waits for the launches using this tensor, then releases its memory."""
        if self._freed_at is None:
            self._freed_at = _call_site()
        self._buf.free()

    def _check_alive(self, use):
        """A freed tensor is a user error at the line that uses it, naming where it was freed."""
        if self._buf.freed:
            where = f" at {self._freed_at}" if self._freed_at else ""
            raise PyptoError(
                f"{_call_site()}: {use} uses tensor '{self.name}' after it was freed{where}\n"
                "  fix: keep the tensor alive until its last use (move the .free() or the end of its "
                "`with pto.Tensor(...)` block after it), or allocate a new one"
            )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()
        return False

    def __repr__(self):
        state = "freed" if self.freed else f"{self.nbytes} bytes"
        return f"pto.Tensor({self.name}, {state})"


@at_user_line
def alloc_tensor(nbytes, name=None):
    """Allocates `nbytes` of device memory (a pto.Tensor)."""
    return Tensor(nbytes, name)


def _buffer(t, what):
    if not isinstance(t, Tensor):
        raise PyptoError(f"{what} expects a pto.Tensor, got {type(t).__name__}\n"
                         "  fix: allocate device memory with pto.alloc_tensor(nbytes)")
    t._check_alive(what)
    return t._buf


@at_user_line
def memcpy_h2d(dst, src):
    """Copies the float32 host array `src` into device tensor `dst` (after kernels using `dst`
    end); a smaller array fills the tensor's first elements."""
    _buffer(dst, "pto.memcpy_h2d").copy_from(np.ascontiguousarray(src))


@at_user_line
def memcpy_d2h(dst, src):
    """Copies device tensor `src` into the host array `dst` once the kernels using `src` end;
    raises the first error of a finished launch."""
    buf = _buffer(src, "pto.memcpy_d2h")
    if not isinstance(dst, np.ndarray) or not dst.flags.c_contiguous or not dst.flags.writeable:
        raise PyptoError("pto.memcpy_d2h needs a writable C-contiguous numpy array as destination\n"
                         "  fix: pass np.zeros(n, dtype=np.float32)")
    buf.copy_to(dst)

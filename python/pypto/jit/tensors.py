"""Binding numpy arrays and torch tensors to the runtime without copies.

A bound tensor is the tuple the C++ runtime reads: (data pointer, dtype name, shape,
strides in elements, name). Outputs are written in place through the same pointer.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from pypto import _core

_NUMPY_DTYPES = {
    np.dtype(np.float32): "FP32",
    np.dtype(np.float16): "FP16",
    np.dtype(np.int32): "INT32",
    np.dtype(np.int16): "INT16",
    np.dtype(np.int8): "INT8",
    np.dtype(np.int64): "INT64",
    np.dtype(np.uint8): "UINT8",
    np.dtype(np.uint16): "UINT16",
    np.dtype(np.uint32): "UINT32",
    np.dtype(np.uint64): "UINT64",
    np.dtype(np.bool_): "BOOL",
}


def _torch_dtypes():
    try:
        import torch
    except ImportError:  # torch is optional
        return {}
    # torch.uint16 / uint32 / uint64 exist from torch 2.3 on (with few ops of their own).
    unsigned = {getattr(torch, n): n.upper() for n in ("uint16", "uint32", "uint64") if hasattr(torch, n)}
    return unsigned | {
        torch.float32: "FP32",
        torch.float16: "FP16",
        torch.bfloat16: "BF16",
        torch.int32: "INT32",
        torch.int16: "INT16",
        torch.int8: "INT8",
        torch.int64: "INT64",
        torch.uint8: "UINT8",
        torch.bool: "BOOL",
    }


_ITEMSIZE = {"FP32": 4, "FP16": 2, "BF16": 2, "INT32": 4, "INT16": 2, "INT8": 1, "INT64": 8, "UINT8": 1,
             "UINT16": 2, "UINT32": 4, "UINT64": 8, "BOOL": 1}
_NUMPY_OF = {name: dt for dt, name in _NUMPY_DTYPES.items()}


def dtype_name(dtype, where: str) -> str:
    """pypto's name ("FP32", ...) of a dtype given as a pl.DataType, a numpy or torch dtype,
    or a name; anything else is a TypeError naming `where`."""
    name = getattr(dtype, "name", None)
    if name in _ITEMSIZE and not isinstance(dtype, np.dtype):
        return name
    if isinstance(dtype, str) and dtype.upper() in _ITEMSIZE:
        return dtype.upper()
    try:
        npd = np.dtype(dtype)
    except TypeError:
        npd = None
    if npd is not None and npd in _NUMPY_DTYPES:
        return _NUMPY_DTYPES[npd]
    torch_name = _torch_dtypes().get(dtype)
    if torch_name is not None:
        return torch_name
    raise TypeError(f"{where}: dtype {dtype!r} is not supported by pypto; fix: use one of "
                    + ", ".join(f"pl.{n}" for n in _ITEMSIZE))


def itemsize(name: str) -> int:
    return _ITEMSIZE[name]


def numpy_dtype(name: str):
    """The numpy dtype holding `name` (BF16: its 16-bit pattern as uint16)."""
    return np.dtype(np.uint16) if name == "BF16" else _NUMPY_OF[name]


def is_device_tensor(x) -> bool:
    return isinstance(x, DeviceTensor)


def is_torch_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def is_tensor(x) -> bool:
    return isinstance(x, np.ndarray) or is_torch_tensor(x) or is_device_tensor(x)


def tensor_spec(x, name: str):
    """(shape, dtype name) of an array argument, with a clear error for unsupported dtypes."""
    if is_device_tensor(x):
        return tuple(x.shape), x.dtype_name
    if isinstance(x, np.ndarray):
        dtype = _NUMPY_DTYPES.get(x.dtype)
        if dtype is None:
            raise TypeError(
                f"argument '{name}': numpy dtype {x.dtype} is not supported by pypto; "
                "fix: convert it, e.g. with .astype(np.float32)"
            )
        return tuple(int(d) for d in x.shape), dtype
    if is_torch_tensor(x):
        dtype = _torch_dtypes().get(x.dtype)
        if dtype is None:
            raise TypeError(
                f"argument '{name}': torch dtype {x.dtype} is not supported by pypto; "
                "fix: convert it, e.g. with .to(torch.float32)"
            )
        if x.device.type != "cpu":
            raise TypeError(
                f"argument '{name}' is on device '{x.device}'; pypto runs on the host CPU; "
                f"fix: pass {name}.cpu()"
            )
        return tuple(int(d) for d in x.shape), dtype
    raise TypeError(
        f"argument '{name}' is a {type(x).__name__}, expected a numpy array or torch tensor; "
        f"fix: pass np.asarray({name}, dtype=np.float32) or a torch tensor"
    )


def bind_tensor(x, name: str, writable: bool):
    """The runtime's view of `x` (no copy). Outputs must be writable."""
    shape, dtype = tensor_spec(x, name)
    if is_device_tensor(x):  # the worker's resident buffer: contiguous, written in place
        x.check_alive(name)
        return (int(x.data_ptr), dtype, list(shape), _row_major(shape), name)
    if isinstance(x, np.ndarray):
        if writable and not x.flags.writeable:
            raise ValueError(
                f"output '{name}' is a read-only numpy array; pypto writes outputs in place; "
                f"fix: pass a writable array, e.g. {name}.copy()"
            )
        ptr = x.__array_interface__["data"][0]
        if any(s % x.itemsize for s in x.strides):
            raise ValueError(
                f"argument '{name}' has strides that are not a multiple of its element size; "
                f"fix: pass np.ascontiguousarray({name})"
            )
        strides = [s // x.itemsize for s in x.strides]
    else:
        if writable and x.requires_grad:
            raise ValueError(
                f"output '{name}' requires grad; pypto writes outputs in place; "
                f"fix: pass {name}.detach()"
            )
        ptr = x.data_ptr()
        strides = list(x.stride())
    strides = [int(s) for s in strides]
    if writable:
        why = _core.tensor_self_overlap(list(shape), strides)
        if why:
            raise ValueError(
                f"output '{name}' has elements that share memory: {why}; pypto writes outputs in "
                "place, one result per element; fix: pass an array with its own memory for every "
                "element, e.g. np.empty(shape) or torch.empty(shape)"
            )
    return (int(ptr), dtype, list(shape), strides, name)


def _row_major(shape):
    strides, step = [], 1
    for d in reversed(list(shape)):
        strides.append(step)
        step *= int(d)
    return list(reversed(strides))


class DeviceTensor:
    """A tensor resident in a worker's device memory: `data_ptr` (an address from
    worker.malloc / alloc_tensor), `shape`, `dtype`. The virtual chip's device memory is host
    memory, so a DeviceTensor passed to a run is read and written in place, without copies;
    `buffer` keeps the memory alive (the worker's allocation)."""

    def __init__(self, data_ptr, shape, dtype, *, buffer=None):
        self.data_ptr = int(data_ptr)
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.dtype_name = dtype_name(dtype, "DeviceTensor")
        self.buffer = buffer
        self._freed = False

    def nbytes(self) -> int:
        return math.prod(self.shape) * itemsize(self.dtype_name)

    def numpy(self) -> np.ndarray:
        """A numpy view of the device memory (no copy; BF16 as its uint16 bit patterns)."""
        self.check_alive("DeviceTensor")
        n = math.prod(self.shape)
        npd = numpy_dtype(self.dtype_name)
        raw = (ctypes.c_char * (n * npd.itemsize)).from_address(self.data_ptr) if n else bytearray()
        return np.frombuffer(raw, dtype=npd, count=n).reshape(self.shape)

    def check_alive(self, name):
        if self._freed:
            raise ValueError(f"'{name}' is a DeviceTensor that was freed (worker.free_tensor); fix: allocate it again "
                             "with worker.alloc_tensor(shape, dtype)")

    def __repr__(self):
        return f"DeviceTensor(0x{self.data_ptr:x}, shape={list(self.shape)}, dtype={self.dtype_name})"


# ------------------------------------------------------------------ scalar arguments

_FLOAT_MAX = {"FP16": 65504.0, "BF16": 3.3895313892515355e38, "FP32": 3.4028234663852886e38}


def as_scalar(x, scalar_param: bool):
    """`x` as a Python bool, int or float when it is a scalar value: a Python number, a numpy
    scalar of any width, and (for a parameter annotated pl.Scalar) a 0-d numpy array or 0-d
    torch tensor; None otherwise."""
    if isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, np.generic) and x.dtype.kind in "biuf":
        return x.item()
    if scalar_param and getattr(x, "ndim", None) == 0 and (isinstance(x, np.ndarray) or is_torch_tensor(x)):
        if isinstance(x, np.ndarray) and x.dtype.kind not in "biuf":
            return None
        if is_torch_tensor(x) and x.dtype.is_complex:
            return None
        return x.item()
    return None


def scalar_range(name: str):
    """(low, high, text) of the values a scalar of dtype `name` holds; None when any."""
    if name == "INDEX":
        name = "INT64"
    if name in _FLOAT_MAX:
        m = _FLOAT_MAX[name]
        return -m, m, f"-{m:g} .. {m:g} (and inf, nan)"
    if name[:3] == "INT" or name[:4] == "UINT":
        bits = int(name.lstrip("UINT"))
        lo, hi = (0, 2**bits - 1) if name.startswith("U") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        return lo, hi, f"{lo} .. {hi}"
    return None


def scalar_argument(x, dtype: str, fn: str, name: str):
    """The value passed for scalar parameter `name` of dtype `dtype` (pypto's name), converted
    from any int / float / numpy / torch scalar that fits; a value of another kind, or one out
    of the dtype's range, is a TypeError naming the parameter and the range."""
    v = as_scalar(x, True)
    if v is None:
        raise TypeError(f"{fn}(): argument '{name}' is a {type(x).__name__}, but the parameter is a "
                        f"pl.Scalar[pl.{dtype}]; fix: pass an int or a float (or a numpy / torch scalar)")
    if dtype == "BOOL":
        if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
            return bool(v)
        raise TypeError(f"{fn}(): argument '{name}' = {v!r} is not a bool, but the parameter is a "
                        f"pl.Scalar[pl.BOOL]; fix: pass True or False")
    rng = scalar_range(dtype)
    if rng is None:
        return v
    lo, hi, text = rng
    is_float = dtype in _FLOAT_MAX
    if not is_float and isinstance(v, float):
        raise TypeError(f"{fn}(): argument '{name}' = {v!r} is a float, but the parameter is a "
                        f"pl.Scalar[pl.{dtype}]; fix: pass an int (int({name}), or round it first)")
    if is_float:
        v = float(v)
        if math.isfinite(v) and not lo <= v <= hi:
            raise TypeError(f"{fn}(): argument '{name}' = {v!r} does not fit pl.Scalar[pl.{dtype}] "
                             f"({text}); fix: pass a value in that range, or annotate the parameter with a wider dtype")
        return v
    v = int(v)
    if not lo <= v <= hi:
        raise TypeError(f"{fn}(): argument '{name}' = {v} does not fit pl.Scalar[pl.{dtype}] "
                         f"({text}); fix: pass a value in that range, or annotate the parameter with a wider dtype")
    return v

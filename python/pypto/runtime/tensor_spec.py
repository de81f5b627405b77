"""`pypto.runtime.tensor_spec`: how `run()` makes the arguments of a program it runs.

    TensorSpec("a", [128, 128], torch.float32, init_value=torch.randn)   # an input
    TensorSpec("c", [128, 128], torch.float32, is_output=True)           # an output (zeros)
    ScalarSpec("n", 16, "int64_t")                                       # a scalar argument

A TensorSpec's dtype picks the array kind: a torch dtype makes a torch tensor, anything else
(pl.FP32, np.float32, "FP32") a numpy array."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.jit import tensors as _tensors


@dataclass
class TensorSpec:
    """One tensor argument: `name`, `shape`, `dtype`; `init_value` is None (zeros), a number
    (filled with it), an array or tensor of the shape (copied), or a callable returning one
    (called with the shape, e.g. torch.randn, or with no argument); `is_output`: run()
    compares it with the golden after the run."""

    name: str
    shape: Any
    dtype: Any
    init_value: Any = None
    is_output: bool = False

    def __post_init__(self):
        self.shape = [int(d) for d in self.shape]
        if any(d < 0 for d in self.shape):
            raise ValueError(f"TensorSpec('{self.name}', shape={self.shape}): dimensions must be >= 0")
        self.dtype_name = _tensors.dtype_name(self.dtype, f"TensorSpec('{self.name}')")

    def _is_torch(self) -> bool:
        return type(self.dtype).__module__.startswith("torch")

    def create_tensor(self):
        """A new tensor of this spec (a torch tensor for a torch dtype, else a numpy array)."""
        v = self.init_value
        if callable(v) and not isinstance(v, type):
            try:
                v = v(*self.shape) if self._is_torch() else v(self.shape)
            except TypeError:
                v = v()
        if self._is_torch():
            import torch

            if v is None:
                return torch.zeros(self.shape, dtype=self.dtype)
            if isinstance(v, (int, float, bool)):
                return torch.full(self.shape, v, dtype=self.dtype)
            t = torch.as_tensor(v).to(self.dtype).clone()
        else:
            npd = _tensors.numpy_dtype(self.dtype_name)
            if v is None:
                return np.zeros(self.shape, dtype=npd)
            if isinstance(v, (int, float, bool)):
                return np.full(self.shape, v, dtype=npd)
            t = np.array(v.numpy() if _tensors.is_torch_tensor(v) else v, dtype=npd, copy=True)
        if list(t.shape) != self.shape:
            if math.prod(t.shape) != math.prod(self.shape):
                raise ValueError(f"TensorSpec('{self.name}'): init_value has shape {list(t.shape)}, the spec "
                                 f"{self.shape}; fix: give an init_value of the spec's shape")
            t = t.reshape(self.shape)
        return t


@dataclass
class ScalarSpec:
    """One scalar argument: `name`, `value`, `ctype` (its C type, e.g. "int64_t", "float",
    or a ctypes type): the value is passed as an int or a float accordingly."""

    name: str
    value: Any
    ctype: Any = None

    def arg(self):
        c = getattr(self.ctype, "__name__", self.ctype)
        text = str(c or "").lower()
        if any(k in text for k in ("float", "double", "half", "bf16", "fp")):
            return float(self.value)
        if "bool" in text:
            return bool(self.value)
        if isinstance(self.value, float) and not text:
            return self.value
        return int(self.value)

"""Binding numpy arrays and torch tensors to the runtime: the jit package's (pypto.jit.tensors),
under the name it had here."""

from pypto.jit.tensors import (DeviceTensor, bind_tensor, dtype_name, is_device_tensor, is_tensor,  # noqa: F401
                               is_torch_tensor, itemsize, numpy_dtype, tensor_spec)

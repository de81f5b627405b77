"""What a rank runs a dispatch with, in either transport (pypto.jit.distributed: the embedded
rank processes; pypto.jit.distributed_mpi: the MPI ranks): the chip function imported by file
path and name, and the call that records the signal events of the merged swimlane."""

import importlib.util
import os
import sys

import numpy as np

from pypto import _core
from pypto.jit.tensors import DeviceTensor, dtype_name, numpy_dtype

BF16 = "BF16"  # a dispatch spec's dtype of BF16 memory: numpy has no bfloat16 (it holds the uint16 bit patterns)


def spec_dtype(dtype, array=None, bf16=False):
    """The dtype a dispatch spec carries: "BF16" for BF16 windows and host tensors (`bf16`),
    else the numpy dtype string."""
    if bf16 or (dtype is not None and dtype_name(dtype, "pld.window") == BF16):
        return BF16
    return (array.dtype if array is not None else numpy_dtype(dtype_name(dtype, "pld.window"))).str


def chip_arg(array, dtype):
    """A rank's dispatch argument over shared (or received) memory: the numpy array, or for BF16
    a DeviceTensor over the same bytes, so the chip function sees BF16 and not UINT16."""
    if dtype != BF16:
        return array
    if not array.flags.c_contiguous:
        raise ValueError("a BF16 tensor passed to a chip function must be contiguous (x[r] of a contiguous "
                         "host tensor, or a window); fix: pass x.contiguous() to the host function")
    return DeviceTensor(array.ctypes.data, array.shape, BF16, buffer=array)


def shared_array(buffer, offset, shape, dtype, strides=None):
    """chip_arg of the memory at `offset` of `buffer` (dtype: a spec_dtype)."""
    npd = np.dtype(np.uint16) if dtype == BF16 else np.dtype(dtype)
    return chip_arg(np.ndarray(shape, dtype=npd, buffer=buffer, offset=offset, strides=strides), dtype)


def host_array(v):
    """(numpy view, is BF16) of a host function's tensor argument: torch tensors share their
    memory (BF16 as its uint16 bit patterns); anything else is returned as it is."""
    if hasattr(v, "detach") and hasattr(v, "numpy"):  # a torch tensor
        import torch

        t = v.detach()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16), True
        return t.numpy(), False
    return v, False


def call_chip(fn, args, run_config):
    """Runs one dispatch of a chip function on this rank (recording its signal events for the
    merged swimlane when the run config asks for the swimlane)."""
    signals = run_config is not None and run_config.enable_chip_swimlane and run_config.dfx_dir
    if signals:
        _core.comm_record_signals(True)
    try:
        fn(*args, config=run_config)
    finally:
        if signals:
            write_signal_events(run_config.dfx_dir, _core.comm_take_signals())
            _core.comm_record_signals(False)


def write_signal_events(dfx_dir, events):
    import json
    os.makedirs(dfx_dir, exist_ok=True)
    keys = ("kind", "t_us", "rank", "peer", "cell_offset", "value", "where")
    with open(os.path.join(dfx_dir, "signal_events.json"), "w") as f:
        json.dump([dict(zip(keys, e)) for e in events], f)


def load_function(modules, file, qualname):
    mod = modules.get(file)
    if mod is None:
        spec = importlib.util.spec_from_file_location(f"__pld_rank_{len(modules)}__", file)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        modules[file] = mod
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def phases(steps):
    """The host function's recorded steps as runs of one kind, in order: ("dispatch", [...]) for
    consecutive chip dispatches (sent together), ("callback", [...]) for host callbacks."""
    i = 0
    while i < len(steps):
        j = i
        while j < len(steps) and steps[j][0] == steps[i][0]:
            j += 1
        yield steps[i][0], steps[i:j]
        i = j

"""The instruction-level API (`import pypto as pto`): @pto.kernel lane programs, device
memory, asynchronous launches, pipelines and profiling. See docs/kernel-api.md."""

from .lane_ops import (alloc_local, async_load, barrier, barrier_block, fma, get_block_id, get_global_id,
                       get_lane_id, load, mad, mma, pipeline, store, wait_all)
from .launch import Kernel, kernel, launch, sync
from .memory import Tensor, alloc_tensor, memcpy_d2h, memcpy_h2d
from .profiling import Profile, profile, profile_on_npu

__all__ = ["Kernel", "Profile", "Tensor", "alloc_local", "alloc_tensor", "async_load", "barrier", "barrier_block",
           "fma", "get_block_id", "get_global_id", "get_lane_id", "kernel", "launch", "load", "mad",
           "memcpy_d2h", "memcpy_h2d", "mma", "pipeline", "profile", "profile_on_npu", "store", "sync", "wait_all"]

"""`pypto.runtime.ChipWorker`: a virtual chip that stays up between runs. Its worker pool
(host threads, each with its virtual core) is started once; a registered program is
prepared once (task footprints analysed, native kernels loaded) and then runs many times.
The pool and the scheduling live in C++ (src/runtime/runtime.cpp, ChipWorker)."""

from __future__ import annotations

import ctypes
import math
import threading
import weakref

import numpy as np

from pypto import _core
from pypto.jit import compile_program, compiled_of
from pypto.jit import tensors as _tensors
from pypto.jit.config import RunConfig
from pypto.jit.functions import program_kind
from pypto.jit.tensors import DeviceTensor  # noqa: F401  (pypto.runtime.DeviceTensor)

# PyPTO's default runtime name for ChipWorker(runtime=...): the task runtime of this package.
_DEFAULT_RUNTIME = "tensormap_and_ringbuffer"


def _host_buffer(x, what):
    """(address, nbytes, dtype name or None) of a host-side argument of copy_to / copy_from:
    a numpy array or torch tensor (contiguous), or a raw address (int)."""
    if isinstance(x, int) and not isinstance(x, bool):
        return x, None, None
    if _tensors.is_device_tensor(x):
        return x.data_ptr, x.nbytes(), x.dtype_name
    if isinstance(x, np.ndarray) or _tensors.is_torch_tensor(x):
        shape, dtype = _tensors.tensor_spec(x, what)
        contiguous = x.flags.c_contiguous if isinstance(x, np.ndarray) else x.is_contiguous()
        if not contiguous:
            raise ValueError(f"{what} must be contiguous; fix: pass np.ascontiguousarray(...) / .contiguous()")
        ptr = x.__array_interface__["data"][0] if isinstance(x, np.ndarray) else x.data_ptr()
        return ptr, math.prod(shape) * _tensors.itemsize(dtype), dtype
    raise TypeError(f"{what} must be an address (int), a numpy array, a torch tensor or a DeviceTensor, "
                    f"got {type(x).__name__}")


class RegisteredProgram:
    """A compiled program bound to a ChipWorker: calling it runs it on the worker's pool."""

    def __init__(self, worker: ChipWorker, compiled, handle: int):
        self.worker, self.compiled, self._handle = worker, compiled, handle

    def __call__(self, *args, config: RunConfig | None = None):
        """Runs on `args` in place (like calling the compiled program) on the worker's pool."""
        cfg = config or self.worker.config
        return self.compiled._run(args, cfg, (self.worker._core_worker(), self._handle))

    def __repr__(self):
        return f"<{self.compiled!r} on {self.worker!r}>"


class RegistrationHandle:
    """A program registered on a worker under id `cid` (PyPTO's handle type): calling it runs
    the program on the worker; `unregister()` (or leaving `with`) makes later calls errors."""

    def __init__(self, worker, compiled, cid):
        self._program = worker.register(compiled)
        self._cid, self._closed = cid, False

    def cid(self):
        return self._cid

    def compiled(self):
        return self._program.compiled

    def closed(self) -> bool:
        return self._closed

    def __call__(self, *args, config: RunConfig | None = None):
        if self._closed:
            raise _core.PyptoError(f"registration {self._cid} of '{self._program.compiled.name}' was unregistered; "
                                   "fix: register the program again")
        return self._program(*args, config=config)

    def unregister(self) -> None:
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unregister()


class ChipWorker:
    """A virtual chip kept up between runs.

        with ChipWorker(config=RunConfig(platform="a2a3sim")) as worker:
            f = worker.register(compiled)   # prepared once
            f(a, b, c)                      # runs on the worker's pool, outputs in place
            worker.run(compiled, a, b, c)   # the same, registering on first use

    `config` fixes the platform, the engine and the number of host workers; its other fields
    (ring_size, trace_path, enable_chip_swimlane, ...) apply to each run. Runs on one worker
    are serialised. Using a closed worker raises a PyptoError."""

    _current: list = []  # weak references to workers initialised and not closed, latest last
    _lock = threading.Lock()

    def __init__(self, config: RunConfig | None = None, *, level: int = 2, runtime: str = _DEFAULT_RUNTIME,
                 enable_sdma: bool = False, auto_init=None):
        self.config = config or RunConfig()
        _core.check_platform(self.config.platform)  # real NPUs: a clear "no NPU here" error
        if not isinstance(level, int) or isinstance(level, bool) or level < 0:
            raise ValueError(f"ChipWorker(level={level!r}): must be an int >= 0 (2 = one chip)")
        self._level, self._runtime, self.enable_sdma = level, runtime, bool(enable_sdma)
        self._worker = None
        self._registered: dict[int, RegisteredProgram] = {}  # by handle
        self._programs: list = []  # (@pl.program Program, its CompiledProgram) compiled here
        self._buffers: dict[int, np.ndarray] = {}  # device memory: address -> owning host buffer
        if auto_init is None or auto_init:  # PyPTO's default: the chip is brought up at once
            self.init()

    def init(self) -> ChipWorker:
        """Starts the worker pool (done by the constructor unless auto_init=False); a second
        call is harmless. Returns the worker."""
        if self._worker is None:
            self._worker = _core.ChipWorker(self.config.options())
            with ChipWorker._lock:
                ChipWorker._current.append(weakref.ref(self))
        return self

    def initialized(self) -> bool:
        return self._worker is not None and not self._worker.closed

    def level(self) -> int:
        return self._level

    def platform(self) -> str:
        return self.config.platform

    def device_id(self) -> int:
        return self.config.device_id

    def runtime(self) -> str:
        return self._runtime

    def aicpu_dlopen_count(self) -> int:
        """No AICPU here: the scheduler is a host thread that loads nothing (always 0)."""
        return 0

    def host_dlopen_count(self) -> int:
        """Native-engine kernel modules loaded by this worker (one per registered program)."""
        return len(self._registered) if self.config.engine == "native" else 0

    @classmethod
    def current(cls, *, level=None, platform=None, device_id=None, runtime=None, require_sdma=False):
        """The most recently initialised open worker matching the given fields, or None."""
        with ChipWorker._lock:
            for ref in reversed(ChipWorker._current):
                w = ref()
                if w is None or not w.initialized() or not isinstance(w, cls):
                    continue
                if ((level is None or w.level() == level) and (platform is None or w.platform() == platform)
                        and (device_id is None or w.device_id() == device_id)
                        and (runtime is None or w.runtime() == runtime) and (not require_sdma or w.enable_sdma)):
                    return w
        return None

    # -- device memory (host memory of the virtual chip, owned by the worker) --------------
    def _check_worker_id(self, worker_id, what):
        if worker_id != 0:
            raise ValueError(f"ChipWorker.{what}(worker_id={worker_id!r}): a ChipWorker is one chip, worker 0; "
                             "fix: leave worker_id=0")

    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        """Allocates `nbytes` of zeroed device memory; returns its address."""
        self._check_worker_id(worker_id, "malloc")
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
            raise ValueError(f"ChipWorker.malloc(nbytes={nbytes!r}): must be an int >= 0")
        buf = np.zeros(max(nbytes, 1), dtype=np.uint8)
        ptr = buf.__array_interface__["data"][0]
        self._buffers[ptr] = buf
        return ptr

    def free(self, ptr: int, *, worker_id: int = 0) -> None:
        self._check_worker_id(worker_id, "free")
        if self._buffers.pop(int(ptr), None) is None:
            raise ValueError(f"ChipWorker.free(0x{int(ptr):x}): not an address this worker's malloc returned "
                             "(or freed twice); fix: free each allocation once")

    def _device_range(self, ptr, nbytes, what):
        """Checks that [ptr, ptr + nbytes) lies in one allocation of this worker."""
        for base, buf in self._buffers.items():
            if base <= ptr < base + buf.nbytes or (nbytes == 0 and ptr == base):
                if ptr + nbytes > base + buf.nbytes:
                    raise ValueError(f"ChipWorker.{what}: {nbytes} bytes at device address 0x{ptr:x} run past its "
                                     f"allocation of {buf.nbytes} bytes at 0x{base:x}; fix: copy at most "
                                     f"{base + buf.nbytes - ptr} bytes there")
                return
        raise ValueError(f"ChipWorker.{what}: device address 0x{ptr:x} is not in memory this worker allocated; "
                         "fix: use an address from worker.malloc or a tensor from worker.alloc_tensor")

    def _copy(self, what, dst, src, nbytes, device_is_dst):
        dst_ptr, dst_bytes, dst_dtype = _host_buffer(dst, f"{what}: the destination")
        src_ptr, src_bytes, src_dtype = _host_buffer(src, f"{what}: the source")
        dev_ptr = dst_ptr if device_is_dst else src_ptr
        dev_side, host_side = ("destination", "source") if device_is_dst else ("source", "destination")
        if dst_dtype and src_dtype and dst_dtype != src_dtype:
            raise TypeError(f"ChipWorker.{what}: the {dev_side} (device) has dtype {dst_dtype if device_is_dst else src_dtype} "
                            f"but the {host_side} (host) has dtype {src_dtype if device_is_dst else dst_dtype}; fix: "
                            "copy between tensors of one dtype")
        if nbytes is None:
            if dst_bytes is not None and src_bytes is not None and dst_bytes != src_bytes:
                raise ValueError(f"ChipWorker.{what}: the destination has {dst_bytes} bytes and the source {src_bytes}; "
                                 "fix: pass nbytes, or tensors of one size")
            nbytes = dst_bytes if dst_bytes is not None else src_bytes
            if nbytes is None:
                raise ValueError(f"ChipWorker.{what}: give nbytes when both sides are addresses")
        for side, have in (("destination", dst_bytes), ("source", src_bytes)):
            if have is not None and nbytes > have:
                raise ValueError(f"ChipWorker.{what}: {nbytes} bytes do not fit the {side} of {have} bytes "
                                 f"(destination {dst_bytes if dst_bytes is not None else '?'} bytes, source "
                                 f"{src_bytes if src_bytes is not None else '?'} bytes); fix: pass nbytes <= {have}")
        self._device_range(dev_ptr, nbytes, what)
        ctypes.memmove(dst_ptr, src_ptr, nbytes)

    def copy_to(self, dst_dev_ptr, src_host_ptr, nbytes=None, *, worker_id: int = 0) -> None:
        """Copies `nbytes` from host memory (an address, numpy array or torch tensor) to
        device memory (an address or DeviceTensor); dtypes and sizes of typed sides must agree."""
        self._check_worker_id(worker_id, "copy_to")
        self._copy("copy_to", dst_dev_ptr, src_host_ptr, nbytes, True)

    def copy_from(self, dst_host_ptr, src_dev_ptr, nbytes=None, *, worker_id: int = 0) -> None:
        """Copies `nbytes` from device memory to host memory (the reverse of copy_to)."""
        self._check_worker_id(worker_id, "copy_from")
        self._copy("copy_from", dst_host_ptr, src_dev_ptr, nbytes, False)

    def alloc_tensor(self, shape, dtype, *, init=None, worker_id: int = 0) -> DeviceTensor:
        """A DeviceTensor of `shape` and `dtype` in this worker's memory: zeros, or a copy of
        `init` (an array or tensor of that shape and dtype, or a number to fill with)."""
        self._check_worker_id(worker_id, "alloc_tensor")
        name = _tensors.dtype_name(dtype, "ChipWorker.alloc_tensor")
        shape = tuple(int(d) for d in shape)
        ptr = self.malloc(math.prod(shape) * _tensors.itemsize(name))
        t = DeviceTensor(ptr, shape, dtype, buffer=self._buffers[ptr])
        if init is not None:
            if isinstance(init, (int, float)) and not isinstance(init, bool):
                if name == "BF16":
                    raise TypeError("ChipWorker.alloc_tensor(init=<number>) of a BF16 tensor; fix: pass a torch "
                                    "bfloat16 tensor as init")
                t.numpy()[...] = init
            else:
                ishape, _ = _tensors.tensor_spec(init, "init")
                if tuple(ishape) != shape:
                    raise ValueError(f"ChipWorker.alloc_tensor: init has shape {list(ishape)} but the tensor has "
                                     f"shape {list(shape)}; fix: pass init of the tensor's shape")
                self.copy_to(t, init)
        return t

    def free_tensor(self, t: DeviceTensor, *, worker_id: int = 0) -> None:
        if not isinstance(t, DeviceTensor):
            raise TypeError(f"ChipWorker.free_tensor takes a DeviceTensor, got {type(t).__name__}")
        self.free(t.data_ptr, worker_id=worker_id)
        t._freed = True
        t.buffer = None

    def _core_worker(self):
        if self._worker is None:
            raise _core.PyptoError("this ChipWorker was made with auto_init=False and is not initialised; "
                                   "fix: call worker.init() before running programs on it")
        return self._worker

    def register(self, compiled) -> RegisteredProgram:
        """Prepares `compiled` (a CompiledProgram, a @pl.program class, or a @pl.jit function
        with fully annotated parameters) for runs on this worker; returns a callable."""
        compiled = self._compiled(compiled)
        if compiled.platform != self.config.platform:
            raise ValueError(
                f"ChipWorker.register: '{compiled.name}' was compiled for platform '{compiled.platform}' but this "
                f"worker runs '{self.config.platform}'; fix: compile it with "
                f"RunConfig(platform='{self.config.platform}') or use a worker of its platform"
            )
        handle = self._core_worker().load(compiled._compiled.host)  # the same handle again for a known program
        known = self._registered.get(handle)
        if known is None or known.compiled is not compiled:
            known = self._registered[handle] = RegisteredProgram(self, compiled, handle)
        return known

    def run(self, compiled, *args, config: RunConfig | None = None):
        """Runs `compiled` on `args` in place on this worker (registering it on first use)."""
        return self.register(compiled)(*args, config=config)

    def close(self) -> None:
        """Stops the worker pool. Closing twice is harmless; later runs raise."""
        if self._worker is not None:
            self._worker.close()
        with ChipWorker._lock:
            ChipWorker._current[:] = [r for r in ChipWorker._current if r() is not None and r() is not self]

    @property
    def closed(self) -> bool:
        return self._worker is None or self._worker.closed

    @property
    def runs(self) -> int:
        """Runs started on this worker."""
        return 0 if self._worker is None else self._worker.runs

    @property
    def num_workers(self) -> int:
        """Host threads of the pool (0 once closed)."""
        return 0 if self._worker is None else self._worker.num_workers

    def __enter__(self) -> ChipWorker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"{self.num_workers} workers"
        return f"<{type(self).__name__} {self.config.platform} {self.config.engine} ({state})>"

    def _compiled(self, program):
        if program_kind(program) == "program":  # compiled once per worker, by identity
            for p, compiled in self._programs:
                if p is program:
                    return compiled
            compiled = compile_program(program, self.config)
            self._programs.append((program, compiled))
            return compiled
        return compiled_of(program, self.config, where="ChipWorker.register(program)")


class Worker(ChipWorker):
    """PyPTO's host-level worker (`pypto.runtime.Worker`): on one virtual chip it is a
    ChipWorker (level 3 by default) with the same memory, register and run methods."""

    def __init__(self, config: RunConfig | None = None, *, level: int = 3, runtime: str = _DEFAULT_RUNTIME,
                 enable_sdma: bool = False, auto_init=None):
        super().__init__(config, level=level, runtime=runtime, enable_sdma=enable_sdma, auto_init=auto_init)

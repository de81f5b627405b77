"""The distributed driver (pld, docs/distributed.md): DistributedConfig, the rank processes and
the host-level interpreter of `@pl.jit.host` functions.

A call of a host function runs in the user's process. It maps one POSIX shm segment (a header
for the deadlock watchdog, one window per rank, then a staging area that holds the host
function's tensor arguments), walks the host body (window buffers, `pl.range` loops, chip
function dispatches with `device=r`) and sends each dispatch to rank r's process. Rank processes
are spawned (not forked: the runtime is multi-threaded), one per device; each is a whole
virtual chip with its own task pool, attaches to the segment (`_core.comm_attach`: the C++ side
does the memory and the atomics) and runs the chip functions it is sent in order. A call is
one-shot: a fresh, zeroed segment per call; the processes stay up (and exit with the user's
process). `DistributedWorker` (`.prepare()`) keeps one segment across calls. Under mpirun the
MPI transport (`pypto.jit.distributed_mpi`) takes the place of the rank processes and the segment."""

from __future__ import annotations

import ast
import atexit
import ctypes
import dataclasses
import inspect
import multiprocessing as mp
import os
import sys
import textwrap
import threading
import traceback
from multiprocessing import shared_memory
from typing import Any

import numpy as np

from pypto import _core
from pypto.jit import distributed_mpi
from pypto.jit.config import DistributedConfig, RunConfig
from pypto.jit.distributed_rank import call_chip as _call_chip
from pypto.jit.distributed_rank import load_function as _load_function
from pypto.jit.distributed_rank import host_array as _host_array
from pypto.jit.distributed_rank import phases as _phases
from pypto.jit.distributed_rank import shared_array as _shared_array
from pypto.jit.distributed_rank import spec_dtype as _spec_dtype

_ALIGN = 32


# -- shared memory --------------------------------------------------------------------------


def _round(n):
    return (int(n) + _ALIGN - 1) // _ALIGN * _ALIGN


class _Segment:
    """One shm segment: header | nranks windows of window_bytes | staging bytes."""

    def __init__(self, nranks, window_bytes, staging_bytes):
        self.nranks, self.window_bytes = nranks, _round(max(window_bytes, _ALIGN))
        self.header = _core.comm_header_bytes()
        self.staging_offset = self.header + nranks * self.window_bytes
        size = self.staging_offset + _round(max(staging_bytes, _ALIGN))
        self.shm = shared_memory.SharedMemory(create=True, size=size)
        self.shm.buf[:size] = bytes(size)  # zero (fresh segments are; be sure)

    def array(self, offset, shape, dtype, strides=None):
        return np.ndarray(shape, dtype=dtype, buffer=self.shm.buf, offset=offset, strides=strides)

    def close(self):
        # Unlinked only: the mapping goes when the last array over it does. (numpy keeps the
        # memoryview, not a buffer export, so an explicit close would unmap memory that the
        # arguments of a failed call, held by its traceback, still point into.)
        try:
            self.shm.unlink()
        except FileNotFoundError:
            pass


def _np_dtype(dtype):
    from pypto.jit.tensors import dtype_name, numpy_dtype  # the one dtype table of the jit package
    return np.dtype(numpy_dtype(dtype.name if hasattr(dtype, "name") else str(dtype)))


# -- rank processes -------------------------------------------------------------------------


def _rank_main(rank, nranks, conn, env):
    """A rank process: attach to each call's segment, run the chip functions sent, reply."""
    os.environ.update(env)
    import pypto  # noqa: F401  (installs the compile driver)
    from pypto._core import comm_abort, comm_attach, comm_detach, comm_set_state
    from pypto.language import distributed as pld
    pld._set_rank(rank, nranks)
    modules = {}
    seg = None
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        kind = msg[0]
        if kind == "exit":
            return
        if kind == "attach":
            _, name, window_bytes, timeout_s = msg
            if seg is not None:
                seg.close()
            seg = shared_memory.SharedMemory(name=name)
            base = ctypes.addressof(ctypes.c_char.from_buffer(seg.buf))
            comm_attach(base, window_bytes, rank, nranks, timeout_s)
            conn.send(("ok", None))
            continue
        if kind == "detach":
            comm_detach()
            if seg is not None:
                base = None
                import gc
                gc.collect()
                try:
                    seg.close()
                except BufferError:
                    pass
                seg = None
            conn.send(("ok", None))
            continue
        if kind == "call":
            _, file, qualname, specs, run_config = msg
            comm_set_state(0)
            args = None
            try:
                fn = _load_function(modules, file, qualname)
                args = [_rebuild_arg(seg, s) for s in specs]
                _call_chip(fn, args, run_config)
                comm_set_state(2)
                conn.send(("ok", None))
            except BaseException as e:  # noqa: BLE001 - reported to the driver, and to the other ranks
                text = f"{type(e).__name__}: {e}" if str(e) else traceback.format_exc(limit=3)
                stored = comm_abort(text)
                comm_set_state(2)
                conn.send(("error", stored or f"rank {rank} failed: {text}"))
            finally:
                del args
            continue


def _rebuild_arg(seg, spec):
    kind = spec[0]
    if kind == "array":
        _, offset, shape, dtype, strides = spec
        return _shared_array(seg.buf, offset, shape, dtype, strides)
    return spec[1]


class _Ranks:
    """The rank processes of one world size (spawned once, reused by every call)."""

    def __init__(self, nranks):
        ctx = mp.get_context("spawn")
        self.nranks = nranks
        self.lock = threading.Lock()  # one call at a time on these processes
        self.conns, self.procs = [], []
        env = {k: v for k, v in os.environ.items() if k.startswith("PYPTO")}
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        for r in range(nranks):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_rank_main, args=(r, nranks, child, env), daemon=True, name=f"pld-rank{r}")
            p.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(p)

    def alive(self):
        return all(p.is_alive() for p in self.procs)

    def broadcast(self, msg):
        for c in self.conns:
            c.send(msg)
        return [self.reply(r) for r in range(self.nranks)]

    def reply(self, r, timeout=None):
        c = self.conns[r]
        while not c.poll(1.0):
            if not self.procs[r].is_alive():
                return ("error", f"rank {r} failed: its process exited (code {self.procs[r].exitcode})")
        return c.recv()

    def close(self):
        for c in self.conns:
            try:
                c.send(("exit",))
            except OSError:
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


_POOLS: dict[int, _Ranks] = {}
_POOL_LOCK = threading.Lock()


def _ranks(n) -> _Ranks:
    with _POOL_LOCK:
        pool = _POOLS.get(n)
        if pool is None or not pool.alive():
            if pool is not None:
                pool.close()
            pool = _POOLS[n] = _Ranks(n)
        return pool


@atexit.register
def _close_pools():
    for pool in list(_POOLS.values()):
        pool.close()
    _POOLS.clear()


# -- the host session -----------------------------------------------------------------------


class WindowBuffer:
    """What pld.alloc_window_buffer returns: `nbytes` at `offset` of every rank's window."""

    def __init__(self, offset, nbytes, name):
        self.offset, self.nbytes, self.name = offset, nbytes, name

    def __repr__(self):
        return f"WindowBuffer({self.name or 'buf'}, {self.nbytes} bytes at {self.offset})"


class Window:
    """What pld.window(buf, shape, dtype=) returns on the host: a view of `buf`, one per rank."""

    def __init__(self, buf, shape, dtype):
        self.buf, self.shape, self.dtype = buf, tuple(int(d) for d in shape), dtype


class HostError(Exception):
    pass


class SubWorkerFunction:
    """`@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)` with a `...` body: a host
    callback. A host function calls it like a chip function without device=; the driver runs the
    Python callable bound to its name by `prepare(callbacks={name: fn})` once every dispatch
    before the call has finished on every rank, and dispatches after it wait for it. Host
    tensors reach the callable as numpy arrays (shared memory the ranks see), window views as
    [nranks, *shape] arrays of every rank's copy."""

    def __init__(self, func, where):
        self.func, self.where = func, where
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.signature = inspect.signature(func)

    @classmethod
    def declared(cls, func, span):
        from pypto.language.errors import parse_error
        where = f"{span.file}:{span.line}"
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
        except (OSError, TypeError, SyntaxError):
            return cls(func, where)
        body = [st for st in tree.body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)
                                               and isinstance(st.value.value, str))]
        is_ellipsis = len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and body[0].value.value is Ellipsis
        if body and not is_ellipsis:
            raise parse_error(span, f"host callback '{func.__name__}' (role=pl.Role.SubWorker) has a body; its "
                                    "body is the Python callable bound by prepare(callbacks=...)",
                              f"write `...` as its body and bind it: prog.prepare(callbacks={{'{func.__name__}': fn}})")
        return cls(func, where)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"host callback '{self.__name__}' runs when a @pl.jit.host function calls it; fix: call "
                           "it in the host function's body and bind it with prepare(callbacks={...})")

    def __repr__(self):
        return f"<host callback {self.__name__} ({self.where})>"


def _span(fn, node):
    file = inspect.getsourcefile(fn.func) or "<unknown>"
    line = fn.func.__code__.co_firstlineno + node.lineno - 1 - _decorator_offset(fn)
    return f"{file}:{line}"


def _decorator_offset(fn):
    return 0


class HostSession:
    """One call of a @pl.jit.host function: walks its body, dispatches chip functions."""

    def __init__(self, fn, config: DistributedConfig, rank_config, window_bytes=None):
        self.fn, self.config, self.rank_config = fn, config, rank_config
        self.n = config.world_size
        self.window_used = 0
        self.window_bytes = window_bytes
        self.dispatched = [[] for _ in range(self.n)]
        self.callbacks = {}  # name -> the bound callable (DistributedWorker callbacks=)
        self.dispatch_count = [0] * self.n  # dispatches sent to each rank (d{k} of its diagnostics)
        self.bf16_spans = []  # address ranges of the staged BF16 host tensors (run_host)
        # The call's sequence: ("dispatch", rank, entry) and ("callback", SubWorkerFunction, args, where).
        self.steps = []

    def add_dispatch(self, rank, entry):
        self.dispatched[rank].append(entry)
        self.steps.append(("dispatch", rank, entry))

    def world_size(self):
        return self.n

    def alloc_window_buffer(self, size, *, dtype=None, name="", shape=None):
        from pypto._core import ir
        if shape is None and isinstance(size, (list, tuple)):
            shape, size = size, None
        if shape is not None:
            if dtype is None or not isinstance(dtype, ir.DataType):
                raise HostError(f"pld.alloc_window_buffer(shape={list(shape)}) needs dtype=; fix: write "
                                f"pld.alloc_window_buffer({list(shape)}, dtype=pl.FP32)")
            nbytes = int(np.prod([int(d) for d in shape])) * _np_dtype(dtype).itemsize
        else:
            if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
                raise HostError(f"pld.alloc_window_buffer({size!r}): the size must be a positive number of bytes; fix: "
                                "write pld.alloc_window_buffer(N * 4) or pld.alloc_window_buffer([N], dtype=pl.FP32)")
            nbytes = size
        buf = WindowBuffer(self.window_used, nbytes, name)
        self.window_used += _round(nbytes)
        return buf

    def window(self, buf, shape, dtype):
        from pypto._core import ir
        if not isinstance(buf, WindowBuffer):
            raise HostError(f"pld.window takes a buffer of pld.alloc_window_buffer, got {buf!r}; fix: "
                            "buf = pld.alloc_window_buffer(nbytes); pld.window(buf, [N], dtype=pl.FP32)")
        if dtype is None or not isinstance(dtype, ir.DataType):
            raise HostError("pld.window(buf, shape) needs dtype=; fix: write pld.window(buf, [N], dtype=pl.FP32)")
        shape = [int(d) for d in (shape if isinstance(shape, (list, tuple)) else [shape])]
        need = int(np.prod(shape)) * _np_dtype(dtype).itemsize
        if need > buf.nbytes:
            raise HostError(f"pld.window(buf, {shape}, dtype={dtype}) needs {need} bytes but the buffer "
                            f"{buf.name or ''} has {buf.nbytes}; fix: allocate a larger buffer")
        return Window(buf, shape, dtype)


def _is_range_call(node, env, glb):
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Name) and f.id == "range":
        return True
    return isinstance(f, ast.Attribute) and f.attr in ("range", "parallel", "unroll")


class _Walker:
    """Runs the statements of a host body (the subset a host orchestrator is written in)."""

    def __init__(self, session, fn, tree, env):
        self.s, self.fn, self.env = session, fn, env
        self.glb = dict(fn.func.__globals__)
        if fn.func.__closure__:
            for name, cell in zip(fn.func.__code__.co_freevars, fn.func.__closure__):
                try:
                    self.glb[name] = cell.cell_contents
                except ValueError:
                    pass
        self.loop_vars = []
        self.file = inspect.getsourcefile(fn.func) or "<unknown>"
        self.first = fn.func.__code__.co_firstlineno

    def where(self, node):
        return f"{self.file}:{self.first + node.lineno - 1}"

    def fail(self, node, message, fix):
        raise HostError(f"{self.where(node)}: {message}; fix: {fix}")

    def eval(self, node):
        try:
            code = compile(ast.Expression(body=node), self.file, "eval")
            return eval(code, self.glb, self.env)  # noqa: S307 - the user's host expression
        except HostError:
            raise
        except Exception as e:  # noqa: BLE001
            self.fail(node, f"evaluating '{ast.unparse(node)}' failed: {type(e).__name__}: {e}",
                      "host functions compute with Python numbers, host tensors (x[r]) and pld calls")

    def run(self, body):
        for st in body:
            r = self.stmt(st)
            if r is not None:
                return r
        return None

    def stmt(self, st):
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            return None  # docstring
        if isinstance(st, ast.Pass):
            return None
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and self.is_dispatch(st.value):
            self.dispatch(st.value)
            return None
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and self.is_callback(st.value):
            self.callback(st.value)
            return None
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and self.is_collective(st.value):
            self.host_collective(st.value)
            return None
        if isinstance(st, ast.Assign):
            if isinstance(st.value, ast.Call) and self.is_dispatch(st.value):
                self.dispatch(st.value)
                return None
            if isinstance(st.value, ast.Call) and self.is_callback(st.value):
                self.fail(st, f"host callback '{ast.unparse(st.value.func)}' returns nothing to the host function",
                          "call it as a statement; it writes its results into the tensors it is given")
            value = self.eval(st.value)
            for t in st.targets:
                self.assign(t, value)
            return None
        if isinstance(st, ast.AnnAssign) and st.value is not None:
            self.assign(st.target, self.eval(st.value))
            return None
        if isinstance(st, ast.AugAssign):
            cur = self.eval(st.target)
            self.assign(st.target, self.eval(ast.BinOp(left=ast.Constant(cur), op=st.op, right=st.value)))
            return None
        if isinstance(st, ast.For):
            if not _is_range_call(st.iter, self.env, self.glb) or not isinstance(st.target, ast.Name):
                self.fail(st, f"a host loop runs over pl.range(...), not '{ast.unparse(st.iter)}'",
                          "write `for r in pl.range(pld.world_size()):`")
            args = [self.eval(a) for a in st.iter.args]
            self.loop_vars.append(st.target.id)
            try:
                for v in range(*[int(a) for a in args]):
                    self.env[st.target.id] = v
                    r = self.run(st.body)
                    if r is not None:
                        return r
            finally:
                self.loop_vars.pop()
            return None
        if isinstance(st, ast.If):
            return self.run(st.body if self.eval(st.test) else st.orelse)
        if isinstance(st, ast.Return):
            return ("return", None if st.value is None else self.eval(st.value))
        if isinstance(st, ast.Expr):
            self.eval(st.value)
            return None
        self.fail(st, f"'{type(st).__name__}' statements are not part of a host orchestrator",
                  "a host function allocates window buffers, loops with pl.range and dispatches chip functions")

    def assign(self, target, value):
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        else:
            self.fail(target, "a host function assigns to names only", "write `name = ...`")

    def is_collective(self, call):
        return getattr(self.eval(call.func), "_pl_splice", None) is not None

    def host_collective(self, call):
        """pld.tensor.<collective>(windows...) at host level: its builtin chip function on every rank."""
        from pypto.jit import distributed_builtins as builtins
        coll = self.eval(call.func)
        args = [self.eval(a) for a in call.args]
        kwargs = {k.arg: self.eval(k.value) for k in call.keywords}
        name = coll.name

        def window_arg(v, what):
            if not isinstance(v, Window):
                self.fail(call, f"pld.tensor.{name} at host level takes pld.window(...) views; {what} is {v!r}",
                          "pass pld.window(buf, shape, dtype=) of a window buffer")
            return v

        def own_signal():  # PyPTO's host allreduce may leave the signal out: a window of its own
            return self.s.window(self.s.alloc_window_buffer(4, name=f"{name}_signal"), [1], _int32())

        if name in ("allreduce", "reduce_scatter"):
            target = window_arg(args[0] if args else kwargs.get("target"), "the target")
            signal = args[1] if len(args) > 1 else kwargs.get("signal")
            signal = own_signal() if signal is None else window_arg(signal, "the signal")
            op = kwargs.get("op", 0)
            from pypto.language.distributed import ReduceOp
            fn, fargs = getattr(builtins, f"{name}_{ReduceOp(op).name}"), [target, signal]
            qual = f"{name}_{ReduceOp(op).name}"
        elif name == "barrier":
            fn, fargs, qual = builtins.barrier, [window_arg(args[0] if args else kwargs.get("signal"), "the signal")], "barrier"
        elif name == "broadcast":
            root = kwargs.get("root")
            if not isinstance(root, int) or not 0 <= root < self.s.n:
                self.fail(call, f"pld.tensor.broadcast(root={root!r}): root must be a rank of the domain",
                          f"give root= in [0, {self.s.n})")
            fn, fargs, qual = builtins.broadcast, [window_arg(args[0], "the target"), window_arg(args[1], "the signal"),
                                                   root], "broadcast"
        elif name == "allgather":
            fn, fargs, qual = builtins.allgather, [window_arg(a, f"argument {i}") for i, a in enumerate(args[:3])], \
                "allgather"
        else:
            self.fail(call, f"pld.tensor.{name} is not available at host level", "call it inside a kernel")
        for r in range(self.s.n):
            self.s.add_dispatch(r, (fn, list(fargs), self.where(call), qual))

    def is_callback(self, call):
        try:
            return isinstance(self.eval(call.func), SubWorkerFunction)
        except HostError:
            return False

    def callback(self, call):
        """A host callback call: checked against its declaration, run by _execute in its place."""
        cb = self.eval(call.func)
        if any(k.arg == "device" for k in call.keywords):
            self.fail(call, f"host callback '{cb.__name__}' runs on the host, not on a device",
                      f"call it without device=: {cb.__name__}(...)")
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            self.fail(call, "a host callback takes its arguments one by one", f"write {cb.__name__}(a, b)")
        args = [self.eval(a) for a in call.args]
        kwargs = {k.arg: self.eval(k.value) for k in call.keywords}
        try:
            cb.signature.bind(*args, **kwargs)
        except TypeError as e:
            self.fail(call, f"host callback '{cb.__name__}' declared at {cb.where}: {e}",
                      f"pass the parameters of its declaration {cb.__name__}{cb.signature}")
        for i, a in enumerate(list(args) + list(kwargs.values())):
            if not isinstance(a, (np.ndarray, Window, int, float, bool, np.integer, np.floating, str)):
                self.fail(call, f"argument {i} of host callback '{cb.__name__}' is {type(a).__name__}",
                          "pass host tensors (x or x[r]), pld.window(...) views or Python numbers")
        self.s.steps.append(("callback", cb, (args, kwargs), self.where(call)))

    def is_dispatch(self, call):
        return any(k.arg == "device" for k in call.keywords)

    def dispatch(self, call):
        fn = self.eval(call.func)
        kind = getattr(fn, "_pl_jit_kind", None)
        if kind not in ("entry",):
            self.fail(call, f"'{ast.unparse(call.func)}' is not a chip function (@pl.jit), so it cannot run with device=",
                      "dispatch a @pl.jit function: chip_fn(args..., device=r)")
        dev = next(k.value for k in call.keywords if k.arg == "device")
        static = isinstance(dev, ast.Constant) or (isinstance(dev, ast.Name) and dev.id in self.loop_vars)
        if not static:
            self.fail(call, f"device={ast.unparse(dev)} is neither a constant nor the loop variable of "
                            "pl.range(pld.world_size())",
                      "write device=r inside `for r in pl.range(pld.world_size()):`, or device=0")
        r = self.eval(dev)
        if not isinstance(r, int) or not 0 <= r < self.s.n:
            self.fail(call, f"device={r!r} is outside the domain of {self.s.n} ranks",
                      f"give a device in [0, {self.s.n})")
        if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
            self.fail(call, "a chip dispatch takes its arguments one by one", "write chip_fn(a, b, device=r)")
        args = [self.eval(a) for a in call.args]
        extra = [k for k in call.keywords if k.arg != "device"]
        if extra:
            self.fail(call, f"a chip dispatch takes positional arguments and device= only, not '{extra[0].arg}='",
                      "pass the arguments by position")
        seen_scalar = None
        for i, a in enumerate(args):
            is_tensor = isinstance(a, (np.ndarray, Window))
            if not is_tensor and not isinstance(a, (int, float, bool, np.integer, np.floating)):
                self.fail(call, f"argument {i} of the chip dispatch is {type(a).__name__}, not a host tensor, a window "
                                "or a number", "pass x[r] of a host tensor, a pld.window(...) or a Python number")
            if is_tensor and seen_scalar is not None:
                self.fail(call, f"tensor argument {i} comes after scalar argument {seen_scalar} in a chip task",
                          "pass every tensor before the scalars")
            if not is_tensor and seen_scalar is None:
                seen_scalar = i
        self.s.add_dispatch(r, (fn, args, self.where(call), None))


def dispatches_to_devices(fn):
    """Whether the host function's body dispatches a chip function with device= (a distributed program)."""
    try:
        node = _function_tree(fn)
    except (OSError, TypeError, SyntaxError):
        return False
    return any(isinstance(n, ast.Call) and any(k.arg == "device" for k in n.keywords) for n in ast.walk(node))


def _int32():
    from pypto._core import ir
    return ir.DataType.INT32


def _function_tree(fn):
    src = textwrap.dedent(inspect.getsource(fn.func))
    tree = ast.parse(src)
    node = tree.body[0]
    ast.increment_lineno(tree, 0)
    return node


def run_host(fn, args, kwargs, run_config=None, worker=None):
    """Calls @pl.jit.host function `fn` with host arguments: one-shot (fresh windows) unless
    `worker` (a DistributedWorker) keeps them."""
    dc = getattr(run_config, "distributed_config", None) if run_config is not None else None
    if worker is not None:
        dc = worker.config
    if dc is None:
        raise ValueError(f"{fn.__name__}(): a @pl.jit.host function runs on several ranks and needs "
                         "RunConfig(distributed_config=...); fix: call it as "
                         f"{fn.__name__}(..., config=RunConfig(distributed_config=DistributedConfig(device_ids=[0, 1])))")
    engine = _rank_config(run_config)
    mpi = distributed_mpi.launched()
    if mpi:
        distributed_mpi.enter(dc.world_size)  # ranks > 0 serve from here on (and never return)
    from pypto.language import distributed as pld
    node = _function_tree(fn)
    sig = inspect.signature(fn.func)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{fn.__name__}(): {e}; fix: pass one value per parameter") from None
    bound.apply_defaults()
    # Host tensors are staged in the segment so that each rank's slice x[r] is shared memory.
    originals, layout, staging, users, bf16_names = {}, {}, 0, {}, set()
    for name, v in bound.arguments.items():
        users[name] = v
        v, is_bf16 = _host_array(v)  # a torch tensor's memory as numpy (BF16: its uint16 bit patterns)
        if is_bf16:
            bf16_names.add(name)
        if isinstance(v, np.ndarray):
            originals[name] = v
            layout[name] = staging
            staging += _round(v.nbytes)
    session = HostSession(fn, dc, engine)
    # A first walk sizes the windows (alloc_window_buffer) without dispatching anything.
    probe_env = {name: originals.get(name, v) for name, v in bound.arguments.items()}  # torch tensors as numpy
    prev = pld._set_host(session)
    try:
        _Walker(session, fn, node, probe_env).run(node.body)
    finally:
        pld._set_host(prev)
    window_bytes = session.window_used
    if worker is not None:
        seg = worker._segment(window_bytes, staging)
    elif mpi:
        seg = distributed_mpi.Segment(session.n, _round(max(window_bytes, _ALIGN)), _round(max(staging, _ALIGN)))
    else:
        seg = _Segment(session.n, window_bytes, staging)
    staged = {}
    try:
        env = dict(bound.arguments)
        for name, v in originals.items():
            a = seg.array(seg.staging_offset + layout[name], v.shape, v.dtype)
            a[...] = v
            staged[name] = a
            env[name] = a
        session = HostSession(fn, dc, engine)
        # where the staged BF16 tensors lie: their slices x[r] reach the ranks as BF16, not UINT16
        session.bf16_spans = [(a.ctypes.data, a.ctypes.data + a.nbytes) for n, a in staged.items() if n in bf16_names]
        pld._set_host(session)
        try:
            result = _Walker(session, fn, node, env).run(node.body)
        finally:
            pld._set_host(prev)
        _bind_callbacks(session, worker.callbacks if worker is not None else None)
        if mpi:
            distributed_mpi.execute(seg, session, _dispatch_plan, _window_place)
        else:
            ranks = worker._ranks if worker is not None else _ranks(session.n)
            with ranks.lock:
                _execute(ranks, seg, session)
        write_merged_swimlane(session)
        for name, v in originals.items():
            v[...] = staged[name]
        value = result[1] if result else None
        return _unstage(value, staged, users)
    finally:
        staged.clear()
        env = None
        if worker is None:
            import gc
            gc.collect()
            seg.close()


def _rank_config(run_config):
    """The RunConfig each rank runs its chip functions with: the caller's, less the distributed part."""
    if run_config is None:
        return None
    return dataclasses.replace(run_config, distributed_config=None)


def _unstage(value, staged, originals):
    for name, a in staged.items():
        if value is a:
            return originals[name]
    if isinstance(value, tuple):
        return tuple(_unstage(v, staged, originals) for v in value)
    if isinstance(value, np.ndarray):
        return np.array(value)
    return value


def _in_spans(a, spans):
    """Whether array `a` lies in one of the address ranges `spans` (the staged BF16 tensors)."""
    p = a.__array_interface__["data"][0]
    return any(lo <= p < hi for lo, hi in spans)


def _arg_spec(seg, a, rank, bf16_spans=()):
    if isinstance(a, Window):
        off = seg.header + rank * seg.window_bytes + a.buf.offset
        return ("array", off, a.shape, _spec_dtype(a.dtype), None)
    if isinstance(a, np.ndarray):
        base = np.frombuffer(seg.shm.buf, dtype=np.uint8)
        off = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        if not 0 <= off < seg.shm.size:
            raise HostError("a chip dispatch got a host array that is not a host function argument (or a slice of "
                            "one); fix: pass x[r] of a parameter of the @pl.jit.host function")
        return ("array", off, a.shape, _spec_dtype(None, a, _in_spans(a, bf16_spans)), a.strides)
    return ("scalar", a.item() if hasattr(a, "item") else a)


def _mpi_arg_spec(seg, a, rank, bf16_spans=()):
    """A dispatch argument for an MPI rank: a window by its offset in the rank's region, a host
    array in place (rank 0, the driver) or as a copy (the others), a scalar by value; with the
    dtype the chip function sees (_spec_dtype: BF16 memory is numpy uint16)."""
    if isinstance(a, Window):
        return ("window", seg.header + a.buf.offset, tuple(a.shape), _spec_dtype(a.dtype))
    if isinstance(a, np.ndarray):
        lo = seg.staging.ctypes.data
        if not lo <= a.__array_interface__["data"][0] < lo + seg.staging.nbytes:
            raise HostError("a chip dispatch got a host array that is not a host function argument (or a slice "
                            "of one); fix: pass x[r] of a parameter of the @pl.jit.host function")
        dt = _spec_dtype(None, a, _in_spans(a, bf16_spans))
        return ("local", a, dt) if rank == 0 else ("data", np.ascontiguousarray(a), dt)
    return ("scalar", a.item() if hasattr(a, "item") else a)


def _chip_location(fn, where, builtin):
    """(source file, qualified name) by which a rank process imports chip function `fn`."""
    qual = builtin or fn.func.__qualname__
    if "<locals>" in qual:
        raise HostError(f"{where}: chip function '{fn.__name__}' is defined inside a function; rank "
                        "processes import it by name; fix: define chip functions at module level")
    return inspect.getsourcefile(fn.func), qual


def _dispatch_plan(seg, session, steps):
    """(rank, chip function, its file, its qualified name, argument specs, run config, the
    arguments) of each dispatch step of the MPI transport, in order."""
    plan = []
    for _, r, (fn, args, where, builtin) in steps:
        file, qual = _chip_location(fn, where, builtin)
        plan.append((r, fn, file, qual, [_mpi_arg_spec(seg, a, r, session.bf16_spans) for a in args], _dispatch_config(session, r), args))
        session.dispatch_count[r] += 1
    return plan


def _window_place(a):
    """(offset in the window, shape, numpy dtype) of a pld.window view; None for anything else."""
    return (a.buf.offset, tuple(a.shape), _np_dtype(a.dtype)) if isinstance(a, Window) else None


def _execute(ranks, seg, session):
    """Attaches every rank to the segment and runs the call's steps: each rank's dispatches in
    order; a host callback runs once every dispatch before it has finished, and the dispatches
    after it are sent when it returns. The first failure is raised as "rank k failed: ..."."""
    replies = ranks.broadcast(("attach", seg.shm.name, seg.window_bytes, float(session.config.timeout_s)))
    errors = [r[1] for r in replies if r[0] != "ok"]
    if errors:
        raise RuntimeError(errors[0])
    try:
        for kind, run in _phases(session.steps):
            if kind == "dispatch":
                _run_dispatches(ranks, seg, session, run)
            else:
                _run_callbacks(seg, session, run)
    finally:
        ranks.broadcast(("detach",))


def _run_dispatches(ranks, seg, session, steps):
    counts = [0] * session.n
    for _, r, (fn, args, where, builtin) in steps:
        file, qual = _chip_location(fn, where, builtin)
        specs = [_arg_spec(seg, a, r, session.bf16_spans) for a in args]
        ranks.conns[r].send(("call", file, qual, specs, _dispatch_config(session, r)))
        session.dispatch_count[r] += 1
        counts[r] += 1
    failures = []
    for r in range(session.n):
        for _ in range(counts[r]):
            status, text = ranks.reply(r)
            if status != "ok":
                failures.append(text)
                if not ranks.procs[r].is_alive():
                    _abort_in_header(seg, r, text)  # the others stop waiting for the dead rank
                    break
    if failures:
        primary = next((f for f in failures if "stopped waiting" not in f), failures[0])
        raise RuntimeError(primary)


def _diagnostics_dir(session):
    """The directory of a distributed call's diagnostics (None: none asked for): the caller's
    output_dir, else build_output/<host function>."""
    rc = session.rank_config
    if rc is None or not (rc.any_dfx_enabled() or rc.output_dir):
        return None
    return rc.output_dir or os.path.join("build_output", session.fn.__name__)


def _dispatch_config(session, r):
    """The RunConfig of rank r's next dispatch: its build directory <base>/rank{r}, its DFX
    files (and swimlane) under <base>/dfx_outputs/rank{r}/d{k} for its k-th dispatch."""
    rc, base = session.rank_config, _diagnostics_dir(session)
    if base is None:
        return rc
    changes = {"output_dir": os.path.join(base, f"rank{r}")}
    if rc.any_dfx_enabled():
        dfx = os.path.join(base, "dfx_outputs", f"rank{r}", f"d{session.dispatch_count[r]}")
        changes["dfx_dir"] = dfx
        if rc.enable_chip_swimlane:
            changes["trace_path"] = os.path.join(dfx, "chip_swimlane_records.json")
    return dataclasses.replace(rc, **changes)


def write_merged_swimlane(session):
    """One Chrome trace of every rank of the call (enable_chip_swimlane): a process per rank
    (its virtual cores as lanes, on one clock), and on each rank's "signals" lane an arrow from
    every notify to the wait it released (the latest notify into that cell before the wait
    returned). Written to the caller's trace_path, else <base>/swimlane.json; returns the path."""
    import json
    rc, base = session.rank_config, _diagnostics_dir(session)
    if base is None or not rc.enable_chip_swimlane:
        return None
    files = []
    for r in range(session.n):
        for k in range(session.dispatch_count[r]):
            d = os.path.join(base, "dfx_outputs", f"rank{r}", f"d{k}")
            lane = os.path.join(d, "chip_swimlane_records.json")
            if os.path.exists(lane):
                with open(lane) as f:
                    trace = json.load(f)
                sig = os.path.join(d, "signal_events.json")
                events = json.load(open(sig)) if os.path.exists(sig) else []
                files.append((r, k, trace, events))
    if not files:
        return None
    epochs = [t.get("otherData", {}).get("epoch_us") for _, _, t, _ in files]
    sig_times = [e["t_us"] for *_, ev in files for e in ev]
    t0 = min([e for e in epochs if e is not None] + sig_times) if (any(e is not None for e in epochs) or sig_times) else 0
    out, names, flow = [], set(), 0
    SIG = 1 << 20  # the signals lane

    def meta(pid, tid, kind, value):
        key = (pid, tid, kind)
        if key not in names:
            names.add(key)
            ev = {"ph": "M", "name": kind, "pid": pid, "args": {"name" if kind.endswith("name") else "sort_index": value}}
            if tid is not None:
                ev["tid"] = tid
            out.append(ev)

    for (r, k, trace, _), epoch in zip(files, epochs):
        shift = (epoch - t0) if epoch is not None else 0
        ids = {}
        for ev in trace.get("traceEvents", []):
            ev = dict(ev)
            modelled = ev.get("pid", 0) == 1
            ev["pid"] = session.n + r if modelled else r
            if ev.get("ph") == "M":
                if ev.get("name") == "process_name":
                    meta(ev["pid"], None, "process_name",
                         f"rank {r}" + (" (modelled cycles, per dispatch)" if modelled else " (host wall clock)"))
                    meta(ev["pid"], None, "process_sort_index", ev["pid"])
                elif (ev["pid"], ev.get("tid"), ev["name"]) not in names:
                    names.add((ev["pid"], ev.get("tid"), ev["name"]))
                    out.append(ev)
                continue
            if not modelled and "ts" in ev:
                ev["ts"] = round(ev["ts"] + shift, 3)
            if ev.get("ph") in ("s", "f"):
                if ev["id"] not in ids:
                    flow += 1
                    ids[ev["id"]] = flow
                ev["id"] = ids[ev["id"]]
            ev.setdefault("args", {})
            if isinstance(ev["args"], dict) and ev.get("ph") == "X":
                ev["args"]["dispatch"] = k
            out.append(ev)
    notifies = []
    for r, k, _, events in files:
        for e in events:
            pid = e["rank"]
            meta(pid, SIG, "thread_name", "signals (notify -> wait)")
            meta(pid, SIG, "thread_sort_index", SIG)
            what = (f"notify rank {e['peer']} cell @{e['cell_offset']} {e['value']:+d}" if e["kind"] == "n"
                    else f"wait cell @{e['cell_offset']} (expected {e['value']})")
            out.append({"ph": "i", "s": "t", "name": what, "cat": "signal", "pid": pid, "tid": SIG,
                        "ts": round(e["t_us"] - t0, 3), "args": {"where": e["where"], "dispatch": k}})
            if e["kind"] == "n":
                notifies.append(e)
    notifies.sort(key=lambda e: e["t_us"])
    for r, k, _, events in files:
        for w in events:
            if w["kind"] != "w":
                continue
            src = None
            for n in notifies:
                if n["t_us"] > w["t_us"]:
                    break
                if n["peer"] == w["rank"] and n["cell_offset"] == w["cell_offset"]:
                    src = n
            if src is None:
                continue
            flow += 1
            out.append({"ph": "s", "name": "notify", "cat": "signal", "id": flow, "pid": src["rank"], "tid": SIG,
                        "ts": round(src["t_us"] - t0, 3)})
            out.append({"ph": "f", "bp": "e", "name": "notify", "cat": "signal", "id": flow, "pid": w["rank"],
                        "tid": SIG, "ts": round(w["t_us"] - t0, 3)})
    path = rc.trace_path or os.path.join(base, "swimlane.json")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"displayTimeUnit": "ns", "otherData": {"ranks": session.n}, "traceEvents": out}, f)
    return path


def _callback_arg(seg, a):
    if isinstance(a, Window):  # every rank's copy: [nranks, *shape], zero-copy
        dt = _np_dtype(a.dtype)
        inner = np.empty(a.shape, dt).strides
        return seg.array(seg.header + a.buf.offset, (seg.nranks, *a.shape), dt, (seg.window_bytes, *inner))
    return a


def _run_callbacks(seg, session, steps):
    """Host callbacks that follow each other with no dispatch between: in order on the driver's
    thread, or on up to DistributedConfig.num_sub_workers threads at once."""
    def run(step):
        _, cb, (args, kwargs), where = step
        fn = session.callbacks[cb.__name__]
        try:
            fn(*[_callback_arg(seg, a) for a in args], **{k: _callback_arg(seg, v) for k, v in kwargs.items()})
        except Exception as e:  # noqa: BLE001 - the user's callable; reported at the host function's line
            raise RuntimeError(f"{where}: host callback '{cb.__name__}' failed: {type(e).__name__}: {e}") from e

    workers = int(session.config.num_sub_workers)
    if workers <= 1 or len(steps) == 1:
        for st in steps:
            run(st)
        return
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pld-sub-worker") as pool:
        for f in [pool.submit(run, st) for st in steps]:
            f.result()


def _bind_callbacks(session, callbacks):
    """The bound callable of every host callback the call uses, or a HostError naming the first unbound one."""
    session.callbacks = dict(callbacks or {})
    for step in session.steps:
        if step[0] == "callback" and step[1].__name__ not in session.callbacks:
            name = step[1].__name__
            raise HostError(f"{step[3]}: host callback '{name}' (declared at {step[1].where}) is not bound; fix: "
                            f"prog = pypto.ir.compile(host_fn, distributed_config=dc); "
                            f"worker = prog.prepare(callbacks={{'{name}': fn}}); worker.run(prog, ...)")


def _abort_in_header(seg, rank, text):
    """Marks the domain failed for a rank that cannot any more (comm::abort_segment)."""
    _core.comm_abort_segment(ctypes.addressof(ctypes.c_char.from_buffer(seg.shm.buf)), rank, text)


def example_config(config=None, argv=None, default_ranks=2):
    """(RunConfig with a DistributedConfig, options) for the distributed examples: `config` as
    given when it has a distributed_config, else with `-d 0,1,2` / `-n 3` from argv (when argv
    is given) or `default_ranks` ranks (under mpirun: the number of MPI processes); options:
    .mode, .use_builtin from argv."""
    import argparse
    if distributed_mpi.launched():
        default_ranks = distributed_mpi.world_size()
    ap = argparse.ArgumentParser()
    ap.add_argument("backend", nargs="?", default="numpy")
    ap.add_argument("-d", "--devices", default=None, help="device ids, e.g. 0,1,2,3")
    ap.add_argument("-n", "--nranks", type=int, default=default_ranks)
    ap.add_argument("-p", "--platform", default=None)
    ap.add_argument("--mode", default=None)
    ap.add_argument("--use-builtin", action="store_true")
    opts = ap.parse_args(argv if argv is not None else [])
    if config is not None and getattr(config, "distributed_config", None) is not None:
        return config, opts
    ids = [int(d) for d in opts.devices.split(",")] if opts.devices else list(range(opts.nranks))
    dc = DistributedConfig(device_ids=ids)
    config = dataclasses.replace(config, distributed_config=dc) if config is not None else RunConfig(distributed_config=dc)
    return config, opts


class DistributedWorker:
    """A prepared distributed program: its rank processes and one window segment stay up across
    calls (windows are not zeroed between calls unless reset_persistent_windows=True)."""

    def __init__(self, compiled, config=None, *, persistent=False, reset_persistent_windows=None, callbacks=None,
                 sub_worker_overrides=None, inherited_host_tensors=None, startup_timeout_s=None):
        self.compiled = compiled
        self.config = config if isinstance(config, DistributedConfig) else getattr(compiled, "distributed_config", None)
        if self.config is None:
            raise ValueError("DistributedWorker needs a DistributedConfig; fix: DistributedWorker(compiled, "
                             "DistributedConfig(device_ids=[0, 1]))")
        self.persistent = persistent
        self.reset = reset_persistent_windows
        self.callbacks = _callback_table(callbacks)
        self._mpi = distributed_mpi.launched()
        if self._mpi:
            distributed_mpi.enter(self.config.world_size)  # ranks > 0 serve from here on
        self._ranks = None if self._mpi else _Ranks(self.config.world_size)
        self._seg = None
        self._blocks = {}
        self._inherited = list(inherited_host_tensors or [])

    def _segment(self, window_bytes, staging):
        if self._mpi:  # the MPI window is kept per process; zeroed unless the windows persist
            return distributed_mpi.Segment(self.config.world_size, _round(max(window_bytes, _ALIGN)), _round(max(staging, _ALIGN)),
                                           zero=bool(self.reset or not self.persistent))
        seg = self._seg
        if seg is None or seg.window_bytes < window_bytes or seg.shm.size - seg.staging_offset < staging:
            if seg is not None:
                seg.close()
            seg = self._seg = _Segment(self.config.world_size, window_bytes, staging)
        elif self.reset or not self.persistent:
            seg.shm.buf[:seg.staging_offset] = bytes(seg.staging_offset)  # header and windows
        else:
            seg.shm.buf[:seg.header] = bytes(seg.header)  # the watchdog's header only: windows persist
        return seg

    # -- device memory of a worker (a rank): host-side blocks here; the chip functions of the
    # embedded transport take host tensors, staged by the driver.
    def _check_worker(self, worker_id):
        if not isinstance(worker_id, int) or not 0 <= worker_id < self.config.world_size:
            raise ValueError(f"worker_id={worker_id!r} is outside the domain of {self.config.world_size} ranks; "
                             f"fix: give a worker id in [0, {self.config.world_size})")

    def malloc(self, nbytes, *, worker_id=0):
        """`nbytes` of rank `worker_id`'s device memory (zeroed); returns its address."""
        self._check_worker(worker_id)
        block = np.zeros(max(int(nbytes), 1), np.uint8)
        ptr = block.ctypes.data
        self._blocks[ptr] = (worker_id, block)
        return ptr

    def free(self, ptr, *, worker_id=0):
        if self._blocks.get(ptr, (None,))[0] != worker_id:
            raise ValueError(f"free({ptr:#x}, worker_id={worker_id}): no block of this worker starts there; fix: "
                             "free what malloc returned, with the same worker_id")
        del self._blocks[ptr]

    def committed_device_memory(self, worker_id=0):
        self._check_worker(worker_id)
        return sum(b.nbytes for w, b in self._blocks.values() if w == worker_id)

    def _block(self, ptr, nbytes, worker_id, what):
        for start, (w, b) in self._blocks.items():
            if w == worker_id and start <= ptr and ptr + nbytes <= start + b.nbytes:
                return
        raise ValueError(f"{what}: {nbytes} bytes at {ptr:#x} are not inside a block of worker {worker_id}; fix: "
                         "copy within what malloc(nbytes, worker_id=) returned")

    def copy_to(self, dst_dev_ptr, src_host_ptr, nbytes, *, worker_id=0):
        self._block(dst_dev_ptr, nbytes, worker_id, "copy_to")
        ctypes.memmove(dst_dev_ptr, src_host_ptr, nbytes)

    def copy_from(self, dst_host_ptr, src_dev_ptr, nbytes, *, worker_id=0):
        self._block(src_dev_ptr, nbytes, worker_id, "copy_from")
        ctypes.memmove(dst_host_ptr, src_dev_ptr, nbytes)

    def alloc_stacked_tensor(self, host, *, worker_ids=None):
        """One shard per worker of a host tensor [NR, ...]: shard r is host[r] (a copy)."""
        host = np.asarray(host)
        ids = list(range(self.config.world_size)) if worker_ids is None else list(worker_ids)
        if host.shape[0] != len(ids):
            raise ValueError(f"alloc_stacked_tensor: the host tensor has {host.shape[0]} rows in dim 0 for "
                             f"{len(ids)} workers; fix: stack one slice per worker")
        for w in ids:
            self._check_worker(w)
        return StackedDeviceTensor([np.array(host[i]) for i in range(len(ids))], tuple(host.shape), ids)

    def free_stacked_tensor(self, stacked):
        stacked.shards = []

    def copy_stacked_from(self, stacked, host):
        for i, shard in enumerate(stacked.shards):
            host[i][...] = shard

    @property
    def inherited_host_tensors(self):
        return self._inherited

    def release_inherited_host_tensor_refs(self):
        self._inherited = []

    def register(self, compiled):
        return _Registration(self, compiled)

    def run(self, compiled=None, *args, config=None):
        target = compiled if compiled is not None else self.compiled
        fn = getattr(target, "host_function", target)
        return run_host(fn, args, {}, config, worker=self)

    def __call__(self, *args, config=None):
        return self.run(self.compiled, *args, config=config)

    def submit(self, compiled, *args, config=None):
        return DistributedRunHandle(self, None, None, 0, postprocess=None, value=self.run(compiled, *args, config=config))

    def close(self):
        if self._seg is not None:
            self._seg.close()
            self._seg = None
        if self._ranks is not None:
            self._ranks.close()
        self._blocks.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _callback_table(callbacks):
    """prepare(callbacks=...): {name or declared SubWorkerFunction: callable} -> {name: callable}."""
    if callbacks is None:
        return {}
    if not isinstance(callbacks, dict):
        raise ValueError(f"callbacks={callbacks!r} is not a dict; fix: prepare(callbacks={{'name': fn}}) with the name "
                         "of a @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker) declaration")
    table = {}
    for key, fn in callbacks.items():
        name = key.__name__ if isinstance(key, SubWorkerFunction) else key
        if not isinstance(name, str):
            raise ValueError(f"callbacks key {key!r} is neither a name nor a host callback declaration; fix: key it "
                             "by the declaration's name")
        if not callable(fn):
            raise ValueError(f"callbacks['{name}'] = {fn!r} is not callable; fix: bind a Python function")
        table[name] = fn
    return table


class _Registration:
    def __init__(self, worker, compiled):
        self.worker, self.compiled = worker, compiled

    def __call__(self, *args, config=None):
        return self.worker.run(self.compiled, *args, config=config)

    def unregister(self):
        self.compiled = None


class StackedDeviceTensor:
    """A tensor with one shard per worker (DistributedWorker.alloc_stacked_tensor)."""

    def __init__(self, shards, full_shape, worker_ids):
        self.shards, self.full_shape, self.worker_ids = list(shards), tuple(full_shape), list(worker_ids)

    def dtype(self):
        return self.shards[0].dtype if self.shards else None

    def shape(self):
        return self.full_shape


class DistributedRunHandle:
    """What DistributedWorker.submit returns; the embedded transport runs the call to its end
    before returning the handle, so it is always done."""

    def __init__(self, worker, native_handle, frame, dispatch_id, postprocess=None, value=None):
        self.worker, self.dispatch_id, self._value = worker, dispatch_id, value
        self._post = postprocess

    def done(self):
        return True

    def result(self, timeout=None):
        return self._post(self._value) if self._post else self._value

    def wait(self, timeout=None):
        return None


class DistributedCompiledProgram:
    """A @pl.jit.host function bound to a DistributedConfig (pypto.ir.compile(..., distributed_config=)):
    a call is one-shot (fresh windows); .prepare() gives a DistributedWorker."""

    def __init__(self, host_function, distributed_config, run_config=None):
        self.host_function = host_function
        self.distributed_config = distributed_config
        self.run_config = run_config

    def __call__(self, *args, config=None, **kwargs):
        rc = config or self.run_config or RunConfig()
        rc = dataclasses.replace(rc, distributed_config=self.distributed_config) if rc.distributed_config is None else rc
        return run_host(self.host_function, args, kwargs, rc)

    def prepare(self, *args, persistent=True, callbacks=None, **kwargs):
        return DistributedWorker(self, self.distributed_config, persistent=persistent, callbacks=callbacks)


def host_call(fn, args, kwargs, config):
    """`fn(*args, config=...)` of a @pl.jit.host function (JitFunction.__call__)."""
    try:
        return run_host(fn, args, kwargs, config)
    except HostError as e:
        raise ValueError(str(e)) from None

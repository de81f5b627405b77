"""The MPI transport of distributed programs (docs/distributed.md "The MPI transport").

`mpirun -n N python prog.py` runs the same program in N processes. Rank 0 is the driver: it
runs the program, walks the host functions, runs rank 0's dispatches itself and sends every
other rank its dispatches (mpi4py messages). Ranks 1..N-1 run the program up to its first
distributed call and then serve dispatches until the driver exits (they never return from
that call). The windows are one MPI RMA window per domain (MPI_Win_allocate, kept across calls
and grown when a call needs more; lock_all for its lifetime): each rank's memory of it is the
watchdog header, then its window. The C++ side (src/engines/comm/comm_mpi.cpp) moves the bytes
and does the atomics with MPI; this module is the glue: the window, the messages, the host
tensors (rank r gets a copy of x[r] with its dispatch and sends the arrays back when done).

Chosen automatically when the process was started by mpirun (OMPI_COMM_WORLD_SIZE in the
environment; PYPTO_DIST_TRANSPORT=embedded keeps the embedded transport, =mpi asks for MPI)."""

from __future__ import annotations

import atexit
import os
import sys
import time
import traceback

import numpy as np

from pypto import _core
from pypto.jit.distributed_rank import call_chip, chip_arg, load_function, phases, shared_array

_CALL, _REPLY, _BYE, _HELLO = 11, 12, 13, 14


def launched() -> bool:
    """Whether distributed calls of this process go over MPI (started by mpirun)."""
    choice = os.environ.get("PYPTO_DIST_TRANSPORT", "").lower()
    if choice in ("embedded", "shm"):
        return False
    return choice == "mpi" or "OMPI_COMM_WORLD_SIZE" in os.environ or "PMIX_RANK" in os.environ


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(f"this program was started by mpirun, so it runs on the MPI transport, which needs mpi4py "
                           f"({e}); fix: pip install mpi4py, or run it without mpirun (or with "
                           "PYPTO_DIST_TRANSPORT=embedded) for the embedded transport") from None
    return MPI


def world_size() -> int:
    """The number of MPI processes (the distributed examples' default rank count under mpirun)."""
    return _mpi().COMM_WORLD.Get_size()


def _handles(MPI):
    return [MPI._handleof(h) for h in (MPI.INT8_T, MPI.INT16_T, MPI.INT32_T, MPI.INT64_T, MPI.UINT8_T, MPI.UINT16_T,
                                       MPI.UINT32_T, MPI.UINT64_T, MPI.FLOAT, MPI.DOUBLE, MPI.BYTE, MPI.SUM,
                                       MPI.REPLACE, MPI.NO_OP)]


class _Window:
    """This process's MPI RMA window (collective: every rank makes the same calls in order)."""

    win = None
    size = 0
    mem = None

    @classmethod
    def attach(cls, header, window_bytes, nranks, timeout_s, zero):
        MPI = _mpi()
        comm = MPI.COMM_WORLD
        size = header + window_bytes
        if cls.win is None or cls.size < size:
            if cls.win is not None:
                cls.win.Unlock_all()
                cls.win.Free()
            cls.win = MPI.Win.Allocate(size, disp_unit=1, comm=comm)
            cls.win.Lock_all(MPI.MODE_NOCHECK)
            cls.size = size
            cls.mem = np.frombuffer(cls.win.tomemory(), dtype=np.uint8)
            zero = True
        if zero:
            cls.mem[:] = 0
        else:
            cls.mem[:header] = 0  # the watchdog's header only: windows persist
        err = ""
        try:
            _core.comm_attach_mpi(cls.mem.ctypes.data, window_bytes, comm.Get_rank(), nranks, timeout_s,
                                  MPI._handleof(cls.win), _handles(MPI))
        except Exception as e:  # noqa: BLE001 - gathered and raised by the driver
            err = f"rank {comm.Get_rank()} failed: {e}"
        cls.win.Sync()
        errors = [e for e in comm.allgather(err) if e]  # (also the barrier: nobody reaches a peer before it is zeroed)
        return errors[0] if errors else ""


class Segment:
    """The driver's side of a call: the host tensors staged in local memory (the windows are
    the MPI window of every rank). What run_host uses of distributed._Segment; sizes rounded."""

    def __init__(self, nranks, window_bytes, staging_bytes, zero=True):
        self.nranks, self.window_bytes = nranks, window_bytes
        self.header = _core.comm_header_bytes()
        self.staging_offset = 0
        self.staging = np.zeros(staging_bytes, np.uint8)
        self.zero = zero

    def array(self, offset, shape, dtype, strides=None):
        return np.ndarray(shape, dtype=dtype, buffer=self.staging, offset=offset, strides=strides)

    def close(self):
        pass


def _rebuild(spec):
    """A dispatch argument from its spec (pypto.jit.distributed._mpi_arg_spec): a window view
    over this rank's memory of the MPI window, else the array or scalar sent."""
    if spec[0] == "window":
        return shared_array(_Window.mem, spec[1], spec[2], spec[3])
    if spec[0] in ("local", "data"):
        return chip_arg(spec[1], spec[2])
    return spec[1]


def _run_call(file, qual, specs, run_config, modules):
    """Runs one dispatch on this rank: ("ok", arrays) or ("error", text)."""
    args = None
    _core.comm_set_state(0)
    try:
        fn = load_function(modules, file, qual) if isinstance(file, str) else file
        args = [_rebuild(s) for s in specs]
        call_chip(fn, args, run_config)
        _core.comm_set_state(2)
        return ("ok", [getattr(a, "buffer", a) for s, a in zip(specs, args) if s[0] == "data"])  # BF16: its array
    except BaseException as e:  # noqa: BLE001 - reported to the driver, and to the other ranks
        text = f"{type(e).__name__}: {e}" if str(e) else traceback.format_exc(limit=3)
        stored = _core.comm_abort(text)
        _core.comm_set_state(2)
        return ("error", stored or f"rank {_mpi().COMM_WORLD.Get_rank()} failed: {text}")


def serve():
    """Ranks 1..N-1: serve the driver's dispatches until it exits, then leave the program."""
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    from pypto.language import distributed as pld
    pld._set_rank(rank, n)
    modules = {}
    comm.send("ready", dest=0, tag=_HELLO)
    while True:
        msg = comm.recv(source=0, tag=_CALL)
        kind = msg[0]
        if kind == "exit":
            break
        if kind == "attach":
            _, header, window_bytes, nranks, timeout_s, zero = msg
            _Window.attach(header, window_bytes, nranks, timeout_s, zero)
        elif kind == "detach":
            _core.comm_detach()
        elif kind == "calls":  # this rank's dispatches of one step, in order: one reply with every result
            comm.send([_run_call(*call, modules) for call in msg[1]], dest=0, tag=_REPLY)
    comm.send("bye", dest=0, tag=_BYE)
    sys.stdout.flush()
    sys.exit(0)


_SERVING = False
_READY = set()  # the ranks > 0 known to serve (they said so)


def _exit_servers():
    """At the driver's exit: every server leaves; one that does not within 30 s ends the job."""
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    for r in range(1, comm.Get_size()):
        comm.send(("exit",), dest=r, tag=_CALL)
    left = set(range(1, comm.Get_size()))
    deadline = time.monotonic() + (30 if left <= _READY else 2)  # (one that never said it serves: no long wait)
    while left and time.monotonic() < deadline:
        for r in list(left):
            if comm.iprobe(source=r, tag=_BYE):
                comm.recv(source=r, tag=_BYE)
                left.discard(r)
        time.sleep(0.01)
    if left:
        print(f"pypto: MPI ranks {sorted(left)} did not exit; ending the job", file=sys.stderr)
        comm.Abort(1)


def enter(n):
    """At a distributed call: ranks > 0 start serving (and never return); the driver checks
    the world size and arranges for the servers to exit with it."""
    global _SERVING
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    if comm.Get_rank() != 0:
        serve()
    if not _SERVING:
        _SERVING = True
        atexit.register(_exit_servers)
    if comm.Get_size() != n:
        raise ValueError(f"the DistributedConfig asks for {n} ranks but mpirun started {comm.Get_size()} processes; "
                         f"fix: mpirun -n {n} ..., or DistributedConfig(device_ids=list(range({comm.Get_size()})))")


def execute(seg, session, plan, window_place):
    """The driver's side of a call over MPI: attach every rank to the MPI window, run the call's
    steps (rank 0's dispatches here, the others' by message; host callbacks here), detach.
    plan(seg, session, steps) lists the dispatches (pypto.jit.distributed._dispatch_plan);
    window_place(a) is (offset, shape, dtype) of a window view argument, else None."""
    from pypto.language import distributed as pld
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    timeout_s = float(session.config.timeout_s)
    for r in range(1, session.n):
        comm.send(("attach", seg.header, seg.window_bytes, session.n, timeout_s, seg.zero), dest=r, tag=_CALL)
    _await_ready(comm, session.n, timeout_s)
    err = _Window.attach(seg.header, seg.window_bytes, session.n, timeout_s, seg.zero)
    if err:
        raise RuntimeError(err)
    prev = pld._names._RANK
    pld._set_rank(0, session.n)
    try:
        for kind, run in phases(session.steps):
            if kind == "dispatch":
                _run_dispatches(plan(seg, session, run))
            else:
                _run_callbacks(seg, session, run, window_place)
    finally:
        pld._names._RANK = prev
        for r in range(1, session.n):
            comm.send(("detach",), dest=r, tag=_CALL)
        _core.comm_detach()


def _await_ready(comm, n, timeout_s):
    """Before the first collective window call: every other rank said that it serves; one that
    does not within timeout_s (it never reached a distributed call) is an error, not a hang."""
    left, deadline = set(range(1, n)) - _READY, time.monotonic() + timeout_s
    while left:
        for r in list(left):
            if comm.iprobe(source=r, tag=_HELLO):
                comm.recv(source=r, tag=_HELLO)
                left.discard(r)
                _READY.add(r)
        if left and time.monotonic() > deadline:
            raise RuntimeError(f"MPI ranks {sorted(left)} did not reach a distributed call within {timeout_s:.0f} s "
                               "(ranks > 0 run the program up to its first distributed call and serve from there); "
                               "fix: make every process of mpirun reach the same first distributed call (no branch "
                               "on the MPI rank before it), or raise DistributedConfig(timeout_s=)")
        time.sleep(0.001)


def _run_dispatches(plan):
    """One step's dispatches: each other rank gets its own in one message (it is idle, waiting
    for it, so the sends complete before rank 0 runs its dispatches here); the replies follow."""
    comm = _mpi().COMM_WORLD
    mine, theirs, targets = [], {}, {}
    for r, fn, file, qual, specs, cfg, args in plan:
        if r == 0:
            mine.append((fn, qual, specs, cfg))
        else:
            theirs.setdefault(r, []).append((file, qual, specs, cfg))
            targets.setdefault(r, []).append([a for s, a in zip(specs, args) if s[0] == "data"])
    requests = [comm.isend(("calls", calls), dest=r, tag=_CALL) for r, calls in theirs.items()]
    for req in requests:
        req.wait()
    failures = []
    modules = {}
    for fn, qual, specs, cfg in mine:  # rank 0's dispatches, in order, while the others run theirs
        status, text = _run_call(fn, qual, specs, cfg, modules)
        if status != "ok":
            failures.append(text)
            break
    for r in theirs:
        for (status, value), dsts in zip(comm.recv(source=r, tag=_REPLY), targets[r]):
            if status != "ok":
                failures.append(value)
                continue
            for dst, got in zip(dsts, value):
                dst[...] = got
    if failures:
        primary = next((f for f in failures if "stopped waiting" not in f), failures[0])
        raise RuntimeError(primary)


def _run_callbacks(seg, session, steps, window_place):
    """Host callbacks on the driver: each window argument is every rank's copy ([nranks, *shape],
    fetched with MPI_Get) and is put back when the callback returns."""
    windows = []

    def arg(a):
        place = window_place(a)
        if place is None:
            return a
        offset, shape, dt = place
        whole = np.empty((seg.nranks, *shape), dt)
        for r in range(seg.nranks):
            whole[r] = np.frombuffer(_core.comm_get(r, seg.header + offset, whole[r].nbytes), dt).reshape(shape)
        windows.append((offset, whole))
        return whole

    for _, cb, (args, kwargs), where in steps:
        fn = session.callbacks[cb.__name__]
        windows.clear()
        try:
            fn(*[arg(a) for a in args], **{k: arg(v) for k, v in kwargs.items()})
        except Exception as e:  # noqa: BLE001 - the user's callable; reported at the host function's line
            raise RuntimeError(f"{where}: host callback '{cb.__name__}' failed: {type(e).__name__}: {e}") from e
        for offset, whole in windows:
            for r in range(seg.nranks):
                _core.comm_put(r, seg.header + offset, np.ascontiguousarray(whole[r]).tobytes())

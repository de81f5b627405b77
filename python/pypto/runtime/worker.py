"""`pypto.runtime.ChipWorker`: a virtual chip that stays up between runs. Its worker pool
(host threads, each with its virtual core) is started once; a registered program is
prepared once (task footprints analysed, native kernels loaded) and then runs many times.
The pool and the scheduling live in C++ (src/runtime/runtime.cpp, ChipWorker)."""

from __future__ import annotations

from pypto import _core
from pypto.runtime.config import RunConfig


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


class ChipWorker:
    """A virtual chip kept up between runs.

        with ChipWorker(config=RunConfig(platform="a2a3sim")) as worker:
            f = worker.register(compiled)   # prepared once
            f(a, b, c)                      # runs on the worker's pool, outputs in place
            worker.run(compiled, a, b, c)   # the same, registering on first use

    `config` fixes the platform, the engine and the number of host workers; its other fields
    (ring_size, trace_path, enable_chip_swimlane, ...) apply to each run. Runs on one worker
    are serialised. Using a closed worker raises a PyptoError."""

    def __init__(self, config: RunConfig | None = None):
        self.config = config or RunConfig()
        _core.check_platform(self.config.platform)  # real NPUs: a clear "no NPU here" error
        self._worker = _core.ChipWorker(self.config.platform, self.config.engine, self.config.num_workers)
        self._registered: dict[int, RegisteredProgram] = {}  # by handle
        self._programs: list = []  # (@pl.program Program, its CompiledProgram) compiled here

    def _core_worker(self):
        return self._worker

    def register(self, program) -> RegisteredProgram:
        """Prepares `program` (a CompiledProgram, a @pl.program class, or a @pl.jit function
        with fully annotated parameters) for runs on this worker; returns a callable."""
        compiled = self._compiled(program)
        if compiled.platform != self.config.platform:
            raise ValueError(
                f"ChipWorker.register: '{compiled.name}' was compiled for platform '{compiled.platform}' but this "
                f"worker runs '{self.config.platform}'; fix: compile it with "
                f"RunConfig(platform='{self.config.platform}') or use a worker of its platform"
            )
        handle = self._worker.load(compiled._compiled.host)  # the same handle again for a known program
        known = self._registered.get(handle)
        if known is None or known.compiled is not compiled:
            known = self._registered[handle] = RegisteredProgram(self, compiled, handle)
        return known

    def run(self, program, *args, config: RunConfig | None = None):
        """Runs `program` on `args` in place on this worker (registering it on first use)."""
        return self.register(program)(*args, config=config)

    def close(self) -> None:
        """Stops the worker pool. Closing twice is harmless; later runs raise."""
        self._worker.close()

    @property
    def closed(self) -> bool:
        return self._worker.closed

    @property
    def runs(self) -> int:
        """Runs started on this worker."""
        return self._worker.runs

    @property
    def num_workers(self) -> int:
        """Host threads of the pool (0 once closed)."""
        return self._worker.num_workers

    def __enter__(self) -> ChipWorker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"{self.num_workers} workers"
        return f"<ChipWorker {self.config.platform} {self.config.engine} ({state})>"

    def _compiled(self, program):
        from pypto.language.decorators import JitFunction
        from pypto.runtime import CompiledProgram, _compile, jit_compile

        if isinstance(program, CompiledProgram):
            return program
        if isinstance(program, JitFunction) and program.kind == "entry":
            return jit_compile(program, (), self.config)
        if isinstance(program, _core.ir.Program):
            for p, compiled in self._programs:
                if p is program:
                    return compiled
            compiled = _compile(program, self.config)
            self._programs.append((program, compiled))
            return compiled
        raise TypeError(
            f"ChipWorker.register takes a compiled program (f.compile(), pypto.ir.compile(P)), a @pl.program "
            f"class or a @pl.jit function, got {type(program).__name__}"
        )

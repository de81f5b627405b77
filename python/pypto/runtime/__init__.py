"""PyPTO's run API: RunConfig, run, compile_program, execute_compiled, benchmark, ChipWorker.

Compiling, caching and calling @pl.jit functions is the jit package's (pypto.jit); this
package runs what it compiles and re-exports its names where PyPTO programs import them
(pypto.runtime.RunConfig, CompiledProgram, jit_compile, ...)."""

from __future__ import annotations

import os

from pypto import _core
from pypto.jit import CompiledProgram, RunConfig, jit_cache, jit_call, jit_compile, jit_lower  # noqa: F401
from pypto.jit import arg_specs as _arg_specs  # noqa: F401  (the specs a call gives; tests and tools)
from pypto.jit import check_roundtrip as _check_roundtrip  # noqa: F401
from pypto.jit import compile_cached as _compile_cached  # noqa: F401
from pypto.jit import compile_program as _compile  # noqa: F401
from pypto.jit import fp8_bits  # noqa: F401
from pypto.jit.compiled import _at_call_site, _call_site  # noqa: F401  (the lane API's messages)
from pypto.jit.distributed import (DistributedCompiledProgram, DistributedConfig, DistributedRunHandle,  # noqa: F401  (pld)
                                   DistributedWorker, StackedDeviceTensor)


def pto_isa_include_dir() -> str:
    """The include directory kernels are built against. PyPTO's is pto-isa's; here no pto-isa
    is needed: it is the optimised tile library's headers (pypto/isa/optimized/) that the
    native engine compiles kernels with."""
    return _core.native_include_dir()


def ensure_pto_isa_root() -> str:
    """PyPTO fetches pto-isa and sets PTO_ISA_ROOT; nothing is fetched here: returns the
    directory holding pto_isa_include_dir() (and sets PTO_ISA_ROOT to it when unset)."""
    root = os.path.dirname(os.path.abspath(pto_isa_include_dir()))
    os.environ.setdefault("PTO_ISA_ROOT", root)
    return root


_LOG_LEVELS = {"DEBUG": 10, "INFO": 20, "WARN": 30, "WARNING": 30, "ERROR": 40, "FATAL": 50, "CRITICAL": 50}


def configure_log(level, *, sync_pypto: bool = False) -> None:
    """Sets the level of the `pypto` logger (a logging level number or name: DEBUG, INFO,
    WARN, ERROR). `sync_pypto`: PyPTO also sets its C++ log level; our C++ side does not log
    (it raises errors), so the flag has no further effect."""
    import logging

    if isinstance(level, str):
        if level.upper() not in _LOG_LEVELS:
            raise ValueError(f"configure_log(level={level!r}): unknown level; use one of "
                             + ", ".join(repr(n) for n in ("DEBUG", "INFO", "WARN", "ERROR")))
        level = _LOG_LEVELS[level.upper()]
    elif not isinstance(level, int) or isinstance(level, bool):
        raise ValueError(f"configure_log(level={level!r}): give a level name such as 'INFO' or a logging level number")
    logging.getLogger("pypto").setLevel(level)


def log_level() -> int:
    """The effective level of the `pypto` logger (a logging level number)."""
    import logging

    return logging.getLogger("pypto").getEffectiveLevel()


__all__ = ["BenchmarkStats", "ChipWorker", "CompiledProgram", "DeviceTensor", "RegisteredProgram", "RegistrationHandle", "RunConfig",
           "RunResult", "ScalarSpec", "TensorSpec", "TraceInvocation", "TraceSpan", "Worker", "benchmark", "compile_program", "configure_log",
           "ensure_pto_isa_root", "execute_compiled", "jit_call", "jit_compile", "jit_lower", "log_level",
           "pto_isa_include_dir", "run"]


from pypto.runtime.worker import (ChipWorker, DeviceTensor, RegisteredProgram, RegistrationHandle,  # noqa: E402
                                  Worker)
from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec  # noqa: E402
from pypto.runtime.runner import (BenchmarkStats, RunResult, TraceInvocation, TraceSpan, benchmark,  # noqa: E402
                                  compile_program, execute_compiled, run)

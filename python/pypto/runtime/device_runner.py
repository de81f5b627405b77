"""`pypto.runtime.device_runner`: running compiled programs on a chip (PyPTO's module name):
the workers, their device tensors, and running a compile_program directory. The
implementations live in pypto.runtime.worker and pypto.runtime.runner."""

from pypto.runtime.runner import BenchmarkStats, benchmark, compile_program, execute_compiled
from pypto.runtime.worker import ChipWorker, DeviceTensor, RegisteredProgram, Worker

__all__ = ["BenchmarkStats", "ChipWorker", "DeviceTensor", "RegisteredProgram", "Worker", "benchmark",
           "compile_program", "execute_compiled"]

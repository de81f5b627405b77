"""The build directory of a compiled program (`CompiledProgram.output_dir`):

    passes_dump/NN_after_<Pass>.py   the program after each pass that changed it (re-parseable)
    kernels/<kernel>.pto             each kernel's PTO assembly
    kernels/<kernel>.cpp             the C++ the native engine compiles for it
    memory_map.json                  per kernel, where each tile lives and when it is used
    report.html                      `pypto report` of the directory
    report/pipeline_profile.{txt,json}  seconds per pass (RunConfig(compile_profiling=True))

Writing only: what is written comes from the compiler (pass results, .pto text, memory map)
and the native engine's code generator."""

from __future__ import annotations

import json
import os

from pypto import _core
from pypto.jit.report import build_report


def write_memory_map(output_dir: str, memory_map: list) -> None:
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, "memory_map.json"), "w") as f:
        json.dump(memory_map, f, indent=1)


def write_pass_dumps(output_dir: str, pass_results) -> None:
    dump_dir = os.path.join(output_dir, "passes_dump")
    os.makedirs(dump_dir, exist_ok=True)
    for name, program in pass_results:
        with open(os.path.join(dump_dir, name + ".py"), "w") as f:
            f.write(_core.ir.print_program(program))


def write_kernel_pass_dumps(output_dir: str, kernel_pass_results) -> None:
    """kernel_passes_dump/NN_after_<KernelPass>.<kernel>.pto for each kernel a kernel pass changed."""
    if not kernel_pass_results:
        return
    dump_dir = os.path.join(output_dir, "kernel_passes_dump")
    os.makedirs(dump_dir, exist_ok=True)
    for name, kernel, text in kernel_pass_results:
        with open(os.path.join(dump_dir, f"{name}.{kernel}.pto"), "w") as f:
            f.write(text)


def write_kernels(kernel_dir: str, pto: dict, native_sources=()) -> None:
    """`<kernel>.pto` for each kernel and `<kernel>.cpp` for each with native code."""
    os.makedirs(kernel_dir, exist_ok=True)
    for name, text in pto.items():
        with open(os.path.join(kernel_dir, name + ".pto"), "w") as f:
            f.write(text)
    for name, source in native_sources:
        if source:
            with open(os.path.join(kernel_dir, name + ".cpp"), "w") as f:
                f.write(source)


def write_report(output_dir: str) -> None:
    with open(os.path.join(output_dir, "report.html"), "w") as f:
        f.write(build_report(output_dir))


def write_pipeline_profile(output_dir: str, pass_times) -> None:
    """report/pipeline_profile.json ({"passes": [{"name", "seconds"}], "total_seconds"}) and
    the same as a table in pipeline_profile.txt; `pass_times`: (name, seconds) in order."""
    report = os.path.join(output_dir, "report")
    os.makedirs(report, exist_ok=True)
    total = sum(t for _, t in pass_times)
    with open(os.path.join(report, "pipeline_profile.json"), "w") as f:
        json.dump({"passes": [{"name": n, "seconds": t} for n, t in pass_times], "total_seconds": total}, f, indent=1)
    width = max([len(n) for n, _ in pass_times] + [5])
    with open(os.path.join(report, "pipeline_profile.txt"), "w") as f:
        f.write(f"{'pass':<{width}}  {'ms':>10}  {'%':>6}\n")
        for n, t in pass_times:
            f.write(f"{n:<{width}}  {t * 1e3:>10.3f}  {100 * t / total if total else 0:>6.1f}\n")
        f.write(f"{'total':<{width}}  {total * 1e3:>10.3f}  {100.0:>6.1f}\n")

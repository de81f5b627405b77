"""Debugging tools of pypto. debug_kernel: the instruction-level debugger of @pto.kernel
programs (step, inspect_l1, breakpoints, instruction timeline). A package, so that other
tools can live next to it."""

from pypto.lanes.debugger import DebugContext, TimelineEntry, debug_kernel

__all__ = ["DebugContext", "TimelineEntry", "debug_kernel"]

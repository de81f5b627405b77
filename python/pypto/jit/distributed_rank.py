"""What a rank runs a dispatch with, in either transport (pypto.jit.distributed: the embedded
rank processes; pypto.jit.distributed_mpi: the MPI ranks): the chip function imported by file
path and name, and the call that records the signal events of the merged swimlane."""

import importlib.util
import os
import sys

from pypto import _core


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

"""pto.profile: modelled cycles per instruction class (from the ISA cost table, through the
timeline model) and the measured time of running the kernel on an engine."""

from pypto._core import PyptoError
from pypto._core import kernel as _k
from pypto._core import engine_names

from .launch import kernel_args, launch_shape


class Profile:
    def __init__(self, name, classes, total_cycles, seconds, engine, num_instrs, num_sync=0):
        self.kernel = name
        self.classes = classes            # class -> {"cycles", "count"}
        self.total_cycles = total_cycles  # modelled makespan (pipes overlap)
        self.seconds = seconds            # measured on `engine`
        self.engine = engine
        self.num_instrs = num_instrs      # lane-program instructions executed
        self.num_sync = num_sync          # set_flag / wait_flag InsertSync added (in the code)

    def cycle_breakdown(self):
        """The breakdown as text (print it)."""
        lines = [f"{self.kernel}: {self.num_instrs} PTO instructions executed, {self.total_cycles:.0f} modelled cycles "
                 f"(pipes overlapped), measured {self.seconds * 1e3:.3f} ms on the '{self.engine}' engine"]
        if self.num_sync:
            lines[0] += f" (+ {self.num_sync} set_flag/wait_flag from InsertSync, not counted)"
        for cls, v in sorted(self.classes.items(), key=lambda kv: -kv[1]["cycles"]):
            lines.append(f"{cls}: {v['cycles']:.0f} cycles over {v['count']} instructions "
                         f"({v['cycles'] / v['count']:.1f} per instruction)")
        return "\n".join(lines)

    def __repr__(self):
        return self.cycle_breakdown()


def profile(k, args=(), grid=None, block=None, engine=None, platform="a2a3sim"):
    """Runs `k` once (it writes its outputs) and returns a Profile. Without grid/block the
    kernel's last launch shape is used. engine: 'native' when built, else 'sim'."""
    from .launch import sync
    sync()
    values = kernel_args(k, args)
    g, b = launch_shape(k, grid, block)
    if engine is None:
        engine = "native" if "native" in engine_names() else "sim"
    if not k.program.lowers_to_tiles:
        raise PyptoError(f"kernel '{k.name}' uses barriers and runs on the warp simulator, which has no cycle model\n"
                         "  fix: profile kernels without pto.barrier()/pto.barrier_block()")
    lowered = _k.lower(k.program, values, g, b, platform)
    classes = {}
    total = 0.0
    executed = 0
    # One timeline entry per executed lane-program instruction (loop bodies once per
    # iteration); InsertSync's set_flag / wait_flag are not classes of their own: the
    # timeline model orders the hazards they guard directly.
    for idx, start, end, _pipe in lowered.timeline():
        cls = lowered.note(idx)["cls"]
        c = classes.setdefault(cls, {"cycles": 0.0, "count": 0})
        c["cycles"] += end - start
        c["count"] += 1
        total = max(total, end)
        executed += 1
    seconds = lowered.run(platform, engine)
    return Profile(k.name, classes, total, seconds, engine, executed, lowered.num_sync)


def profile_on_npu(k, args=(), **kwargs):
    """Always raises: this machine has no Ascend NPU."""
    raise PyptoError("pto.profile_on_npu: no Ascend NPU is present; pypto runs kernels on a virtual chip on this CPU\n"
                     "  fix: use pto.profile(kernel, args=...) for modelled cycles per instruction class "
                     "and measured engine time")

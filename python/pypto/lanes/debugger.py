"""The instruction-level debugger behind pypto.debug.debug_kernel: steps the PTO
instructions of a kernel (lowered one block per tile row, unrolled, so that lane l of a
block is column l), prints each lane's effect, reads the lanes' on-chip values, keeps
breakpoints on instruction indices and shows the modelled instruction timeline.

Instruction indices are those of the lane program's instructions (LoweredKernel.lane_pcs):
the set_flag / wait_flag that InsertSync adds between pipes are not counted, shown or
stepped (they carry no data), so index i is the same with or without pipe flags.

Kernels with barriers run on the warp model (src/kernel/warp_sim.cpp) as a launch does: a
step is one op of the lane program run by one warp (WarpStepper, the stepper behind the
launch), and a data race stops the session at the step of the second access with the facts
pto.sync() reports (ctx.race)."""

import inspect
from collections import namedtuple

from pypto._core import PyptoError
from pypto._core import kernel as _k

from .launch import Kernel, kernel_args, launch_shape, sync
from .memory import Tensor, at_user_line

TimelineEntry = namedtuple("TimelineEntry", "cycle lane inst end pipe index stage")
Race = namedtuple(
    "Race",
    "kernel block tensor element byte_offset first_lane first_access first_line second_lane second_access "
    "second_line first_warp second_warp step file message fix text",
)


def _arg_names(k, args, frame):
    """Display names of the arguments: the caller's variable names (d_a) where found."""
    names = list(k.params)
    scopes = [frame.f_locals, frame.f_globals] if frame is not None else []
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            continue
        for scope in scopes:
            found = [n for n, v in scope.items() if v is a and not n.startswith("_")]
            if found:
                names[i] = found[0]
                break
    return names


class DebugContext:
    def __init__(self, k, args, grid, block, platform, show_lanes, frame):
        sync()
        self.kernel = k
        g, b = launch_shape(k, grid, block)
        # One block per tile row, unrolled: every block's instructions have their own index.
        self.lowered = _k.lower(k.program, kernel_args(k, args), g, b, platform, 1, unroll=True)
        self.stepper = _k.KernelStepper(self.lowered, platform)
        self.names = _arg_names(k, args, frame)
        self.show_lanes = show_lanes
        self.breakpoints = set()
        self.last_tile = None
        self.block = b

    @property
    def pc(self):
        """Index of the next instruction."""
        return self.stepper.pc

    @property
    def done(self):
        return self.stepper.done

    def _lane_lines(self, note, mnemonic):
        cls = note["cls"]
        first, lanes = note["first_lane"], note["lanes"]
        tile = note["tile"]
        shown = min(lanes, self.show_lanes) if self.show_lanes else lanes
        vals = self.stepper.tile_values(tile, 0, shown) if tile >= 0 else []
        lines = []
        for j in range(shown):
            lane = first + j
            local = (lane % self.block) if not self.lowered.pipelined else j
            if cls == "LOAD" and note["tensor_arg"] >= 0:
                t = self.names[note["tensor_arg"]]
                lines.append(f"[Lane {lane}] LOAD {t}[{note['tensor_offset'] + j}] → L1[{local}] (4 bytes) = {vals[j]:.6g}")
            elif cls == "STORE":
                t = self.names[note["tensor_arg"]]
                lines.append(f"[Lane {lane}] STORE L1[{local}] → {t}[{note['tensor_offset'] + j}] (4 bytes) = {vals[j]:.6g}")
            else:
                lines.append(f"[Lane {lane}] {cls} ({mnemonic}) → L1[{local}] = {vals[j]:.6g}")
        if shown < lanes:
            lines.append(f"  ... lanes {first + shown}-{first + lanes - 1} likewise")
        return lines

    def step(self, count=1, quiet=False):
        """Executes `count` PTO instructions, printing each lane's instruction and effect;
        returns the printed lines."""
        out = []
        for _ in range(count):
            if self.stepper.done:
                out.append("(kernel finished)")
                break
            i = self.stepper.pc
            note = self.lowered.note(i)
            mnemonic = self.lowered.mnemonic(i)
            self.stepper.step()
            if note["tile"] >= 0:
                self.last_tile = note["tile"]
            out.append(f"#{i} {mnemonic} (line {self.lowered.line(i)}, block {note['iteration']})")
            out.extend(self._lane_lines(note, mnemonic))
        if not quiet:
            print("\n".join(out))
        return out

    def add_breakpoint(self, index):
        """Stops cont() before instruction `index`."""
        self.breakpoints.add(int(index))

    def remove_breakpoint(self, index):
        self.breakpoints.discard(int(index))

    def cont(self, quiet=True):
        """Runs until the next breakpoint (not counting the current instruction), a data race
        (kernels with barriers) or the end; returns the index it stopped at (None at the end)."""
        first = True
        while not self.done:
            if not first and self.pc in self.breakpoints:
                return self.pc
            self.step(quiet=quiet)
            first = False
            if self.race is not None:
                return self.race.step
        return None

    race = None  # tile-lowered kernels (no barriers) have no race check

    def inspect_l1(self, lane, n):
        """`n` fp32 values of the on-chip buffer written last, from lane `lane`'s slot
        (lane l of a block is element l of the tile row)."""
        if self.last_tile is None:
            raise ValueError("no instruction has written an on-chip buffer yet; call step() first")
        return self.stepper.tile_values(self.last_tile, int(lane), int(n))

    def get_instruction_timeline(self):
        """Modelled issue cycle of every instruction: entries with .cycle, .lane, .inst."""
        out = []
        for idx, start, end, pipe in self.lowered.timeline():
            note = self.lowered.note(idx)
            if self.lowered.pipelined:
                lanes = f"block {note['iteration']}"
            else:
                lanes = f"{note['first_lane']}-{note['first_lane'] + note['lanes'] - 1}"
            out.append(TimelineEntry(int(start), lanes, note["cls"], int(end), pipe, idx, note["stage"]))
        return out


class WarpDebugContext(DebugContext):
    """The debugger of a kernel with barriers: steps the warp model a launch runs. Step i is
    the i-th op run by a warp (in the launch's schedule: warp 0 of block 0 up to its first
    pto.barrier_block(), then warp 1, ...); constants, ids and address arithmetic run with
    the step after them. A data race stops the session at its step, like a breakpoint:
    `ctx.race` holds the facts pto.sync() reports, and stepping on is an error."""

    def __init__(self, k, args, grid, block, show_lanes, frame):
        sync()
        self.kernel = k
        g, b = launch_shape(k, grid, block)
        self.stepper = _k.WarpStepper(k.program, kernel_args(k, args), g, b)
        self.lowered = None
        self.names = _arg_names(k, args, frame)
        self.show_lanes = show_lanes
        self.breakpoints = set()
        self.block = b
        self.last = None

    @property
    def pc(self):
        """Index of the next step."""
        return self.stepper.steps

    @property
    def done(self):
        """The kernel has finished or stopped at a data race."""
        return self.stepper.done

    @property
    def race(self):
        """The data race the session stopped at (a Race), or None."""
        r = self.stepper.race
        return None if r is None else Race(**{f: r[f] for f in Race._fields})

    def _lane_lines(self, s):
        effects = s["effects"]
        shown = effects[: self.show_lanes] if self.show_lanes else effects
        what = s["what"]
        lines = []
        for lane, arg, element, value in shown:
            if what == "LOAD":
                lines.append(f"[Lane {lane}] LOAD {self.names[arg]}[{element}] (4 bytes) = {value:.6g}")
            elif what in ("STORE", "FMA", "MAD"):
                lines.append(f"[Lane {lane}] {what} → {self.names[arg]}[{element}] (4 bytes) = {value:.6g}")
            elif what == "IF":
                lines.append(f"[Lane {lane}] takes the branch")
            else:
                lines.append(f"[Lane {lane}] {what} = {value:.6g}")
        if len(shown) < len(effects):
            lines.append(f"  ... lanes {effects[len(shown)][0]}-{effects[-1][0]} likewise")
        if what == "IF":
            lines.append(f"  {len(effects)} of {s['lanes']} lanes take the branch")
        elif what == "BARRIER":
            lines.append(f"  warp {s['warp']} passes pto.barrier() (orders its 32 lanes)")
        elif what == "BARRIER_BLOCK":
            lines.append(f"  warp {s['warp']} waits at pto.barrier_block() for the block's other warps")
        return lines

    def step(self, count=1, quiet=False):
        """Runs `count` steps (one op for one warp each), printing each lane's effect; a data
        race ends the steps there and prints it. Returns the printed lines."""
        out = []
        for _ in range(count):
            if self.stepper.finished:
                out.append("(kernel finished)")
                break
            s = self.stepper.step()  # a session stopped at a race raises here, naming it
            self.last = s
            b = s["block"]
            lanes = f"lanes {s['first_lane']}-{s['first_lane'] + s['lanes'] - 1}"
            out.append(f"#{s['index']} {s['what']} (line {s['line']}, block {b}, warp {s['warp']}: {lanes})")
            out.extend(self._lane_lines(s))
            if s["raced"]:
                out.append(f"stopped at step #{s['index']}: {self.stepper.race['text']}")
                break
        if not quiet or self.race is not None:
            print("\n".join(out))
        return out

    def inspect_l1(self, lane, n):
        """The values the last step produced (loaded, stored or computed) for lanes
        lane .. lane + n - 1 of its block (kernels with barriers keep values in lanes' registers)."""
        if self.last is None:
            raise PyptoError("no step has run yet; call step() first\n  fix: ctx.step()")
        by_lane = {e[0]: e[3] for e in self.last["effects"]}
        lane, n = int(lane), int(n)
        missing = [l for l in range(lane, lane + n) if l not in by_lane]
        if missing:
            have = sorted(by_lane)
            span = f"lanes {have[0]}-{have[-1]}" if have else "no lane"
            raise PyptoError(
                f"step #{self.last['index']} ({self.last['what']}) produced values for {span}, not for lane {missing[0]}\n"
                "  fix: ask for lanes of the warp the last step ran (ctx.step() moves on)"
            )
        return [by_lane[l] for l in range(lane, lane + n)]

    def get_instruction_timeline(self):
        raise PyptoError(
            f"kernel '{self.kernel.name}' has barriers and runs on the warp model, which has no cycle model; "
            "the instruction timeline covers kernels lowered to tiles (no barriers)\n"
            "  fix: step it with ctx.step() / ctx.cont(), or time a version without barriers"
        )


@at_user_line
def debug_kernel(k, args=(), grid=None, block=None, platform="a2a3sim", show_lanes=4):
    """A DebugContext for `k` with `args` (grid and block default to the kernel's last
    launch). Stepping runs the real instructions on a sim core and writes the outputs; a
    kernel with barriers steps the warp model a launch runs (WarpDebugContext)."""
    frame = inspect.currentframe().f_back.f_back  # the caller of at_user_line's wrapper
    if isinstance(k, Kernel) and not k.program.lowers_to_tiles:
        return WarpDebugContext(k, args, grid, block, show_lanes, frame)
    return DebugContext(k, args, grid, block, platform, show_lanes, frame)

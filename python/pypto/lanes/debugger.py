"""The instruction-level debugger behind pypto.debug.debug_kernel: steps the PTO
instructions of a kernel (lowered one block per tile row, unrolled, so that lane l of a
block is column l), prints each lane's effect, reads the lanes' on-chip values, keeps
breakpoints on instruction indices and shows the modelled instruction timeline.

Instruction indices are those of the lane program's instructions (LoweredKernel.lane_pcs):
the set_flag / wait_flag that InsertSync adds between pipes are not counted, shown or
stepped (they carry no data), so index i is the same with or without pipe flags."""

import inspect
from collections import namedtuple

from pypto._core import kernel as _k

from .launch import kernel_args, launch_shape, sync
from .memory import Tensor

TimelineEntry = namedtuple("TimelineEntry", "cycle lane inst end pipe index stage")


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
        """Runs until the next breakpoint (not counting the current instruction) or the end;
        returns the index it stopped at (None at the end)."""
        first = True
        while not self.stepper.done:
            if not first and self.stepper.pc in self.breakpoints:
                return self.stepper.pc
            self.step(quiet=quiet)
            first = False
        return None

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


def debug_kernel(k, args=(), grid=None, block=None, platform="a2a3sim", show_lanes=4):
    """A DebugContext for `k` with `args` (grid and block default to the kernel's last
    launch). Stepping runs the real instructions on a sim core and writes the outputs."""
    frame = inspect.currentframe().f_back
    return DebugContext(k, args, grid, block, platform, show_lanes, frame)

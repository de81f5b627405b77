"""Issue 18, items 9 and 1 for the instruction-level API: the debugger stops at the data race a
launch reports (the second seed's wrong-barrier kernel), and Ctrl-C stops a long pto.launch."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import pypto
import pypto as pto
import pypto.debug as dbg

HERE = pathlib.Path(__file__)
SOURCE = HERE.read_text().splitlines()


def line_of(marker: str) -> int:
    hits = [i + 1 for i, text in enumerate(SOURCE) if text.rstrip().endswith(f"# E:{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


# ------------------------------------- 9. the debugger reports the race a launch reports


@pto.kernel
def share_wrong(src, smem, out):
    i = pto.get_global_id()
    data = pto.load(src + i)
    shared_mem = smem + i
    if pto.get_global_id() < 128:
        pto.store(shared_mem, data)  # E:first_access
    pto.barrier()  # orders one warp only
    v = pto.load(smem + i % 128)  # E:second_access
    pto.store(out + i, v)


@pto.kernel
def share_right(src, smem, out):
    i = pto.get_global_id()
    data = pto.load(src + i)
    if pto.get_global_id() < 128:
        pto.store(smem + i, data)
    pto.barrier_block()
    v = pto.load(smem + i % 128)
    pto.store(out + i, v)


@pto.kernel
def same_warp_race(src, smem, out):
    i = pto.get_global_id()
    pto.store(smem + i, pto.load(src + i))
    lane = pto.get_lane_id()
    pto.store(out + i, pto.load(smem + (i - lane % 32) + (lane + 1) % 32))  # E:same_warp_read
    pto.barrier()  # too late: the neighbour's write and this read are in one epoch


def buffers(n=256):
    src = np.arange(n, dtype=np.float32) * 3
    d = [pto.alloc_tensor(n * 4) for _ in range(3)]
    pto.memcpy_h2d(d[0], src)
    return src, d


def host(d, n=256):
    out = np.full(n, -1.0, np.float32)
    pto.memcpy_d2h(out, d)
    return out


def launch_error(kernel, block=256):
    _, (d_src, d_smem, d_out) = buffers(block)
    pto.launch(kernel, grid=(1, 1, 1), block=(block, 1, 1), args=(d_src, d_smem, d_out))
    with pytest.raises(pto.PyptoError) as e:
        pto.sync()
    return str(e.value)


def test_the_debugger_stops_at_the_race_the_launch_reports(capsys):
    launched = launch_error(share_wrong)
    src, (d_src, d_smem, d_out) = buffers()
    ctx = dbg.debug_kernel(share_wrong, args=(d_src, d_smem, d_out), grid=(1, 1, 1), block=(256, 1, 1))
    assert isinstance(ctx, dbg.WarpDebugContext) and ctx.race is None and not ctx.done
    stop = ctx.cont()
    printed = capsys.readouterr().out
    race = ctx.race
    assert race is not None and stop == race.step and ctx.done
    # the same facts as pto.sync(): the text is the launch's message, line for line
    assert race.text == launched
    assert f"{HERE.name}:{line_of('second_access')}: data race in kernel 'share_wrong' (block 0)" in race.text
    assert "lane 0 writes element 0 (byte offset 0) of 'smem'" in race.text
    assert f"(line {line_of('first_access')})" in race.text and "lane 128 reads it" in race.text
    assert "different warps (0 and 4)" in race.text and "fix: use pto.barrier_block()" in race.text
    assert (race.first_lane, race.first_access, race.first_line) == (0, "write", line_of("first_access"))
    assert (race.second_lane, race.second_access, race.second_line) == (128, "read", line_of("second_access"))
    assert (race.first_warp, race.second_warp, race.block, race.tensor, race.element) == (0, 4, 0, "smem", 0)
    assert race.byte_offset == 0
    # it stopped at the step of the second access: warp 4's load, lane 128 the last lane run
    assert f"stopped at step #{stop}: " in printed and race.text in printed
    assert f"#{stop} LOAD (line {line_of('second_access')}, block 0, warp 4: lanes 128-159)" in printed
    assert "[Lane 128] LOAD d_smem[0] (4 bytes) = 0" in printed
    assert ctx.inspect_l1(128, 1) == [0.0]  # lane 0's store had happened: smem[0] = src[0] = 0
    with pytest.raises(pto.PyptoError, match=r"stopped at the data race of step #\d+"):
        ctx.step()


def test_stepping_to_the_race_with_step_stops_at_the_same_step():
    _, args = buffers()
    first = dbg.debug_kernel(share_wrong, args=args, grid=(1, 1, 1), block=(256, 1, 1))
    first.cont()
    _, args = buffers()
    ctx = dbg.debug_kernel(share_wrong, args=args, grid=(1, 1, 1), block=(256, 1, 1))
    lines = []
    while not ctx.done:
        lines += ctx.step(quiet=True)
    assert ctx.race == first.race
    assert lines[-1].startswith(f"stopped at step #{first.race.step}: ")


def test_a_breakpoint_before_the_race_stops_first():
    _, args = buffers()
    probe = dbg.debug_kernel(share_wrong, args=args, grid=(1, 1, 1), block=(256, 1, 1))
    race_step = probe.cont()
    _, args = buffers()
    ctx = dbg.debug_kernel(share_wrong, args=args, grid=(1, 1, 1), block=(256, 1, 1))
    ctx.add_breakpoint(race_step - 1)
    assert ctx.cont() == race_step - 1 and ctx.race is None
    assert ctx.cont() == race_step and ctx.race.second_lane == 128


def test_a_race_inside_one_warp_names_pto_barrier():
    launched = launch_error(same_warp_race)
    _, args = buffers()
    ctx = dbg.debug_kernel(same_warp_race, args=args, grid=(1, 1, 1), block=(256, 1, 1))
    ctx.cont()
    assert ctx.race.text == launched
    assert ctx.race.first_warp == ctx.race.second_warp == 0
    assert (ctx.race.first_lane, ctx.race.second_lane, ctx.race.element) == (1, 0, 1)
    assert ctx.race.second_line == line_of("same_warp_read")
    assert "fix: put pto.barrier() between the write and the read" in ctx.race.text


def test_the_right_barrier_debugs_to_the_end_and_computes_what_a_launch_does(capsys):
    src, args = buffers()
    ctx = dbg.debug_kernel(share_right, args=args, grid=(1, 1, 1), block=(256, 1, 1))
    assert ctx.cont() is None and ctx.race is None and ctx.done
    np.testing.assert_array_equal(host(args[2]), src[np.arange(256) % 128])
    assert ctx.step(quiet=True) == ["(kernel finished)"]
    with pytest.raises(pto.PyptoError, match="no cycle model"):
        ctx.get_instruction_timeline()


def test_warp_steps_follow_the_launch_schedule():
    src, args = buffers(64)
    ctx = dbg.debug_kernel(share_right, args=args, grid=(1, 1, 1), block=(64, 1, 1), show_lanes=2)
    first = ctx.step(quiet=True)
    assert first[0].startswith("#0 LOAD") and "warp 0: lanes 0-31" in first[0]
    assert first[1] == "[Lane 0] LOAD src[0] (4 bytes) = 0" and first[2] == "[Lane 1] LOAD src[1] (4 bytes) = 3"
    assert first[3] == "  ... lanes 2-31 likewise"
    assert ctx.inspect_l1(5, 2) == [15.0, 18.0]
    with pytest.raises(pto.PyptoError, match="not for lane 32"):
        ctx.inspect_l1(31, 2)
    ctx.step(quiet=True)  # IF
    ctx.step(quiet=True)  # STORE of warp 0
    wait = ctx.step(quiet=True)
    assert "BARRIER_BLOCK" in wait[0] and "warp 0 waits at pto.barrier_block()" in wait[-1]
    nxt = ctx.step(quiet=True)  # warp 1 runs up to the barrier next
    assert nxt[0].startswith("#4 LOAD") and "warp 1: lanes 32-63" in nxt[0]


# ----------------------------------------------- 1. Ctrl-C stops a long pto.launch

LONG_LAUNCH = textwrap.dedent(
    """
    import os, sys, time
    import numpy as np
    import pypto as pto

    @pto.kernel
    def scale(a, o, n):
        i = pto.get_global_id()
        if i < n:
            pto.fma(o + i, pto.load(a + i), pto.load(a + i), 0.0)

    @pto.kernel
    def shared(a, smem, o):
        i = pto.get_global_id()
        pto.store(smem + i, pto.load(a + i))
        pto.barrier_block()
        pto.store(o + i, pto.load(smem + i))

    def cpu():
        return sum(os.times()[:2])

    kind, engine = sys.argv[1], sys.argv[2]
    n = (1 << 22) if engine == "native" else (1 << 20)
    x = np.ones(n, np.float32)
    d_a, d_s, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    pto.memcpy_h2d(d_a, x)

    def run(times):
        for _ in range(times):
            if kind == "tiles":
                pto.launch(scale, grid=(n // 256, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n), engine=engine)
            else:
                pto.launch(shared, grid=(n // 256, 1, 1), block=(256, 1, 1), args=(d_a, d_s, d_o))

    run(1)
    pto.sync()
    print("READY", flush=True)
    run({"native": 1000, "sim": 300}[engine] if kind == "tiles" else 400)  # minutes of work
    print("QUEUED", flush=True)
    try:
        pto.sync()
        print("FINISHED", flush=True)
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
    before = cpu()
    time.sleep(0.5)
    print("IDLE_CPU", cpu() - before, flush=True)
    print("IN_FLIGHT", pto._core.kernel.launches_in_flight(), flush=True)
    pto.memcpy_h2d(d_a, np.full(n, 3.0, np.float32))
    run(1)
    out = np.zeros(n, np.float32)
    pto.memcpy_d2h(out, d_o)
    print("NEXT", float(out.min()), float(out.max()), flush=True)
    """
)


@pytest.mark.parametrize("kind, engine", [("tiles", "native"), ("tiles", "sim"), ("warps", "sim")])
def test_ctrl_c_stops_a_long_launch_within_half_a_second(kind, engine, tmp_path):
    script = tmp_path / "long_launch.py"
    script.write_text(LONG_LAUNCH)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(pypto.__file__)))
    proc = subprocess.Popen([sys.executable, str(script), kind, engine], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "READY", proc.stderr.read()
        assert proc.stdout.readline().strip() == "QUEUED", proc.stderr.read()
        time.sleep(0.5)  # well inside the queued launches
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline().strip()
        stopped = time.monotonic() - sent
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert line == "INTERRUPTED", (line, err)
    assert stopped < 0.5, stopped
    lines = dict(entry.split(" ", 1) for entry in rest.strip().splitlines())
    assert float(lines["IDLE_CPU"]) < 0.2, rest  # no kernel left running
    assert lines["IN_FLIGHT"] == "0", rest
    expected = "6.0 6.0" if kind == "tiles" else "3.0 3.0"  # fma: a + a + 0
    assert lines["NEXT"] == expected, rest  # the next launch works
    assert proc.returncode == 0, err

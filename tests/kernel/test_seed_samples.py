"""The seed's samples run as written: vector_add, the pipelined matmul tile, the debugger
session, tensor lifetimes (correct forms and `del` during a running kernel) and the
barrier example (barrier() where barrier_block() is needed is reported as a data race)."""

import os
import runpy
import subprocess
import sys

import numpy as np
import pytest

import pypto as pto
import pypto.debug as dbg

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)


def test_vector_add_seed_script_passes_its_assert():
    # The child imports the same pypto as this process (installed, or a development tree).
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(pto.__file__)))
    r = subprocess.run([sys.executable, os.path.join(HERE, "seed_vector_add.py")], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "pypto: vector_add 1024 elements passed" in r.stdout


@pytest.fixture(scope="module")
def seed():
    return runpy.run_path(os.path.join(HERE, "seed_vector_add.py"))


def test_debugger_session(seed, capsys):
    vector_add, d_a, d_b, d_o, n, a = (seed[k] for k in ("vector_add", "d_a", "d_b", "d_o", "n", "a"))
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, n))
    ctx.step()  # 执行 1 条 PTO 指令
    out = capsys.readouterr().out
    assert "[Lane 0] LOAD d_a[0] → L1[0] (4 bytes)" in out
    assert "[Lane 1] LOAD d_a[1] → L1[1] (4 bytes)" in out
    l1_data = ctx.inspect_l1(0, 16)  # lane 0 的前 16 个 float
    print(l1_data)
    np.testing.assert_allclose(l1_data, a[:16], rtol=0, atol=0)
    timeline = ctx.get_instruction_timeline()
    for entry in timeline:
        print(f"Cycle {entry.cycle}: Lane {entry.lane}: {entry.inst}")
    first_block = [e for e in timeline if e.lane == "0-255"]
    assert [e.inst for e in first_block] == ["LOAD", "LOAD", "FMA", "STORE"]
    cycles = [e.cycle for e in first_block]
    assert cycles == sorted(cycles) and cycles[0] == 0 and cycles[-1] > 0
    # 4 blocks x (2 loads, 1 add, 1 store), one block per tile row in the debugger
    assert len(timeline) == 16


def test_debugger_breakpoints_and_stepping_to_the_end(seed):
    vector_add, d_a, d_b, d_o, n, a, b = (seed[k] for k in ("vector_add", "d_a", "d_b", "d_o", "n", "a", "b"))
    pto.memcpy_h2d(d_o, np.zeros(n, np.float32))
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, n))
    ctx.add_breakpoint(6)
    assert ctx.cont() == 6
    lines = ctx.step(quiet=True)  # instruction 6 = the add of block 1
    assert lines[0].startswith("#6 TADD")
    np.testing.assert_allclose(ctx.inspect_l1(0, 8), (a + b)[256:264], rtol=1e-6)
    assert ctx.cont() is None and ctx.done
    out = np.zeros(n, np.float32)
    pto.memcpy_d2h(out, d_o)
    np.testing.assert_allclose(out, a + b, rtol=1e-6)


def test_profile_and_profile_on_npu(seed):
    vector_add, d_a, d_b, d_o, n = (seed[k] for k in ("vector_add", "d_a", "d_b", "d_o", "n"))
    prof = pto.profile(vector_add, args=(d_a, d_b, d_o, n))
    text = prof.cycle_breakdown()
    assert {"LOAD", "FMA", "STORE"} <= set(prof.classes)
    assert prof.classes["LOAD"]["count"] == 2 * prof.classes["STORE"]["count"]
    assert all(v["cycles"] > 0 for v in prof.classes.values()) and prof.seconds > 0
    assert "LOAD:" in text and "FMA:" in text and "STORE:" in text
    with pytest.raises(pto.PyptoError, match="(?s)no Ascend NPU.*pto.profile"):
        pto.profile_on_npu(vector_add, args=(d_a, d_b, d_o, n))


def test_pipelined_matmul_tile_product_and_overlap():
    from seed_pipeline_matmul import matmul_tile
    M, N, K, tm, tn, tk = 128, 64, 64, 32, 64, 64
    rng = np.random.default_rng(0)
    A = rng.random((M, K), dtype=np.float32)
    B = rng.random((K, N), dtype=np.float32)
    C = np.zeros((M, N), np.float32)
    dA, dB, dC = pto.alloc_tensor(A.nbytes), pto.alloc_tensor(B.nbytes), pto.alloc_tensor(C.nbytes)
    pto.memcpy_h2d(dA, A)
    pto.memcpy_h2d(dB, B)
    args = (dA, dB, dC, M, N, K, tm, tn, tk)
    pto.launch(matmul_tile, grid=(M // tm, 1, 1), block=(1, 1, 1), args=args)
    pto.memcpy_d2h(C, dC)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-4)

    timeline = dbg.debug_kernel(matmul_tile, args=args).get_instruction_timeline()
    by = {(e.lane, e.stage, e.inst): e for e in timeline}
    # double buffering: block 1 loads A while block 0 is still computing / storing
    assert by[("block 1", "load_a", "LOAD")].cycle < by[("block 0", "store", "STORE")].end
    serial = sum(e.end - e.cycle for e in timeline)
    makespan = max(e.end for e in timeline)
    assert makespan < serial
    # stage order inside one iteration
    for blk in range(4):
        lane = f"block {blk}"
        assert by[(lane, "compute", "MMA")].cycle >= by[(lane, "load_b", "MOV")].end
        assert by[(lane, "store", "STORE")].cycle >= by[(lane, "compute", "MMA")].end


@pto.kernel
def scale_add(x, y, n):
    i = pto.get_global_id()
    if i < n:
        v = pto.load(x + i)
        pto.mad(y + i, v, 2.0, 1.0)


def test_lifetime_with_block_and_explicit_sync():
    n = 1024
    a = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    d_o = pto.alloc_tensor(n * 4)
    with pto.Tensor(n * 4) as d_a:
        pto.memcpy_h2d(d_a, a)
        pto.launch(scale_add, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n))
    # 退出 with 块时自动等 kernel 完成 + 释放 NPU 内存
    assert d_a.freed
    pto.memcpy_d2h(out, d_o)
    np.testing.assert_array_equal(out, a * 2 + 1)
    with pytest.raises(pto.PyptoError, match="after it was freed"):
        pto.memcpy_d2h(out, d_a)
    with pytest.raises(pto.PyptoError, match="after it was freed"):
        pto.launch(scale_add, grid=4, block=256, args=(d_a, d_o, n))

    # 或者显式同步
    d_a = pto.alloc_tensor(n * 4)
    pto.memcpy_h2d(d_a, a + 1)
    pto.launch(scale_add, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n))
    pto.sync()  # 等 NPU kernel 完成
    del d_a  # 安全释放
    pto.memcpy_d2h(out, d_o)
    np.testing.assert_array_equal(out, (a + 1) * 2 + 1)


def test_del_while_kernel_runs_does_not_crash():
    n = 1 << 21
    a = np.random.default_rng(1).random(n, dtype=np.float32)
    d_o = pto.alloc_tensor(n * 4)
    outs = []
    for _ in range(3):
        d_a = pto.alloc_tensor(n * 4)
        pto.memcpy_h2d(d_a, a)
        pto.launch(scale_add, grid=(n // 256, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n))
        del d_a  # Python 侧释放; the launch still holds the memory
        outs.append(pto.alloc_tensor(n * 4))  # new allocations while the kernel runs
    out = np.zeros(n, np.float32)
    pto.memcpy_d2h(out, d_o)
    np.testing.assert_allclose(out, a * 2 + 1, rtol=1e-6)


def test_launch_is_asynchronous():
    n = 1 << 22
    d_a, d_o = pto.alloc_tensor(n * 4), pto.alloc_tensor(n * 4)
    pto.launch(scale_add, grid=(n // 256, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n))
    assert pto._core.kernel.launches_in_flight() >= 1 or d_o.freed is False
    pto.sync()
    assert pto._core.kernel.launches_in_flight() == 0


@pto.kernel
def share_wrong(src, smem, out):
    i = pto.get_global_id()
    data = pto.load(src + i)
    shared_mem = smem + i
    # 错误假设：barrier() 同步 256 个 lane
    if pto.get_global_id() < 128:
        pto.store(shared_mem, data)
    pto.barrier()  # 只同步当前 warp（32 个 lane）！
    v = pto.load(smem + i % 128)
    pto.store(out + i, v)


@pto.kernel
def share_right(src, smem, out):
    i = pto.get_global_id()
    data = pto.load(src + i)
    shared_mem = smem + i
    if pto.get_global_id() < 128:
        pto.store(shared_mem, data)
    pto.barrier_block()  # 同步整个 block（所有 warp）
    v = pto.load(smem + i % 128)
    pto.store(out + i, v)


def _share_buffers():
    src = np.arange(256, dtype=np.float32) * 3
    d_src, d_smem, d_out = (pto.alloc_tensor(256 * 4) for _ in range(3))
    pto.memcpy_h2d(d_src, src)
    return src, d_src, d_smem, d_out


def test_barrier_where_barrier_block_is_needed_is_a_race_naming_lanes():
    src, d_src, d_smem, d_out = _share_buffers()
    pto.launch(share_wrong, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_smem, d_out))
    with pytest.raises(pto.PyptoError) as e:
        pto.sync()
    msg = str(e.value)
    assert "data race" in msg and "lane 0 writes element 0" in msg and "lane 128 reads" in msg
    assert "different warps (0 and 4)" in msg and "pto.barrier_block()" in msg
    assert "test_seed_samples.py" in msg


def test_barrier_block_orders_the_block():
    src, d_src, d_smem, d_out = _share_buffers()
    pto.launch(share_right, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_smem, d_out))
    pto.sync()
    out = np.zeros(256, np.float32)
    pto.memcpy_d2h(out, d_out)
    np.testing.assert_array_equal(out, src[np.arange(256) % 128])


@pto.kernel
def warp_local(src, smem, out):
    i = pto.get_global_id()
    pto.store(smem + i, pto.load(src + i))
    pto.barrier()
    lane = pto.get_lane_id()
    pto.store(out + i, pto.load(smem + (i - lane % 32) + (lane + 1) % 32))


def test_barrier_orders_one_warp():
    src, d_src, d_smem, d_out = _share_buffers()
    pto.launch(warp_local, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_smem, d_out))
    pto.sync()
    out = np.zeros(256, np.float32)
    pto.memcpy_d2h(out, d_out)
    i = np.arange(256)
    np.testing.assert_array_equal(out, src[i - i % 32 + (i + 1) % 32])

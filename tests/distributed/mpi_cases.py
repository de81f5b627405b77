"""Programs that tests/distributed/test_mpi.py runs under `mpirun -n N python mpi_cases.py CASE`
(the MPI transport; rank 0 drives, the others serve). Each case checks its result against numpy
and prints OK; `fail` and `deadlock` end with the error the driver raises."""

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import pypto.language as pl  # noqa: E402
import pypto.language.distributed as pld  # noqa: E402
from pypto.runtime import DistributedConfig, RunConfig  # noqa: E402

import progs  # noqa: E402

R, C = progs.R, progs.C


@pl.jit
def add_half(x: pl.Tensor, h16: pld.DistributedTensor[[R, C], pl.FP16], f32: pld.DistributedTensor[[R, C], pl.FP32],
             sig: pld.DistributedTensor[[progs.MAXR], pl.INT32], y16: pl.Out[pl.Tensor], y32: pl.Out[pl.Tensor]):
    # Every rank adds its tile into rank 0's FP16 window (no MPI type: the fetch / CAS loop; BF16
    # takes the same path) and FP32 window (MPI_Accumulate), then every rank reads rank 0's sums.
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        pld.tile.remote_store(pl.cast(t, pl.FP16), h16, 0, [0, 0], atomic=pld.AtomicType.Add)
        pld.tile.remote_store(t, f32, 0, [0, 0], atomic=pld.AtomicType.Add)
        pld.tensor.barrier(sig)
        pl.store(pl.cast(pld.tile.remote_load(h16, 0, [0, 0], [R, C]), pl.FP32), [0, 0], y16)
        pl.store(pld.tile.remote_load(f32, 0, [0, 0], [R, C]), [0, 0], y32)
    return y16


@pl.jit.host
def host_add_half(x: pl.Tensor, y16: pl.Out[pl.Tensor], y32: pl.Out[pl.Tensor]):
    h_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP16)
    f_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([progs.MAXR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        add_half(x[r], pld.window(h_buf, [R, C], dtype=pl.FP16), pld.window(f_buf, [R, C], dtype=pl.FP32),
                 pld.window(sig_buf, [progs.MAXR], dtype=pl.INT32), y16[r], y32[r], device=r)
    return y16


def cfg(n):
    return RunConfig(distributed_config=DistributedConfig(device_ids=list(range(n))))


def case_reduce(n):
    """A kernel allreduce per ReduceOp (Sum, Max, Min, Prod), twice: the second call reuses the MPI window."""
    for k in range(2):
        x = (np.random.default_rng(n + k).random((n, R, C), dtype=np.float32) + 0.5).astype(np.float32)
        ys = np.zeros((n, 4, R, C), np.float32)
        progs.host_reduce_all(x, ys, config=cfg(n))
        for r in range(n):
            np.testing.assert_allclose(ys[r, 0], x.sum(0), rtol=1e-5)
            np.testing.assert_allclose(ys[r, 1], x.max(0), rtol=1e-6)
            np.testing.assert_allclose(ys[r, 2], x.min(0), rtol=1e-6)
            np.testing.assert_allclose(ys[r, 3], x.prod(0), rtol=1e-5)


def case_dtypes(n):
    """The allreduce per ReduceOp over INT32 (exact), FP16 (numpy) and BF16 (torch) windows and
    host tensors: BF16 reaches the ranks as BF16 (numpy has no bfloat16), not as UINT16."""
    import torch

    rng = np.random.default_rng(200 + n)
    x = rng.integers(-5, 6, size=(n, R, C)).astype(np.int32)
    ys = np.zeros((n, 4, R, C), np.int32)
    progs.host_reduce_typed(x, ys, pl.INT32, config=cfg(n))
    for r in range(n):
        for k, want in enumerate((x.sum(0), x.max(0), x.min(0), x.prod(0))):
            np.testing.assert_array_equal(ys[r, k], want)
    for half, dtype in ((torch.float16, pl.FP16), (torch.bfloat16, pl.BF16)):
        x = torch.from_numpy(rng.random((n, R, C), dtype=np.float32) + 0.5).to(half)
        ys = torch.zeros((n, 4, R, C), dtype=half)
        progs.host_reduce_typed(x.numpy() if half == torch.float16 else x, ys.numpy() if half == torch.float16 else ys,
                                dtype, config=cfg(n))
        x64, ulp = x.double(), 2.0 ** (-10 if half == torch.float16 else -7)
        for r in range(n):
            for k, want in enumerate((x64.sum(0), x64.amax(0), x64.amin(0), x64.prod(0))):
                torch.testing.assert_close(ys[r, k].double(), want.to(half).double(), rtol=n * ulp, atol=0)


def case_collectives(n):
    """allgather, reduce_scatter, broadcast, all_to_all; host-level allreduce (Sum, Max); atomic remote store."""
    x = np.random.default_rng(7).random((n, progs.MAXR, C), dtype=np.float32)
    gathered, scattered = np.zeros_like(x), np.zeros((n, 1, C), np.float32)
    bcast, a2a = np.zeros((n, R, C), np.float32), np.zeros_like(x)
    progs.host_gather(x, gathered, scattered, bcast, a2a, config=cfg(n))
    for r in range(n):
        np.testing.assert_allclose(gathered[r, :n], x[:, 0], rtol=1e-6)
        np.testing.assert_allclose(a2a[r, :n], x[:, r], rtol=1e-6)
        np.testing.assert_allclose(scattered[r, 0], x[:, r].sum(0), rtol=1e-5)
        np.testing.assert_allclose(bcast[r], x[1, :R], rtol=1e-6)
    x = np.random.default_rng(11).random((n, R, C), dtype=np.float32)
    ysum, ymax = np.zeros_like(x), np.zeros_like(x)
    progs.host_level_collectives(x, ysum, ymax, config=cfg(n))
    for r in range(n):
        np.testing.assert_allclose(ysum[r], x.sum(0), rtol=1e-6)
        np.testing.assert_allclose(ymax[r], x.max(0), rtol=1e-6)
    y = np.zeros_like(x)
    progs.host_shift(x, y, 0.5, config=cfg(n))
    np.testing.assert_allclose(y, np.roll(x, 1, axis=0) * 0.5 * 2, rtol=1e-6)


def case_big(n):
    """Windows far larger than one tile and host tensors of megabytes: the collectives in tiles
    (allreduce, broadcast, allgather, reduce_scatter, all_to_all, all_to_all_v)."""
    progs.check_collectives_over_many_tiles(n, cfg(n))


def case_half(n):
    """FP16 (compare-and-swap loop) and FP32 (MPI_Accumulate) atomic adds of every rank into one window."""
    x = np.random.default_rng(5).integers(0, 8, (n, R, C)).astype(np.float32)  # sums exact in FP16
    y16, y32 = np.zeros((n, R, C), np.float32), np.zeros((n, R, C), np.float32)
    host_add_half(x, y16, y32, config=cfg(n))
    for r in range(n):
        np.testing.assert_array_equal(y16[r], x.sum(0))
        np.testing.assert_array_equal(y32[r], x.sum(0))


def case_worker(n):
    """A prepared worker (persistent windows) and a host callback between chip phases."""
    from pypto.ir import compile as ir_compile
    x = np.random.default_rng(31).random((n, R, C), dtype=np.float32)
    mid, y = np.zeros_like(x), np.zeros_like(x)

    def combine(data, mid, factor):  # data: every rank's window copy, [n, R, C]
        mid[...] = np.cumsum(data, axis=0) * factor

    prog = ir_compile(progs.host_with_callback, distributed_config=DistributedConfig(device_ids=list(range(n))))
    with prog.prepare(callbacks={"host_combine": combine}) as worker:
        for _ in range(2):
            worker.run(prog, x, mid, y, 0.5)
            want = np.cumsum(x, axis=0) * 0.5 + np.arange(n, dtype=np.float32)[:, None, None]
            np.testing.assert_allclose(y, want, rtol=1e-6)


def case_dfx(n):
    """Per-rank diagnostics and one swimlane of every rank (argv[2]: the output directory)."""
    import json
    out = pathlib.Path(sys.argv[2])
    x = np.random.default_rng(60).random((n, R, C), dtype=np.float32)
    y = np.zeros_like(x)
    rc = RunConfig(output_dir=str(out), enable_chip_swimlane=1, enable_dep_gen=True,
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    progs.host_shift(x, y, 0.5, config=rc)
    np.testing.assert_allclose(y, np.roll(x, 1, axis=0), rtol=1e-6)
    for r in range(n):
        deps = json.loads((out / "dfx_outputs" / f"rank{r}" / "d0" / "deps.json").read_text())
        assert [t["kernel"] for t in deps["tasks"]] == ["shift_kernel"]
    trace = json.loads((out / "swimlane.json").read_text())["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in trace if e.get("name") == "process_name"}
    assert all(procs[r] == f"rank {r} (host wall clock)" for r in range(n)), procs
    starts = {e["id"]: e for e in trace if e.get("ph") == "s" and e.get("cat") == "signal"}
    ends = [e for e in trace if e.get("ph") == "f" and e.get("cat") == "signal"]
    assert any(starts[e["id"]]["pid"] != e["pid"] for e in ends)  # a notify -> wait arrow across ranks


def case_fail(n):
    """Rank 1 fails (a peer outside the domain); rank 0 waits on it: the driver raises "rank 1 failed: ..."."""
    x = np.ones((n, R, C), np.float32)
    progs.host_bad_peer(x, np.zeros_like(x), config=cfg(n))


def case_deadlock(n):
    """Every rank waits for a notify nobody sends: the watchdog reports the deadlock."""
    x = np.ones((n, R, C), np.float32)
    progs.host_deadlock(x, np.zeros_like(x), config=cfg(n))


def case_absent(n):
    """Ranks > 0 branch away before the first distributed call: the driver reports it (no hang)."""
    from mpi4py import MPI
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    x = np.ones((n, R, C), np.float32)
    dc = DistributedConfig(device_ids=list(range(n)), timeout_s=2)
    progs.host_deadlock(x, np.zeros_like(x), config=RunConfig(distributed_config=dc))


if __name__ == "__main__":
    from mpi4py import MPI
    n = MPI.COMM_WORLD.Get_size()
    globals()["case_" + sys.argv[1]](n)
    if MPI.COMM_WORLD.Get_rank() == 0:
        print("OK")

"""pld end to end: the examples at 2, 3 and 4 ranks, the collectives against numpy for every
ReduceOp, signal reuse, the deadlock and rank-failure reports, the front end's errors and the
printer round trip of the pld ops. Each test has a time limit (conftest.py)."""

import importlib.util
import os
import pathlib
import sys

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.runtime import DistributedConfig, RunConfig

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "examples" / "distributed"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(EXAMPLES))

import progs  # noqa: E402


def cfg(n):
    return RunConfig(distributed_config=DistributedConfig(device_ids=list(range(n))))


def example(name):
    spec = importlib.util.spec_from_file_location(name.replace(".py", ""), EXAMPLES / name)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_surface_names():
    assert (pld.NotifyOp.AtomicAdd, pld.NotifyOp.Set) == (0, 1)
    assert (pld.WaitCmp.Eq, pld.WaitCmp.Ge) == (0, 1)
    assert (pld.AtomicType.None_, pld.AtomicType.Add) == (0, 1)
    assert [m.name for m in pld.ReduceOp] == ["Sum", "Max", "Min", "Prod"]
    for ns, names in ((pld.system, "world_size get_comm_ctx rank nranks notify wait defer_wait"),
                      (pld.tensor, "alloc_window_buffer window put get barrier allreduce broadcast allgather "
                                   "reduce_scatter all_to_all all_to_all_v remote_store"),
                      (pld.tile, "remote_load remote_store get put")):
        for n in names.split():
            assert hasattr(ns, n), n
    with pytest.raises(RuntimeError, match="only known on a rank"):
        pld.rank(None)
    import pypto.ir.distributed_compiled_program as dcp
    assert dcp.DistributedConfig is DistributedConfig
    with pytest.raises(ValueError, match="device_ids"):
        DistributedConfig(device_ids=[])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_examples_at_n_ranks(n, capsys):
    example("01_hello_rank.py").main("numpy", cfg(n))
    example("03_barrier.py").main("numpy", cfg(n), builtin=True)
    example("04_remote_load_store.py").main("numpy", cfg(n), "store")
    example("05_put_get.py").main("numpy", cfg(n), "get")
    example("07_dynamic_rank_count.py").main("numpy", cfg(n))
    assert capsys.readouterr().out.count("OK") == 5


def test_examples_remaining_modes(capsys):
    example("02_window_buffer.py").main("numpy", cfg(2))
    example("03_barrier.py").main("numpy", cfg(3), builtin=False)
    example("04_remote_load_store.py").main("numpy", cfg(2), "load")
    example("05_put_get.py").main("numpy", cfg(2), "put")
    example("06_sharded_gemm_allreduce.py").main("numpy", cfg(2))
    assert capsys.readouterr().out.count("OK") == 5


@pytest.mark.parametrize("n", [2, 3])
def test_allreduce_every_op(n):
    rng = np.random.default_rng(n)
    x = (rng.random((n, progs.R, progs.C), dtype=np.float32) + 0.5).astype(np.float32)
    ys = np.zeros((n, 4, progs.R, progs.C), np.float32)
    progs.host_reduce_all(x, ys, config=cfg(n))
    for r in range(n):
        np.testing.assert_allclose(ys[r, 0], x.sum(0), rtol=1e-5)
        np.testing.assert_allclose(ys[r, 1], x.max(0), rtol=1e-6)
        np.testing.assert_allclose(ys[r, 2], x.min(0), rtol=1e-6)
        np.testing.assert_allclose(ys[r, 3], x.prod(0), rtol=1e-5)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("dtype", ["INT32", "FP16", "BF16"])
def test_allreduce_every_op_of_each_dtype(dtype, n):
    """Sum, Max, Min and Prod over INT32 (numpy, exact), FP16 (numpy) and BF16 (torch: numpy has
    no bfloat16) windows; each rank's result against the float64 reduction rounded once to the
    dtype (the collective combines in the window's dtype: one rounding per step, so a BF16/FP16
    result may be off by a few units of its last place)."""
    import torch

    rng = np.random.default_rng(100 + n)
    if dtype == "INT32":
        x = rng.integers(-5, 6, size=(n, progs.R, progs.C)).astype(np.int32)
        ys = np.zeros((n, 4, progs.R, progs.C), np.int32)
        progs.host_reduce_typed(x, ys, pl.INT32, config=cfg(n))
        for r in range(n):
            for k, want in enumerate((x.sum(0), x.max(0), x.min(0), x.prod(0))):
                np.testing.assert_array_equal(ys[r, k], want)
        return
    half = torch.float16 if dtype == "FP16" else torch.bfloat16
    x = torch.from_numpy(rng.random((n, progs.R, progs.C), dtype=np.float32) + 0.5).to(half)
    ys = torch.zeros((n, 4, progs.R, progs.C), dtype=half)
    if dtype == "FP16":  # numpy in, numpy out
        x_np, ys_np = x.numpy(), ys.numpy()
        got = progs.host_reduce_typed(x_np, ys_np, pl.FP16, config=cfg(n))
        assert got is ys_np
    else:  # torch in, torch out (written in place; the call returns the caller's tensor)
        got = progs.host_reduce_typed(x, ys, pl.BF16, config=cfg(n))
        assert got is ys
    x64 = x.double()
    ulp = 2.0 ** (-10 if dtype == "FP16" else -7)
    for r in range(n):
        for k, want in enumerate((x64.sum(0), x64.amax(0), x64.amin(0), x64.prod(0))):
            torch.testing.assert_close(ys[r, k].double(), want.to(half).double(), rtol=n * ulp, atol=0)
        assert torch.equal(ys[r, 1], x.amax(0)) and torch.equal(ys[r, 2], x.amin(0))  # exact in any dtype


def test_allgather_reduce_scatter_broadcast():
    n = 3
    rng = np.random.default_rng(7)
    x = rng.random((n, progs.MAXR, progs.C), dtype=np.float32)
    gathered = np.zeros((n, progs.MAXR, progs.C), np.float32)
    scattered = np.zeros((n, 1, progs.C), np.float32)
    bcast = np.zeros((n, progs.R, progs.C), np.float32)
    a2a = np.zeros_like(gathered)
    progs.host_gather(x, gathered, scattered, bcast, a2a, config=cfg(n))
    for r in range(n):
        np.testing.assert_allclose(gathered[r, :n], x[:, 0], rtol=1e-6)
        np.testing.assert_allclose(a2a[r, :n], x[:, r], rtol=1e-6)  # all_to_all: row p from rank p
        np.testing.assert_allclose(scattered[r, 0], x[:, r].sum(0), rtol=1e-5)
        np.testing.assert_allclose(bcast[r], x[1, :progs.R], rtol=1e-6)


def test_deadlock_is_reported():
    x = np.ones((2, progs.R, progs.C), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(RuntimeError) as e:
        progs.host_deadlock(x, y, config=cfg(2))
    text = str(e.value)
    assert text.startswith("rank ") and " failed: " in text
    assert "deadlock" in text and "rank 0 waits at" in text and "progs.py" in text
    assert "sig[3]" in text and "== 1, current value 0" in text and "== 2, current value 0" in text
    assert "(it notified nobody)" in text


def test_failed_rank_stops_the_others():
    x = np.ones((2, progs.R, progs.C), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(RuntimeError, match=r"rank 1 failed: .*peer 7 is outside the domain of 2 ranks"):
        progs.host_bad_peer(x, y, config=cfg(2))
    # the domain recovers: the next call runs
    example("01_hello_rank.py").main("numpy", cfg(2))


def test_prepared_worker_runs_twice():
    from pypto.ir import compile as ir_compile
    hello = example("01_hello_rank.py")
    prog = ir_compile(hello.hello, distributed_config=DistributedConfig(device_ids=[0, 1]))
    with prog.prepare() as worker:
        for k in range(2):
            x = np.full((2, hello.R, hello.C), float(k), np.float32)
            y = np.zeros_like(x)
            worker.run(prog, x, y)
            np.testing.assert_allclose(y[1], x[1] + 1)
        # device memory of a worker, and stacked tensors
        host = np.arange(16, dtype=np.float32)
        ptr = worker.malloc(host.nbytes, worker_id=1)
        assert worker.committed_device_memory(1) == host.nbytes
        worker.copy_to(ptr, host.ctypes.data, host.nbytes, worker_id=1)
        back = np.zeros_like(host)
        worker.copy_from(back.ctypes.data, ptr, host.nbytes, worker_id=1)
        np.testing.assert_array_equal(back, host)
        with pytest.raises(ValueError, match="not inside a block of worker 0"):
            worker.copy_from(back.ctypes.data, ptr, host.nbytes, worker_id=0)
        worker.free(ptr, worker_id=1)
        stacked = worker.alloc_stacked_tensor(np.ones((2, 4), np.float32) * [[1], [2]])
        out = np.zeros((2, 4), np.float32)
        worker.copy_stacked_from(stacked, out)
        np.testing.assert_array_equal(out[:, 0], [1, 2])


def test_host_errors():
    mod = example("01_hello_rank.py")
    x = np.zeros((2, mod.R, mod.C), np.float32)
    with pytest.raises(ValueError, match="needs RunConfig\\(distributed_config=...\\)"):
        mod.hello(x, x.copy())
    src = EXAMPLES.parent.parent / "tests" / "distributed" / "bad_host.py"
    bad = example_from(src)
    with pytest.raises(ValueError, match=r"bad_host.py:\d+: device=r \+ 0 is neither a constant nor the loop variable"):
        bad.dev_expr(x, x.copy(), config=cfg(2))
    with pytest.raises(ValueError, match=r"tensor argument 1 comes after scalar argument 0"):
        bad.scalar_first(x, x.copy(), config=cfg(2))
    with pytest.raises(ValueError, match=r"device=5 is outside the domain of 2 ranks"):
        bad.outside(x, x.copy(), config=cfg(2))


def example_from(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ops_round_trip_through_the_printer():
    from pypto import ir
    text = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, w: pl.Tensor[[8, 64], pl.FP32], s: pl.Tensor[[8], pl.INT32], y: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        t = pl.dist.remote_load(w, 1, [0, 0], [8, 64])
        pl.dist.remote_store(t, w, 0, [0, 0], atomic="Add")
        pl.dist.notify(s, 1, [2], 1, op="Set")
        pl.dist.wait(s, [2], 1, cmp="Ge")
        y = pl.store(t, [0, 0], y)
        return y
'''
    prog = pl.parse(text)
    printed = ir.print_program(prog) if hasattr(ir, "print_program") else str(prog)
    again = pl.parse(printed)
    assert ir.structural_equal(prog, again)
    assert "pl.dist.notify" in printed and "pl.dist.wait" in printed


def test_incore_kernel_with_atomic_remote_store_and_barrier_in_a_loop():
    n = 3
    x = np.random.default_rng(9).random((n, progs.R, progs.C), dtype=np.float32)
    y = np.zeros_like(x)
    out = progs.host_shift(x, y, 0.5, config=cfg(n))
    assert out is y
    np.testing.assert_allclose(y, np.roll(x, 1, axis=0) * 0.5 * 2, rtol=1e-6)


def test_host_level_collectives():
    n = 2
    x = np.random.default_rng(11).random((n, progs.R, progs.C), dtype=np.float32)
    ysum, ymax = np.zeros_like(x), np.zeros_like(x)
    progs.host_level_collectives(x, ysum, ymax, config=cfg(n))
    for r in range(n):
        np.testing.assert_allclose(ysum[r], x.sum(0), rtol=1e-6)
        np.testing.assert_allclose(ymax[r], x.max(0), rtol=1e-6)


def test_pl_function_host_orchestrator_form():
    x = np.random.default_rng(12).random((2, progs.R, progs.C), dtype=np.float32)
    y = np.zeros_like(x)
    progs.host_function_form(x, y, config=cfg(2))
    np.testing.assert_array_equal(y, x)  # the window keeps what the first dispatch wrote


def test_every_pld_name_of_the_surface_doc_exists(monkeypatch):
    import inspect
    sys.path.insert(0, str(HERE.parent / "compat"))
    import surface_doc
    if not os.path.exists(surface_doc.DOC):
        pytest.skip("no surface doc beside the checkout")
    monkeypatch.setattr(surface_doc, "SINGLE_CHIP", ("pld", "pld.system", "pld.tensor", "pld.tile"))
    rows = surface_doc.read_rows()
    assert len(rows) > 30
    missing = []
    for r in rows:
        ns = pld if r.namespace == "pld" else getattr(pld, r.namespace.split(".")[1])
        obj = getattr(ns, r.name, None)
        if obj is None:
            missing.append(f"{r.namespace}.{r.name}")
            continue
        bind = getattr(obj, "_bind", None)
        if bind is not None:
            params = set(inspect.signature(bind).parameters)
            missing += [f"{r.namespace}.{r.name}({p}=)" for p in r.params if p not in params]
        elif isinstance(obj, type) and issubclass(obj, int):  # an enum: its members
            missing += [f"{r.namespace}.{r.name}.{m}" for m in r.members if not hasattr(obj, m)]
    assert not missing, missing


def a2av_reference(x, send):
    """numpy: row p of rank r's result holds the first send[p, r] elements of row r of rank p's x, then zeros."""
    n = x.shape[0]
    out = np.zeros_like(x)
    for r in range(n):
        for p in range(n):
            c = send[p, r]
            out[r, p, :c] = x[p, r, :c]
    return out


@pytest.mark.parametrize("n", [2, 3, 4])
def test_all_to_all_v_against_numpy(n):
    rng = np.random.default_rng(20 + n)
    x = rng.random((n, progs.MAXR, progs.C), dtype=np.float32) + 1.0
    send_a = rng.integers(0, progs.C + 1, (n, progs.MAXR)).astype(np.int32)
    send_a[:, 0] = progs.C      # a full row
    send_a[0, 1 % n] = 0        # an empty one
    send_b = (send_a // 3).astype(np.int32)  # round b sends less: the tails of round a must not survive
    recv_a = np.zeros_like(send_a)
    recv_b = np.zeros_like(send_b)
    recv_a[:, :n] = send_a[:n, :n].T  # what rank r receives from p is what p sends to r
    recv_b[:, :n] = send_b[:n, :n].T
    ys = np.full((n, 2, progs.MAXR, progs.C), -1.0, np.float32)
    progs.host_a2av(x, send_a, recv_a, send_b, recv_b, ys, config=cfg(n))
    for k, send in enumerate((send_a, send_b)):
        want = a2av_reference(x, send)
        np.testing.assert_array_equal(ys[:, k, :n], want[:, :n])


def test_all_to_all_v_count_past_the_row_is_an_error_at_the_users_line():
    n = 2
    x = np.ones((n, progs.MAXR, progs.C), np.float32)
    counts = np.full((n, progs.MAXR), 3, np.int32)
    counts[1, 0] = progs.C + 5
    ys = np.zeros((n, 2, progs.MAXR, progs.C), np.float32)
    with pytest.raises(RuntimeError, match=r"rank 1 failed: .*progs.py:\d+: .*valid shape 1x69 outside its 1x64"):
        progs.host_a2av(x, counts, counts, counts, counts, ys, config=cfg(n))


def test_host_callback_runs_between_the_chip_phases():
    from pypto.ir import compile as ir_compile
    n = 3
    rng = np.random.default_rng(31)
    x = rng.random((n, progs.R, progs.C), dtype=np.float32)
    mid = np.zeros_like(x)
    y = np.zeros_like(x)
    seen = []

    def combine(data, mid, factor):  # data: every rank's window copy, [n, R, C]
        seen.append(data.shape)
        mid[...] = np.cumsum(data, axis=0) * factor  # rank r gets the sum of ranks 0..r's windows

    prog = ir_compile(progs.host_with_callback, distributed_config=DistributedConfig(device_ids=list(range(n))))
    with prog.prepare(callbacks={"host_combine": combine}) as worker:
        worker.run(prog, x, mid, y, 0.5)
    assert seen == [(n, progs.R, progs.C)]
    want = np.cumsum(x, axis=0) * 0.5 + np.arange(n, dtype=np.float32)[:, None, None]
    np.testing.assert_allclose(y, want, rtol=1e-6)
    np.testing.assert_allclose(mid, np.cumsum(x, axis=0) * 0.5, rtol=1e-6)


def test_host_callback_errors():
    from pypto.ir import compile as ir_compile
    from pypto.language.errors import ParseError
    x = np.zeros((2, progs.R, progs.C), np.float32)
    with pytest.raises(ValueError, match=r"progs.py:\d+: host callback 'host_combine' .* is not bound; fix: .*"
                                         r"prepare\(callbacks=\{'host_combine': fn\}\)"):
        progs.host_with_callback(x, x.copy(), x.copy(), 1.0, config=cfg(2))
    prog = ir_compile(progs.host_with_callback, distributed_config=DistributedConfig(device_ids=[0, 1]))

    def broken(data, mid, factor):
        raise KeyError("no such table")

    with prog.prepare(callbacks={progs.host_combine: broken}) as worker:
        with pytest.raises(RuntimeError, match=r"progs.py:\d+: host callback 'host_combine' failed: KeyError"):
            worker.run(prog, x, x.copy(), x.copy(), 1.0)
    with pytest.raises(ParseError, match="has a body"):
        @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
        def with_body(a):
            return a
    with pytest.raises(ValueError, match="num_sub_workers"):
        DistributedConfig(device_ids=[0, 1], num_sub_workers=-1)
    with pytest.raises(ValueError, match="not callable"):
        prog.prepare(callbacks={"host_combine": 3})


def test_num_sub_workers_runs_adjacent_callbacks_at_once():
    import threading
    from pypto.ir import compile as ir_compile
    both = threading.Barrier(2, timeout=60)  # passes only when the two callbacks run at the same time

    def part(mid, k):
        both.wait()
        mid[k] = k + 10.0

    dc = DistributedConfig(device_ids=[0, 1], num_sub_workers=2)
    prog = ir_compile(progs.host_two_callbacks, distributed_config=dc)
    x = np.zeros((2, progs.R, progs.C), np.float32)
    mid, y = np.zeros_like(x), np.zeros_like(x)
    with prog.prepare(callbacks={"host_part": part}) as worker:
        worker.run(prog, x, mid, y)
    np.testing.assert_array_equal(y[0], 10.0)
    np.testing.assert_array_equal(y[1], 12.0)  # 11 + rank 1


@pytest.mark.parametrize("n", [2, 4])
def test_defer_wait_frees_the_core(n):
    # One worker per rank: the deferred wait lets the rank's next task run (see progs.defer_chip).
    x = np.random.default_rng(40 + n).random((n, progs.R, progs.C), dtype=np.float32)
    y = np.zeros_like(x)
    dc = DistributedConfig(device_ids=list(range(n)))
    progs.host_defer(x, y, False, config=RunConfig(num_workers=1, distributed_config=dc))
    np.testing.assert_allclose(y, x + np.roll(x, 1, axis=0), rtol=1e-6)


def test_blocking_wait_on_the_only_core_is_a_deadlock_naming_the_notifier():
    n = 2
    x = np.ones((n, progs.R, progs.C), np.float32)
    y = np.zeros_like(x)
    dc = DistributedConfig(device_ids=list(range(n)))
    with pytest.raises(RuntimeError) as e:
        progs.host_defer(x, y, True, config=RunConfig(num_workers=1, distributed_config=dc))
    text = str(e.value)
    assert "deadlock" in text and "rank 0 waits at" in text and "rank 1 waits at" in text
    assert "nobody notified it" in text


def test_deadlock_report_names_who_notified_the_cell():
    import re
    n = 3
    x = np.ones((n, progs.R, progs.C), np.float32)
    with pytest.raises(RuntimeError) as e:
        progs.host_short_count(x, np.zeros_like(x), config=cfg(n))
    text = str(e.value)
    src = (HERE / "progs.py").read_text().splitlines()
    line = next(i + 1 for i, t in enumerate(src) if "pld.system.notify(sig, (pld.rank(ctx) + 1)" in t)
    for r in range(n):
        left = (r - 1) % n
        assert re.search(rf"rank {r} waits at \S*progs.py:\d+ \(sig\[2\]\) for == 2, current value 1, notified by "
                         rf"rank {left} \(added 1 at progs.py:{line}\)", text), text


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_over_many_tiles_against_numpy(n):
    progs.check_collectives_over_many_tiles(n, cfg(n))


def test_per_rank_diagnostics_and_one_swimlane_of_every_rank(tmp_path):
    import json
    n = 2
    x = np.random.default_rng(60).random((n, progs.R, progs.C), dtype=np.float32)
    y = np.zeros_like(x)
    rc = RunConfig(output_dir=str(tmp_path), enable_chip_swimlane=1, enable_dep_gen=True, enable_scope_stats=True,
                   distributed_config=DistributedConfig(device_ids=[0, 1]))
    progs.host_shift(x, y, 0.5, config=rc)
    np.testing.assert_allclose(y, np.roll(x, 1, axis=0), rtol=1e-6)
    for r in range(n):
        d = tmp_path / "dfx_outputs" / f"rank{r}" / "d0"
        deps = json.loads((d / "deps.json").read_text())
        assert [t["kernel"] for t in deps["tasks"]] == ["shift_kernel"]
        assert (d / "scope_stats" / "scope_stats.jsonl").exists() and (d / "chip_swimlane_records.json").exists()
        assert len(json.loads((d / "signal_events.json").read_text())) > 0
    trace = json.loads((tmp_path / "swimlane.json").read_text())["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in trace if e.get("name") == "process_name"}
    assert procs[0] == "rank 0 (host wall clock)" and procs[1] == "rank 1 (host wall clock)"
    tasks = [e for e in trace if e.get("ph") == "X" and e.get("cat") == "task"]
    assert sorted({e["pid"] for e in tasks}) == [0, 1] and all(e["name"] == "shift_kernel" for e in tasks)
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace if e.get("name") == "thread_name"}
    assert any(name.startswith("AIV") for (pid, _), name in lanes.items() if pid == 1)
    # arrows: each barrier's wait on rank r was released by notifies of both ranks; at least one crosses ranks
    starts = {e["id"]: e for e in trace if e.get("ph") == "s" and e.get("cat") == "signal"}
    ends = [e for e in trace if e.get("ph") == "f" and e.get("cat") == "signal"]
    assert ends and all(starts[e["id"]]["ts"] <= e["ts"] for e in ends)
    assert any(starts[e["id"]]["pid"] != e["pid"] for e in ends)

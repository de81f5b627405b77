"""Runs each benchmark case for pypto (native engine), numpy and torch in one process and
prints a table of times and ratios (ratio = other's time / ours: >= 1 means we are as fast
or faster). `--json PATH` writes [{"case", "ours_s", "numpy_s", "torch_s", ...}]; matmul cases add
"path" (the native engine's matmul fast path for their dtype) and the GEMV case "gb_s",
"stream_gb_s" (numpy's 1 GiB copy, measured in the same run) and "torch_gb_s".

Run: python -m benchmarks   (or python benchmarks/run.py)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

if __package__ in (None, ""):  # python benchmarks/run.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import pypto as pto  # noqa: E402
from benchmarks import programs as P  # noqa: E402


def best(fn, repeat=5):
    fn()  # warm-up (compiles on first call)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def best_interleaved(fns, repeat=10):
    """Best times of `fns` run in turns (one warm-up call each), so that a busy host slows
    them alike instead of whichever happens to run during a burst."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return [min(ts) for ts in times]


def matmul_path(dtype):
    """The matmul fast path the native engine compiles to for `dtype` operands (matmul.h's name)."""
    return pto._core.native_matmul_paths()[dtype]


def case_gemm(rng):
    """1024^3 fp32, 128x128 tiles; the three run in turns (best of 10)."""
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    c = np.zeros_like(a)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    ours, t_np, t_torch = best_interleaved([lambda: P.gemm(a, b, c), lambda: a @ b, lambda: ta @ tb])
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    return ours, t_np, t_torch, {"path": matmul_path("FP32")}


def case_gemm_bf16(rng):
    """1024^3 with bf16 operands, fp32 accumulation, fp32 result (ours); torch.matmul on bf16
    tensors (bf16 result). numpy has no bf16: its column is fp32 a @ b on the same values."""
    a = torch.from_numpy(rng.standard_normal((1024, 1024), dtype=np.float32)).to(torch.bfloat16)
    b = torch.from_numpy(rng.standard_normal((1024, 1024), dtype=np.float32)).to(torch.bfloat16)
    c = torch.zeros(1024, 1024)
    af, bf = a.float().numpy(), b.float().numpy()
    ours, t_np, t_torch = best_interleaved([lambda: P.gemm(a, b, c), lambda: af @ bf, lambda: torch.matmul(a, b)])
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-4, atol=1e-3)
    return ours, t_np, t_torch, {"path": matmul_path("BF16")}


def stream_bandwidth(n_bytes=1 << 30):
    """Bytes moved per second by numpy copying a 1 GiB array into another (read + write),
    best of 3: the machine's measured stream bandwidth."""
    src = np.ones(n_bytes // 4, np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    t = best(lambda: np.copyto(dst, src), repeat=3)
    return 2 * n_bytes / t


def case_gemv_bf16(rng):
    """[16, 8192] x [8192, 1024] bf16 weights (16 MiB), fp32 accumulation: a decode-layer
    projection. GB/s = bytes that must move (weights + activations + result) / time, against
    the stream bandwidth measured in the same run."""
    M, K, N = P.GEMV_M, P.GEMV_K, P.GEMV_N
    x = torch.from_numpy(rng.standard_normal((M, K), dtype=np.float32)).to(torch.bfloat16)
    w = torch.from_numpy(rng.standard_normal((K, N), dtype=np.float32) / 64).to(torch.bfloat16)
    y = torch.zeros(M, N)
    xf, wf = x.float().numpy(), w.float().numpy()
    ours, t_np, t_torch = best_interleaved([lambda: P.gemv(x, w, y), lambda: xf @ wf, lambda: torch.matmul(x, w)])
    torch.testing.assert_close(y, x.float() @ w.float(), rtol=1e-4, atol=1e-3)
    moved = 2 * (M * K + K * N) + 4 * M * N
    bw = stream_bandwidth()
    return ours, t_np, t_torch, {"path": matmul_path("BF16"), "gb_s": moved / ours / 1e9,
                                 "stream_gb_s": bw / 1e9, "torch_gb_s": moved / t_torch / 1e9}


def case_softmax(rng):
    x = rng.standard_normal((4096, 4096), dtype=np.float32)
    y = np.zeros_like(x)
    tx = torch.from_numpy(x)

    def np_softmax():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    ours = best(lambda: P.softmax(x, y))
    np.testing.assert_allclose(y, torch.softmax(tx, dim=-1).numpy(), rtol=1e-5, atol=1e-7)
    return ours, best(np_softmax), best(lambda: torch.softmax(tx, dim=-1))


def case_softmax_fp16(rng):
    """Row softmax of a 4096x4096 fp16 tensor; torch's fp16 softmax on the CPU. Checked
    against torch's fp32 softmax of the same values, to fp16 precision."""
    x = rng.standard_normal((4096, 4096), dtype=np.float32).astype(np.float16)
    y = np.zeros_like(x)
    tx = torch.from_numpy(x)

    def np_softmax():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    ours = best(lambda: P.softmax_half(x, y), repeat=3)
    want = torch.softmax(tx.float(), dim=-1).numpy()
    np.testing.assert_allclose(y.astype(np.float32), want, rtol=2e-3, atol=1e-6)
    return ours, best(np_softmax, repeat=3), best(lambda: torch.softmax(tx, dim=-1), repeat=3)


def case_rmsnorm(rng):
    x = rng.standard_normal((4096, 4096), dtype=np.float32)
    w = rng.standard_normal((1, 4096), dtype=np.float32)
    y = np.zeros_like(x)
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    np_rms = lambda: x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * w  # noqa: E731
    torch_rms = lambda: tx * torch.rsqrt(tx.pow(2).mean(-1, keepdim=True) + 1e-6) * tw  # noqa: E731
    ours = best(lambda: P.rmsnorm(x, w, y))
    np.testing.assert_allclose(y, torch_rms().numpy(), rtol=1e-4, atol=1e-5)
    return ours, best(np_rms), best(torch_rms)


def case_add(rng):
    a = rng.standard_normal((4096, 4096), dtype=np.float32)
    b = rng.standard_normal((4096, 4096), dtype=np.float32)
    c = np.zeros_like(a)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    ours = best(lambda: P.add16m(a, b, c))
    np.testing.assert_array_equal(c, a + b)
    return ours, best(lambda: np.add(a, b)), best(lambda: torch.add(ta, tb))


def case_lane_vector_add(rng):
    """The seed's @pto.kernel vector_add over 16M fp32: pto.launch + pto.sync (lowering, launch
    queue and the native run; the host copies are outside, as for numpy's a + b). Best of 10,
    the three run in turns."""
    n = P.VADD_N
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    grid = (n + P.VADD_BLOCK - 1) // P.VADD_BLOCK

    def ours():
        pto.launch(P.vector_add, grid=(grid, 1, 1), block=(P.VADD_BLOCK, 1, 1), args=(d_a, d_b, d_o, n), engine="native")
        pto.sync()

    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    t, t_np, t_torch = best_interleaved([ours, lambda: a + b, lambda: ta + tb])
    o = np.zeros(n, np.float32)
    pto.memcpy_d2h(o, d_o)
    np.testing.assert_array_equal(o, a + b)
    return t, t_np, t_torch


def case_batched_gemm(rng):
    """1000 x (128x128x128 fp32 GEMM task + add task) = 2000 tasks per round."""
    B = P.BATCH
    a = rng.standard_normal((B * 128, 128), dtype=np.float32)
    w = rng.standard_normal((B * 128, 128), dtype=np.float32)
    bias = rng.standard_normal((128, 128), dtype=np.float32)
    c, d = np.zeros_like(a), np.zeros_like(a)
    a3, w3 = a.reshape(B, 128, 128), w.reshape(B, 128, 128)
    ta, tw, tb = torch.from_numpy(a3), torch.from_numpy(w3), torch.from_numpy(bias)
    ours = best(lambda: P.batched_gemm(a, w, bias, c, d), repeat=3)
    np.testing.assert_allclose(d.reshape(B, 128, 128), np.matmul(a3, w3) + bias, rtol=1e-3, atol=1e-3)
    return ours, best(lambda: np.matmul(a3, w3) + bias, repeat=3), best(lambda: torch.bmm(ta, tw) + tb, repeat=3)


def case_dispatch(rng):
    """10,000 tiny tasks: seconds per task (no numpy/torch equivalent)."""
    x = np.zeros((1, 8), np.float32)
    y = np.zeros((1, 8), np.float32)
    return best(lambda: P.tiny_graph(x, y), repeat=3) / 10000, None, None


HELLO = r"""
import time
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
import pypto.language as pl
@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [128, 128])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c
a = np.ones((128, 128), np.float32); c = np.zeros_like(a)
tile_add(a, a, c)
assert (c == 2).all()
print(time.perf_counter() - t1)
"""


def first_call(cache_dir):
    env = dict(os.environ, PYPTO_CACHE_DIR=cache_dir)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(os.path.abspath(P.__file__))) + "/python", env.get("PYTHONPATH", "")] if p)
    script = os.path.join(cache_dir, "hello_first_call.py")  # pl.jit reads the source file
    with open(script, "w") as f:
        f.write(HELLO)
    out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def case_compile_cold(rng):
    """Import of pypto + first hello-world call with an empty kernel cache."""
    with tempfile.TemporaryDirectory() as d:
        return first_call(d), None, None


def case_compile_warm(rng):
    """Import of pypto + first hello-world call in a new process, kernel cache warm."""
    with tempfile.TemporaryDirectory() as d:
        first_call(d)
        return min(first_call(d) for _ in range(3)), None, None


CASES = [
    ("gemm_fp32_1024", case_gemm),
    ("gemm_bf16_1024", case_gemm_bf16),
    ("gemv_bf16_16x8192x1024", case_gemv_bf16),
    ("softmax_4096x4096", case_softmax),
    ("softmax_fp16_4096x4096", case_softmax_fp16),
    ("rmsnorm_4096x4096", case_rmsnorm),
    ("add_16M_fp32", case_add),
    ("lane_vector_add_16M", case_lane_vector_add),
    ("batched_gemm_2000_tasks", case_batched_gemm),
    ("dispatch_per_task", case_dispatch),
    ("first_call_cold_cache", case_compile_cold),
    ("first_call_warm_cache", case_compile_warm),
]


def fmt(t):
    if t is None:
        return "-"
    return f"{t * 1e6:.2f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--only", nargs="*", help="case names to run")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []
    print(f"torch threads: {torch.get_num_threads()}, CPUs: {os.cpu_count()}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
          f"PYPTO_NATIVE_ISA={os.environ.get('PYPTO_NATIVE_ISA') or 'native'}")
    print(f"{'case':24} {'ours':>12} {'numpy':>12} {'torch':>12} {'numpy/ours':>11} {'torch/ours':>11}")
    for name, fn in CASES:
        if args.only and name not in args.only:
            continue
        ours, np_s, torch_s, *more = fn(rng)
        info = more[0] if more else {}
        r_np = f"{np_s / ours:.2f}x" if np_s else "-"
        r_t = f"{torch_s / ours:.2f}x" if torch_s else "-"
        notes = []
        if "gb_s" in info:
            notes.append(f"{info['gb_s']:.1f} GB/s = {100 * info['gb_s'] / info['stream_gb_s']:.0f}% of stream "
                         f"{info['stream_gb_s']:.1f} GB/s (torch {info['torch_gb_s']:.1f})")
        if "path" in info:
            notes.append(f"path: {info['path']}")
        print(f"{name:24} {fmt(ours):>12} {fmt(np_s):>12} {fmt(torch_s):>12} {r_np:>11} {r_t:>11}  {'; '.join(notes)}",
              flush=True)
        rows.append({"case": name, "ours_s": ours, "numpy_s": np_s, "torch_s": torch_s, **info})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

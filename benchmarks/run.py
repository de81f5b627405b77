"""Runs each benchmark case for pypto (native engine), numpy, torch eager and torch.compile in
one process and prints a table of times and ratios (ratio = other's time / ours: >= 1 means
we are as fast or faster), after a header naming the CPU, its vector features and the
optimised library's paths. `--json PATH` writes {"machine": {...}, "cases": [{"case",
"ours_s", "numpy_s", "torch_s", "torch_compile_s", "path"}]}; "path" says which fast path
the case took (the library's vector / fp16 paths, and per kernel the tile instructions with a
fast path and those on the reference library). Matmul cases
also carry the native engine's matmul fast path for their dtype, and the GEMV case "gb_s",
"stream_gb_s" (numpy's 1 GiB copy, measured in the same run) and "torch_gb_s".

Run: python -m benchmarks   (or python benchmarks/run.py); works against a development
build (PYTHONPATH=python) and an installed package alike.
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
from benchmarks import models as M  # noqa: E402
from benchmarks import programs as P  # noqa: E402


SETTLE_S = 0.3  # longer than the spin-wait of numpy's OpenBLAS threads (2^28 cycles) and torch's OpenMP


def best(fn, repeat=5):
    time.sleep(SETTLE_S)  # the previous contestant's spinning threads (best_interleaved)
    fn()  # warm-up (compiles on first call)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def best_interleaved(fns, repeat=10, rounds=2):
    """Best times of `fns`: `rounds` rounds in which each runs `repeat // rounds` times in a row
    (after one untimed call), the rounds in turns, so that a burst of load on a shared host hits
    them alike. Each turn starts after SETTLE_S of sleep: numpy's OpenBLAS threads (and torch's
    OpenMP ones) keep spinning for a while after a call and would take the cores from whoever
    runs next (measured on the 2-core AVX2 VM: our 1024^3 GEMM 32.7 ms right after numpy's,
    15.8 ms alone)."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, ts in zip(fns, times):
            time.sleep(SETTLE_S)
            fn()
            for _ in range(max(1, repeat // rounds)):
                t = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t)
    return [min(ts) for ts in times]


TORCH_COMPILE = True  # --no-torch-compile turns it off
NOTES = []  # torch.compile failures and the like, printed after the table


def torch_compiled(fn, *args):
    """A thunk running torch.compile(fn)(*args), compiled and run once here; None (with a note)
    when torch.compile is off or fails on this machine (no inductor toolchain, say)."""
    if not TORCH_COMPILE:
        return None
    try:
        compiled = torch.compile(fn)
        compiled(*args)
    except Exception as e:  # noqa: BLE001 - any inductor failure: report and skip, never crash
        first = (str(e).strip().splitlines() or [""])[0][:160]
        NOTES.append(f"torch.compile of {getattr(fn, '__name__', fn)} failed, skipped: {type(e).__name__}: {first}")
        return None
    return lambda: compiled(*args)


def timed(thunk, repeat=5):
    return None if thunk is None else best(thunk, repeat)


def library_paths():
    """The optimised library's paths as this machine's kernel compiler builds them."""
    try:
        return pto._core.native_library_paths()
    except Exception as e:  # noqa: BLE001 - no compiler: the cases say so themselves
        return f"unknown ({type(e).__name__})"


def fast_path(jitfn, *args):
    """Which fast path a @pl.jit program takes for these arguments: the library's paths, then
    the number of tile instructions with a fast path and those run by the reference library."""
    report = jitfn.compile(*args).native_report()
    fast = sum(len(k["fast"]) for k in report.values())
    ref = [m for k in report.values() for m in k["reference"]]
    whole = [name for name, k in report.items() if not k["native"]]
    text = f"native {library_paths()}: {len(report)} kernels, {fast} tile instrs fast, {len(ref)} on reference"
    if ref:
        text += " (" + ", ".join(sorted(set(ref))) + ")"
    if whole:
        text += "; kernels on sim: " + ", ".join(whole)
    return text


def machine():
    """The CPU model, its vector features (from /proc/cpuinfo where there is one) and the
    library's paths."""
    model, flags = "", []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and not model:
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = value.split()
    except OSError:
        pass
    import platform

    vector = sorted(f for f in flags if f.startswith(("avx", "amx")) or f in ("fma", "f16c", "sse4_2"))
    return {"cpu": model or platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "vector_features": vector, "library_paths": library_paths(),
            "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "numpy": np.__version__,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(unset)")}


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

    def torch_softmax(t):
        return torch.softmax(t, dim=-1)

    ours = best(lambda: P.softmax(x, y))
    np.testing.assert_allclose(y, torch.softmax(tx, dim=-1).numpy(), rtol=1e-5, atol=1e-7)
    return ours, best(np_softmax), best(lambda: torch.softmax(tx, dim=-1)), {
        "torch_compile_s": timed(torch_compiled(torch_softmax, tx)), "path": fast_path(P.softmax, x, y)}


def case_softmax_fp16(rng):
    """Row softmax of a 4096x4096 fp16 tensor; torch's fp16 softmax on the CPU. Checked
    against torch's fp32 softmax of the same values, to fp16 precision."""
    x = rng.standard_normal((4096, 4096), dtype=np.float32).astype(np.float16)
    y = np.zeros_like(x)
    tx = torch.from_numpy(x)

    def np_softmax():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def torch_softmax_fp16(t):
        return torch.softmax(t, dim=-1)

    ours = best(lambda: P.softmax_half(x, y), repeat=3)
    want = torch.softmax(tx.float(), dim=-1).numpy()
    np.testing.assert_allclose(y.astype(np.float32), want, rtol=2e-3, atol=1e-6)
    return ours, best(np_softmax, repeat=3), best(lambda: torch.softmax(tx, dim=-1), repeat=3), {
        "torch_compile_s": timed(torch_compiled(torch_softmax_fp16, tx), 3), "path": fast_path(P.softmax_half, x, y)}


def case_rmsnorm(rng):
    x = rng.standard_normal((4096, 4096), dtype=np.float32)
    w = rng.standard_normal((1, 4096), dtype=np.float32)
    y = np.zeros_like(x)
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    np_rms = lambda: x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * w  # noqa: E731
    torch_rms = lambda: tx * torch.rsqrt(tx.pow(2).mean(-1, keepdim=True) + 1e-6) * tw  # noqa: E731
    def torch_rmsnorm(t, weight):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * weight

    ours = best(lambda: P.rmsnorm(x, w, y))
    np.testing.assert_allclose(y, torch_rms().numpy(), rtol=1e-4, atol=1e-5)
    return ours, best(np_rms), best(torch_rms), {
        "torch_compile_s": timed(torch_compiled(torch_rmsnorm, tx, tw)), "path": fast_path(P.rmsnorm, x, w, y)}


def case_add(rng):
    a = rng.standard_normal((4096, 4096), dtype=np.float32)
    b = rng.standard_normal((4096, 4096), dtype=np.float32)
    c = np.zeros_like(a)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    def torch_add(x, y):
        return torch.add(x, y)

    ours = best(lambda: P.add16m(a, b, c))
    np.testing.assert_array_equal(c, a + b)
    return ours, best(lambda: np.add(a, b)), best(lambda: torch.add(ta, tb)), {
        "torch_compile_s": timed(torch_compiled(torch_add, ta, tb)), "path": fast_path(P.add16m, a, b, c)}


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
    return best(lambda: P.tiny_graph(x, y), repeat=3) / 10000, None, None, {"path": fast_path(P.tiny_graph, x, y)}


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


def first_call_env(cache_dir):
    """The environment of a first-call process: the kernel cache at `cache_dir`, and the pypto
    this process imported first on the path (a development build's python/ or the installed
    package's site directory, whichever this is). Python's bytecode cache is on as in any
    installed package (a development shell may set PYTHONDONTWRITEBYTECODE): the case times
    importing and compiling our code, not Python compiling its sources."""
    env = dict(os.environ, PYPTO_CACHE_DIR=cache_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    site = os.path.dirname(os.path.dirname(os.path.abspath(pto.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [site, env.get("PYTHONPATH", "")] if p)
    return env


def first_call(cache_dir):
    """Seconds from after `import numpy` to the end of the first hello-world call, in a new
    Python process with the kernel cache at `cache_dir`."""
    env = first_call_env(cache_dir)
    script = os.path.join(cache_dir, "hello_first_call.py")  # pl.jit reads the source file
    with open(script, "w") as f:
        f.write(HELLO)
    out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, cwd=cache_dir)
    if out.returncode != 0:
        raise RuntimeError(f"the first-call process failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def warm_bytecode():
    """Compiles pypto's Python sources to bytecode once (what installing a package does), so
    that the cold case's process finds them compiled."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, "-c", "import pypto.language, pypto.jit.compiled"], env=first_call_env(d),
                       capture_output=True, check=False)


def case_tensor_attention(rng):
    """Decode attention written on tensors only (P.tensor_decode_attention, Qwen3-32B's
    shapes, BF16 cache of 4096 tokens per sequence); torch eager and torch.compile run the
    same arithmetic: scores in FP32 from the BF16 values, softmax, P rounded to BF16, P @ V."""
    B, KV, G, D, S = P.ATT_B, P.ATT_KV, P.ATT_G, P.ATT_D, P.ATT_S
    q = torch.from_numpy(rng.standard_normal((B * KV * G, D), dtype=np.float32)).to(torch.bfloat16)
    kc, vc = (torch.from_numpy(rng.standard_normal((B * S, KV * D), dtype=np.float32)).to(torch.bfloat16)
              for _ in range(2))
    o = torch.zeros(B * KV * G, D)

    def torch_attention(q, kc, vc):
        qf = q.float().view(B, KV, G, D)
        kf = kc.float().view(B, S, KV, D).permute(0, 2, 3, 1)
        vf = vc.float().view(B, S, KV, D).permute(0, 2, 1, 3)
        p = torch.softmax(qf @ kf * P.ATT_SCALE, dim=-1)
        return (p.to(torch.bfloat16).float() @ vf).reshape(B * KV * G, D)

    ours = best(lambda: P.tensor_decode_attention(q, kc, vc, o), repeat=3)
    torch.testing.assert_close(o, torch_attention(q, kc, vc), rtol=2e-2, atol=2e-2)
    return ours, None, best(lambda: torch_attention(q, kc, vc), repeat=3), {
        "torch_compile_s": timed(torch_compiled(torch_attention, q, kc, vc), 3),
        "path": fast_path(P.tensor_decode_attention, q, kc, vc, o)}


def case_compile_cold(rng):
    """Import of pypto + first hello-world call with an empty kernel cache."""
    warm_bytecode()
    with tempfile.TemporaryDirectory() as d:
        return first_call(d), None, None, {"path": "native " + library_paths() + ", empty kernel cache"}


def case_compile_warm(rng):
    """Import of pypto + first hello-world call in a new process, kernel cache warm."""
    with tempfile.TemporaryDirectory() as d:
        first_call(d)
        return min(first_call(d) for _ in range(3)), None, None, {"path": "native " + library_paths() + ", kernel cache warm"}


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
    ("tensor_attention_decode", case_tensor_attention),
    ("first_call_cold_cache", case_compile_cold),
    ("first_call_warm_cache", case_compile_warm),
    ("decode_layer_qwen3_32b", M.case_decode_layer),
    ("prefill_layer_qwen3_32b", M.case_prefill_layer),
]


def fmt(t):
    if t is None:
        return "-"
    return f"{t * 1e6:.2f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def ratio(other, ours):
    return f"{other / ours:.2f}x" if other else "-"


def main(argv=None):
    global TORCH_COMPILE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--only", nargs="*", help="case names to run")
    ap.add_argument("--no-torch-compile", action="store_true", help="skip the torch.compile references")
    args = ap.parse_args(argv)
    TORCH_COMPILE = not args.no_torch_compile
    M.TORCH_COMPILE = TORCH_COMPILE
    rng = np.random.default_rng(0)
    rows = []
    info = machine()
    print(f"CPU: {info['cpu']} ({info['cpus']} CPUs), vector features: {' '.join(info['vector_features']) or '-'}")
    print(f"library paths: {info['library_paths']}; torch {info['torch']} threads: {info['torch_threads']}, "
          f"numpy {info['numpy']}, OPENBLAS_CORETYPE={info['OPENBLAS_CORETYPE']}, "
          f"PYPTO_NATIVE_ISA={os.environ.get('PYPTO_NATIVE_ISA') or 'native'}")
    print(f"{'case':24} {'ours':>11} {'numpy':>11} {'torch':>11} {'compile':>11} {'numpy/ours':>10} "
          f"{'torch/ours':>10} {'compile/ours':>12}  path")
    for name, fn in CASES:
        if args.only and name not in args.only:
            continue
        ours, np_s, torch_s, *more = fn(rng)
        extra = more[0] if more else {}
        tc_s, path = extra.get("torch_compile_s"), extra.get("path", "")
        if "gb_s" in extra:
            path = (f"{extra['gb_s']:.1f} GB/s = {100 * extra['gb_s'] / extra['stream_gb_s']:.0f}% of stream "
                    f"{extra['stream_gb_s']:.1f} GB/s (torch {extra['torch_gb_s']:.1f}); {path}")
        print(f"{name:24} {fmt(ours):>11} {fmt(np_s):>11} {fmt(torch_s):>11} {fmt(tc_s):>11} {ratio(np_s, ours):>10} "
              f"{ratio(torch_s, ours):>10} {ratio(tc_s, ours):>12}  {path}", flush=True)
        rows.append({"case": name, "ours_s": ours, "numpy_s": np_s, "torch_s": torch_s, "torch_compile_s": tc_s,
                     "path": path, **{k: v for k, v in extra.items() if k not in ("torch_compile_s", "path")}})
    for note in NOTES:
        print("note:", note)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "cases": rows, "notes": NOTES}, f, indent=2)


if __name__ == "__main__":
    main()

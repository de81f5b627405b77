"""Model-layer benchmark cases: the Qwen3-32B decode and prefill layers of
examples/models/03_qwen3_decode_layer.py at full size (PYPTO_BENCH_MODEL_SIZE=small for the
--small configuration), ours (native engine, warm: one ChipWorker, every input a resident
device tensor) against torch eager and torch.compile running the example's reference (the
same arithmetic: bf16 weights upcast, fp32 accumulation).

Each case prints one detail line: the cold compile (IR passes + native kernels, empty kernel
cache) and warm compile (new jit function, kernel cache warm), peak memory of our cold call
over the inputs' size, ms per warm call of ours / torch eager / torch.compile, the bytes that
must move (weights, norms, the KV cache rows read and written, activations in and out), GB/s
achieved and % of the stream bandwidth measured in the same run (torch copy of 256 MB).
torch.compile failing (inductor needs a C++ toolchain and time) is reported, not raised.
"""

import importlib.util
import os
import pathlib
import tempfile
import time

import torch

TORCH_COMPILE = True  # run.py's --no-torch-compile turns it off


class _Skipped(Exception):
    pass


EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "models" / "03_qwen3_decode_layer.py"
_stream_gbs = None


def _example():
    if not EXAMPLE.exists():
        return None
    import sys

    if "qwen3_layer_example" in sys.modules:
        return sys.modules["qwen3_layer_example"]
    spec = importlib.util.spec_from_file_location("qwen3_layer_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # torch.compile (dynamo) looks the reference's module up
    spec.loader.exec_module(module)
    return module


def stream_bandwidth() -> float:
    """GB/s of a 256 MB fp32 torch copy (read + write counted), best of 5; measured once."""
    global _stream_gbs
    if _stream_gbs is None:
        src = torch.ones(64 << 20)
        dst = torch.empty_like(src)
        best = float("inf")
        for _ in range(6):
            t = time.perf_counter()
            dst.copy_(src)
            best = min(best, time.perf_counter() - t)
        _stream_gbs = 2 * src.numel() * 4 / best / 1e9
    return _stream_gbs


def bytes_moved(m, c, inp, prefill: bool) -> int:
    """Bytes a layer call must move at least: every weight and norm once, the KV cache rows
    attention reads (each sequence's context, K and V) plus the rows written, x in, out out."""
    weights = sum(inp[n].numel() * inp[n].element_size() for n in m.WEIGHTS)
    row = c.kv_heads * c.head_dim * inp["key_cache"].element_size()
    ctx = int(inp["pos"].max()) + 1 if prefill else int((inp["pos"] + 1).sum())
    kv = 2 * row * (ctx + c.batch)
    act = 2 * c.batch * c.hidden * 4
    return weights + kv + act


def _rss_now() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRss:
    """Samples this process's resident set every 2 ms while in the `with` block (ru_maxrss is
    the whole process's peak, which building the inputs may already have set)."""

    def __enter__(self):
        import threading

        self.start = self.peak = _rss_now()
        self._stop = threading.Event()

        def sample():
            while not self._stop.wait(0.002):
                self.peak = max(self.peak, _rss_now())

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_now())


def layer_case(prefill: bool, rounds: int = 5):
    from pypto.runtime import RunConfig

    m = _example()
    if m is None:
        print(f"  (skipped: {EXAMPLE} is not there; run from a checkout)")
        return None, None, None
    small = os.environ.get("PYPTO_BENCH_MODEL_SIZE", "full") == "small"
    c = m.SMALL if small else m.FULL
    if prefill:
        c = m.prefill_config(c)
    inp = m.make_inputs(c, prefill, seed=0)
    need = bytes_moved(m, c, inp, prefill)
    in_bytes = m.inputs_bytes(inp)
    out = torch.zeros(c.batch, c.hidden)
    cfg = RunConfig()

    # cold: a fresh kernel cache; peak memory of the call over what the process held before it
    old_cache = os.environ.get("PYPTO_CACHE_DIR")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["PYPTO_CACHE_DIR"] = cache
        with PeakRss() as rss:
            t = time.perf_counter()
            compiled = m.build(c, prefill).compile(*inp.values(), out, config=cfg)
            passes_s = time.perf_counter() - t
            compiled(*inp.values(), out, config=cfg)
            cold_s = time.perf_counter() - t
        # warm compile: a new jit function (parse, passes, codegen), kernels from the disk cache
        t = time.perf_counter()
        m.build(c, prefill).compile(*inp.values(), out, config=cfg)
        warm_compile_s = time.perf_counter() - t
    if old_cache is None:
        os.environ.pop("PYPTO_CACHE_DIR", None)
    else:
        os.environ["PYPTO_CACHE_DIR"] = old_cache
    over = rss.peak - rss.start  # bytes the call added on top of the inputs (and the process before it)

    want, _, _ = m.reference(c, inp, prefill)
    err = (out - want).abs().max().item()
    torch.testing.assert_close(out, want, rtol=2e-2, atol=2e-2 * max(want.abs().max().item(), 1.0))

    def eager():
        m.reference(c, inp, prefill, inplace=True)

    t_eager = min(_timed(eager) for _ in range(max(2, rounds // 2)))
    try:
        if not TORCH_COMPILE:
            raise _Skipped
        compiled_ref = torch.compile(eager)
        compiled_ref()
        compiled_ref()
        t_compile = min(_timed(compiled_ref) for _ in range(max(2, rounds // 2)))
        compile_note = ""
    except _Skipped:
        t_compile, compile_note = None, " (torch.compile skipped: --no-torch-compile)"
    except Exception as e:  # inductor needs a working C++ toolchain; report, don't crash
        t_compile, compile_note = None, f" (torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0][:80]})"
    torch._dynamo.reset() if hasattr(torch, "_dynamo") else None

    ours, warm_out = m.time_warm(compiled, inp, out, cfg, rounds)  # moves the inputs to device memory
    torch.testing.assert_close(warm_out, out, rtol=0, atol=0)
    bw = stream_bandwidth()
    fmt = lambda s: "-" if s is None else f"{s * 1e3:.1f} ms"  # noqa: E731
    print(f"  {'prefill' if prefill else 'decode'} {'small' if small else 'Qwen3-32B'}: inputs {in_bytes / 1e9:.3f} GB, "
          f"must move {need / 1e9:.3f} GB; compile cold {cold_s:.2f} s (passes {passes_s:.2f} s) warm "
          f"{warm_compile_s:.2f} s; peak memory of the cold call {over / 1e6:.0f} MB over the inputs "
          f"({(in_bytes + over) / in_bytes:.2f}x inputs); ours {fmt(ours)} ({need / ours / 1e9:.1f} GB/s, "
          f"{100 * need / ours / 1e9 / bw:.0f}% of stream {bw:.1f} GB/s, bound {need / bw / 1e9 * 1e3:.1f} ms), "
          f"torch eager {fmt(t_eager)}, torch.compile {fmt(t_compile)}{compile_note}; max |err| {err:.2e}",
          flush=True)
    extra = dict(torch_compile_s=t_compile, bytes=need, gbs=need / ours / 1e9, stream_gbs=bw,
                 cold_compile_s=cold_s, warm_compile_s=warm_compile_s, peak_over_inputs=(in_bytes + over) / in_bytes)
    return ours, None, t_eager, extra


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def case_decode_layer(rng):
    return layer_case(prefill=False)


def case_prefill_layer(rng):
    return layer_case(prefill=True)

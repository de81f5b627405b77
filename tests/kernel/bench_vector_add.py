"""Benchmark: the seed's vector_add on 16M fp32 through pto.launch versus numpy's a + b.
Run: PYTHONPATH=python python tests/kernel/bench_vector_add.py [engine (native)] [n]
(`python -m benchmarks --only lane_vector_add_16M` runs the same case next to torch.)
Prints the launch time (lowering + execution, excluding host copies), numpy's time and the
ratio numpy_time / pto_time (>= 0.7 is the target for the native engine)."""

import sys
import time

import numpy as np

import pypto as pto


@pto.kernel
def vector_add(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)
        pto.fma(o + i, a_val, b_val, 0.0)


def main():
    engine = sys.argv[1] if len(sys.argv) > 1 else "native"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 16 * 1024 * 1024
    a = np.random.rand(n).astype(np.float32)
    b = np.random.rand(n).astype(np.float32)
    o = np.zeros(n, np.float32)
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    block = 256
    grid = (n + block - 1) // block
    best = float("inf")
    for _ in range(6):  # the first launch compiles the kernel (native engine)
        t0 = time.perf_counter()
        pto.launch(vector_add, grid=(grid, 1, 1), block=(block, 1, 1), args=(d_a, d_b, d_o, n), engine=engine)
        pto.sync()
        best = min(best, time.perf_counter() - t0)
    pto.memcpy_d2h(o, d_o)
    assert np.array_equal(o, a + b)
    np_best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        _ = a + b
        np_best = min(np_best, time.perf_counter() - t0)
    print(f"vector_add n={n} engine={engine}: pto {best * 1e3:.1f} ms, numpy {np_best * 1e3:.1f} ms, "
          f"ratio numpy/pto = {np_best / best:.3f}")


if __name__ == "__main__":
    main()

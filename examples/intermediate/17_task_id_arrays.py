"""Task ids kept in an orchestration array (pl.array.create(n, pl.TASK_ID)), on 128x128 fp32:

    stage 1, block i = 0..3:   a[i] = x[i] * 2          task i, its id stored in done[i]
    stage 2, block i = 3..0:   out[i] = y[i] + 1         waits for done[i] (deps=[done[i]])

Stage 2 shares no data with stage 1, so the runtime would start it at once; each block of
stage 2 is made to wait for the matching block of stage 1 (for example because stage 1 has an
effect the runtime cannot see), and for nothing else: its edges are chosen at run time from
the array, one per iteration, which a parse-time `deps=[tid]` (the latest launch only) cannot
express. The example reads the edges back from the task swimlane.

Run: python examples/intermediate/17_task_id_arrays.py   (prints OK)
"""

import dataclasses
import json
import os
import sys
import tempfile
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

R, C, BLOCK = 128, 128, 32
N = R // BLOCK


@pl.jit
def task_id_arrays(x: pl.Tensor, y: pl.Tensor, a: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    done = pl.array.create(N, pl.TASK_ID)
    for i in pl.range(N):
        with pl.at(level=pl.Level.AIV) as t:
            a = pl.store(pl.mul(pl.load(x, [i * BLOCK, 0], [BLOCK, C]), 2.0), [i * BLOCK, 0], a)
        done[i] = t
    for k in pl.range(N):
        i = N - 1 - k
        with pl.at(level=pl.Level.AIV, deps=[done[i]]):
            out = pl.store(pl.add(pl.load(y, [i * BLOCK, 0], [BLOCK, C]), 1.0), [i * BLOCK, 0], out)
    return a, out


def edges(path):
    """Task number -> the tasks it waited for, from the swimlane (host clock)."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    return {e["args"]["task"]: sorted(e["args"]["deps"]) for e in events if e["ph"] == "X" and e["pid"] == 0}


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(17)
    x = rng.standard_normal((R, C), dtype=np.float32)
    y = rng.standard_normal((R, C), dtype=np.float32)
    cfg = config or RunConfig()
    with tempfile.TemporaryDirectory() as tmp:
        lane = dataclasses.replace(cfg, enable_chip_swimlane=1, trace_path=os.path.join(tmp, "lane.json"))
        if backend == "torch":
            import torch

            xt, yt = torch.from_numpy(x), torch.from_numpy(y)
            a, out = torch.zeros(R, C), torch.zeros(R, C)
            task_id_arrays(xt, yt, a, out, config=lane)
            torch.testing.assert_close(a, xt * 2, rtol=0, atol=0)
            torch.testing.assert_close(out, yt + 1, rtol=0, atol=0)
        else:
            a, out = np.zeros((R, C), np.float32), np.zeros((R, C), np.float32)
            task_id_arrays(x, y, a, out, config=lane)
            np.testing.assert_array_equal(a, x * 2)
            np.testing.assert_array_equal(out, y + 1)
        # tasks 0..3: stage 1 (no edges); task 4 + k: block 3 - k of stage 2, after task 3 - k
        assert edges(lane.trace_path) == {**{i: [] for i in range(N)}, **{N + k: [N - 1 - k] for k in range(N)}}
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

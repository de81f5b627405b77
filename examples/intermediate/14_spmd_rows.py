"""SPMD launch: one kernel body run by 4 blocks, each on its own row bands of a 128x128
fp32 tensor: out = exp(x) * 0.5 + 1.

    with pl.spmd(4):
        i = pl.get_block_idx()        # 0..3, filled per block by the runtime
        n = pl.get_block_num()        # 4
        for band in pl.range(i, BANDS, n): ...   # bands i, i+4

The runtime submits the scope's kernel once per block; the blocks write disjoint bands,
so they may run in parallel on different vector cores.

Run: python examples/intermediate/14_spmd_rows.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

R, C, BAND, BLOCKS = 128, 128, 16, 4


@pl.jit
def spmd_rows(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(BLOCKS):
        i = pl.get_block_idx()
        n = pl.get_block_num()
        for band in pl.range(i, R // BAND, n):
            t = pl.load(x, [band * BAND, 0], [BAND, C])
            out = pl.store(pl.add(pl.mul(pl.exp(t), 0.5), 1.0), [band * BAND, 0], out)
    return out


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(14)
    x = rng.standard_normal((R, C), dtype=np.float32)
    cfg = config or RunConfig()
    if backend == "torch":
        import torch

        xt = torch.from_numpy(x)
        out = torch.zeros(R, C)
        compiled = spmd_rows.compile(xt, out)
        calls = [i for i in compiled.host_program.code if str(i.kind).endswith("Call")]
        assert len(calls) == 1 and list(calls[0].attrs["block_num"]) == [BLOCKS]
        spmd_rows(xt, out, config=cfg)
        torch.testing.assert_close(out, torch.exp(xt) * 0.5 + 1, rtol=1e-5, atol=1e-5)
    else:
        out = np.zeros((R, C), dtype=np.float32)
        spmd_rows(x, out, config=cfg)
        np.testing.assert_allclose(out, np.exp(x) * 0.5 + 1, rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

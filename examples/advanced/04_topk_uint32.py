"""Top-k of each row of a 16x256 fp32 matrix with UINT32 index tiles, as PyPTO writes it:
an iota of the block's column numbers (`pl.tile.ci(first_column, [1, 128],
dtype=pl.UINT32)`, the TCI instruction) is broadcast down the rows (`pl.col_expand`),
`pl.sort32(values, idx)` sorts each 32-column block descending and carries the indices
along, and `pl.mrgsort` merges sorted runs pairwise (32 -> 64 -> 128 columns) until one
sorted row of the block is left. Each of the two 128-column blocks gives its best K; the
final merge of the two candidate lists keeps the best K of the row. Values go to an FP32
tensor, indices to a UINT32 tensor (numpy uint32 / torch.uint32), checked against numpy's
argsort / torch.topk.

Run: python examples/advanced/04_topk_uint32.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

ROWS, COLS, BLOCK, K = 16, 256, 128, 8


@pl.jit
def topk(x: pl.Tensor, values: pl.Out[pl.Tensor], indices: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        best_v = pl.full([ROWS, 2 * K], dtype=pl.FP32, value=0.0)
        best_i = pl.full([ROWS, 2 * K], dtype=pl.UINT32, value=0)
        zero_i = pl.full([ROWS, BLOCK], dtype=pl.UINT32, value=0)
        for b in pl.range(COLS // BLOCK):
            t = pl.load(x, [0, b * BLOCK], [ROWS, BLOCK])
            first = pl.tile.ci(b * BLOCK, [1, BLOCK], dtype=pl.UINT32)  # the block's global columns
            cols = pl.col_expand(zero_i, first)          # ... on every row
            v, i = pl.sort32(t, cols)                   # runs of 32, UINT32 indices carried along
            lo_v, lo_i = pl.mrgsort(pl.slice(v, [ROWS, 32], [0, 0]), pl.slice(i, [ROWS, 32], [0, 0]),
                                    pl.slice(v, [ROWS, 32], [0, 32]), pl.slice(i, [ROWS, 32], [0, 32]))
            hi_v, hi_i = pl.mrgsort(pl.slice(v, [ROWS, 32], [0, 64]), pl.slice(i, [ROWS, 32], [0, 64]),
                                    pl.slice(v, [ROWS, 32], [0, 96]), pl.slice(i, [ROWS, 32], [0, 96]))
            sv, si = pl.mrgsort(lo_v, lo_i, hi_v, hi_i)  # the block's 128 columns, sorted
            best_v = pl.tile.assemble(best_v, pl.slice(sv, [ROWS, K], [0, 0]), [0, b * K])
            best_i = pl.tile.assemble(best_i, pl.slice(si, [ROWS, K], [0, 0]), [0, b * K])
        fv, fi = pl.mrgsort(pl.slice(best_v, [ROWS, K], [0, 0]), pl.slice(best_i, [ROWS, K], [0, 0]),
                            pl.slice(best_v, [ROWS, K], [0, K]), pl.slice(best_i, [ROWS, K], [0, K]))
        values = pl.store(pl.slice(fv, [ROWS, K], [0, 0]), [0, 0], values)
        indices = pl.store(pl.slice(fi, [ROWS, K], [0, 0]), [0, 0], indices)
    return values


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(14)
    x = rng.permutation(ROWS * COLS).reshape(ROWS, COLS).astype(np.float32) / 7  # distinct values
    if backend == "torch":
        import torch

        xt = torch.from_numpy(x)
        v, i = torch.zeros(ROWS, K), torch.zeros(ROWS, K, dtype=torch.uint32)
        topk(xt, v, i, config=config or RunConfig())
        want_v, want_i = torch.topk(xt, K, dim=1)
        torch.testing.assert_close(v, want_v, rtol=0, atol=0)
        assert torch.equal(i.to(torch.int64), want_i), (i, want_i)
    else:
        v, i = np.zeros((ROWS, K), np.float32), np.zeros((ROWS, K), np.uint32)
        topk(x, v, i, config=config or RunConfig())
        want_i = np.argsort(-x, axis=1, kind="stable")[:, :K]
        np.testing.assert_array_equal(i, want_i.astype(np.uint32))
        np.testing.assert_array_equal(v, np.take_along_axis(x, want_i, axis=1))
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

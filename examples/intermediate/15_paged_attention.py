"""Paged attention (decode): every sequence attends over its own KV cache, which lives in
fixed-size physical blocks of a shared cache and is found through a block table; each
sequence has its own context length, known only at run time.

  q:            [NSEQ * G, D]            G query heads per sequence (sharing one KV head)
  key_cache:    [NUM_BLOCKS * BS, D]     physical blocks of BS rows (value_cache alike)
  block_table:  [NSEQ, MAX_BLOCKS] int32 logical block j of sequence b -> physical block
  context_lens: [NSEQ] int32             tokens in each sequence's cache

One task per sequence: it reads the sequence's context length and walks its logical blocks
(a loop whose trip count is a run-time value), reads each physical block id from the block
table, loads that block of K and V, masks the scores past the context length (the last
block is partly valid: pl.tile.set_validshape + fillpad with the minimum, so exp gives 0)
and runs the online softmax with loop-carried max, sum and output. The number of sequences
is a pl.dynamic dimension: one compiled program serves every batch size.

Run: python examples/intermediate/15_paged_attention.py   (prints OK)
"""

import math
import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

G, D, BS, MAX_BLOCKS, NUM_BLOCKS = 16, 64, 32, 8, 40
SCALE = 1.0 / math.sqrt(D)
S = pl.dynamic("S")  # number of sequences


@pl.jit
def paged_attention(q: pl.Tensor[[S, D], pl.FP32], key_cache: pl.Tensor, value_cache: pl.Tensor,
                    block_table: pl.Tensor, context_lens: pl.Tensor, o: pl.Out[pl.Tensor[[S, D], pl.FP32]]):
    for b in pl.parallel(pl.tensor.dim(q, 0) // G):
        p_scratch = pl.create_tensor([G, BS], dtype=pl.FP32)  # P goes to the cube through it
        with pl.at(level=pl.Level.CORE_GROUP):
            ctx = pl.tensor.read(context_lens, [b])
            q_left = pl.move(pl.load(q, [b * G, 0], [G, D], target_memory=pl.MemorySpace.Mat),
                             target_memory=pl.MemorySpace.Left)
            row_max = pl.full([G, 1], dtype=pl.FP32, value=-1e30)
            row_sum = pl.full([G, 1], dtype=pl.FP32, value=0.0)
            acc = pl.full([G, D], dtype=pl.FP32, value=0.0)
            for j in pl.range((ctx + BS - 1) // BS):
                block = pl.tensor.read(block_table, [b, j])
                valid = pl.min(ctx - j * BS, BS)
                k_t = pl.transpose_view(pl.load(key_cache, [block * BS, 0], [BS, D], target_memory=pl.MemorySpace.Mat))
                s = pl.mul(pl.move(pl.matmul(q_left, pl.move(k_t, target_memory=pl.MemorySpace.Right)),
                                   target_memory=pl.MemorySpace.Vec), SCALE)
                s = pl.tile.fillpad(pl.tile.set_validshape(s, [G, valid]), pad_value=pl.PadValue.min)
                new_max = pl.maximum(row_max, pl.row_max(s))
                p = pl.row_expand_expdif(s, new_max)
                alpha = pl.exp(pl.sub(row_max, new_max))
                row_sum = pl.add(pl.mul(row_sum, alpha), pl.row_sum(p))
                p_scratch = pl.store(p, [0, 0], p_scratch)
                p_left = pl.move(pl.load(p_scratch, [0, 0], [G, BS], target_memory=pl.MemorySpace.Mat),
                                 target_memory=pl.MemorySpace.Left)
                v_right = pl.move(pl.load(value_cache, [block * BS, 0], [BS, D], target_memory=pl.MemorySpace.Mat),
                                  target_memory=pl.MemorySpace.Right)
                pv = pl.move(pl.matmul(p_left, v_right), target_memory=pl.MemorySpace.Vec)
                acc = pl.add(pl.row_expand_mul(acc, alpha), pv)
                row_max = new_max
            o = pl.store(pl.row_expand_div(acc, row_sum), [b * G, 0], o)
    return o


def make_inputs(rng, context_lens):
    """A shuffled cache: each sequence's logical blocks land on distinct random physical blocks."""
    nseq = len(context_lens)
    q = rng.standard_normal((nseq * G, D), dtype=np.float32)
    key_cache = rng.standard_normal((NUM_BLOCKS * BS, D), dtype=np.float32)
    value_cache = rng.standard_normal((NUM_BLOCKS * BS, D), dtype=np.float32)
    perm = rng.permutation(NUM_BLOCKS)
    block_table = np.full((nseq, MAX_BLOCKS), -1, np.int32)
    used = 0
    for b, n in enumerate(context_lens):
        blocks = (n + BS - 1) // BS
        block_table[b, :blocks] = perm[used:used + blocks]
        used += blocks
    return q, key_cache, value_cache, block_table, np.array(context_lens, np.int32)


def reference(q, key_cache, value_cache, block_table, context_lens):
    out = np.zeros_like(q)
    for b, n in enumerate(context_lens):
        rows = np.concatenate([np.arange(blk * BS, blk * BS + BS) for blk in block_table[b, :(n + BS - 1) // BS]])[:n]
        s = q[b * G:(b + 1) * G] @ key_cache[rows].T * SCALE
        e = np.exp(s - s.max(axis=1, keepdims=True))
        out[b * G:(b + 1) * G] = (e / e.sum(axis=1, keepdims=True)) @ value_cache[rows]
    return out


def check(program, backend: str, config: RunConfig | None, seed: int) -> None:
    """Runs `program` (this file's signature) on two batches against torch's attention (or the
    numpy reference)."""
    rng = np.random.default_rng(seed)
    for context_lens in ([70, 32, 5, 200], [1, 256]):  # two batch sizes, one compiled program
        inputs = make_inputs(rng, context_lens)
        if backend == "torch":
            import torch
            import torch.nn.functional as F

            q, kc, vc, bt, cl = (torch.from_numpy(a) for a in inputs)
            o = torch.zeros_like(q)
            program(q, kc, vc, bt, cl, o, config=config or RunConfig())
            for b, n in enumerate(context_lens):
                rows = torch.cat([torch.arange(int(k) * BS, int(k) * BS + BS) for k in bt[b, :(n + BS - 1) // BS]])[:n]
                want = F.scaled_dot_product_attention(q[b * G:(b + 1) * G], kc[rows], vc[rows])
                torch.testing.assert_close(o[b * G:(b + 1) * G], want, rtol=1e-4, atol=1e-4)
        else:
            o = np.zeros_like(inputs[0])
            program(*inputs, o, config=config or RunConfig())
            np.testing.assert_allclose(o, reference(*inputs), rtol=1e-4, atol=1e-4)


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    check(paged_attention, backend, config, seed=21)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

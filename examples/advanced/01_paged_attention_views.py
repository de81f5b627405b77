"""Paged attention (decode) with the KV blocks as run-time tensor views: the orchestration
walks each sequence's logical blocks, reads the physical block id from the block table
(pl.tensor.read) and hands the block's rows of the caches to a per-block kernel as views,

    k_blk = key_cache[blk * BS : blk * BS + BS, :]      # a [BS, D] view, offset known at run time

so the kernels never see the block table. The per-block kernel (tile ops: QK^T on the cube,
the online-softmax update on the vector cores) keeps the running max, sum and output of
its sequence in small global tensors that the next block's task reads back; the last block
is partly valid (the context length is not a multiple of BS): its scores past the end are
padded with the minimum so that exp gives 0. A final kernel divides by the sum and writes
the sequence's rows of the output through the view o[b * G : b * G + G, :].

  q:            [NSEQ * G, D]            G query heads per sequence (sharing one KV head)
  key_cache:    [NUM_BLOCKS * BS, D]     physical blocks of BS rows (value_cache alike)
  block_table:  [NSEQ, MAX_BLOCKS] int32 logical block j of sequence b -> physical block
  context_lens: [NSEQ] int32             tokens in each sequence's cache

The tasks of one sequence form a chain (each block task reads and writes the running
state); different sequences have their own state tensors and run side by side.

Run: python examples/advanced/01_paged_attention_views.py   (prints OK)
"""

import importlib.util
import pathlib
import sys
from importlib.util import find_spec

import pypto.language as pl
from pypto.runtime import RunConfig


def _load_base():
    """examples/intermediate/15_paged_attention.py: the same problem with one task per sequence;
    its sizes, inputs, numpy reference and check serve this design too."""
    path = pathlib.Path(__file__).resolve().parents[1] / "intermediate" / "15_paged_attention.py"
    spec = importlib.util.spec_from_file_location("paged_attention_base", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BASE = _load_base()
G, D, BS, MAX_BLOCKS, NUM_BLOCKS, SCALE = BASE.G, BASE.D, BASE.BS, BASE.MAX_BLOCKS, BASE.NUM_BLOCKS, BASE.SCALE
W, MAX_SEQS = 8, 8
S = pl.dynamic("S")  # rows of q: G per sequence
Mat, Left, Right, Vec = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Vec


@pl.jit
def paged_attention_views(q: pl.Tensor[[S, D], pl.FP32], key_cache: pl.Tensor, value_cache: pl.Tensor,
                          block_table: pl.Tensor, context_lens: pl.Tensor, o: pl.Out[pl.Tensor[[S, D], pl.FP32]]):
    # Per sequence b, rows b*G:b*G+G of these: its running state (the output accumulator
    # in columns 0:D, the running max and sum in every column of D:D+W and D+W:D+2W: a Vec
    # tile row is at least 32 bytes; row_max reads the value back) and the scratch through
    # which P goes to the cube. The sequences' row windows are disjoint: their tasks get no
    # edges between them (a batch above MAX_SEQS is a run-time error at the view's line).
    states = pl.create_tensor([MAX_SEQS * G, D + 2 * W], dtype=pl.FP32)
    scratch = pl.create_tensor([MAX_SEQS * G, BS], dtype=pl.FP32)
    for b in pl.range(pl.tensor.dim(q, 0) // G):
        ctx = pl.tensor.read(context_lens, [b])
        state = states[b * G:b * G + G, :]
        with pl.at(level=pl.Level.CORE_GROUP):
            state = pl.store(pl.full([G, W], dtype=pl.FP32, value=-1e30), [0, D], state)
        q_b = q[b * G:b * G + G, :]
        for j in pl.range((ctx + BS - 1) // BS):
            blk = pl.tensor.read(block_table, [b, j])
            valid = pl.min(ctx - j * BS, BS)
            k_blk = key_cache[blk * BS:blk * BS + BS, :]
            v_blk = value_cache[blk * BS:blk * BS + BS, :]
            p_scratch = scratch[b * G:b * G + G, :]
            with pl.at(level=pl.Level.CORE_GROUP):
                q_left = pl.move(pl.load(q_b, [0, 0], [G, D], target_memory=Mat), target_memory=Left)
                k_t = pl.transpose_view(pl.load(k_blk, [0, 0], [BS, D], target_memory=Mat))
                s = pl.mul(pl.move(pl.matmul(q_left, pl.move(k_t, target_memory=Right)), target_memory=Vec), SCALE)
                s = pl.tile.fillpad(pl.tile.set_validshape(s, [G, valid]), pad_value=pl.PadValue.min)
                max_w = pl.load(state, [0, D], [G, W])
                old_max = pl.row_max(max_w)
                new_max = pl.maximum(old_max, pl.row_max(s))
                p = pl.row_expand_expdif(s, new_max)
                alpha = pl.exp(pl.sub(old_max, new_max))
                new_sum = pl.add(pl.mul(pl.row_max(pl.load(state, [0, D + W], [G, W])), alpha), pl.row_sum(p))
                p_scratch = pl.store(p, [0, 0], p_scratch)
                p_left = pl.move(pl.load(p_scratch, [0, 0], [G, BS], target_memory=Mat), target_memory=Left)
                v_right = pl.move(pl.load(v_blk, [0, 0], [BS, D], target_memory=Mat), target_memory=Right)
                pv = pl.move(pl.matmul(p_left, v_right), target_memory=Vec)
                acc = pl.add(pl.row_expand_mul(pl.load(state, [0, 0], [G, D]), alpha), pv)
                state = pl.store(acc, [0, 0], state)
                state = pl.store(pl.row_expand(max_w, new_max), [0, D], state)
                state = pl.store(pl.row_expand(max_w, new_sum), [0, D + W], state)
        o_b = o[b * G:b * G + G, :]
        with pl.at(level=pl.Level.CORE_GROUP):
            total = pl.row_max(pl.load(state, [0, D + W], [G, W]))
            o_b = pl.store(pl.row_expand_div(pl.load(state, [0, 0], [G, D]), total), [0, 0], o_b)
    return o


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    BASE.check(paged_attention_views, backend, config, seed=22)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

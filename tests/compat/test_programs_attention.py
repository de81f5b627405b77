"""Attention-family programs written in PyPTO's idioms (decode with RoPE through
orchestration views, GQA with each kv head's query group a view, paged attention over a
block table with a ragged last block, online-softmax flash attention over kernel-side KV
slices, per-head output through view writes, pl.at scopes in orchestration loops carrying
several tensors), each run on both engines through the printer round trip
(verify="roundtrip") against numpy."""

import math

import numpy as np
import pytest

import pypto.language as pl
from pypto import _core, runtime
from pypto.runtime import RunConfig

rng = np.random.default_rng(1414)


@pytest.fixture(params=["native", "sim"])
def engine(request):
    return request.param


def cfg(engine):
    return RunConfig(engine=engine, verify="roundtrip")


def softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------------
# A pl.at scope inside an orchestration loop carrying two tensors (the OutlineIncore
# round-trip bug: the outlined call and its TupleGetItems were a SeqStmts nested in the
# loop body, which prints flat, so the parsed program was "different").


@pl.jit
def two_accumulators(x: pl.Tensor[[32, 64], pl.FP32], a: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
                     b: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    for j in pl.range(3):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [32, 64])
            if j == 0:
                a = pl.store(t, [0, 0], a)
                b = pl.store(pl.muls(t, 2.0), [0, 0], b)
            else:
                a = pl.store(pl.add(pl.load(a, [0, 0], [32, 64]), t), [0, 0], a)
                b = pl.store(pl.mul(pl.load(b, [0, 0], [32, 64]), t), [0, 0], b)
    return a, b


def test_scope_in_loop_carrying_two_tensors_round_trips(engine):
    x = rng.standard_normal((32, 64)).astype(np.float32)
    a = np.zeros_like(x)
    b = np.zeros_like(x)
    two_accumulators(x, a, b, config=cfg(engine))
    np.testing.assert_allclose(a, 3 * x, rtol=1e-6)
    np.testing.assert_allclose(b, 2 * x ** 3, rtol=1e-5)


def test_outlined_scope_results_are_spliced_into_the_loop_body():
    x = np.zeros((32, 64), np.float32)
    prog = two_accumulators.parse(runtime._arg_specs(two_accumulators, (x, x, x)))
    compiled = _core.compile(prog, "a2a3sim", True, True)
    after = dict(compiled.pass_results)
    outlined = next(p for n, p in after.items() if n.endswith("OutlineIncore"))
    main = next(f for f in outlined.functions if f.name == "two_accumulators")
    loop = main.body.stmts[0]
    kinds = [type(s).__name__ for s in loop.body.stmts]
    assert kinds == ["AssignStmt", "AssignStmt", "AssignStmt", "YieldStmt"], kinds


def test_structural_equal_ignores_nested_seq_grouping():
    ir = _core.ir
    v = [ir.Var(f"v{i}", ir.ScalarType(pl.INDEX)) for i in range(3)]
    stmts = [ir.AssignStmt(v[i], ir.ConstInt(i, pl.INDEX)) for i in range(3)]
    flat = ir.SeqStmts(stmts)
    nested = ir.SeqStmts([ir.SeqStmts(stmts[:2]), stmts[2]])
    assert ir.structural_equal(flat, nested)
    assert ir.structural_hash(flat) == ir.structural_hash(nested)
    other = ir.SeqStmts([ir.SeqStmts(stmts[:2])])
    assert not ir.structural_equal(flat, other)


# ---------------------------------------------------------------------------------------
# Decode step: RoPE through orchestration views (the position's row of the cos / sin
# tables, pos read from a tensor or given as a Scalar), each head's output written through
# a view of the output row (out[0:1, h * D:(h + 1) * D]).

H, D, HALF, MAXPOS = 4, 64, 32, 128


@pl.program
class RopeDecode:
    @pl.function(type=pl.FunctionType.InCore)
    def rope_head(self, x: pl.Tensor[[1, D], pl.FP32], cos: pl.Tensor[[1, HALF], pl.FP32],
                  sin: pl.Tensor[[1, HALF], pl.FP32],
                  o: pl.Out[pl.Tensor[[1, D], pl.FP32]]) -> pl.Tensor[[1, D], pl.FP32]:
        x1 = pl.load(x, [0, 0], [1, HALF])
        x2 = pl.load(x, [0, HALF], [1, HALF])
        c = pl.load(cos, [0, 0], [1, HALF])
        s = pl.load(sin, [0, 0], [1, HALF])
        o = pl.store(pl.sub(pl.mul(x1, c), pl.mul(x2, s)), [0, 0], o)
        o = pl.store(pl.add(pl.mul(x2, c), pl.mul(x1, s)), [0, HALF], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[1, H * D], pl.FP32], rope_cos: pl.Tensor[[MAXPOS, HALF], pl.FP32],
             rope_sin: pl.Tensor[[MAXPOS, HALF], pl.FP32], positions: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[2, H * D], pl.FP32]], pos_s: pl.Scalar[pl.INDEX]) -> pl.Tensor[[2, H * D], pl.FP32]:
        pos = pl.cast(pl.tensor.read(positions, [0]), pl.INDEX)
        for h in pl.range(H):
            o_h = out[0:1, h * D:(h + 1) * D]
            o_h = self.rope_head(q[0:1, h * D:(h + 1) * D], rope_cos[pos:pos + 1, 0:HALF],
                                 rope_sin[pos:pos + 1, 0:HALF], o_h)
            o_s = out[1:2, h * D:(h + 1) * D]
            o_s = self.rope_head(q[:, h * D:h * D + D], rope_cos[pos_s:pos_s + 1, :],
                                 rope_sin[pos_s:pos_s + 1, :], o_s)
        return out


def rope_ref(q, cos, sin, pos):
    x = q.reshape(H, D)
    x1, x2 = x[:, :HALF], x[:, HALF:]
    c, s = cos[pos], sin[pos]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=1).reshape(H * D)


def test_rope_decode_through_views(engine):
    q = rng.standard_normal((1, H * D)).astype(np.float32)
    ang = np.arange(MAXPOS)[:, None] * (10000.0 ** (-np.arange(HALF) / HALF))[None, :]
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    out = np.zeros((2, H * D), np.float32)
    runtime.run(RopeDecode, q, cos, sin, np.array([77], np.int32), out, 5, config=cfg(engine))
    np.testing.assert_allclose(out[0], rope_ref(q, cos, sin, 77), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], rope_ref(q, cos, sin, 5), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------
# GQA decode attention, @pl.jit form: each kv head's query group is a view of q, its keys
# and values views of the caches, the scores and softmax tensor-level ops inside a pl.at
# scope, the group's output written through out[kv * G:(kv + 1) * G, :].

KVH, G, S_CTX = 2, 8, 128
SCALE = 1.0 / math.sqrt(D)


@pl.jit
def gqa_decode(q: pl.Tensor[[KVH * G, D], pl.FP32], k_cache: pl.Tensor[[KVH * S_CTX, D], pl.FP32],
               v_cache: pl.Tensor[[KVH * S_CTX, D], pl.FP32], out: pl.Out[pl.Tensor[[KVH * G, D], pl.FP32]]):
    for kv in pl.range(KVH):
        q_g = q[kv * G:(kv + 1) * G, :]
        k_h = k_cache[kv * S_CTX:(kv + 1) * S_CTX, :]
        v_h = v_cache[kv * S_CTX:(kv + 1) * S_CTX, :]
        with pl.at(level=pl.Level.CORE_GROUP):
            s = pl.mul(pl.matmul(q_g, k_h, b_trans=True), SCALE)
            p = pl.exp(pl.row_expand_sub(s, pl.row_max(s)))
            p = pl.row_expand_div(p, pl.row_sum(p))
            out[kv * G:(kv + 1) * G, :] = pl.matmul(p, v_h)
    return out


def attention_ref(q, k, v):
    return softmax_rows(q @ k.T * SCALE) @ v


def test_gqa_decode_groups_as_views(engine):
    q = rng.standard_normal((KVH * G, D)).astype(np.float32)
    k = rng.standard_normal((KVH * S_CTX, D)).astype(np.float32)
    v = rng.standard_normal((KVH * S_CTX, D)).astype(np.float32)
    out = np.zeros_like(q)
    gqa_decode(q, k, v, out, config=cfg(engine))
    for kv in range(KVH):
        want = attention_ref(q[kv * G:(kv + 1) * G], k[kv * S_CTX:(kv + 1) * S_CTX], v[kv * S_CTX:(kv + 1) * S_CTX])
        np.testing.assert_allclose(out[kv * G:(kv + 1) * G], want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Paged-attention decode over a block table, @pl.program form: the orchestration walks a
# sequence's blocks, each KV block a run-time view of the cache (blk from the block table),
# and one pl.at scope per block carries three state tensors (accumulator, running max,
# running sum: [G, 1] columns) from one block to the next; the last block is ragged
# (valid_shape on the load of the scores, fillpad with the minimum).

BS, NBLK, MAXB = 32, 12, 4


@pl.program
class PagedDecode:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[2 * G, D], pl.FP32], key_cache: pl.Tensor[[NBLK * BS, D], pl.FP32],
             value_cache: pl.Tensor[[NBLK * BS, D], pl.FP32], block_table: pl.Tensor[[2, MAXB], pl.INT32],
             context_lens: pl.Tensor[[2], pl.INT32],
             out: pl.Out[pl.Tensor[[2 * G, D], pl.FP32]]) -> pl.Tensor[[2 * G, D], pl.FP32]:
        for b in pl.range(2):
            ctx = pl.tensor.read(context_lens, [b])
            acc = pl.create_tensor([G, D], dtype=pl.FP32)
            mx = pl.create_tensor([G, 1], dtype=pl.FP32)
            sm = pl.create_tensor([G, 1], dtype=pl.FP32)
            q_b = q[b * G:(b + 1) * G, :]
            for j in pl.range((ctx + BS - 1) // BS):
                blk = pl.tensor.read(block_table, [b, j])
                valid = pl.min(ctx - j * BS, BS)
                k_blk = key_cache[blk * BS:(blk + 1) * BS, :]
                v_blk = value_cache[blk * BS:(blk + 1) * BS, :]
                with pl.at(level=pl.Level.CORE_GROUP):
                    s = pl.mul(pl.matmul(q_b, k_blk, b_trans=True), SCALE)
                    st = pl.load(s, [0, 0], [G, BS], valid_shape=[G, valid])
                    st = pl.tile.fillpad(st, pad_value=pl.PadValue.min)
                    cur = pl.row_max(st)
                    if j == 0:
                        new_max = cur
                        p = pl.row_expand_expdif(st, new_max)
                        acc = pl.store(pl.matmul(p, v_blk), [0, 0], acc)
                        sm = pl.store(pl.row_sum(p), [0, 0], sm)
                    else:
                        old_max = pl.load(mx, [0, 0], [G, 1])
                        new_max = pl.maximum(old_max, cur)
                        p = pl.row_expand_expdif(st, new_max)
                        alpha = pl.exp(pl.sub(old_max, new_max))
                        acc = pl.store(pl.add(pl.row_expand_mul(pl.load(acc, [0, 0], [G, D]), alpha),
                                              pl.matmul(p, v_blk)), [0, 0], acc)
                        sm = pl.store(pl.add(pl.mul(pl.load(sm, [0, 0], [G, 1]), alpha), pl.row_sum(p)), [0, 0], sm)
                    mx = pl.store(new_max, [0, 0], mx)
            o_b = out[b * G:(b + 1) * G, :]
            with pl.at(level=pl.Level.CORE_GROUP):
                o_b = pl.store(pl.row_expand_div(pl.load(acc, [0, 0], [G, D]), pl.load(sm, [0, 0], [G, 1])), [0, 0], o_b)
        return out


def test_paged_decode_ragged_last_block(engine):
    ctx = [70, 32]
    q = rng.standard_normal((2 * G, D)).astype(np.float32)
    kc = rng.standard_normal((NBLK * BS, D)).astype(np.float32)
    vc = rng.standard_normal((NBLK * BS, D)).astype(np.float32)
    perm = rng.permutation(NBLK)
    bt = np.full((2, MAXB), -1, np.int32)
    bt[0, :3] = perm[:3]
    bt[1, :1] = perm[3:4]
    out = np.zeros_like(q)
    runtime.run(PagedDecode, q, kc, vc, bt, np.array(ctx, np.int32), out, config=cfg(engine))
    for b, n in enumerate(ctx):
        rows = np.concatenate([np.arange(k * BS, (k + 1) * BS) for k in bt[b, :(n + BS - 1) // BS]])[:n]
        np.testing.assert_allclose(out[b * G:(b + 1) * G], attention_ref(q[b * G:(b + 1) * G], kc[rows], vc[rows]),
                                   rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Flash-attention prefill (online softmax), one kernel per head: the KV blocks are
# kernel-side slices of the head's K and V (k[kb * BK:(kb + 1) * BK, :]), the running max,
# sum and output are tiles carried by the kernel's loop; the orchestration loop over heads
# hands each head its columns as views and writes the head's output through
# out[:, h * D:(h + 1) * D].

SQ, SK, BQ, BK, NH = 64, 128, 32, 32, 2


@pl.jit
def flash_prefill(q: pl.Tensor[[SQ, NH * D], pl.FP32], k: pl.Tensor[[SK, NH * D], pl.FP32],
                  v: pl.Tensor[[SK, NH * D], pl.FP32], out: pl.Out[pl.Tensor[[SQ, NH * D], pl.FP32]]):
    for h in pl.range(NH):
        q_h = q[:, h * D:(h + 1) * D]
        k_h = k[:, h * D:(h + 1) * D]
        v_h = v[:, h * D:(h + 1) * D]
        o_h = out[:, h * D:(h + 1) * D]
        with pl.at(level=pl.Level.CORE_GROUP):
            for qb in pl.range(SQ // BQ):
                q_t = pl.load(q_h, [qb * BQ, 0], [BQ, D])
                m = pl.full([BQ, 1], dtype=pl.FP32, value=-1e30)
                l = pl.full([BQ, 1], dtype=pl.FP32, value=0.0)
                acc = pl.full([BQ, D], dtype=pl.FP32, value=0.0)
                for kb in pl.range(SK // BK):
                    k_t = pl.load(k_h[kb * BK:(kb + 1) * BK, :], [0, 0], [BK, D], target_memory=pl.Mem.Mat)
                    s = pl.mul(pl.matmul(q_t, pl.transpose_view(k_t)), SCALE)
                    new_m = pl.maximum(m, pl.row_max(s))
                    p = pl.row_expand_expdif(s, new_m)
                    alpha = pl.exp(pl.sub(m, new_m))
                    l = pl.add(pl.mul(l, alpha), pl.row_sum(p))
                    v_t = pl.load(v_h[kb * BK:(kb + 1) * BK, :], [0, 0], [BK, D])
                    acc = pl.add(pl.row_expand_mul(acc, alpha), pl.matmul(p, v_t))
                    m = new_m
                o_h = pl.store(pl.row_expand_div(acc, l), [qb * BQ, 0], o_h)
    return out


def test_flash_prefill_kernel_side_kv_slices(engine):
    q = rng.standard_normal((SQ, NH * D)).astype(np.float32)
    k = rng.standard_normal((SK, NH * D)).astype(np.float32)
    v = rng.standard_normal((SK, NH * D)).astype(np.float32)
    out = np.zeros_like(q)
    flash_prefill(q, k, v, out, config=cfg(engine))
    for h in range(NH):
        c = slice(h * D, (h + 1) * D)
        np.testing.assert_allclose(out[:, c], attention_ref(q[:, c], k[:, c], v[:, c]), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Causal flash-attention prefill: a pl.parallel orchestration loop over query blocks, each
# block's output a view; inside the kernel, the kv loop runs to the diagonal block, which
# is masked with pl.tile.tri. The kernel body uses a compile-time conditional expression
# (`a if FLAG else b`) inside the loop: the parser's look-ahead for names read after a
# loop walked the expression's body as a statement list and failed
# ("'Call' object is not iterable") before the fix.

CAUSAL = True


@pl.jit
def causal_prefill(q: pl.Tensor[[SQ, D], pl.FP32], k: pl.Tensor[[SQ, D], pl.FP32], v: pl.Tensor[[SQ, D], pl.FP32],
                   out: pl.Out[pl.Tensor[[SQ, D], pl.FP32]]):
    for qb in pl.parallel(SQ // BQ):
        o_b = out[qb * BQ:(qb + 1) * BQ, :]
        with pl.at(level=pl.Level.CORE_GROUP):
            q_t = pl.load(q, [qb * BQ, 0], [BQ, D])
            m = pl.full([BQ, 1], dtype=pl.FP32, value=-1e30)
            l = pl.full([BQ, 1], dtype=pl.FP32, value=0.0)
            acc = pl.full([BQ, D], dtype=pl.FP32, value=0.0)
            for kb in pl.range(qb + 1 if CAUSAL else SQ // BK):
                k_t = pl.load(k[kb * BK:(kb + 1) * BK, :], [0, 0], [BK, D], target_memory=pl.Mem.Mat)
                s = pl.mul(pl.matmul(q_t, pl.transpose_view(k_t)), SCALE)
                if kb == qb:
                    keep = pl.tile.tri(0, [BQ, BK], dtype=pl.FP32)
                    s = pl.add(s, pl.muls(pl.adds(keep, -1.0), 1e30))
                new_m = pl.maximum(m, pl.row_max(s))
                p = pl.row_expand_expdif(s, new_m)
                alpha = pl.exp(pl.sub(m, new_m))
                l = pl.add(pl.mul(l, alpha), pl.row_sum(p))
                v_t = pl.load(v[kb * BK:(kb + 1) * BK, :], [0, 0], [BK, D])
                acc = pl.add(pl.row_expand_mul(acc, alpha), pl.matmul(p, v_t))
                m = new_m
            o_b = pl.store(pl.row_expand_div(acc, l), [0, 0], o_b)
    return out


def test_causal_prefill_parallel_query_blocks(engine):
    q, k, v = (rng.standard_normal((SQ, D)).astype(np.float32) for _ in range(3))
    out = np.zeros_like(q)
    causal_prefill(q, k, v, out, config=cfg(engine))
    s = q @ k.T * SCALE
    s = np.where(np.tril(np.ones((SQ, SQ), bool)), s, -np.inf)
    np.testing.assert_allclose(out, softmax_rows(s) @ v, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Qwen3-style decode attention in BF16: the q projection (tensor-level matmul written into
# an orchestration tensor through q_proj[:, :] = ...), RoPE on the head's halves (tile
# slices) with the position's table rows taken as orchestration views with a Scalar pos,
# GQA (head h reads kv head h // G through views of the caches), the output of each head
# stored through out[:, h * D:(h + 1) * D].

HID, QH, QKV = 128, 4, 2
QG = QH // QKV
S_KV, MAXP = 64, 256


@pl.jit
def qwen_decode_attn(x: pl.Tensor[[1, HID], pl.BF16], wq: pl.Tensor[[HID, QH * D], pl.BF16],
                     k_cache: pl.Tensor[[QKV * S_KV, D], pl.BF16], v_cache: pl.Tensor[[QKV * S_KV, D], pl.BF16],
                     rope_cos: pl.Tensor[[MAXP, HALF], pl.FP32], rope_sin: pl.Tensor[[MAXP, HALF], pl.FP32],
                     pos: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[1, QH * D], pl.FP32]]):
    q_proj = pl.create_tensor([1, QH * D], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        q_proj[:, :] = pl.matmul(x, wq, out_dtype=pl.FP32)
    cos = rope_cos[pos:pos + 1, :]
    sin = rope_sin[pos:pos + 1, :]
    for h in pl.range(QH):
        kvh = h // QG
        k_h = k_cache[kvh * S_KV:(kvh + 1) * S_KV, :]
        v_h = v_cache[kvh * S_KV:(kvh + 1) * S_KV, :]
        o_h = out[:, h * D:(h + 1) * D]
        with pl.at(level=pl.Level.CORE_GROUP):
            qh = pl.load(q_proj, [0, h * D], [1, D])
            x1 = qh[:, 0:HALF]
            x2 = qh[:, HALF:D]
            c = pl.load(cos, [0, 0], [1, HALF])
            s = pl.load(sin, [0, 0], [1, HALF])
            qr = pl.tile.concat(pl.sub(pl.mul(x1, c), pl.mul(x2, s)), pl.add(pl.mul(x2, c), pl.mul(x1, s)))
            kt = pl.load(k_h, [0, 0], [S_KV, D], target_memory=pl.Mem.Mat)
            sc = pl.mul(pl.matmul(pl.cast(qr, pl.BF16), pl.transpose_view(kt)), SCALE)
            p = pl.row_expand_expdif(sc, pl.row_max(sc))
            p = pl.row_expand_div(p, pl.row_sum(p))
            vt = pl.load(v_h, [0, 0], [S_KV, D])
            o_h = pl.store(pl.matmul(pl.cast(p, pl.BF16), vt), [0, 0], o_h)
    return out


def test_qwen_style_bf16_decode_attention(engine):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(5)
    x = torch.randn(1, HID, generator=g).bfloat16()
    wq = (torch.randn(HID, QH * D, generator=g) * 0.1).bfloat16()
    kc = torch.randn(QKV * S_KV, D, generator=g).bfloat16()
    vc = torch.randn(QKV * S_KV, D, generator=g).bfloat16()
    ang = torch.arange(MAXP)[:, None] * (10000.0 ** (-torch.arange(HALF) / HALF))[None, :]
    cos, sin = torch.cos(ang).float(), torch.sin(ang).float()
    out = torch.zeros(1, QH * D)
    pos = 100
    qwen_decode_attn(x, wq, kc, vc, cos, sin, pos, out, config=cfg(engine))
    q = (x.float() @ wq.float()).reshape(QH, D)
    q1, q2 = q[:, :HALF], q[:, HALF:]
    qr = torch.cat([q1 * cos[pos] - q2 * sin[pos], q2 * cos[pos] + q1 * sin[pos]], 1).bfloat16().float()
    want = []
    for h in range(QH):
        kv = h // QG
        kk, vv = kc[kv * S_KV:(kv + 1) * S_KV].float(), vc[kv * S_KV:(kv + 1) * S_KV].float()
        p = torch.softmax(qr[h:h + 1] @ kk.T * SCALE, -1)
        want.append(p.bfloat16().float() @ vv)
    torch.testing.assert_close(out, torch.cat(want, 1), rtol=1e-2, atol=1e-2)


# ---------------------------------------------------------------------------------------
# Paged attention over a 4-D cache [NBLK, BS, KVH, D] (pypto-lib's layout): the block of kv
# head `kvh` is the orchestration view key_cache[blk, :, kvh, :] (rows strided by KVH * D),
# blk read from the block table; scores per block land in views of a scores tensor, one
# kernel takes the ragged softmax (valid_shape = the context length, fillpad min), and a
# second loop accumulates P @ V through pl.at scopes (the first block stores, the others add).

PBS, PKVH, PNBLK, PMAXB, PG = 16, 2, 10, 4, 4


@pl.jit
def paged_4d_cache(q: pl.Tensor[[PKVH * PG, D], pl.FP32], key_cache: pl.Tensor[[PNBLK, PBS, PKVH, D], pl.FP32],
                   value_cache: pl.Tensor[[PNBLK, PBS, PKVH, D], pl.FP32], block_table: pl.Tensor[[PMAXB], pl.INT32],
                   ctx_len: pl.Scalar[pl.INDEX], scores: pl.Out[pl.Tensor[[PKVH * PG, PMAXB * PBS], pl.FP32]],
                   out: pl.Out[pl.Tensor[[PKVH * PG, D], pl.FP32]]):
    nb = (ctx_len + PBS - 1) // PBS
    p_all = pl.create_tensor([PKVH * PG, PMAXB * PBS], dtype=pl.FP32)
    for kvh in pl.range(PKVH):
        q_g = q[kvh * PG:(kvh + 1) * PG, :]
        for j in pl.range(nb):
            blk = pl.tensor.read(block_table, [j])
            k_blk = key_cache[blk, :, kvh, :]
            s_j = scores[kvh * PG:(kvh + 1) * PG, j * PBS:(j + 1) * PBS]
            with pl.at(level=pl.Level.CORE_GROUP):
                s_j[:, :] = pl.mul(pl.matmul(q_g, k_blk, b_trans=True), SCALE)
        with pl.at(level=pl.Level.CORE_GROUP):
            st = pl.load(scores, [kvh * PG, 0], [PG, PMAXB * PBS], valid_shape=[PG, ctx_len])
            st = pl.tile.fillpad(st, pad_value=pl.PadValue.min)
            p = pl.row_expand_expdif(st, pl.row_max(st))
            p_all[kvh * PG:(kvh + 1) * PG, :] = pl.row_expand_div(p, pl.row_sum(p))
        o_g = out[kvh * PG:(kvh + 1) * PG, :]
        for j in pl.range(nb):
            blk = pl.tensor.read(block_table, [j])
            v_blk = value_cache[blk, :, kvh, :]
            p_j = p_all[kvh * PG:(kvh + 1) * PG, j * PBS:(j + 1) * PBS]
            with pl.at(level=pl.Level.CORE_GROUP):
                pv = pl.matmul(pl.load(p_j, [0, 0], [PG, PBS]), pl.load(v_blk, [0, 0], [PBS, D]))
                if j == 0:
                    o_g = pl.store(pv, [0, 0], o_g)
                else:
                    o_g = pl.store(pl.add(pl.load(o_g, [0, 0], [PG, D]), pv), [0, 0], o_g)
    return out, scores


def test_paged_attention_4d_cache_views(engine):
    ctx = 50
    q = rng.standard_normal((PKVH * PG, D)).astype(np.float32)
    kc = rng.standard_normal((PNBLK, PBS, PKVH, D)).astype(np.float32)
    vc = rng.standard_normal((PNBLK, PBS, PKVH, D)).astype(np.float32)
    bt = np.array([7, 2, 9, 4], np.int32)
    out = np.zeros_like(q)
    sc = np.zeros((PKVH * PG, PMAXB * PBS), np.float32)
    paged_4d_cache(q, kc, vc, bt, ctx, sc, out, config=cfg(engine))
    for h in range(PKVH):
        k = kc[bt, :, h, :].reshape(-1, D)[:ctx]
        v = vc[bt, :, h, :].reshape(-1, D)[:ctx]
        rows = slice(h * PG, (h + 1) * PG)
        np.testing.assert_allclose(sc[rows, :ctx], q[rows] @ k.T * SCALE, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(out[rows], attention_ref(q[rows], k, v), rtol=1e-4, atol=1e-5)


# The whole paged decode in one kernel: the block table and context lengths read inside it,
# each KV block a kernel-side view with a run-time offset (key_cache[blk * PBS:(blk + 1) * PBS, :]),
# the ragged last block cut with set_validshape + fillpad, each sequence's output written
# through out[b * PG:(b + 1) * PG, :] = tile.

NSEQ = 2


@pl.jit
def paged_one_kernel(q: pl.Tensor[[NSEQ * PG, D], pl.FP32], key_cache: pl.Tensor[[PNBLK * PBS, D], pl.FP32],
                     value_cache: pl.Tensor[[PNBLK * PBS, D], pl.FP32], block_table: pl.Tensor[[NSEQ, PMAXB], pl.INT32],
                     context_lens: pl.Tensor[[NSEQ], pl.INT32], out: pl.Out[pl.Tensor[[NSEQ * PG, D], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for b in pl.range(NSEQ):
            ctx = pl.cast(pl.tensor.read(context_lens, [b]), pl.INDEX)
            q_t = pl.load(q[b * PG:(b + 1) * PG, :], [0, 0], [PG, D])
            m = pl.full([PG, 1], dtype=pl.FP32, value=-1e30)
            l = pl.full([PG, 1], dtype=pl.FP32, value=0.0)
            acc = pl.full([PG, D], dtype=pl.FP32, value=0.0)
            for j in pl.range((ctx + PBS - 1) // PBS):
                blk = pl.cast(pl.tensor.read(block_table, [b, j]), pl.INDEX)
                valid = pl.min(ctx - j * PBS, PBS)
                k_t = pl.load(key_cache[blk * PBS:(blk + 1) * PBS, :], [0, 0], [PBS, D], target_memory=pl.Mem.Mat)
                s = pl.mul(pl.matmul(q_t, pl.transpose_view(k_t)), SCALE)
                s = pl.tile.fillpad(pl.tile.set_validshape(s, [PG, valid]), pad_value=pl.PadValue.min)
                new_m = pl.maximum(m, pl.row_max(s))
                p = pl.row_expand_expdif(s, new_m)
                alpha = pl.exp(pl.sub(m, new_m))
                l = pl.add(pl.mul(l, alpha), pl.row_sum(p))
                v_t = pl.load(value_cache[blk * PBS:(blk + 1) * PBS, :], [0, 0], [PBS, D])
                acc = pl.add(pl.row_expand_mul(acc, alpha), pl.matmul(p, v_t))
                m = new_m
            out[b * PG:(b + 1) * PG, :] = pl.row_expand_div(acc, l)
    return out


def test_paged_attention_in_one_kernel(engine):
    ctx = [37, 64]
    q = rng.standard_normal((NSEQ * PG, D)).astype(np.float32)
    kc = rng.standard_normal((PNBLK * PBS, D)).astype(np.float32)
    vc = rng.standard_normal((PNBLK * PBS, D)).astype(np.float32)
    bt = np.array([[3, 8, 1, -1], [0, 5, 6, 2]], np.int32)
    out = np.zeros_like(q)
    paged_one_kernel(q, kc, vc, bt, np.array(ctx, np.int32), out, config=cfg(engine))
    for b, n in enumerate(ctx):
        rows = np.concatenate([np.arange(k * PBS, (k + 1) * PBS) for k in bt[b, :(n + PBS - 1) // PBS]])[:n]
        r = slice(b * PG, (b + 1) * PG)
        np.testing.assert_allclose(out[r], attention_ref(q[r], kc[rows], vc[rows]), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Multi-head attention as one SPMD launch (`for h in pl.spmd(H)`): each block takes its
# head's rows of q, k, v as kernel-side views at offsets computed from the block index.

SH, SG, SS = 4, 8, 64


@pl.jit
def spmd_heads(q: pl.Tensor[[SH * SG, D], pl.FP32], k: pl.Tensor[[SH * SS, D], pl.FP32],
               v: pl.Tensor[[SH * SS, D], pl.FP32], out: pl.Out[pl.Tensor[[SH * SG, D], pl.FP32]]):
    for h in pl.spmd(SH):
        s = pl.mul(pl.matmul(q[h * SG:(h + 1) * SG, :], k[h * SS:(h + 1) * SS, :], b_trans=True), SCALE)
        p = pl.exp(pl.row_expand_sub(s, pl.row_max(s)))
        p = pl.row_expand_div(p, pl.row_sum(p))
        out[h * SG:(h + 1) * SG, :] = pl.matmul(p, v[h * SS:(h + 1) * SS, :])
    return out


def test_spmd_heads_kernel_views(engine):
    q = rng.standard_normal((SH * SG, D)).astype(np.float32)
    k = rng.standard_normal((SH * SS, D)).astype(np.float32)
    v = rng.standard_normal((SH * SS, D)).astype(np.float32)
    out = np.zeros_like(q)
    spmd_heads(q, k, v, out, config=cfg(engine))
    for h in range(SH):
        r, c = slice(h * SG, (h + 1) * SG), slice(h * SS, (h + 1) * SS)
        np.testing.assert_allclose(out[r], attention_ref(q[r], k[c], v[c]), rtol=1e-4, atol=1e-5)


# An InCore function given a Scalar position: its table row is a kernel-side view with a
# run-time offset (rope_cos[pos:pos + 1, :]); each head's result is stored into a 1-D output
# at h * D (a [1, D] tile into the flat tensor).


@pl.program
class KernelScalarView:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_head(self, q: pl.Tensor[[H, D], pl.FP32], rope_cos: pl.Tensor[[MAXPOS, D], pl.FP32],
                   pos: pl.Scalar[pl.INDEX], h: pl.Scalar[pl.INDEX],
                   o: pl.Out[pl.Tensor[[H * D], pl.FP32]]) -> pl.Tensor[[H * D], pl.FP32]:
        c = pl.load(rope_cos[pos:pos + 1, :], [0, 0], [1, D])
        t = pl.load(q[h:h + 1, :], [0, 0], [1, D])
        o = pl.store(pl.mul(t, c), [h * D], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[H, D], pl.FP32], rope_cos: pl.Tensor[[MAXPOS, D], pl.FP32], pos: pl.Scalar[pl.INDEX],
             o: pl.Out[pl.Tensor[[H * D], pl.FP32]]) -> pl.Tensor[[H * D], pl.FP32]:
        for h in pl.range(H):
            o = self.scale_head(q, rope_cos, pos, h, o)
        return o


def test_kernel_view_with_scalar_offset(engine):
    q = rng.standard_normal((H, D)).astype(np.float32)
    c = rng.standard_normal((MAXPOS, D)).astype(np.float32)
    o = np.zeros(H * D, np.float32)
    runtime.run(KernelScalarView, q, c, 9, o, config=cfg(engine))
    np.testing.assert_allclose(o, (q * c[9]).reshape(-1), rtol=1e-6)


# ---------------------------------------------------------------------------------------
# pl.at scopes carrying three tensors through an orchestration while loop (a named launch
# and a second scope with deps=[tid]), and a pl.parallel loop whose scope writes two row
# views and returns a scalar read in the kernel: more shapes of the OutlineIncore result
# sequence, each through the printer round trip.


@pl.jit
def three_carry(x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX], a: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
                b: pl.Out[pl.Tensor[[16, 64], pl.FP32]], c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    i = 0
    while i < n:
        with pl.at(level=pl.Level.CORE_GROUP) as tid:
            t = pl.load(x, [0, 0], [16, 64])
            if i == 0:
                a = pl.store(t, [0, 0], a)
                b = pl.store(t, [0, 0], b)
                c = pl.store(t, [0, 0], c)
            else:
                a = pl.store(pl.add(pl.load(a, [0, 0], [16, 64]), t), [0, 0], a)
                b = pl.store(pl.sub(pl.load(b, [0, 0], [16, 64]), t), [0, 0], b)
                c = pl.store(pl.mul(pl.load(c, [0, 0], [16, 64]), t), [0, 0], c)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[tid]):
            c = pl.store(pl.muls(pl.load(c, [0, 0], [16, 64]), 1.0), [0, 0], c)
        i = i + 1
    return a, b, c


def test_while_loop_scope_carrying_three_tensors(engine):
    x = rng.random((16, 64)).astype(np.float32) + 0.5
    a, b, c = (np.zeros_like(x) for _ in range(3))
    three_carry(x, 3, a, b, c, config=cfg(engine))
    np.testing.assert_allclose(a, 3 * x, rtol=1e-6)
    np.testing.assert_allclose(b, -x, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(c, x ** 3, rtol=1e-5)


@pl.jit
def par_two(x: pl.Tensor[[64, 64], pl.FP32], a: pl.Out[pl.Tensor[[64, 64], pl.FP32]], b: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for r in pl.parallel(4):
        a_r = a[r * 16:(r + 1) * 16, :]
        b_r = b[r * 16:(r + 1) * 16, :]
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [r * 16, 0], [16, 64])
            a_r = pl.store(pl.exp(t), [0, 0], a_r)
            b_r = pl.store(pl.neg(t), [0, 0], b_r)
            s = pl.tensor.read(x, [0, 0])
        m = pl.max(s, 0.0)
    return a, b


def test_parallel_scope_writing_two_views(engine):
    x = rng.random((64, 64)).astype(np.float32)
    a, b = np.zeros_like(x), np.zeros_like(x)
    par_two(x, a, b, config=cfg(engine))
    np.testing.assert_allclose(a, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(b, -x)


# ---------------------------------------------------------------------------------------
# FP16 decode over a pl.dynamic context: the ragged last block is the view
# k[j * DBS:j * DBS + valid, :] (a run-time extent), loaded with valid_shape and padded
# (scores with the minimum, V rows with zero); running max / sum carried as [DG, 1] tensors.

DG, DBS = 16, 32
SDYN = pl.dynamic("SDYN")


@pl.jit
def dyn_decode(q: pl.Tensor[[DG, D], pl.FP16], k: pl.Tensor[[SDYN, D], pl.FP16], v: pl.Tensor[[SDYN, D], pl.FP16],
               out: pl.Out[pl.Tensor[[DG, D], pl.FP32]]):
    n = pl.tensor.dim(k, 0)
    m = pl.create_tensor([DG, 1], dtype=pl.FP32)
    l = pl.create_tensor([DG, 1], dtype=pl.FP32)
    for j in pl.range((n + DBS - 1) // DBS):
        valid = pl.min(n - j * DBS, DBS)
        k_j = k[j * DBS:j * DBS + valid, :]
        v_j = v[j * DBS:j * DBS + valid, :]
        with pl.at(level=pl.Level.CORE_GROUP):
            qt = pl.load(q, [0, 0], [DG, D], target_memory=pl.Mem.Mat)
            kt = pl.load(k_j, [0, 0], [DBS, D], valid_shape=[valid, D], target_memory=pl.Mem.Mat)
            s = pl.mul(pl.matmul(qt, pl.transpose_view(kt)), SCALE)
            s = pl.tile.fillpad(pl.tile.set_validshape(s, [DG, valid]), pad_value=pl.PadValue.min)
            cur = pl.row_max(s)
            if j == 0:
                nm = cur
                p = pl.row_expand_expdif(s, nm)
                l = pl.store(pl.row_sum(p), [0, 0], l)
                vt = pl.load(v_j, [0, 0], [DBS, D], valid_shape=[valid, D])
                vt = pl.tile.fillpad(vt, pad_value=pl.PadValue.zero)
                out = pl.store(pl.matmul(pl.cast(p, pl.FP16), vt), [0, 0], out)
            else:
                om = pl.load(m, [0, 0], [DG, 1])
                nm = pl.maximum(om, cur)
                alpha = pl.exp(pl.sub(om, nm))
                p = pl.row_expand_expdif(s, nm)
                l = pl.store(pl.add(pl.mul(pl.load(l, [0, 0], [DG, 1]), alpha), pl.row_sum(p)), [0, 0], l)
                vt = pl.load(v_j, [0, 0], [DBS, D], valid_shape=[valid, D])
                vt = pl.tile.fillpad(vt, pad_value=pl.PadValue.zero)
                out = pl.store(pl.add(pl.row_expand_mul(pl.load(out, [0, 0], [DG, D]), alpha),
                                      pl.matmul(pl.cast(p, pl.FP16), vt)), [0, 0], out)
            m = pl.store(nm, [0, 0], m)
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.store(pl.row_expand_div(pl.load(out, [0, 0], [DG, D]), pl.load(l, [0, 0], [DG, 1])), [0, 0], out)
    return out


@pytest.mark.parametrize("n", [100, 64, 7])
def test_fp16_decode_dynamic_context(engine, n):
    q = rng.standard_normal((DG, D)).astype(np.float16)
    k = rng.standard_normal((n, D)).astype(np.float16)
    v = rng.standard_normal((n, D)).astype(np.float16)
    o = np.zeros((DG, D), np.float32)
    dyn_decode(q, k, v, o, config=cfg(engine))
    s = q.astype(np.float32) @ k.astype(np.float32).T * SCALE
    want = softmax_rows(s) @ v.astype(np.float32)
    np.testing.assert_allclose(o, want, rtol=2e-2, atol=2e-3)  # P is rounded to FP16 for the cube


# ---------------------------------------------------------------------------------------
# DeepSeek-style MLA scores: the no-position and rotary parts of q and of the latent cache
# are column views, summed on the cube with matmul then matmul_acc (both b_trans), and the
# latent's first NOPE columns serve as V.

NOPE, PE, MG, MS = 128, 64, 16, 64
MSCALE = 1.0 / math.sqrt(NOPE + PE)


@pl.jit
def mla_decode(q: pl.Tensor[[MG, NOPE + PE], pl.FP32], kv: pl.Tensor[[MS, NOPE + PE], pl.FP32],
               out: pl.Out[pl.Tensor[[MG, NOPE], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.matmul(q[:, 0:NOPE], kv[:, 0:NOPE], b_trans=True)
        s = pl.matmul_acc(s, q[:, NOPE:NOPE + PE], kv[:, NOPE:NOPE + PE], b_trans=True)
        s = pl.mul(s, MSCALE)
        p = pl.exp(pl.row_expand_sub(s, pl.row_max(s)))
        p = pl.row_expand_div(p, pl.row_sum(p))
        out[:, :] = pl.matmul(p, kv[:, 0:NOPE])
    return out


def test_mla_scores_from_column_views(engine):
    q = rng.standard_normal((MG, NOPE + PE)).astype(np.float32)
    kv = rng.standard_normal((MS, NOPE + PE)).astype(np.float32)
    o = np.zeros((MG, NOPE), np.float32)
    mla_decode(q, kv, o, config=cfg(engine))
    np.testing.assert_allclose(o, softmax_rows(q @ kv.T * MSCALE) @ kv[:, :NOPE], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Online-softmax decode attention written on tensors only: the running max, sum and output
# (pl.tensor.full before the KV loop, rebound in it) are loop-carried tensor-level values,
# each one whole tile. The [G, 1] carries met the [G, 1] row reductions of each block: a
# tensor used whole as a tile was padded to 32-byte rows ([8, 8], valid [8, 1]), and
# pl.maximum(m, pl.row_max(s)) failed on the shapes.

TB, TKV, TG, TS, TBS = 2, 2, 8, 256, 64


@pl.jit
def tensor_online_softmax(q: pl.Tensor, kc: pl.Tensor, vc: pl.Tensor, o: pl.Out[pl.Tensor]):
    for bh in pl.parallel(0, TB * TKV):
        b = bh // TKV
        h = bh % TKV
        with pl.at(level=pl.Level.CORE_GROUP):
            r0 = bh * TG
            qg = q[r0:r0 + TG, :]
            m = pl.tensor.full([TG, 1], dtype=pl.FP32, value=-1e30)
            l = pl.tensor.full([TG, 1], dtype=pl.FP32, value=0.0)
            acc = pl.tensor.full([TG, D], dtype=pl.FP32, value=0.0)
            for kb in pl.range(TS // TBS):
                k0 = b * TS + kb * TBS
                s = pl.mul(pl.matmul(qg, kc[k0:k0 + TBS, h * D:(h + 1) * D], b_trans=True, out_dtype=pl.FP32), SCALE)
                new_m = pl.maximum(m, pl.row_max(s))
                p = pl.exp(pl.row_expand_sub(s, new_m))
                alpha = pl.exp(pl.sub(m, new_m))
                l = pl.add(pl.mul(alpha, l), pl.row_sum(p))
                pv = pl.matmul(pl.cast(p, pl.FP16), vc[k0:k0 + TBS, h * D:(h + 1) * D], out_dtype=pl.FP32)
                acc = pl.add(pl.row_expand_mul(acc, alpha), pv)
                m = new_m
            o[r0:r0 + TG, :] = pl.row_expand_div(acc, l)
    return o


def test_online_softmax_on_tensors_with_row_vector_carries(engine):
    q = rng.uniform(-1, 1, (TB * TKV * TG, D)).astype(np.float16)
    kc, vc = (rng.uniform(-1, 1, (TB * TS, TKV * D)).astype(np.float16) for _ in range(2))
    o = np.zeros((TB * TKV * TG, D), np.float32)
    tensor_online_softmax(q, kc, vc, o, config=cfg(engine))
    for b in range(TB):
        for h in range(TKV):
            r, c = slice((b * TKV + h) * TG, (b * TKV + h + 1) * TG), slice(h * D, (h + 1) * D)
            k, v = (x[b * TS:(b + 1) * TS, c].astype(np.float32) for x in (kc, vc))
            want = attention_ref(q[r].astype(np.float32), k, v)
            np.testing.assert_allclose(o[r], want, rtol=2e-3, atol=2e-3)  # p rounded to FP16 per block

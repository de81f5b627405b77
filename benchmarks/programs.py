"""The benchmarked PyPTO programs: a tiled GEMM (matmul + matmul_acc over K, one task per
output tile; fp32 or bf16 operands), a GEMV-shaped bf16 matmul, row softmax (fp32 and fp16), RMSNorm, elementwise add, a graph of tiny tasks, and the
seed's instruction-level vector_add (@pto.kernel)."""

import pypto as pto
import pypto.language as pl

GEMM_N, GEMM_T = 1024, 128  # 1024^3 GEMM, 128x128 output tiles, K in 128 steps
ROWS, COLS, RB = 4096, 4096, 2  # softmax / rmsnorm: 2 rows x 4096 per step
ADD_ROWS, ADD_COLS, ADD_RB = 4096, 4096, 2  # 16M fp32 elements
GEMV_M, GEMV_K, GEMV_N = 16, 8192, 1024  # [16, 8192] x [8192, 1024] bf16 weights (a decode projection)
GEMV_KT, GEMV_NT = 256, 128  # per step: Left 16x256, Right 256x128 bf16 (64 KiB); one task per 128 columns
HALF_RB = 4  # fp16 softmax: 4 rows x 4096 per step (t, e and the row reductions' tmp_tile fit UB)
# The row-wise programs (softmax, RMSNorm, add) split their rows into BLOCKS independent
# tasks (`pl.parallel`, one InCore kernel call per block, as on a chip with many vector
# cores): the pool runs them on every core, as torch runs its kernels on every thread.
BLOCKS = 8
BLOCK_ROWS = ROWS // BLOCKS


@pl.jit.incore
def gemm_tile(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX]):
    ta = pl.load(a, [i * GEMM_T, 0], [GEMM_T, GEMM_T], target_memory=pl.MemorySpace.Mat)
    tb = pl.load(b, [0, j * GEMM_T], [GEMM_T, GEMM_T], target_memory=pl.MemorySpace.Mat)
    acc = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left), pl.move(tb, target_memory=pl.MemorySpace.Right))
    for k in pl.range(1, GEMM_N // GEMM_T):
        ta2 = pl.load(a, [i * GEMM_T, k * GEMM_T], [GEMM_T, GEMM_T], target_memory=pl.MemorySpace.Mat)
        tb2 = pl.load(b, [k * GEMM_T, j * GEMM_T], [GEMM_T, GEMM_T], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul_acc(acc, pl.move(ta2, target_memory=pl.MemorySpace.Left),
                            pl.move(tb2, target_memory=pl.MemorySpace.Right))
    c = pl.store(acc, [i * GEMM_T, j * GEMM_T], c)
    return c


@pl.jit
def gemm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.range(GEMM_N // GEMM_T):
        for j in pl.range(GEMM_N // GEMM_T):
            c = gemm_tile(a, b, c, i, j)
    return c


@pl.jit.incore
def gemv_tile(a: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor], j: pl.Scalar[pl.INDEX]):
    ta = pl.load(a, [0, 0], [GEMV_M, GEMV_KT], target_memory=pl.MemorySpace.Mat)
    tw = pl.load(w, [0, j * GEMV_NT], [GEMV_KT, GEMV_NT], target_memory=pl.MemorySpace.Mat)
    acc = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left), pl.move(tw, target_memory=pl.MemorySpace.Right))
    for k in pl.range(1, GEMV_K // GEMV_KT):
        ta2 = pl.load(a, [0, k * GEMV_KT], [GEMV_M, GEMV_KT], target_memory=pl.MemorySpace.Mat)
        tw2 = pl.load(w, [k * GEMV_KT, j * GEMV_NT], [GEMV_KT, GEMV_NT], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul_acc(acc, pl.move(ta2, target_memory=pl.MemorySpace.Left),
                            pl.move(tw2, target_memory=pl.MemorySpace.Right))
    c = pl.store(acc, [0, j * GEMV_NT], c)
    return c


@pl.jit
def gemv(a: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor]):
    """c[16, N] (fp32) = a[16, K] @ w[K, N] (bf16): every weight read once."""
    for j in pl.range(GEMV_N // GEMV_NT):
        c = gemv_tile(a, w, c, j)
    return c


def row_softmax(rb, dtype):
    """Row softmax over `rb` rows x COLS per step of `dtype` tensors (fp16 / bf16 tiles compute
    in fp32 per instruction and round once). The row reductions pass tmp_tile, as PyPTO
    requires on tiles: the row sum adds in a binary tree, in the dtype (docs/isa.md
    "Reduction order")."""

    @pl.jit
    def softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        for b in pl.parallel(BLOCKS):
            with pl.at(level=pl.Level.CORE_GROUP):
                for i in pl.range(BLOCK_ROWS // rb):
                    r0 = b * BLOCK_ROWS + i * rb
                    t = pl.load(x, [r0, 0], [rb, COLS])
                    tmp = pl.create_tile([rb, COLS], dtype=dtype, target_memory=pl.MemorySpace.Vec)
                    m = pl.row_max(t, tmp_tile=tmp)
                    e = pl.exp(pl.row_expand_sub(t, m))
                    s = pl.row_sum(e, tmp_tile=tmp)
                    y = pl.store(pl.row_expand_div(e, s), [r0, 0], y)
        return y

    return softmax


softmax = row_softmax(RB, pl.FP32)
softmax_half = row_softmax(HALF_RB, pl.FP16)  # the fp16 case


@pl.jit
def rmsnorm(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    for b in pl.parallel(BLOCKS):
        with pl.at(level=pl.Level.CORE_GROUP):
            wt = pl.load(w, [0, 0], [1, COLS])
            for i in pl.range(BLOCK_ROWS // RB):
                r0 = b * BLOCK_ROWS + i * RB
                t = pl.load(x, [r0, 0], [RB, COLS])
                tmp = pl.create_tile([RB, COLS], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
                ms = pl.muls(pl.row_sum(pl.mul(t, t), tmp_tile=tmp), 1.0 / COLS)
                r = pl.rsqrt(pl.adds(ms, 1e-6))
                y = pl.store(pl.col_expand_mul(pl.row_expand_mul(t, r), wt), [r0, 0], y)
    return y


@pl.jit
def add16m(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for blk in pl.parallel(BLOCKS):
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(ADD_ROWS // BLOCKS // ADD_RB):
                r0 = blk * (ADD_ROWS // BLOCKS) + i * ADD_RB
                ta = pl.load(a, [r0, 0], [ADD_RB, ADD_COLS])
                tb = pl.load(b, [r0, 0], [ADD_RB, ADD_COLS])
                c = pl.store(pl.add(ta, tb), [r0, 0], c)
    return c


@pl.jit.incore
def tiny(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.adds(pl.load(x, [0, 0], [1, 8]), 1.0), [0, 0], y)
    return y


@pl.jit
def tiny_graph(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.range(10000):
        y = tiny(x, y)
    return y


# Batched GEMM: BATCH independent 128x128x128 fp32 GEMM tasks, each followed by an add task
# that reads its result (2 * BATCH tasks; RAW edges only within a batch element).
BATCH, BT = 1000, 128


@pl.jit.incore
def batch_gemm_tile(a: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor], b: pl.Scalar[pl.INDEX]):
    ta = pl.load(a, [b * BT, 0], [BT, BT], target_memory=pl.MemorySpace.Mat)
    tw = pl.load(w, [b * BT, 0], [BT, BT], target_memory=pl.MemorySpace.Mat)
    acc = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left), pl.move(tw, target_memory=pl.MemorySpace.Right))
    c = pl.store(acc, [b * BT, 0], c)
    return c


@pl.jit.incore
def batch_add_tile(c: pl.Tensor, bias: pl.Tensor, d: pl.Out[pl.Tensor], b: pl.Scalar[pl.INDEX]):
    t = pl.add(pl.load(c, [b * BT, 0], [BT, BT]), pl.load(bias, [0, 0], [BT, BT]))
    d = pl.store(t, [b * BT, 0], d)
    return d


@pl.jit
def batched_gemm(a: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    for b in pl.range(BATCH):
        c = batch_gemm_tile(a, w, c, b)
        d = batch_add_tile(c, bias, d, b)
    return d


# The seed's vector_add lane kernel (docs/kernel-api.md), launched over 16M fp32 lanes.
VADD_N, VADD_BLOCK = 16 * 1024 * 1024, 256


@pto.kernel
def vector_add(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)
        pto.fma(o + i, a_val, b_val, 0.0)


# Decode attention written on tensors only (no tiles by hand): one pl.at scope per (sequence,
# KV head), the online softmax's running max / sum / output loop-carried tensor values over
# the cache's 128-token blocks; LowerTensorOps tiles it, CommonSubexpressions shares the
# scores between the row max and the exp. Qwen3-32B's shapes: 16 sequences, 8 KV heads of 8
# query heads, head_dim 128, 4096 cached tokens each, BF16 cache.
ATT_B, ATT_KV, ATT_G, ATT_D, ATT_S, ATT_BS = 16, 8, 8, 128, 4096, 128
ATT_SCALE = 1.0 / ATT_D ** 0.5


@pl.jit
def tensor_decode_attention(q: pl.Tensor, kc: pl.Tensor, vc: pl.Tensor, o: pl.Out[pl.Tensor]):
    """q [B * KV * G, D] (bf16), kc / vc [B * S, KV * D] (bf16), o [B * KV * G, D] (fp32)."""
    for bh in pl.parallel(0, ATT_B * ATT_KV):
        b = bh // ATT_KV
        h = bh % ATT_KV
        with pl.at(level=pl.Level.CORE_GROUP):
            r0 = bh * ATT_G
            qg = q[r0:r0 + ATT_G, :]
            m = pl.tensor.full([ATT_G, 1], dtype=pl.FP32, value=-1e30)
            l = pl.tensor.full([ATT_G, 1], dtype=pl.FP32, value=0.0)
            acc = pl.tensor.full([ATT_G, ATT_D], dtype=pl.FP32, value=0.0)
            for kb in pl.range(ATT_S // ATT_BS):
                k0 = b * ATT_S + kb * ATT_BS
                s = pl.mul(pl.matmul(qg, kc[k0:k0 + ATT_BS, h * ATT_D:(h + 1) * ATT_D], b_trans=True,
                                     out_dtype=pl.FP32), ATT_SCALE)
                new_m = pl.maximum(m, pl.row_max(s))
                p = pl.exp(pl.row_expand_sub(s, new_m))
                alpha = pl.exp(pl.sub(m, new_m))
                l = pl.add(pl.mul(alpha, l), pl.row_sum(p))
                pv = pl.matmul(pl.cast(p, pl.BF16), vc[k0:k0 + ATT_BS, h * ATT_D:(h + 1) * ATT_D], out_dtype=pl.FP32)
                acc = pl.add(pl.row_expand_mul(acc, alpha), pv)
                m = new_m
            o[r0:r0 + ATT_G, :] = pl.row_expand_div(acc, l)
    return o

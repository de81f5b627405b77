"""CommonSubexpressions: a tile op repeating an earlier one of the same statement list is
dropped and its uses read the earlier result; writes end what is known, fresh buffers and
cube-side tiles that something kept still reads are never merged. Plus a whole program: an
online softmax on tensors, whose scores LowerTensorOps computed twice."""

import numpy as np
import pypto.language as pl
from pass_text import T128, VEC64, check_pass

LEFT = "pl.Tile[[64, 128], pl.FP32, pl.Mem.Left]"
RIGHT = "pl.Tile[[128, 128], pl.FP32, pl.Mem.Right]"
MAT64 = "pl.Tile[[64, 128], pl.FP32, pl.Mem.Mat]"
MAT = "pl.Tile[[128, 128], pl.FP32, pl.Mem.Mat]"
ACC = "pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc]"


def kernel(body: str, params: str = f"a: {T128}, c: pl.Out[{T128}]") -> str:
    """An InCore function k(self, <params>) -> T128 of one program; `body` starts with a newline."""
    return f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, {params}) -> {T128}:{body}"""


def test_repeated_load_and_op_read_the_first():
    check_pass("CommonSubexpressions", kernel(f"""
                t: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                e: {VEC64} = pl.tile.exp(t)
                t_1: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                e_1: {VEC64} = pl.tile.exp(t_1)
                s: {VEC64} = pl.tile.add(e, e_1)
                c_1: {T128} = pl.tile.store(s, [0, 0], c)
                return c_1
        """), kernel(f"""
                t: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                e: {VEC64} = pl.tile.exp(t)
                s: {VEC64} = pl.tile.add(e, e)
                c_1: {T128} = pl.tile.store(s, [0, 0], c)
                return c_1
        """))


def test_different_attributes_or_operands_stay():
    same = kernel(f"""
                t: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                u: {VEC64} = pl.tile.load(a, [64, 0], [64, 128], target_memory=pl.Mem.Vec)
                x: {VEC64} = pl.tile.adds(t, 1.0)
                y: {VEC64} = pl.tile.adds(t, 2.0)
                z: {VEC64} = pl.tile.adds(u, 1.0)
                s: {VEC64} = pl.tile.add(x, y)
                s_1: {VEC64} = pl.tile.add(s, z)
                c_1: {T128} = pl.tile.store(s_1, [0, 0], c)
                return c_1
        """)
    check_pass("CommonSubexpressions", same, same)  # unchanged


def test_a_store_ends_what_is_known():
    # c is written between the two loads of c: the second reads what the store wrote.
    same = kernel(f"""
                t: {VEC64} = pl.tile.load(c, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                x: {VEC64} = pl.tile.adds(t, 1.0)
                c_1: {T128} = pl.tile.store(x, [0, 0], c)
                t_1: {VEC64} = pl.tile.load(c_1, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                t_2: {VEC64} = pl.tile.load(c, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                y: {VEC64} = pl.tile.add(t_1, t_2)
                c_2: {T128} = pl.tile.store(y, [64, 0], c_1)
                return c_2
        """, params=f"a: {T128}, c: pl.InOut[{T128}]")
    check_pass("CommonSubexpressions", same, same)  # unchanged


def test_fresh_buffers_are_not_merged():
    same = kernel(f"""
                b: {VEC64} = pl.tile.create([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)
                b_1: {VEC64} = pl.tile.create([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)
                s: {VEC64} = pl.tile.add(b, b_1)
                c_1: {T128} = pl.tile.store(s, [0, 0], c)
                return c_1
        """)
    check_pass("CommonSubexpressions", same, same)  # unchanged


def test_a_repeated_product_goes_but_a_left_tile_read_later_stays():
    # The second product is the first (dropped with its whole chain); the second Left tile
    # is read again by a later product of other operands, so it is kept rather than the
    # first Left tile kept alive across it.
    check_pass("CommonSubexpressions", kernel(f"""
                am: {MAT64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Mat)
                bm: {MAT} = pl.tile.load(b, [0, 0], [128, 128], target_memory=pl.Mem.Mat)
                l: {LEFT} = pl.tile.move(am, pl.Mem.Left)
                r: {RIGHT} = pl.tile.move(bm, pl.Mem.Right)
                m: {ACC} = pl.tile.matmul(l, r, out_dtype=pl.FP32)
                v: {VEC64} = pl.tile.move(m, pl.Mem.Vec)
                am_1: {MAT64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Mat)
                l_1: {LEFT} = pl.tile.move(am_1, pl.Mem.Left)
                m_1: {ACC} = pl.tile.matmul(l_1, r, out_dtype=pl.FP32)
                v_1: {VEC64} = pl.tile.move(m_1, pl.Mem.Vec)
                bm_2: {MAT} = pl.tile.load(b, [0, 0], [128, 128], target_memory=pl.Mem.Mat)
                bt: {MAT} = pl.tile.transpose_view(bm_2)
                r_2: {RIGHT} = pl.tile.move(bt, pl.Mem.Right)
                m_2: {ACC} = pl.tile.matmul(l_1, r_2, out_dtype=pl.FP32)
                v_2: {VEC64} = pl.tile.move(m_2, pl.Mem.Vec)
                s: {VEC64} = pl.tile.add(v, v_1)
                s_1: {VEC64} = pl.tile.add(s, v_2)
                c_1: {T128} = pl.tile.store(s_1, [0, 0], c)
                return c_1
        """, params=f"a: {T128}, b: {T128}, c: pl.Out[{T128}]"), kernel(f"""
                am: {MAT64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Mat)
                bm: {MAT} = pl.tile.load(b, [0, 0], [128, 128], target_memory=pl.Mem.Mat)
                l: {LEFT} = pl.tile.move(am, pl.Mem.Left)
                r: {RIGHT} = pl.tile.move(bm, pl.Mem.Right)
                m: {ACC} = pl.tile.matmul(l, r, out_dtype=pl.FP32, a_trans=False, b_trans=False)
                v: {VEC64} = pl.tile.move(m, pl.Mem.Vec)
                am_1: {MAT64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Mat)
                l_1: {LEFT} = pl.tile.move(am_1, pl.Mem.Left)
                bm_2: {MAT} = pl.tile.load(b, [0, 0], [128, 128], target_memory=pl.Mem.Mat)
                bt: {MAT} = pl.tile.transpose_view(bm_2)
                r_2: {RIGHT} = pl.tile.move(bt, pl.Mem.Right)
                m_2: {ACC} = pl.tile.matmul(l_1, r_2, out_dtype=pl.FP32, a_trans=False, b_trans=False)
                v_2: {VEC64} = pl.tile.move(m_2, pl.Mem.Vec)
                s: {VEC64} = pl.tile.add(v, v)
                s_1: {VEC64} = pl.tile.add(s, v_2)
                c_1: {T128} = pl.tile.store(s_1, [0, 0], c)
                return c_1
        """, params=f"a: {T128}, b: {T128}, c: pl.Out[{T128}]"))


B, G, D, S, BS = 2, 8, 64, 256, 64


@pl.jit
def online_softmax(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
    for b in pl.parallel(0, B):
        with pl.at(level=pl.Level.CORE_GROUP):
            qb = q[b * G:(b + 1) * G, :]
            m = pl.tensor.full([G, 1], dtype=pl.FP32, value=-1e30)
            l = pl.tensor.full([G, 1], dtype=pl.FP32, value=0.0)
            acc = pl.tensor.full([G, D], dtype=pl.FP32, value=0.0)
            for kb in pl.range(S // BS):
                k0 = b * S + kb * BS
                s = pl.matmul(qb, k[k0:k0 + BS, :], b_trans=True, out_dtype=pl.FP32)
                new_m = pl.maximum(m, pl.row_max(s))
                p = pl.exp(pl.row_expand_sub(s, new_m))
                alpha = pl.exp(pl.sub(m, new_m))
                l = pl.add(pl.mul(alpha, l), pl.row_sum(p))
                acc = pl.add(pl.row_expand_mul(acc, alpha), pl.matmul(p, v[k0:k0 + BS, :], out_dtype=pl.FP32))
                m = new_m
            o[b * G:(b + 1) * G, :] = pl.row_expand_div(acc, l)
    return o


def test_online_softmax_computes_its_scores_once():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((B * G, D)).astype(np.float32) * 0.2
    k, v = (rng.standard_normal((B * S, D)).astype(np.float32) for _ in range(2))
    o = np.zeros((B * G, D), np.float32)
    text = str(online_softmax.lower(q, k, v, o))
    assert text.count("pl.tile.matmul(") == 2, text  # q k^T once (the row max's and the exp's), p v once
    online_softmax(q, k, v, o)
    for b in range(B):
        s = q[b * G:(b + 1) * G] @ k[b * S:(b + 1) * S].T
        p = np.exp(s - s.max(axis=1, keepdims=True))
        want = (p / p.sum(axis=1, keepdims=True)) @ v[b * S:(b + 1) * S]
        np.testing.assert_allclose(o[b * G:(b + 1) * G], want, rtol=1e-4, atol=1e-5)


def test_a_repeated_reduction_walk_goes():
    # Two walks of the same row blocks (LowerTensorOps writes one per tensor-level statement
    # that reads the reduction): the second loop, its own Vars matched one to one, is dropped.
    row = "pl.Tile[[64, 1], pl.FP32, pl.Mem.Vec]"
    walk = """
                for rj{n}, (part{n},) in pl.range(1, 4, 1, init_values=(m,)):
                    tw{n}: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, rj{n} * 32], [64, 32], target_memory=pl.Mem.Vec)
                    r{n}: {row} = pl.tile.row_max(tw{n})
                    nxt{n}: {row} = pl.tile.maximum(part{n}, r{n})
                    red{n} = pl.yield_(nxt{n})"""
    head = kernel(f"""
                t: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Vec)
                m: {row} = pl.tile.row_max(t)""")
    tail = f"""
                c_1: {T128} = pl.tile.store(s, [0, 0], c)
                return c_1
        """
    twice = walk.format(n="", row=row) + walk.format(n="_1", row=row)
    check_pass("CommonSubexpressions", head + twice + f"""
                s: {row} = pl.tile.add(red, red_1)""" + tail, head + walk.format(n="", row=row) + f"""
                s: {row} = pl.tile.add(red, red)""" + tail)


def test_fills_from_scalars_stay_apart():
    # Two accumulators set to zero start two loop-carried values: shared, the one fill would
    # need a copy for each carry (InsertCarryCopies), which costs more than the second fill.
    same = kernel(f"""
                z: {VEC64} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                z_1: {VEC64} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                for i, (s, q) in pl.range(0, 2, 1, init_values=(z, z_1)):
                    t: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    s_1: {VEC64} = pl.tile.add(s, t)
                    m: {VEC64} = pl.tile.mul(t, t)
                    q_1: {VEC64} = pl.tile.add(q, m)
                    s_2, q_2 = pl.yield_(s_1, q_1)
                d: {VEC64} = pl.tile.sub(q_2, s_2)
                c_1: {T128} = pl.tile.store(d, [0, 0], c)
                return c_1
        """)
    check_pass("CommonSubexpressions", same, same)  # unchanged

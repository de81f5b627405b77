"""InsertCarryCopies: a yielded tile is copied before the yield when the carried tile is
still read after the yielded value is computed (it would share the carried tile's address)."""

import numpy as np
import pytest
import pypto.language as pl
from pass_text import T128, check_pass, run_pass
from pypto import _core

COL = "pl.Tile[[64, 1], pl.FP32, pl.Mem.Vec]"
TILE = "pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec]"


def test_carried_tile_read_after_next_value_gets_a_copy():
    body = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {A}, c: pl.Out[{T}]) -> {T}:
                m0: {C} = pl.tile.full([64, 1], dtype=pl.FP32, value=0.0)
                for i, (m,) in pl.range(0, 2, 1, init_values=(m0,)):
                    t: {X} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    r: {C} = pl.tile.row_max(t)
                    m_new: {C} = pl.tile.maximum(m, r)
                    d: {C} = pl.tile.sub(m, m_new)@COPY@
                    m_1 = pl.yield_({Y})
                c_1: {T} = pl.tile.store(m_1, [0, 0], c)
                return c_1
        """
    fill = dict(A=T128, T=T128.replace("128, 128", "64, 1"), C=COL, X=TILE)
    before = body.format(Y="m_new", **fill).replace("@COPY@", "")
    copy = f"\n                    m_new_carry: {COL} = pl.tile.move(m_new, pl.Mem.Vec)"
    after = body.format(Y="m_new_carry", **fill).replace("@COPY@", copy)
    check_pass("InsertCarryCopies", before, after)


def test_next_value_computed_after_last_read_needs_no_copy():
    text = f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                z: {TILE} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                for i, (acc,) in pl.range(0, 2, 1, init_values=(z,)):
                    t: {TILE} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    acc_1: {TILE} = pl.tile.add(acc, t)
                    acc_2 = pl.yield_(acc_1)
                c_1: {T128} = pl.tile.store(acc_2, [0, 0], c)
                return c_1
        """
    check_pass("InsertCarryCopies", text, text)


@pl.jit
def running_max_gap(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    # y accumulates (m_old - m_new) over row blocks: wrong (all zero) if m_new overwrote m.
    with pl.at(level=pl.Level.CORE_GROUP):
        m = pl.full([16, 1], dtype=pl.FP32, value=0.0)
        gap = pl.full([16, 1], dtype=pl.FP32, value=0.0)
        for j in pl.range(4):
            t = pl.load(x, [0, j * 32], [16, 32])
            m_new = pl.maximum(m, pl.row_max(t))
            gap = pl.add(gap, pl.sub(m_new, m))
            m = m_new
        y = pl.store(pl.sub(gap, m), [0, 0], y)
    return y


def test_running_max_end_to_end():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((16, 128), dtype=np.float32) + np.arange(128, dtype=np.float32) / 16
    y = np.zeros((16, 1), np.float32)
    running_max_gap(x, y)
    m = np.zeros((16, 1), np.float32)
    gap = np.zeros((16, 1), np.float32)
    for j in range(4):
        m_new = np.maximum(m, x[:, j * 32:(j + 1) * 32].max(axis=1, keepdims=True))
        gap += m_new - m
        m = m_new
    np.testing.assert_allclose(y, gap - m, rtol=1e-5, atol=1e-5)
    assert np.abs(gap).max() > 1  # the gaps are not trivially zero


# --- A carried tile replaced in one arm of a branch and read before that in the other ---------

ACC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc]"
MAT = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat]"
T64 = "pl.Tensor[[64, 64], pl.FP32]"
GEMM = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 256], pl.FP32], w: pl.Tensor[[256, 64], pl.FP32], out: pl.Out[{T}]) -> {T}:
                acc: {A} = pl.tile.create([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
                for k, (acc_1,) in pl.range(0, 4, 1, init_values=(acc,)):
                    a: {M} = pl.tile.load(x, [0, k * 64], [64, 64], target_memory=pl.Mem.Mat)
                    b: {M} = pl.tile.load(w, [k * 64, 0], [64, 64], target_memory=pl.Mem.Mat)
                    if k == 0:
                        lhs: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(a, pl.Mem.Left)
                        rhs: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(b, pl.Mem.Right)
                        acc_2: {A} = pl.tile.matmul(lhs, rhs, out_dtype=pl.FP32, a_trans=False, b_trans=False)
                        acc_3 = pl.yield_(acc_2)
                    else:
                        lhs_1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(a, pl.Mem.Left)
                        rhs_1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(b, pl.Mem.Right)
                        acc_4: {A} = pl.tile.matmul_acc(acc_1, lhs_1, rhs_1){EXTRA}
                        acc_3 = pl.yield_(acc_4)
                    acc_5 = pl.yield_(acc_3)
                out_1: {T} = pl.tile.store(acc_5, [0, 0], out)
                return out_1
        """


def test_acc_replaced_in_one_arm_and_accumulated_in_the_other_needs_no_copy():
    # The branch result is one value: the carried Acc tile is read only in the else arm, by
    # the matmul_acc that replaces it, so the two share L0C and nothing is copied.
    text = GEMM.format(T=T64, A=ACC, M=MAT, EXTRA="")
    check_pass("InsertCarryCopies", text, text)


def test_acc_read_after_its_replacement_in_an_arm_is_still_a_conflict():
    extra = "\n                        late: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.move(acc_1, pl.Mem.Vec)"
    with pytest.raises(_core.PyptoError, match="loop-carried tile 'acc_1' is read after its next value 'acc_3'"):
        run_pass("InsertCarryCopies", GEMM.format(T=T64, A=ACC, M=MAT, EXTRA=extra))


BRANCH = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {A}, c: pl.Out[{A}]) -> {A}:
                z: {X} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                for i, (s,) in pl.range(0, 2, 1, init_values=(z,)):
                    t: {X} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    if i == 0:
                        s_1: {X} = pl.tile.add(s, t){THEN}
                        s_2 = pl.yield_(s_1)
                    else:
                        s_2 = pl.yield_(s)
                    {COPY}s_3 = pl.yield_({Y})
                c_1: {A} = pl.tile.store(s_3, [0, 0], c)
                return c_1
        """


def test_vec_tile_read_after_its_replacement_in_an_arm_gets_a_copy():
    # The then arm reads `s` after computing its replacement s_1 (which takes s's address):
    # a real conflict, so the branch result is copied before the yield.
    fill = dict(A=T128, X=TILE, THEN="\n                        d: {X} = pl.tile.sub(s, s_1)".format(X=TILE))
    before = BRANCH.format(COPY="", Y="s_2", **fill)
    after = BRANCH.format(COPY=f"s_2_carry: {TILE} = pl.tile.move(s_2, pl.Mem.Vec)\n                    ",
                          Y="s_2_carry", **fill)
    check_pass("InsertCarryCopies", before, after)


def test_vec_tile_passed_through_one_arm_needs_no_copy():
    text = BRANCH.format(A=T128, X=TILE, THEN="", COPY="", Y="s_2")
    check_pass("InsertCarryCopies", text, text)

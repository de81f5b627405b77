"""InferMemory: operands are put in the memories their consumers read (pass text in, pass
text out): cube-only loads go to Mat and move to Left/Right, a matmul result read by a
vector op moves Acc -> Vec, a vector result read by the cube goes Vec -> Mat -> Left, and
operands already in place are left alone."""

import pytest
from pass_text import check_pass, run_pass
from pypto import _core

A = "pl.Tensor[[32, 32], pl.FP32]"


def tile(mem):
    return f"pl.Tile[[32, 32], pl.FP32, pl.Mem.{mem}]"


def test_cube_only_loads_go_to_mat_and_the_result_moves_to_vec():
    check_pass("InferMemory", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {A}, c: pl.Out[{A}]) -> {A}:
                x: {tile("Vec")} = pl.tile.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Vec)
                m: {tile("Acc")} = pl.tile.matmul(x, x, out_dtype=pl.FP32, a_trans=False, b_trans=False)
                e: {tile("Vec")} = pl.tile.exp(m)
                c_1: {A} = pl.tile.store(e, [0, 0], c)
                return c_1
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {A}, c: pl.Out[{A}]) -> {A}:
                x: {tile("Mat")} = pl.tile.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
                m: {tile("Acc")} = pl.tile.matmul(pl.tile.move(x, pl.Mem.Left), pl.tile.move(x, pl.Mem.Right), out_dtype=pl.FP32, a_trans=False, b_trans=False)
                e: {tile("Vec")} = pl.tile.exp(pl.tile.move(m, pl.Mem.Vec))
                c_1: {A} = pl.tile.store(e, [0, 0], c)
                return c_1
        """)


def test_a_vector_result_reaches_the_cube_through_mat():
    check_pass("InferMemory", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {A}, c: pl.Out[{A}]) -> {A}:
                x: {tile("Vec")} = pl.tile.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Vec)
                e: {tile("Vec")} = pl.tile.exp(x)
                m: {tile("Acc")} = pl.tile.matmul(e, x, out_dtype=pl.FP32, a_trans=False, b_trans=False)
                c_1: {A} = pl.tile.store(m, [0, 0], c)
                return c_1
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {A}, c: pl.Out[{A}]) -> {A}:
                x: {tile("Vec")} = pl.tile.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Vec)
                e: {tile("Vec")} = pl.tile.exp(x)
                m: {tile("Acc")} = pl.tile.matmul(pl.tile.move(pl.tile.move(e, pl.Mem.Mat), pl.Mem.Left), pl.tile.move(pl.tile.move(x, pl.Mem.Mat), pl.Mem.Right), out_dtype=pl.FP32, a_trans=False, b_trans=False)
                c_1: {A} = pl.tile.store(m, [0, 0], c)
                return c_1
        """)


def test_operands_already_in_place_are_left_alone():
    text = f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {A}, c: pl.Out[{A}]) -> {A}:
                x: {tile("Mat")} = pl.tile.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
                l: {tile("Left")} = pl.tile.move(x, pl.Mem.Left)
                r: {tile("Right")} = pl.tile.move(x, pl.Mem.Right)
                m: {tile("Acc")} = pl.tile.matmul(l, r, out_dtype=pl.FP32, a_trans=False, b_trans=False)
                c_1: {A} = pl.tile.store(m, [0, 0], c)
                return c_1
        """
    check_pass("InferMemory", text, text)


def test_an_operand_no_move_reaches_is_rejected_when_written():
    with pytest.raises(_core.PyptoError, match="is a Right tile; the cube reads it from Left"):
        run_pass("InferMemory", f"""
            @pl.program
            class p:
                @pl.function(type=pl.FunctionType.InCore)
                def k(self, a: {A}, c: pl.Out[{A}]) -> {A}:
                    x: {tile("Mat")} = pl.tile.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
                    r: {tile("Right")} = pl.tile.move(x, pl.Mem.Right)
                    m: {tile("Acc")} = pl.tile.matmul(r, r, out_dtype=pl.FP32, a_trans=False, b_trans=False)
                    c_1: {A} = pl.tile.store(m, [0, 0], c)
                    return c_1
            """)

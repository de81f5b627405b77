"""ExpandOps: composite ops (no single PTO instruction) become single-instruction op calls on
fresh values before memory planning; and PlanMemory's placement of the two tiles that
sort32 returns (one block, the index tile after the value tile)."""

import pypto.language as pl
from pass_text import check_pass, program_text, run_pass
from pypto import ir

T = "pl.Tensor[[4, 64], pl.FP32]"
TI = "pl.Tensor[[8, 32], pl.INT32]"
V = "pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec]"
VI = "pl.Tile[[4, 64], pl.INT32, pl.Mem.Vec]"
ONE = "pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]"
ROW = "pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec]"


def test_fmods_is_one_instruction_and_stays():
    """pl.tile.fmods is TFMODS: ExpandOps leaves it as it is (it was a fill then TFMOD)."""
    check_pass("ExpandOps", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, v: pl.Out[{T}]) -> {T}:
                t: {V} = pl.tile.load(a, [0, 0], [4, 64], target_memory=pl.Mem.Vec)
                f: {V} = pl.tile.fmods(t, 2.0)
                v_1: {T} = pl.tile.store(f, [0, 0], v)
                return v_1
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, v: pl.Out[{T}]) -> {T}:
                t: {V} = pl.tile.load(a, [0, 0], [4, 64], target_memory=pl.Mem.Vec)
                f: {V} = pl.tile.fmods(t, 2.0)
                v_1: {T} = pl.tile.store(f, [0, 0], v)
                return v_1
        """)


def test_expand_clone_of_one_element_takes_two_broadcasts_and_a_column_one():
    check_pass("ExpandOps", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, v: pl.Out[{T}]) -> {T}:
                t: {V} = pl.tile.load(a, [0, 0], [4, 64], target_memory=pl.Mem.Vec)
                one: {ONE} = pl.tile.row_max(pl.tile.col_max(t))
                b: {V} = pl.tile.expand_clone(one, [4, 64])
                c: {V} = pl.tile.expand_clone(pl.tile.col_max(t), [4, 64])
                v_1: {T} = pl.tile.store(pl.tile.add(b, c), [0, 0], v)
                return v_1
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, v: pl.Out[{T}]) -> {T}:
                t: {V} = pl.tile.load(a, [0, 0], [4, 64], target_memory=pl.Mem.Vec)
                one: {ONE} = pl.tile.row_max(pl.tile.col_max(t))
                row: {ROW} = pl.tile.expand_clone(one, [1, 64])
                b: {V} = pl.tile.expand_clone(row, [4, 64])
                c: {V} = pl.tile.expand_clone(pl.tile.col_max(t), [4, 64])
                v_1: {T} = pl.tile.store(pl.tile.add(b, c), [0, 0], v)
                return v_1
        """)


def test_sin_becomes_vector_instructions_only():
    result = run_pass("ExpandOps", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, v: pl.Out[{T}]) -> {T}:
                t: {V} = pl.tile.load(a, [0, 0], [4, 64], target_memory=pl.Mem.Vec)
                s: {V} = pl.tile.sin(t)
                v_1: {T} = pl.tile.store(s, [0, 0], v)
                return v_1
        """)
    text = ir.print_program(result)
    assert "pl.tile.sin" not in text
    ops = [line.split("= pl.tile.")[1].split("(")[0] for line in text.splitlines() if "= pl.tile." in line]
    assert ops[0] == "load" and ops[-1] == "store"
    assert set(ops[1:-1]) == {"muls", "adds", "cast", "sub", "mul", "add", "ands"}
    assert "s: " + V + " = pl.tile.mul(trig_sinr, trig_sign_2)" in text  # the result keeps its name
    assert ir.structural_equal(result, pl.parse(text))


def test_orchestration_functions_and_plain_ops_are_left_alone():
    text = f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, v: pl.Out[{T}]) -> {T}:
                t: {V} = pl.tile.load(a, [0, 0], [4, 64], target_memory=pl.Mem.Vec)
                v_1: {T} = pl.tile.store(pl.tile.exp(t), [0, 0], v)
                return v_1
        """
    before = pl.parse(program_text(text))
    assert run_pass("ExpandOps", text) is not None
    assert ir.print_program(run_pass("ExpandOps", text)) == ir.print_program(before)


def test_plan_memory_places_the_two_results_of_sort32_as_one_block():
    # t: 1024 B at 0. The tuple needs 2048 B while t is live: values at 1024, indices right
    # after at 2048; names bound to its tiles and views of them take their tile's address.
    check_pass("PlanMemory", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, v: pl.Out[{T}], i: pl.Out[{TI}]):
                t: {V} = pl.tile.load(a, [0, 0], [4, 64], target_memory=pl.Mem.Vec)
                vals_idx: pl.Tuple[{V}, {VI}] = pl.tile.sort32(t)
                vals: {V} = vals_idx[0]
                idx: {VI} = vals_idx[1]
                r: pl.Tile[[8, 32], pl.INT32, pl.Mem.Vec] = pl.tile.reshape(idx, [8, 32])
                e: {V} = pl.tile.exp(vals)
                pl.tile.store(e, [0, 0], v)
                pl.tile.store(r, [0, 0], i)
                return
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, v: pl.Out[{T}], i: pl.Out[{TI}]):
                t: pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec, pl.Addr(0)] = pl.tile.load(a, [0, 0], [4, 64], target_memory=pl.Mem.Vec)
                vals_idx: pl.Tuple[pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec, pl.Addr(1024)], pl.Tile[[4, 64], pl.INT32, pl.Mem.Vec, pl.Addr(2048)]] = pl.tile.sort32(t)
                vals: pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec, pl.Addr(1024)] = vals_idx[0]
                idx: pl.Tile[[4, 64], pl.INT32, pl.Mem.Vec, pl.Addr(2048)] = vals_idx[1]
                r: pl.Tile[[8, 32], pl.INT32, pl.Mem.Vec, pl.Addr(2048)] = pl.tile.reshape(idx, [8, 32])
                e: pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec, pl.Addr(0)] = pl.tile.exp(vals)
                pl.tile.store(e, [0, 0], v)
                pl.tile.store(r, [0, 0], i)
                return
        """)

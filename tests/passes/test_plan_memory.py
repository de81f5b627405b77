"""PlanMemory: tile addresses per buffer (32-byte aligned, reused when lifetimes don't
overlap, shared by loop-carried groups) and capacity errors naming the buffer."""

import pytest
from pass_text import T128, VEC64, check_pass, run_pass
from pypto import _core


def vec(addr):
    return f"pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec, pl.Addr({addr})]"


def test_dead_tiles_bytes_are_reused():
    # 64x128 fp32 = 32768 B. ta, tb, mul overlap; ta and tb die at mul, so adds reuses 0.
    check_pass("PlanMemory", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                ta: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                tb: {VEC64} = pl.tile.load(a, [64, 0], [64, 128], target_memory=pl.Mem.Vec)
                mul: {VEC64} = pl.tile.mul(ta, tb)
                adds: {VEC64} = pl.tile.adds(mul, 1.0)
                c_1: {T128} = pl.tile.store(adds, [0, 0], c)
                return c_1
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                ta: {vec(0)} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                tb: {vec(32768)} = pl.tile.load(a, [64, 0], [64, 128], target_memory=pl.Mem.Vec)
                mul: {vec(65536)} = pl.tile.mul(ta, tb)
                adds: {vec(0)} = pl.tile.adds(mul, 1.0)
                c_1: {T128} = pl.tile.store(adds, [0, 0], c)
                return c_1
        """)


def test_loop_carried_tiles_share_one_address():
    check_pass("PlanMemory", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                full: {VEC64} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                for i, (acc,) in pl.range(0, 2, 1, init_values=(full,)):
                    t: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    add: {VEC64} = pl.tile.add(acc, t)
                    acc_1 = pl.yield_(add)
                c_1: {T128} = pl.tile.store(acc_1, [0, 0], c)
                return c_1
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                full: {vec(0)} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                for i, (acc,) in pl.range(0, 2, 1, init_values=(full,)):
                    t: {vec(32768)} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    add: {vec(0)} = pl.tile.add(acc, t)
                    acc_1 = pl.yield_(add)
                c_1: {T128} = pl.tile.store(acc_1, [0, 0], c)
                return c_1
        """)


def test_each_buffer_has_its_own_address_space():
    T64 = "pl.Tensor[[64, 64], pl.FP32]"

    def tile(mem, addr=None):
        a = "" if addr is None else f", pl.Addr({addr})"
        return f"pl.Tile[[64, 64], pl.FP32, pl.Mem.{mem}{a}]"

    def body(m, l, r, acc):
        return f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T64}, b: {T64}, c: pl.Out[{T64}]) -> {T64}:
                ta: {m[0]} = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                tb: {m[1]} = pl.tile.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                left: {l} = pl.tile.move(ta, pl.Mem.Left)
                right: {r} = pl.tile.move(tb, pl.Mem.Right)
                acc: {acc} = pl.tile.matmul(left, right, out_dtype=pl.FP32, a_trans=False, b_trans=False)
                c_1: {T64} = pl.tile.store(acc, [0, 0], c)
                return c_1
        """

    before = body([tile("Mat"), tile("Mat")], tile("Left"), tile("Right"), tile("Acc"))
    after = body([tile("Mat", 0), tile("Mat", 16384)], tile("Left", 0), tile("Right", 0), tile("Acc", 0))
    check_pass("PlanMemory", before, after)


BIG = """
    @pl.program
    class p:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[256, 256], pl.FP32], c: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
            t: pl.Tile[[256, 256], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [256, 256], target_memory=pl.Mem.Vec)
            c_1: pl.Tensor[[256, 256], pl.FP32] = pl.tile.store(t, [0, 0], c)
            return c_1
    """


def test_tile_over_capacity_names_buffer_and_limit():
    # 256x256 fp32 = 262144 B: over a2a3sim's 192 KiB UB, exactly a5sim's 256 KiB.
    with pytest.raises(_core.PyptoError, match=r"needs 262144 bytes of Vec \(UB\) but the a2a3sim chip has 196608"):
        run_pass("PlanMemory", BIG, platform="a2a3sim")
    out = run_pass("PlanMemory", BIG, platform="a5sim")
    assert "pl.Addr(0)" in _core.ir.print_program(out)

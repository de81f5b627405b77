"""OutlineIncore: pl.at scopes become InCore/AIC/AIV functions and calls of them."""

import pytest
from pass_text import T128, VEC64, check_pass, run_pass
from pypto import _core


def test_scope_with_loop_carried_output_becomes_out_param():
    check_pass("OutlineIncore", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                with pl.at(level=pl.Level.CORE_GROUP):
                    for i, (c_1,) in pl.range(0, 2, 1, init_values=(c,)):
                        ta: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                        c_2: {T128} = pl.tile.store(pl.tile.exp(ta), [i * 64, 0], c_1)
                        c_3 = pl.yield_(c_2)
                return c_3
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                c_3: {T128} = self.main_incore_0(c, a)
                return c_3

            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, c: pl.Out[{T128}], a: {T128}) -> {T128}:
                for i, (c_1,) in pl.range(0, 2, 1, init_values=(c,)):
                    ta: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    c_2: {T128} = pl.tile.store(pl.tile.exp(ta), [i * 64, 0], c_1)
                    c_3 = pl.yield_(c_2)
                return c_3
        """)


def test_read_and_written_tensor_is_inout_and_levels_pick_function_type():
    check_pass("OutlineIncore", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.InOut[{T128}]) -> {T128}:
                with pl.at(level=pl.Level.AIV):
                    t: {VEC64} = pl.tile.load(x, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                    x_1: {T128} = pl.tile.store(pl.tile.neg(t), [64, 0], x)
                with pl.at(level=pl.Level.AIV):
                    u: {VEC64} = pl.tile.load(x_1, [64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    x_2: {T128} = pl.tile.store(u, [0, 0], x_1)
                return x_2
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.InOut[{T128}]) -> {T128}:
                x_1: {T128} = self.main_incore_0(x)
                x_2: {T128} = self.main_incore_1(x_1)
                return x_2

            @pl.function(type=pl.FunctionType.AIV)
            def main_incore_0(self, x: pl.InOut[{T128}]) -> {T128}:
                t: {VEC64} = pl.tile.load(x, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                x_1: {T128} = pl.tile.store(pl.tile.neg(t), [64, 0], x)
                return x_1

            @pl.function(type=pl.FunctionType.AIV)
            def main_incore_1(self, x_1: pl.InOut[{T128}]) -> {T128}:
                u: {VEC64} = pl.tile.load(x_1, [64, 0], [64, 128], target_memory=pl.Mem.Vec)
                x_2: {T128} = pl.tile.store(u, [0, 0], x_1)
                return x_2
        """)


def test_program_without_scopes_is_unchanged():
    text = f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                t: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                c_1: {T128} = pl.tile.store(t, [0, 0], c)
                return c_1

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                c_1: {T128} = self.k(a, c)
                return c_1
        """
    check_pass("OutlineIncore", text, text)


def test_tile_used_after_scope_is_a_user_error():
    with pytest.raises(_core.PyptoError, match="tiles cannot leave a core"):
        run_pass("OutlineIncore", f"""
            @pl.program
            class p:
                @pl.function(type=pl.FunctionType.Orchestration)
                def main(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                    with pl.at(level=pl.Level.CORE_GROUP):
                        t: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                    c_1: {T128} = pl.tile.store(t, [0, 0], c)
                    return c_1
            """)


def test_unknown_pass_name_lists_the_pipeline():
    with pytest.raises(_core.PyptoError, match="OutlineIncore, PassValidRegions, SplitAiv, LowerTensorOps, InferMemory, Unroll, Simplify, FlattenCalls"):
        run_pass("NoSuchPass", """
            @pl.program
            class p:
                @pl.function(type=pl.FunctionType.Orchestration)
                def main(self):
                    return
            """)

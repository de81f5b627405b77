"""FlattenCalls: nested op calls become assignments to fresh values, in evaluation order."""

from pass_text import T128, VEC64, check_pass


def test_nested_calls_are_named_innermost_first():
    check_pass("FlattenCalls", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                t: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                c_1: {T128} = pl.tile.store(pl.tile.adds(pl.tile.mul(t, t), 1.0), [0, 0], c)
                return c_1
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                t: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                mul: {VEC64} = pl.tile.mul(t, t)
                adds: {VEC64} = pl.tile.adds(mul, 1.0)
                c_1: {T128} = pl.tile.store(adds, [0, 0], c)
                return c_1
        """)


def test_yielded_and_init_values_are_named():
    check_pass("FlattenCalls", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                for i, (acc,) in pl.range(0, 2, 1, init_values=(pl.tile.full([64, 128], dtype=pl.FP32, value=0.0),)):
                    t: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    acc_1 = pl.yield_(pl.tile.add(acc, t))
                c_1: {T128} = pl.tile.store(acc_1, [0, 0], c)
                return c_1
        """, f"""
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
        """)


def test_flat_program_is_unchanged():
    text = f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, c: pl.Out[{T128}]) -> {T128}:
                t: {VEC64} = pl.tile.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Vec)
                e: {VEC64} = pl.tile.exp(t)
                c_1: {T128} = pl.tile.store(e, [0, 0], c)
                return c_1
        """
    check_pass("FlattenCalls", text, text)

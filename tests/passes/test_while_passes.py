"""Passes on while loops (printed `for (...) in pl.while_(...)` with `pl.cond` first), as
MLIR-style text in / text out: OutlineIncore sees writes to a tensor carried through a while,
FlattenCalls names init values and body calls but leaves the condition in place,
InsertCarryCopies copies a carried tile read after its next value, PlanMemory keeps a tile
used in a while body live until the loop ends, Simplify folds the condition."""

from pass_text import T128, VEC64, check_pass

N = "pl.Scalar[pl.INDEX]"


def vec(addr):
    return f"pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec, pl.Addr({addr})]"


def test_outline_incore_tensor_carried_through_a_while_is_an_out_param():
    check_pass("OutlineIncore", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {T128}, n: {N}, c: pl.Out[{T128}]) -> {T128}:
                with pl.at(level=pl.Level.CORE_GROUP):
                    for (c_1, i) in pl.while_(init_values=(c, 0)):
                        pl.cond(i < n)
                        ta: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                        c_2: {T128} = pl.tile.store(ta, [i * 64, 0], c_1)
                        c_3, i_1 = pl.yield_(c_2, i + 1)
                return c_3
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {T128}, n: {N}, c: pl.Out[{T128}]) -> {T128}:
                c_3: {T128} = self.main_incore_0(c, n, a)
                return c_3

            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, c: pl.Out[{T128}], n: {N}, a: {T128}) -> {T128}:
                for (c_1, i) in pl.while_(init_values=(c, 0)):
                    pl.cond(i < n)
                    ta: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    c_2: {T128} = pl.tile.store(ta, [i * 64, 0], c_1)
                    c_3, i_1 = pl.yield_(c_2, i + 1)
                return c_3
        """)


def test_outline_incore_scope_inside_an_orchestration_while():
    check_pass("OutlineIncore", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {T128}, n: {N}, c: pl.Out[{T128}]) -> {T128}:
                for (c_1, i) in pl.while_(init_values=(c, 0)):
                    pl.cond(i < n)
                    with pl.at(level=pl.Level.CORE_GROUP):
                        ta: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                        c_2: {T128} = pl.tile.store(ta, [i * 64, 0], c_1)
                    c_3, i_1 = pl.yield_(c_2, i + 1)
                return c_3
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {T128}, n: {N}, c: pl.Out[{T128}]) -> {T128}:
                for (c_1, i) in pl.while_(init_values=(c, 0)):
                    pl.cond(i < n)
                    c_2: {T128} = self.main_incore_0(a, i, c_1)
                    c_3, i_1 = pl.yield_(c_2, i + 1)
                return c_3

            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, a: {T128}, i: {N}, c_1: pl.Out[{T128}]) -> {T128}:
                ta: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                c_2: {T128} = pl.tile.store(ta, [i * 64, 0], c_1)
                return c_2
        """)


def test_flatten_calls_names_init_values_and_body_calls_not_the_condition():
    check_pass("FlattenCalls", f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, w: {T128}, c: pl.Out[{T128}]) -> {T128}:
                for (acc, i) in pl.while_(init_values=(pl.tile.full([64, 128], dtype=pl.FP32, value=0.0), 0)):
                    pl.cond(pl.tensor.read(w, [i, 0]) > 0.0)
                    acc_1: {VEC64} = pl.tile.add(acc, pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec))
                    acc_2, i_1 = pl.yield_(acc_1, i + 1)
                c_1: {T128} = pl.tile.store(acc_2, [0, 0], c)
                return c_1
        """, f"""
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T128}, w: {T128}, c: pl.Out[{T128}]) -> {T128}:
                full: {VEC64} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                for (acc, i) in pl.while_(init_values=(full, 0)):
                    pl.cond(pl.tensor.read(w, [i, 0]) > 0.0)
                    load: {VEC64} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    acc_1: {VEC64} = pl.tile.add(acc, load)
                    acc_2, i_1 = pl.yield_(acc_1, i + 1)
                c_1: {T128} = pl.tile.store(acc_2, [0, 0], c)
                return c_1
        """)


def test_insert_carry_copies_in_a_while_body():
    body = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, n: {N}, c: pl.Out[{T}]) -> {T}:
                z: {V} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                for (m, i) in pl.while_(init_values=(z, 0)):
                    pl.cond(i < n)
                    t: {V} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    m_new: {V} = pl.tile.maximum(m, t)
                    d: {V} = pl.tile.sub(m, m_new)@COPY@
                    m_1, i_1 = pl.yield_({Y}, i + 1)
                c_1: {T} = pl.tile.store(m_1, [0, 0], c)
                return c_1
        """
    fill = {"T": T128, "V": VEC64, "N": N}
    copy = f"\n                    m_new_carry: {VEC64} = pl.tile.move(m_new, pl.Mem.Vec)"
    check_pass("InsertCarryCopies", body.format(Y="m_new", **fill).replace("@COPY@", ""),
               body.format(Y="m_new_carry", **fill).replace("@COPY@", copy))


def test_plan_memory_keeps_a_tile_read_in_a_while_body_live_to_the_loop_end():
    # `scale` is last read by `u`, but the next iteration reads it again: `v`, defined after
    # that read, must not take its bytes. The carried group (z, acc, acc_1, r) shares one address.
    body = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {T}, n: {N}, c: pl.Out[{T}]) -> {T}:
                scale: {S} = pl.tile.full([64, 128], dtype=pl.FP32, value=2.0)
                z: {Z} = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
                for (acc, i) in pl.while_(init_values=(z, 0)):
                    pl.cond(i < n)
                    t: {TT} = pl.tile.load(a, [i * 64, 0], [64, 128], target_memory=pl.Mem.Vec)
                    u: {U} = pl.tile.mul(t, scale)
                    v: {W} = pl.tile.adds(u, 1.0)
                    acc_1: {Z} = pl.tile.add(acc, v)
                    r, i_1 = pl.yield_(acc_1, i + 1)
                c_1: {T} = pl.tile.store(r, [0, 0], c)
                return c_1
        """
    before = body.format(T=T128, N=N, S=VEC64, Z=VEC64, TT=VEC64, U=VEC64, W=VEC64)
    after = body.format(T=T128, N=N, S=vec(0), Z=vec(32768), TT=vec(65536), U=vec(98304), W=vec(65536))
    check_pass("PlanMemory", before, after)


def test_simplify_folds_the_condition_and_drops_dead_values_in_the_body():
    body = """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, n: {N}) -> {N}:
                for (i,) in pl.while_(init_values=(0,)):
                    pl.cond(i < {BOUND}){DEAD}
                    i_1 = pl.yield_(i + 1)
                return i_1
        """
    check_pass("Simplify", body.format(N=N, BOUND="n * 1", DEAD=f"\n                    d: {N} = i * 3"),
               body.format(N=N, BOUND="n", DEAD=""))

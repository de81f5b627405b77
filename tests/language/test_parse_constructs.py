"""DSL parser: every construct parses to the expected IR (checked as printed text written by
hand) and round-trips print -> pl.parse -> structurally equal."""

import textwrap

import pypto.language as pl
from pypto import ir

T = ("tensor", (128, 128), pl.FP32)
TEN = "pl.Tensor[[128, 128], pl.FP32]"
TILE = "pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec]"


def roundtrip(program):
    text = ir.print_program(program)
    again = pl.parse(text)
    assert ir.structural_equal(program, again), text
    assert ir.structural_hash(program) == ir.structural_hash(again)
    assert ir.print_program(again) == text
    return text


def body(text, func):
    """The lines of function `func` in printed text, without the 8-space indent."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"    def {func}("))
    out = []
    for line in lines[start + 1:]:
        if not line.startswith("        "):
            break
        out.append(line[8:])
    return "\n".join(out)


@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [128, 128])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


def test_jit_entry_with_scope():
    p = tile_add.parse([T, T, T])
    text = roundtrip(p)
    assert f"def tile_add(self, a: {TEN}, b: {TEN}, c: pl.Out[{TEN}]) -> {TEN}:" in text
    assert body(text, "tile_add") == textwrap.dedent(f"""\
        with pl.at(level=pl.Level.CORE_GROUP):
            ta: {TILE} = pl.tile.load(a, [0, 0], [128, 128], target_memory=pl.Mem.Vec)
            tb: {TILE} = pl.tile.load(b, [0, 0], [128, 128], target_memory=pl.Mem.Vec)
            pl.tile.store(pl.tile.add(ta, tb), [0, 0], c)
        return c""")
    assert p.functions[0].func_type == pl.FunctionType.Orchestration


@pl.jit.incore
def add_kernel(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    tx = pl.load(x, [0, 0], [128, 128])
    ty = pl.load(y, [0, 0], [128, 128])
    out = pl.store(pl.add(tx, ty), [0, 0], out)
    return out


@pl.jit.incore
def scale_kernel(x: pl.Tensor, s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [128, 128])
    pl.store(pl.mul(t, s), [0, 0], out)


@pl.jit.inline
def doubled(t):
    return pl.add(t, t)


@pl.jit
def two_kernels(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([128, 128], dtype=pl.FP32)
    tmp = add_kernel(a, b, tmp)
    c = scale_kernel(tmp, 2.0, c)
    return c


def test_jit_kernels_become_incore_functions():
    p = two_kernels.parse([T, T, T])
    text = roundtrip(p)
    assert [f.name for f in p.functions] == ["add_kernel", "scale_kernel", "two_kernels"]
    assert [f.func_type for f in p.functions] == [pl.FunctionType.InCore, pl.FunctionType.InCore,
                                                  pl.FunctionType.Orchestration]
    assert body(text, "two_kernels") == textwrap.dedent(f"""\
        tmp: {TEN} = pl.tensor.create([128, 128], dtype=pl.FP32)
        tmp_1: {TEN} = self.add_kernel(a, b, tmp)
        c_1: {TEN} = self.scale_kernel(tmp_1, 2.0, c)
        return c_1""")
    # a kernel without `return` returns its Out parameter
    assert body(text, "scale_kernel") == textwrap.dedent(f"""\
        t: {TILE} = pl.tile.load(x, [0, 0], [128, 128], target_memory=pl.Mem.Vec)
        pl.tile.store(pl.tile.muls(t, s), [0, 0], out)
        return out""")
    assert "def scale_kernel(self, x: " + TEN + ", s: pl.Scalar[pl.FP32], out: pl.Out[" + TEN + "]) -> " + TEN in text


@pl.jit
def uses_inline(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [128, 128])
        u = doubled(t)
        c = pl.store(u, [0, 0], c)
    return c


def test_inline_is_spliced():
    text = roundtrip(uses_inline.parse([T, T]))
    assert len(uses_inline.parse([T, T]).functions) == 1
    assert f"u: {TILE} = pl.tile.add(t, t)" in text
    assert f"c_1: {TEN} = pl.tile.store(u, [0, 0], c)" in text


def make_loop_program(n_tiles, tile_rows):
    @pl.program
    class Loops:
        @pl.function(type=pl.FunctionType.InCore)
        def rows(self, x: pl.Tensor[[n_tiles * tile_rows, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[n_tiles * tile_rows, 64], pl.FP32]]) -> pl.Tensor[[n_tiles * tile_rows, 64], pl.FP32]:
            acc = pl.create_tile([tile_rows, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            for i in pl.range(n_tiles):
                t = pl.load(x, [i * tile_rows, 0], [tile_rows, 64])
                acc = pl.add(acc, t)
                out = pl.store(t, [i * tile_rows, 0], out)
            for j, (s,) in pl.range(0, n_tiles, 1, init_values=(acc,)):
                s2 = pl.mul(s, 0.5)
                r = pl.yield_(s2)
            for k in pl.parallel(2, n_tiles):
                pl.store(r, [k * tile_rows, 0], out)
            for u in pl.unroll(2):
                pl.store(acc, [u * tile_rows, 0], out)
            for q in pl.pipeline(n_tiles, stage=2):
                pl.store(acc, [q * tile_rows, 0], out)
            return out
    return Loops


def test_loops_rebinding_explicit_and_kinds():
    p = make_loop_program(4, 16)
    text = roundtrip(p)
    t16 = "pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]"
    ten = "pl.Tensor[[64, 64], pl.FP32]"
    assert body(text, "rows") == textwrap.dedent(f"""\
        acc: {t16} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        for i, (acc_1, out_1) in pl.range(0, 4, 1, init_values=(acc, out)):
            t: {t16} = pl.tile.load(x, [i * 16, 0], [16, 64], target_memory=pl.Mem.Vec)
            acc_2: {t16} = pl.tile.add(acc_1, t)
            out_2: {ten} = pl.tile.store(t, [i * 16, 0], out_1)
            acc_3, out_3 = pl.yield_(acc_2, out_2)
        for j, (s,) in pl.range(0, 4, 1, init_values=(acc_3,)):
            s2: {t16} = pl.tile.muls(s, 0.5)
            r = pl.yield_(s2)
        for k in pl.parallel(2, 4, 1):
            pl.tile.store(r, [k * 16, 0], out_3)
        for u in pl.unroll(0, 2, 1):
            pl.tile.store(acc_3, [u * 16, 0], out_3)
        for q in pl.pipeline(0, 4, 1, stage=2):
            pl.tile.store(acc_3, [q * 16, 0], out_3)
        return out_3""")


@pl.program
class Branches:
    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tile[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        if n > 2:
            t = pl.exp(t)
        else:
            t = pl.neg(t)
        if n == 0 and not n < 5:
            u = pl.add(t, t)
            v = pl.yield_(u)
        else:
            v = pl.yield_(t)
        m = pl.min(n, 7) + n // 2 - n % 3
        if m >= 1:
            t = pl.abs(v)
        return t


def test_if_else_implicit_and_explicit_and_scalars():
    text = roundtrip(Branches)
    t = "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]"
    assert body(text, "pick") == textwrap.dedent(f"""\
        t: {t} = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        if n > 2:
            t_1: {t} = pl.tile.exp(t)
            t_2 = pl.yield_(t_1)
        else:
            t_3: {t} = pl.tile.neg(t)
            t_2 = pl.yield_(t_3)
        if (n == 0) and (not (n < 5)):
            u: {t} = pl.tile.add(t_2, t_2)
            v = pl.yield_(u)
        else:
            v = pl.yield_(t_2)
        m: pl.Scalar[pl.INDEX] = (pl.min(n, 7) + (n // 2)) - (n % 3)
        if m >= 1:
            t_4: {t} = pl.tile.abs(v)
            t_5 = pl.yield_(t_4)
        else:
            t_5 = pl.yield_(t_2)
        return t_5""")


@pl.program
class ClassForm:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 32], pl.FP16], b: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t: pl.Tile[[32, 32], pl.FP16] = pl.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat,
                                                valid_shape=[16, 32])
        w = pl.cast(pl.load(a, [0, 0], [32, 32]), pl.FP32, mode="rint")
        k = pl.const(3, pl.INT32)
        w2 = pl.adds(w, 1.5)
        b = pl.store(w2, [0, 0], b)
        return b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 32], pl.FP16], b: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]):
        b = self.kernel(a, b)
        return b


def test_class_form_attrs_valid_shape_inout():
    text = roundtrip(ClassForm)
    assert ("t: pl.Tile[[32, 32], pl.FP16, pl.Mem.Mat, pl.ValidShape([16, 32])] = "
            "pl.tile.load(a, [0, 0], [32, 32], valid_shape=[16, 32], target_memory=pl.Mem.Mat)") in text
    assert "b: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]" in text
    assert "k: pl.Scalar[pl.INT32] = pl.const(3, pl.INT32)" in text
    assert "mode='rint'" in text
    assert "b_1: pl.Tensor[[32, 32], pl.FP32] = self.kernel(a, b)" in text
    assert ClassForm.find("main").directions[1] == ir.ParamDirection.InOut


def test_tile_type_pad_and_addr_round_trip():
    src = textwrap.dedent("""\
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.ValidShape([8, 16]), pl.PadValue.min, pl.Addr(4096)],
                  n: pl.Scalar[pl.INDEX]) -> pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]:
                y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.ValidShape([n, 16]), pl.Addr(0)] = pl.tile.exp(x)
                return y
        """)
    p = pl.parse(src)
    x = p.functions[0].params[0]
    assert (x.type.pad, x.type.addr, [e.value for e in x.type.valid_shape]) == (pl.PadValue.min, 4096, [8, 16])
    text = roundtrip(p)
    assert "pl.ValidShape([n, 16]), pl.Addr(0)]" in text


def test_structural_equal_false_cases():
    a = pl.parse(ir.print_program(Branches))
    assert ir.structural_equal(a, Branches)
    other = ir.print_program(Branches).replace("n > 2", "n > 3")
    assert not ir.structural_equal(pl.parse(other), Branches)
    other = ir.print_program(Branches).replace("pl.tile.exp(t)", "pl.tile.log(t)")
    assert not ir.structural_equal(pl.parse(other), Branches)
    # swapping which variable is used breaks the variable correspondence
    other = ir.print_program(Branches).replace("pl.tile.add(t_2, t_2)", "pl.tile.add(t_2, t)")
    assert not ir.structural_equal(pl.parse(other), Branches)
    i = ir.Var("i", ir.ScalarType(pl.INDEX))
    j = ir.Var("j", ir.ScalarType(pl.INDEX))
    assert ir.structural_equal(ir.BinaryExpr(ir.BinaryOp.Add, i, i), ir.BinaryExpr(ir.BinaryOp.Add, j, j))
    assert not ir.structural_equal(ir.BinaryExpr(ir.BinaryOp.Add, i, j), ir.BinaryExpr(ir.BinaryOp.Add, j, j))
    assert not ir.structural_equal(ir.ConstInt(1, pl.INT32), ir.ConstInt(1, pl.INDEX))
    assert not ir.structural_equal(ir.TileType([ir.ConstInt(4)], pl.FP32, pl.Mem.Vec, pad=pl.PadValue.zero),
                                   ir.TileType([ir.ConstInt(4)], pl.FP32, pl.Mem.Vec))


def test_op_stubs_raise_outside_bodies():
    import pytest
    with pytest.raises(RuntimeError, match=r"pl.add can only be used inside @pl.jit / @pl.function bodies"):
        pl.add(1, 2)
    with pytest.raises(RuntimeError, match=r"pl.tile.load can only be used inside"):
        pl.tile.load(1, 2, 3)
    with pytest.raises(AttributeError):
        pl.not_an_op  # noqa: B018


@pl.jit
def _underscored(x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    with pl.at(level=pl.Level.AIV):
        out = pl.store(pl.add(pl.load(x, [0, 0], [32, 64]), 1.0), [0, 0], out)
    return out


def test_a_function_named_with_an_underscore_round_trips():
    """Its outlined kernel `_underscored_incore_0` prints as self._underscored_incore_0(...),
    which parses back (private attributes of anything but `self` stay refused)."""
    import numpy as np
    from pypto.runtime import RunConfig

    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    out = np.zeros_like(x)
    _underscored(x, out, config=RunConfig(verify="roundtrip"))
    np.testing.assert_array_equal(out, x + 1)


"""Parse errors: each names the user's file:line, the construct, and the fix."""

import re
import textwrap

import pypto.language as pl
import pytest
from pypto import _core

T = ("tensor", (64, 64), pl.FP32)
HERE = __file__


def line_of(func, needle):
    """The absolute line number in this file of the first source line containing `needle`."""
    import inspect
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, line in enumerate(lines) if needle in line)


def expect(jit_fn, needle, *patterns, specs=(T, T)):
    with pytest.raises(_core.PyptoError) as info:
        jit_fn.parse(list(specs))
    msg = str(info.value)
    assert msg.startswith(f"{HERE}:{line_of(jit_fn.func, needle)}: "), msg
    for p in patterns:
        assert re.search(p, msg), msg
    return msg


@pl.jit
def out_rebound(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        out = pl.mul(t, t)
    return out


def test_out_rebinding_to_fresh_value():
    msg = expect(out_rebound, "out = pl.mul",
                 r"output parameter 'out' \(pl.Out\) is rebound to a freshly computed value",
                 r"does NOT write the output tensor", r"fix: write into it instead: `out\[:\] = pl.mul\(t, t\)`",
                 r"out = pl.store\(tile, offsets, out\)")
    assert "pl.assemble(out, value, offsets)" in msg


@pl.jit
def out_threaded(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        out = pl.store(t, [0, 0], out)
        out = pl.store(t, [0, 0], out)
    return out


@pl.jit
def out_slice_write(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out[:] = pl.assemble(out, x, [0, 0])
    return out


def test_out_threaded_through_writes_is_fine():
    assert len(out_threaded.parse([T, T]).functions) == 1
    assert len(out_slice_write.parse([T, T]).functions) == 1


@pl.jit
def unknown_name(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.lod(x, [0, 0], [64, 64])
    return out


@pl.jit
def unknown_keyword(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [64, 64], target_memroy=pl.Mem.Vec)
    return out


@pl.jit
def too_many_args(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.exp(pl.load(x, [0, 0], [64, 64]), 1, 2)
    return out


@pl.jit
def while_loop(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    while True:
        pass
    return out


@pl.jit
def runtime_attr(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(4):
        t = pl.load(x, [0, 0], [i, 64])
    return out


@pl.jit
def bad_annotation(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t: pl.Tile[[32, 64], pl.FP32] = pl.load(x, [0, 0], [64, 64])
    return out


@pl.jit
def undefined(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(4):
        if i > 2:  # a name defined in one arm only (a name first defined in the loop itself is carried)
            inner = pl.load(x, [0, 0], [64, 64])
    pl.store(inner, [0, 0], out)
    return out


@pl.jit
def range_misuse(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    n = pl.range(4)
    return out


@pl.jit
def loop_type_change(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [64, 64])
    for i in pl.range(4):
        t = pl.row_sum(t)
    return out


@pl.jit
def yield_without_init(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(4):
        pl.yield_(i)
    return out


@pl.jit
def with_other(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, mode=1):
        pass
    return out


@pl.jit
def op_type_error(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    a = pl.load(x, [0, 0], [64, 64])
    b = pl.load(x, [0, 0], [32, 64])
    c = pl.add(a, b)
    return out


def test_error_messages():
    expect(unknown_name, "pl.lod", r"unknown name 'pl.lod'", r"fix: did you mean 'pl.load'\?")
    expect(unknown_keyword, "target_memroy", r"pl.load has no keyword argument 'target_memroy'",
           r"did you mean 'target_memory='\?", r"pl.tile.load\(tensor, offsets, shape, valid_shape=\.\.\., target_memory=")
    expect(too_many_args, "pl.exp", r"pl.exp takes at most 1 arguments, got 3", r"call it as pl.tile.exp\(tile\)")
    expect(while_loop, "while True", r"the condition 'True' of this while loop never changes",
           r"fix: rebind a name the condition reads .*add a break, or use `for i in pl.range\(n\):`")
    expect(runtime_attr, "[i, 64]", r"argument 'shape' of pl.load must be a compile-time constant",
           r"'\[i, 64\]' is a run-time value", r"fix: use a literal, a closure constant")
    expect(bad_annotation, "t: pl.Tile",
           r"'t' is annotated pl.Tile\[\[32, 64\], pl.FP32, pl.Mem.Vec\] but the value has type "
           r"pl.Tile\[\[64, 64\], pl.FP32, pl.Mem.Vec\]", r"fix: change the annotation")
    expect(undefined, "pl.store(inner", r"'inner' is defined inside an if arm at line \d+ and is not visible here",
           r"fix: define 'inner' before that block")
    expect(range_misuse, "n = pl.range", r"pl.range can only be used as the iterable of a for loop")
    expect(loop_type_change, "for i in", r"'t' changes type in the loop body", r"fix: keep the type of 't'")
    expect(yield_without_init, "pl.yield_(i)", r"pl.yield_ in a loop without init_values",
           r"init_values=\(x,\)")
    expect(with_other, "with pl.at", r"pl.at: got an unexpected keyword argument .mode.[\s\S]*fix: call it as pl.at\(level, role=None")
    msg = expect(op_type_error, "c = pl.add", r"pl\.|tile|shape")
    assert msg.count(HERE) >= 1


def test_parse_text_errors_point_at_text_lines():
    text = textwrap.dedent("""\
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor):
                return x
        """)
    with pytest.raises(pl.ParseError, match=r"^<string>:4: parameter 'x' needs a full type annotation"):
        pl.parse(text)
    with pytest.raises(pl.ParseError, match=r"^<string>:1: no @pl.program class"):
        pl.parse("x = 1\n")
    bad = text.replace("    @pl.function(type=pl.FunctionType.InCore)\n", "")
    with pytest.raises(pl.ParseError, match=r"method 'k' of a @pl.program class lacks @pl.function"):
        pl.parse(bad)


def test_closure_constants_and_folding():
    def build(m, scale):
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[m * 2, 64], pl.FP32]) -> pl.Tile[[m, 64], pl.FP32]:
                t = pl.load(x, [m // 2, 0], [m, 64])
                u = pl.muls(t, scale * 2)
                return u
        return P
    from pypto import ir
    text = ir.print_program(build(16, 0.25))
    assert "x: pl.Tensor[[32, 64], pl.FP32]" in text
    assert "pl.tile.load(x, [8, 0], [16, 64]" in text
    assert "pl.tile.muls(t, 0.5)" in text
    assert ir.structural_equal(pl.parse(text), build(16, 0.25))

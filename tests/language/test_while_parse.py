"""while loops, break and continue: the parsed IR (checked as printed text written by hand),
the printed `pl.while_` form parsing back to the same program, and the parse errors
(file:line, what is wrong, the fix)."""

import re
import textwrap

import pypto.language as pl
import pytest
from pypto import _core, ir

HERE = __file__
TILE = "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]"
X = "pl.Tensor[[64, 16], pl.FP32]"


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


@pl.program
class WhileRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        acc = pl.full([16, 16], dtype=pl.FP32, value=0.0)
        i = 0
        while i < n:
            acc = pl.add(acc, pl.load(x, [i * 16, 0], [16, 16]))
            i = i + 1
        out = pl.store(acc, [0, 0], out)
        return out


def test_while_carries_rebound_names_and_prints_as_pl_while():
    text = roundtrip(WhileRows)
    assert body(text, "k") == textwrap.dedent(f"""\
        acc: {TILE} = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
        for (acc_1, i) in pl.while_(init_values=(acc, 0)):
            pl.cond(i < n)
            acc_2: {TILE} = pl.tile.add(acc_1, pl.tile.load(x, [i * 16, 0], [16, 16], target_memory=pl.Mem.Vec))
            i_1: pl.Scalar[pl.INDEX] = i + 1
            acc_3, i_2 = pl.yield_(acc_2, i_1)
        out_1: {X} = pl.tile.store(acc_3, [0, 0], out)
        return out_1""")
    loop = WhileRows.functions[0].body.stmts[1]
    assert isinstance(loop, ir.WhileStmt)
    assert [v.name for v in loop.iter_args] == ["acc", "i"] and len(loop.return_vars) == 2


def test_explicit_pl_while_form_is_the_same_program():
    src = textwrap.dedent(f"""\
        @pl.program
        class WhileRows:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {X}, n: pl.Scalar[pl.INDEX], out: pl.Out[{X}]) -> {X}:
                a = pl.full([16, 16], dtype=pl.FP32, value=0.0)
                for (s, j) in pl.while_(init_values=(a, 0)):
                    pl.cond(j < n)
                    t = pl.add(s, pl.load(x, [j * 16, 0], [16, 16]))
                    r, m = pl.yield_(t, j + 1)
                o = pl.store(r, [0, 0], out)
                return o
        """)
    p = pl.parse(src)
    # `j + 1` is yielded directly instead of through a named value: same loop otherwise.
    want = ir.print_program(WhileRows).replace("i_1: pl.Scalar[pl.INDEX] = i + 1\n            ", "") \
        .replace("pl.yield_(acc_2, i_1)", "pl.yield_(acc_2, i + 1)")
    assert ir.structural_equal(p, pl.parse(want))
    assert not ir.structural_equal(p, WhileRows)
    roundtrip(p)


def make_breaks():
    @pl.program
    class Breaks:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 16], pl.FP32], limit: pl.Scalar[pl.FP32],
              out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            s = 0.0
            for i in pl.range(4):
                if i % 2 == 1:
                    continue
                out = pl.store(pl.load(x, [i * 16, 0], [16, 16]), [i * 16, 0], out)
                s = s + 1.0
                if s >= limit:
                    break
            return out
    return Breaks


def test_break_turns_a_range_loop_into_a_while_over_its_index():
    text = roundtrip(make_breaks())
    assert body(text, "k") == textwrap.dedent(f"""\
        for (out_1, s, __break1, i) in pl.while_(init_values=(out, 0.0, False, 0)):
            pl.cond((not __break1) and (i < 4))
            if (i % 2) == 1:
                __continue1 = pl.yield_(True)
            else:
                __continue1 = pl.yield_(False)
            if not __continue1:
                out_2: {X} = pl.tile.store(pl.tile.load(x, [i * 16, 0], [16, 16], target_memory=pl.Mem.Vec), [i * 16, 0], out_1)
                s_1: pl.Scalar[pl.FP32] = s + 1.0
                if s_1 >= limit:
                    __break1_1 = pl.yield_(True)
                else:
                    __break1_1 = pl.yield_(__break1)
                out_3, s_2, __break1_2 = pl.yield_(out_2, s_1, __break1_1)
            else:
                out_3, s_2, __break1_2 = pl.yield_(out_1, s, __break1)
            i_1: pl.Scalar[pl.INDEX] = i + 1
            out_4, s_3, __break1_3, i_2 = pl.yield_(out_3, s_2, __break1_2, i_1)
        return out_4""")


@pl.program
class Kinds:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        acc = pl.full([16, 16], dtype=pl.FP32, value=0.0)
        for j in pl.parallel(4):
            if j == 2:
                continue
            out = pl.store(acc, [j * 16, 0], out)
        for u in pl.unroll(2):
            if u == n:
                break
            acc = pl.adds(acc, 1.0)
        while True:
            acc = pl.exp(acc)
            break
        for k in pl.range(8, 0, -2):
            if k < n:
                break
        out = pl.store(acc, [0, 0], out)
        return out


def test_continue_guards_the_rest_and_unroll_break_guards_every_iteration():
    text = roundtrip(Kinds)
    assert body(text, "k") == textwrap.dedent(f"""\
        acc: {TILE} = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
        for j, (out_1,) in pl.parallel(0, 4, 1, init_values=(out,)):
            if j == 2:
                __continue1 = pl.yield_(True)
            else:
                __continue1 = pl.yield_(False)
            if not __continue1:
                out_2: {X} = pl.tile.store(acc, [j * 16, 0], out_1)
                out_3 = pl.yield_(out_2)
            else:
                out_3 = pl.yield_(out_1)
            out_4 = pl.yield_(out_3)
        for u, (__break2, acc_1) in pl.unroll(0, 2, 1, init_values=(False, acc)):
            if not __break2:
                if u == n:
                    __break2_1 = pl.yield_(True)
                else:
                    __break2_1 = pl.yield_(__break2)
                if not __break2_1:
                    acc_2: {TILE} = pl.tile.adds(acc_1, 1.0)
                    acc_3 = pl.yield_(acc_2)
                else:
                    acc_3 = pl.yield_(acc_1)
                acc_4, __break2_2 = pl.yield_(acc_3, __break2_1)
            else:
                acc_4, __break2_2 = pl.yield_(acc_1, __break2)
            __break2_3, acc_5 = pl.yield_(__break2_2, acc_4)
        for (acc_6, __break3) in pl.while_(init_values=(acc_5, False)):
            pl.cond((not __break3) and True)
            acc_7: {TILE} = pl.tile.exp(acc_6)
            acc_8, __break3_1 = pl.yield_(acc_7, True)
        for (__break4, k) in pl.while_(init_values=(False, 8)):
            pl.cond((not __break4) and (k > 0))
            if k < n:
                __break4_1 = pl.yield_(True)
            else:
                __break4_1 = pl.yield_(__break4)
            k_1: pl.Scalar[pl.INDEX] = k + -2
            __break4_2, k_2 = pl.yield_(__break4_1, k_1)
        out_5: {X} = pl.tile.store(acc_8, [0, 0], out_4)
        return out_5""")


@pl.program
class Nested:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        total = 0
        for i in pl.range(n):
            j = 0
            while j < m:
                j = j + 1
                if j == i:
                    continue
                if j > 5:
                    break
                total = total + j
            if total > 100:
                break
        return total


def test_nested_loops_keep_their_own_exits():
    text = roundtrip(Nested)
    assert body(text, "main") == textwrap.dedent("""\
        for (total, __break1, i) in pl.while_(init_values=(0, False, 0)):
            pl.cond((not __break1) and (i < n))
            for (j, __break2, total_1) in pl.while_(init_values=(0, False, total)):
                pl.cond((not __break2) and (j < m))
                j_1: pl.Scalar[pl.INDEX] = j + 1
                if j_1 == i:
                    __continue2 = pl.yield_(True)
                else:
                    __continue2 = pl.yield_(False)
                if not __continue2:
                    if j_1 > 5:
                        __break2_1 = pl.yield_(True)
                    else:
                        __break2_1 = pl.yield_(__break2)
                    if not __break2_1:
                        total_2: pl.Scalar[pl.INDEX] = total_1 + j_1
                        total_3 = pl.yield_(total_2)
                    else:
                        total_3 = pl.yield_(total_1)
                    total_4, __break2_2 = pl.yield_(total_3, __break2_1)
                else:
                    total_4, __break2_2 = pl.yield_(total_1, __break2)
                j_2, __break2_3, total_5 = pl.yield_(j_1, __break2_2, total_4)
            if total_5 > 100:
                __break1_1 = pl.yield_(True)
            else:
                __break1_1 = pl.yield_(__break1)
            i_1: pl.Scalar[pl.INDEX] = i + 1
            total_6, __break1_2, i_2 = pl.yield_(total_5, __break1_1, i_1)
        return total_6""")


def test_while_false_is_dropped_and_structural_equality_sees_the_condition():
    src = textwrap.dedent("""\
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                i = 0
                while False:
                    i = i + 1
                while i < n:
                    i = i + 2
                return i
        """)
    p = pl.parse(src)
    text = roundtrip(p)
    assert text.count("pl.while_") == 1 and "pl.cond(i < n)" in text
    other = pl.parse(text.replace("pl.cond(i < n)", "pl.cond(i <= n)"))
    assert not ir.structural_equal(p, other)
    assert ir.structural_hash(p) != ir.structural_hash(other)


# --------------------------------------------------------------------------- errors


def line_of(func, needle):
    import inspect
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, line in enumerate(lines) if needle in line)


def expect(jit_fn, needle, *patterns):
    t = ("tensor", (64, 64), pl.FP32)
    with pytest.raises(_core.PyptoError) as info:
        jit_fn.parse([t, ("scalar", pl.INDEX, 3), t])
    msg = str(info.value)
    assert msg.startswith(f"{HERE}:{line_of(jit_fn.func, needle)}: "), msg
    for p in patterns:
        assert re.search(p, msg), msg
    return msg


@pl.jit
def never_changes(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    i = 0
    while i < n:
        out = pl.store(pl.load(x, [0, 0], [64, 64]), [0, 0], out)
    return out


@pl.jit
def while_true(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    while True:
        pass
    return out


@pl.jit
def first_assigned_in_body(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    while k < n:  # noqa: F821
        k = 1
    return out


@pl.jit
def while_else(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    i = 0
    while i < n:
        i = i + 1
    else:  # noqa: PLW0120 - the mistake under test
        i = 0
    return out


@pl.jit
def break_in_parallel(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    for i in pl.parallel(4):
        if i == n:
            break
    return out


@pl.jit
def break_with_init_values(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    for i, (s,) in pl.range(4, init_values=(0,)):
        if i == n:
            continue
        t = pl.yield_(s + i)
    return out


@pl.jit
def break_in_scope(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    for i in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            if i == n:
                break
    return out


@pl.jit
def yield_and_break(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    s = 0
    for i in pl.range(4):
        if i == n:
            v = pl.yield_(s)
        else:
            break
        s = v
    return out


@pl.jit
def cond_misplaced(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    pl.cond(n > 0)
    return out


@pl.jit
def while_without_cond(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    for (i,) in pl.while_(init_values=(0,)):
        j = pl.yield_(i + 1)
    return out


def test_while_errors_name_the_line_and_the_fix():
    expect(never_changes, "while i < n", r"the condition 'i < n' of this while loop never changes",
           r"nothing it reads is rebound in the loop body", r"fix: rebind a name the condition reads")
    expect(while_true, "while True", r"the condition 'True' of this while loop never changes", r"add a break")
    expect(first_assigned_in_body, "while k < n",
           r"'k' is read by the while condition but first assigned in the loop body",
           r"fix: give 'k' its first value before the loop")
    expect(while_else, "while i < n", r"while/else is not supported", r"fix: move the else part after the loop")
    expect(break_in_parallel, "for i in pl.parallel", r"break in a pl.parallel loop", r"fix: use pl.range")
    expect(break_with_init_values, "for i, (s,)", r"break/continue in a loop with init_values is not supported",
           r"fix: carry the values by rebinding")
    expect(break_in_scope, "            break", r"break inside a 'with' block cannot leave the loop around it",
           r"fix: put the loop inside the block")
    expect(yield_and_break, "if i == n", r"an if/else that ends with pl.yield_ cannot also break or continue",
           r"fix: rebind the names in the arms")
    expect(cond_misplaced, "pl.cond", r"pl.cond can only be used as the first statement of a pl.while_ loop body")
    expect(while_without_cond, "j = pl.yield_", r"a pl.while_ body must start with `pl.cond\(<condition>\)`")


def test_break_outside_a_loop():
    # Python's compiler rejects this in a module; pl.parse reads text with ast only.
    src = textwrap.dedent("""\
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                if n > 1:
                    break
                return n
        """)
    with pytest.raises(pl.ParseError, match=r"^<string>:6: break outside a loop\n    break\n +\^+\n  fix: use break only inside"):
        pl.parse(src)

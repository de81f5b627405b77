"""Structural equality and hashing built directly with the IR bindings: equal modulo
variable identity (one-to-one), sensitive to types, attrs, constants and statement shape."""

import pypto.language as pl
from pypto import ir

IDX = ir.ScalarType(pl.INDEX)


def tile(*shape, **kw):
    return ir.TileType([ir.ConstInt(s) for s in shape], pl.FP32, pl.Mem.Vec, **kw)


def loop(names=("i", "acc", "r"), bound=8, body_uses_iter=True):
    i = ir.Var(names[0], IDX)
    acc = ir.Var(names[1], IDX)
    r = ir.Var(names[2], IDX)
    nxt = ir.BinaryExpr(ir.BinaryOp.Add, acc if body_uses_iter else i, i)
    body = ir.SeqStmts([ir.YieldStmt([nxt])])
    return ir.ForStmt(i, ir.ConstInt(0), ir.ConstInt(bound), ir.ConstInt(1), [acc], [ir.ConstInt(0)], body, [r])


def test_equal_modulo_names_and_identity():
    a, b = loop(), loop(("j", "s", "t"))
    assert ir.structural_equal(a, b)
    assert ir.structural_hash(a) == ir.structural_hash(b)


def test_not_equal_when_structure_differs():
    assert not ir.structural_equal(loop(), loop(bound=9))
    assert not ir.structural_equal(loop(), loop(body_uses_iter=False))
    assert ir.structural_hash(loop()) != ir.structural_hash(loop(bound=9))


def test_bijection_is_enforced():
    x, y, z = (ir.Var(n, IDX) for n in "xyz")
    same = ir.BinaryExpr(ir.BinaryOp.Mul, x, x)
    assert not ir.structural_equal(same, ir.BinaryExpr(ir.BinaryOp.Mul, y, z))
    assert not ir.structural_equal(ir.BinaryExpr(ir.BinaryOp.Mul, y, z), same)


def test_types_and_var_types_matter():
    assert ir.structural_equal(tile(16, 16), tile(16, 16))
    assert not ir.structural_equal(tile(16, 16), tile(16, 8))
    assert not ir.structural_equal(tile(16, 16), tile(16, 16, addr=0))
    assert not ir.structural_equal(tile(16, 16), tile(16, 16, valid_shape=[ir.ConstInt(8), ir.ConstInt(16)]))
    assert not ir.structural_equal(ir.Var("a", tile(4, 4)), ir.Var("a", tile(4, 8)))
    assert not ir.structural_equal(ir.ConstFloat(1.0), ir.ConstFloat(1.0, pl.FP16))


def test_functions_compare_directions_and_return_types():
    def fn(direction, ret):
        x = ir.Var("x", ir.TensorType([ir.ConstInt(4)], pl.FP32))
        return ir.Function("f", [x], [direction], [ret], ir.ReturnStmt([x]), pl.FunctionType.InCore)
    t = ir.TensorType([ir.ConstInt(4)], pl.FP32)
    assert ir.structural_equal(fn(ir.ParamDirection.In, t), fn(ir.ParamDirection.In, t))
    assert not ir.structural_equal(fn(ir.ParamDirection.In, t), fn(ir.ParamDirection.Out, t))


def test_printer_spellings():
    i = ir.Var("i", IDX)
    n = ir.Var("n", ir.ScalarType(pl.INT32))
    e = ir.BinaryExpr(ir.BinaryOp.Max, ir.UnaryExpr(ir.UnaryOp.Neg, i), ir.ConstInt(3))
    assert ir.print_expr(e) == "pl.max(-i, 3)"
    assert ir.print_expr(ir.BinaryExpr(ir.BinaryOp.Lt, n, ir.ConstInt(2, pl.INT32))) == "n < pl.const(2, pl.INT32)"
    assert ir.print_type(tile(8, 8, pad=pl.PadValue.max, addr=64)) == \
        "pl.Tile[[8, 8], pl.FP32, pl.Mem.Vec, pl.PadValue.max, pl.Addr(64)]"
    # two different variables with one name print with distinct SSA names
    a1, a2 = ir.Var("a", IDX), ir.Var("a", IDX)
    body = ir.SeqStmts([ir.AssignStmt(a1, ir.ConstInt(1)), ir.AssignStmt(a2, ir.BinaryExpr(ir.BinaryOp.Add, a1, a1)),
                        ir.ReturnStmt([a2])])
    f = ir.Function("f", [], [], [IDX], body, pl.FunctionType.Opaque)
    text = ir.print_program(ir.Program("p", [f]))
    assert "a: pl.Scalar[pl.INDEX] = 1\n        a_1: pl.Scalar[pl.INDEX] = a + a\n        return a_1" in text
    assert ir.structural_equal(pl.parse(text), ir.Program("p", [f]))


def while_loop(names=("i", "r"), bound=8, step=1):
    i = ir.Var(names[0], IDX)
    r = ir.Var(names[1], IDX)
    cond = ir.BinaryExpr(ir.BinaryOp.Lt, i, ir.ConstInt(bound))
    body = ir.SeqStmts([ir.YieldStmt([ir.BinaryExpr(ir.BinaryOp.Add, i, ir.ConstInt(step))])])
    return ir.WhileStmt([i], [ir.ConstInt(0)], cond, body, [r])


def test_while_loops_compare_condition_body_and_carried_values():
    a, b = while_loop(), while_loop(("j", "s"))
    assert ir.structural_equal(a, b) and ir.structural_hash(a) == ir.structural_hash(b)
    for other in (while_loop(bound=9), while_loop(step=2)):
        assert not ir.structural_equal(a, other)
        assert ir.structural_hash(a) != ir.structural_hash(other)
    assert not ir.structural_equal(a, loop())
    assert [v.name for v in a.iter_args] == ["i"] and a.cond.op == ir.BinaryOp.Lt


def test_while_condition_must_be_a_scalar():
    import pytest
    from pypto import PyptoError
    t = ir.Var("t", tile(16, 16))
    with pytest.raises(PyptoError, match="the condition of a while loop must be a scalar"):
        ir.WhileStmt([], [], t, ir.SeqStmts([]), [])

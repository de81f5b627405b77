"""IR nodes built through their checking make(): a rebuilt call re-infers its type, a given
type must agree with the inferred one, and the mutator rebuilds only what changed."""

import pytest

import pypto.language as pl
from pypto import _core, ir

IDX = ir.ScalarType(pl.INDEX)


def tile(dtype, rows=16, cols=16, **kw):
    return ir.TileType([ir.ConstInt(rows), ir.ConstInt(cols)], dtype, pl.Mem.Vec, **kw)


def test_rewritten_call_gets_the_reinferred_type():
    a, b = ir.Var("a", tile(pl.FP32)), ir.Var("b", tile(pl.FP32))
    call = ir.make_op_call("tile.add", [a, b])
    assert ir.structural_equal(call.type, tile(pl.FP32))
    a16, b16 = ir.Var("a16", tile(pl.FP16)), ir.Var("b16", tile(pl.FP16))
    rewritten = ir.substitute(call, [(a, a16), (b, b16)])
    assert rewritten.op_name == "tile.add"
    assert [x.name for x in rewritten.args] == ["a16", "b16"]
    assert ir.structural_equal(rewritten.type, tile(pl.FP16))
    assert not ir.structural_equal(rewritten.type, call.type)
    # A shape change flows through as well: the result follows the new operands.
    a8, b8 = ir.Var("a8", tile(pl.FP32, 8, 32)), ir.Var("b8", tile(pl.FP32, 8, 32))
    assert ir.structural_equal(ir.substitute(call, [(a, a8), (b, b8)]).type, tile(pl.FP32, 8, 32))


def test_rewritten_scalar_arithmetic_and_nested_calls_reinfer():
    i = ir.Var("i", IDX)
    x = ir.Var("x", ir.ScalarType(pl.FP32))
    e = ir.BinaryExpr(ir.BinaryOp.Add, i, ir.ConstInt(1))
    assert ir.structural_equal(e.type, IDX)
    assert ir.structural_equal(ir.substitute(e, [(i, x)]).type, ir.ScalarType(pl.FP32))
    a, b = ir.Var("a", tile(pl.FP32)), ir.Var("b", tile(pl.FP32))
    outer = ir.make_op_call("tile.mul", [ir.make_op_call("tile.add", [a, b]), b])
    a16, b16 = ir.Var("a16", tile(pl.FP16)), ir.Var("b16", tile(pl.FP16))
    r = ir.substitute(outer, [(a, a16), (b, b16)])
    assert ir.structural_equal(r.args[0].type, tile(pl.FP16))
    assert ir.structural_equal(r.type, tile(pl.FP16))


def test_a_rewrite_that_breaks_the_type_rule_is_a_user_error():
    a, b = ir.Var("a", tile(pl.FP32)), ir.Var("b", tile(pl.FP32))
    call = ir.make_op_call("tile.add", [a, b])
    with pytest.raises(_core.PyptoError, match="argument 'rhs' must be a tile"):
        ir.substitute(call, [(b, ir.Var("s", ir.ScalarType(pl.FP32)))])


def test_unchanged_nodes_are_kept():
    a, b = ir.Var("a", tile(pl.FP32)), ir.Var("b", tile(pl.FP32))
    call = ir.make_op_call("tile.add", [a, b])
    other = ir.Var("other", tile(pl.FP16))
    assert ir.substitute(call, [(other, a)]).node_id == call.node_id
    lst = ir.ListExpr([ir.ConstInt(0), a])
    assert ir.substitute(lst, [(other, a)]).node_id == lst.node_id
    assert ir.substitute(lst, [(a, b)]).node_id != lst.node_id


def test_explicit_call_type_is_checked():
    a, b = ir.Var("a", tile(pl.FP32)), ir.Var("b", tile(pl.FP32))
    inferred = ir.Call("tile.add", [a, b])
    assert ir.structural_equal(inferred.type, tile(pl.FP32))
    # A refinement a pass may make (an address) is kept as given.
    placed = ir.Call("tile.add", [a, b], type=tile(pl.FP32, addr=64))
    assert ir.structural_equal(placed.type, tile(pl.FP32, addr=64))
    assert not ir.structural_equal(placed.type, inferred.type)
    for wrong in (ir.ScalarType(pl.FP32), tile(pl.FP16), ir.TensorType([ir.ConstInt(16), ir.ConstInt(16)], pl.FP32)):
        with pytest.raises(_core.PyptoError, match="does not agree with the inferred"):
            ir.Call("tile.add", [a, b], type=wrong)
    with pytest.raises(KeyError, match="unknown op"):
        ir.Call("tile.no_such_op", [a, b])


def test_fields_given_at_construction():
    i, r = ir.Var("i", IDX), ir.Var("r", IDX)
    acc = ir.Var("acc", IDX)
    body = ir.SeqStmts([ir.YieldStmt([ir.BinaryExpr(ir.BinaryOp.Add, acc, i)])])
    loop = ir.ForStmt(i, ir.ConstInt(0), ir.ConstInt(4), ir.ConstInt(1), [acc], [ir.ConstInt(0)], body, [r],
                      attrs={"unroll_hint": 2})
    assert loop.attrs == {"unroll_hint": 2}
    assert [v.name for v in loop.iter_args] == ["acc"] and loop.return_vars[0].same_as(r)
    scope = ir.ScopeStmt(pl.Level.CORE_GROUP, ir.SeqStmts([]), task_id=3, deps=[1], hints={"name_hint": "k"})
    assert (scope.task_id, scope.deps, scope.hints["name_hint"]) == (3, [1], "k")
    call = ir.FuncCall("k", [], ir.NoneType(), task_id=2, block_num=4, hints={"sync_start": True})
    assert (call.task_id, call.block_num, call.hints["sync_start"]) == (2, 4, True)
    # Equality covers the fields of the node list, including the task info.
    same = ir.FuncCall("k", [], ir.NoneType(), task_id=7, block_num=4, hints={"sync_start": True})
    assert ir.structural_equal(call, same) and ir.structural_hash(call) == ir.structural_hash(same)
    assert not ir.structural_equal(call, ir.FuncCall("k", [], ir.NoneType(), task_id=2, block_num=8))

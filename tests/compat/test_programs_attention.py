"""Attention-family programs written in PyPTO's idioms (decode with RoPE through
orchestration views, GQA with each kv head's query group a view, paged attention over a
block table with a ragged last block, online-softmax flash attention over kernel-side KV
slices, per-head output through view writes, pl.at scopes in orchestration loops carrying
several tensors), each run on both engines through the printer round trip
(verify="roundtrip") against numpy."""

import math

import numpy as np
import pytest

import pypto.language as pl
from pypto import _core, runtime
from pypto.runtime import RunConfig

rng = np.random.default_rng(1414)


@pytest.fixture(params=["native", "sim"])
def engine(request):
    return request.param


def cfg(engine):
    return RunConfig(engine=engine, verify="roundtrip")


def softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------------
# A pl.at scope inside an orchestration loop carrying two tensors (the OutlineIncore
# round-trip bug: the outlined call and its TupleGetItems were a SeqStmts nested in the
# loop body, which prints flat, so the parsed program was "different").


@pl.jit
def two_accumulators(x: pl.Tensor[[32, 64], pl.FP32], a: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
                     b: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    for j in pl.range(3):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [32, 64])
            if j == 0:
                a = pl.store(t, [0, 0], a)
                b = pl.store(pl.muls(t, 2.0), [0, 0], b)
            else:
                a = pl.store(pl.add(pl.load(a, [0, 0], [32, 64]), t), [0, 0], a)
                b = pl.store(pl.mul(pl.load(b, [0, 0], [32, 64]), t), [0, 0], b)
    return a, b


def test_scope_in_loop_carrying_two_tensors_round_trips(engine):
    x = rng.standard_normal((32, 64)).astype(np.float32)
    a = np.zeros_like(x)
    b = np.zeros_like(x)
    two_accumulators(x, a, b, config=cfg(engine))
    np.testing.assert_allclose(a, 3 * x, rtol=1e-6)
    np.testing.assert_allclose(b, 2 * x ** 3, rtol=1e-5)


def test_outlined_scope_results_are_spliced_into_the_loop_body():
    x = np.zeros((32, 64), np.float32)
    prog = two_accumulators.parse(runtime._arg_specs(two_accumulators, (x, x, x)))
    compiled = _core.compile(prog, "a2a3sim", True, True)
    after = dict(compiled.pass_results)
    outlined = next(p for n, p in after.items() if n.endswith("OutlineIncore"))
    main = next(f for f in outlined.functions if f.name == "two_accumulators")
    loop = main.body.stmts[0]
    kinds = [type(s).__name__ for s in loop.body.stmts]
    assert kinds == ["AssignStmt", "AssignStmt", "AssignStmt", "YieldStmt"], kinds


def test_structural_equal_ignores_nested_seq_grouping():
    ir = _core.ir
    v = [ir.Var(f"v{i}", ir.ScalarType(pl.INDEX)) for i in range(3)]
    stmts = [ir.AssignStmt(v[i], ir.ConstInt(i, pl.INDEX)) for i in range(3)]
    flat = ir.SeqStmts(stmts)
    nested = ir.SeqStmts([ir.SeqStmts(stmts[:2]), stmts[2]])
    assert ir.structural_equal(flat, nested)
    assert ir.structural_hash(flat) == ir.structural_hash(nested)
    other = ir.SeqStmts([ir.SeqStmts(stmts[:2])])
    assert not ir.structural_equal(flat, other)

"""Tensor views (issue 14): `x[a:b, c:d]`, `x[i]`, `x[i, j]`, pl.slice / view / reshape /
transpose / reinterpret_view on tensors. These tests cover the parse and the types; the
kernel and orchestration semantics have their own tests below them."""

import pytest

import pypto.language as pl
from pypto._core import ir


def stmts(program, fn="main"):
    text = ir.print_program(program)
    body = text.split(f"def {fn}(", 1)[1]
    return [line.strip() for line in body.splitlines()[1:] if line.strip()]


def test_slice_sugar_extents_are_simplified():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
            q = 8
            a = x[q:q + 16, 64:]
            return out

    lines = stmts(P)
    assert any("pl.tensor.slice(x, [16, 64], [8, 64])" in s for s in lines), lines


def test_slice_with_runtime_offset_has_static_extent():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 128], pl.FP32], pos: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
            a = x[pos:pos + 1, 0:64]
            b = x[pos + 32 // 2:pos + 32, :]
            return out

    lines = stmts(P)
    assert any(s.startswith("a: pl.Tensor[[1, 64], pl.FP32] = pl.tensor.slice(x, [1, 64], [pos, 0])") for s in lines), lines
    assert any(s.startswith("b: pl.Tensor[[16, 128], pl.FP32]") for s in lines), lines


def test_scalar_index_drops_axis_and_full_index_reads():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[4, 64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
            row = x[3]
            col = x[1, :, 7]
            v = x[1, 2, 3]
            return out

    lines = stmts(P)
    assert any(s.startswith("row: pl.Tensor[[64, 32], pl.FP32] = pl.tensor.slice(x, [1, 64, 32], [3, 0, 0], drop_dims=[0])")
               for s in lines), lines
    assert any(s.startswith("col: pl.Tensor[[64], pl.FP32]") and "drop_dims=[0, 2]" in s for s in lines), lines
    assert any(s.startswith("v: pl.Scalar[pl.FP32] = pl.tensor.read(x, [1, 2, 3])") for s in lines), lines


def test_view_ops_types():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[2, 8, 16], pl.FP16], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            a = pl.reshape(x, [16, 16])
            b = pl.tensor.view(x, [256])
            c = pl.transpose(x, -2, -1)
            d = pl.tensor.reinterpret_view(x, pl.FP32)
            e = pl.reinterpret_view(x, pl.INT8, shape=[512])
            return out

    lines = stmts(P)
    want = ["a: pl.Tensor[[16, 16], pl.FP16]", "b: pl.Tensor[[256], pl.FP16]", "c: pl.Tensor[[2, 16, 8], pl.FP16]",
            "d: pl.Tensor[[2, 8, 8], pl.FP32]", "e: pl.Tensor[[512], pl.INT8]"]
    for w in want:
        assert any(s.startswith(w) for s in lines), (w, lines)


@pytest.mark.parametrize("body, message", [
    ("a = x[0:80, :]", "lies past the tensor's extent 64"),
    ("a = x[0:16:2, :]", "has a step"),
    ("a = x[-1, :]", "negative index -1"),
    ("a = x[0, 0, 0]", "has 3 indices but the tensor has rank 2"),
    ("a = x[8:8, :]", "is empty"),
    ("a = pl.reshape(x, [64, 64])", "cannot reshape a tensor of [64, 128] (8192 elements)"),
    ("a = pl.transpose(x, 0, 2)", "'axis2' = 2 is not an axis"),
    ("a = pl.tensor.reinterpret_view(x, pl.FP32)", "the tensor's own dtype"),
    ("a = pl.slice(x, [1, 128], [0, 0], drop_dims=[1])", "only a unit axis can be dropped"),
])
def test_view_errors_name_the_line_and_fix(body, message):
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        {body}
        return out
'''
    with pytest.raises(Exception) as e:
        pl.parse(src)
    text = str(e.value)
    assert message in text, text
    assert "line" in text or ":8" in text, text


def test_slice_sugar_round_trips():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 128], pl.FP32], pos: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
            a = x[pos:pos + 1, 0:64]
            b = pl.transpose(a, 0, 1)
            c = x[2]
            return out

    again = pl.parse(ir.print_program(P))
    assert ir.structural_equal(P, again)

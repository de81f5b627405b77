"""pl.dynamic dimensions: one compiled program serves every extent (checked against numpy on
both engines, ragged and empty extents included), the extent reaches kernels through
pl.tensor.dim, class-form programs print and parse back, and mismatched extents fail
clearly."""

import numpy as np
import pypto.language as pl
import pytest
from pypto import ir
from pypto.runtime import RunConfig, jit_compile, run

M = pl.dynamic("M")
N = pl.dynamic("N")


@pl.jit
def scale_rows(x: pl.Tensor[[M, 64], pl.FP32], y: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        n = pl.tensor.dim(x, 0)
        for i in pl.range((n + 31) // 32):
            rows = pl.min(n - i * 32, 32)  # the last block may be ragged
            t = pl.load(x, [i * 32, 0], [32, 64], valid_shape=[rows, 64])
            y = pl.store(pl.muls(t, 2.0), [i * 32, 0], y)
    return y


@pytest.mark.parametrize("engine", ["native", "sim"])
def test_one_compiled_program_serves_every_extent(engine):
    compiled = set()
    for m in (100, 32, 7, 64, 0):
        x = np.random.default_rng(m).standard_normal((m, 64)).astype(np.float32)
        y = np.zeros_like(x)
        scale_rows(x, y, config=RunConfig(engine=engine))
        np.testing.assert_allclose(y, 2 * x)
        compiled.add(id(jit_compile(scale_rows, (x, y))))
    assert len(compiled) == 1


def test_the_dimension_is_an_index_parameter_named_after_it():
    x = np.zeros((10, 64), np.float32)
    c = jit_compile(scale_rows, (x, x.copy()))
    text = ir.print_program(c.program)
    assert "x: pl.Tensor[[M, 64], pl.FP32]" in text and "M: pl.Scalar[pl.INDEX]" in text
    assert [p.shape for p in c.host_program.params][:2] == [[-1, 64], [-1, 64]]


def test_extents_that_disagree_are_reported():
    with pytest.raises(ValueError, match=r"dynamic dimension 'M' is 4 in 'x' \(axis 0\) but 5 in 'y' \(axis 0\)"):
        scale_rows(np.zeros((4, 64), np.float32), np.zeros((5, 64), np.float32))


def test_a_static_dimension_still_has_to_match():
    with pytest.raises(pl.ParseError, match=r"'x' is annotated pl.Tensor\[\[M, 64\], pl.FP32\] but the argument has type "
                                            r"pl.Tensor\[\[4, 32\], pl.FP32\]"):
        scale_rows(np.zeros((4, 32), np.float32), np.zeros((4, 32), np.float32))


@pl.jit.incore
def rows_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.range(pl.tensor.dim(a, 0)):
        ta = pl.load(a, [i, 0], [1, 16])
        tb = pl.load(b, [i, 0], [1, 16])
        c = pl.store(pl.add(ta, tb), [i, 0], c)
    return c


@pl.jit
def add_rows(a: pl.Tensor[[M, 16], pl.FP32], b: pl.Tensor[[M, 16], pl.FP32], c: pl.Out[pl.Tensor[[M, 16], pl.FP32]]):
    c = rows_add(a, b, c)
    return c


@pytest.mark.parametrize("engine", ["native", "sim"])
def test_a_jit_kernel_receives_the_callers_extent(engine):
    for m in (3, 9):
        rng = np.random.default_rng(m)
        a, b = (rng.standard_normal((m, 16)).astype(np.float32) for _ in range(2))
        c = np.zeros_like(a)
        add_rows(a, b, c, config=RunConfig(engine=engine))
        np.testing.assert_allclose(c, a + b)


@pl.program
class ExpRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[N, 32], pl.FP32], y: pl.Out[pl.Tensor[[N, 32], pl.FP32]]) -> pl.Tensor[[N, 32], pl.FP32]:
        for i in pl.range(pl.tensor.dim(x, 0) // 8):
            t = pl.load(x, [i * 8, 0], [8, 32])
            y = pl.store(pl.exp(t), [i * 8, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, 32], pl.FP32], y: pl.Out[pl.Tensor[[N, 32], pl.FP32]]) -> pl.Tensor[[N, 32], pl.FP32]:
        y = self.k(x, y)
        return y


def test_class_form_program_runs_every_extent_and_parses_back():
    text = ir.print_program(ExpRows)
    assert "y_1: pl.Tensor[[N, 32], pl.FP32] = self.k(x, y, N)" in text
    assert ir.structural_equal(pl.parse(text), ExpRows)
    for n in (8, 24):
        x = np.random.default_rng(n).standard_normal((n, 32)).astype(np.float32)
        y = np.zeros_like(x)
        run(ExpRows, x, y)
        np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


def test_a_dimension_name_must_be_an_identifier():
    with pytest.raises(TypeError, match="pl.dynamic needs a dimension name"):
        pl.dynamic("2M")


@pl.jit
def tensor_level(x: pl.Tensor[[M, 128], pl.FP32], w: pl.Tensor[[128, 64], pl.FP32],
                 y: pl.Out[pl.Tensor[[M, 64], pl.FP32]], s: pl.Out[pl.Tensor[[M, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:] = pl.matmul(x, w)
        s[:] = pl.row_sum(pl.mul(x, x))
    return y, s


@pytest.mark.parametrize("engine", ["native", "sim"])
def test_tensor_level_ops_tile_a_dynamic_extent(engine):
    # LowerTensorOps walks run-time extents in blocks, the last one with a valid shape.
    for m in (100, 7, 300):
        rng = np.random.default_rng(m)
        x, w = rng.standard_normal((m, 128)).astype(np.float32), rng.standard_normal((128, 64)).astype(np.float32)
        y, s = np.zeros((m, 64), np.float32), np.zeros((m, 1), np.float32)
        tensor_level(x, w, y, s, config=RunConfig(engine=engine))
        np.testing.assert_allclose(y, x @ w, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(s, (x * x).sum(1, keepdims=True), rtol=1e-4)

"""Declared tensor layouts on kernel parameters (issue 14's last leftover):
`pl.TensorView(stride=[...], layout=pl.TensorLayout.ND|DN)` on an InCore parameter is kept on
the tensor type (printed back, parsed, structurally compared) and checked at launch: the tensor
bound to the parameter must have those element strides. The kernel's loads follow the run-time
strides, so a DN parameter fed column-major data reads it right. Both engines, against numpy."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import PyptoError, _core
from pypto.runtime import RunConfig, run

FP32 = pl.FP32
ENGINES = ["native", "sim"]
RNG = np.random.default_rng(1409)


def randn(*shape):
    return RNG.standard_normal(shape, dtype=np.float32)


def cfg(engine):
    return RunConfig(engine=engine, verify="roundtrip")


@pl.program
class DnParam:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], FP32, pl.TensorView(layout=pl.TensorLayout.DN)],
          out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        t = pl.load(x, [0, 0], [16, 64])
        out = pl.store(pl.mul(t, 2.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], FP32], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        out = self.k(x, out)
        return out


@pl.program
class PaddedRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], FP32, pl.TensorView(stride=[128, 1], layout=pl.TensorLayout.ND)],
          out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        t = pl.load(x, [0, 0], [16, 64])
        out = pl.store(pl.add(t, 1.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], FP32], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        out = self.k(x, out)
        return out


@pl.program
class SliceInOrchestration:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], FP32, pl.TensorView(stride=[128, 1], layout=pl.ND)],
          out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        t = pl.load(x, [0, 0], [16, 64])
        out = pl.store(pl.sub(t, 3.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, w: pl.Tensor[[16, 128], FP32], out: pl.Out[pl.Tensor[[16, 64], FP32]]):
        right = pl.slice(w, [16, 64], [0, 64])
        out = self.k(right, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_dn_param_reads_column_major_data(engine):
    x = np.asfortranarray(randn(16, 64))
    assert x.strides == (4, 64)  # column-major: element strides [1, 16]
    out = np.zeros((16, 64), np.float32)
    run(DnParam, x, out, config=cfg(engine))
    np.testing.assert_array_equal(out, np.ascontiguousarray(x) * 2.0)


@pytest.mark.parametrize("engine", ENGINES)
def test_padded_row_stride_param_reads_a_column_slice(engine):
    wide = randn(16, 128)
    out = np.zeros((16, 64), np.float32)
    run(PaddedRows, wide[:, 32:96], out, config=cfg(engine))
    np.testing.assert_allclose(out, wide[:, 32:96] + 1.0, rtol=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_declared_stride_param_takes_an_orchestration_slice(engine):
    wide = randn(16, 128)
    out = np.zeros((16, 64), np.float32)
    run(SliceInOrchestration, wide, out, config=cfg(engine))
    np.testing.assert_allclose(out, wide[:, 64:] - 3.0, rtol=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_dn_param_given_row_major_data_is_refused(engine):
    x = randn(16, 64)  # row-major: strides [64, 1]
    out = np.zeros((16, 64), np.float32)
    with pytest.raises(PyptoError) as e:
        run(DnParam, x, out, config=cfg(engine))
    msg = str(e.value)
    assert "'x'" in msg and "[1, 16]" in msg and "[64, 1]" in msg, msg
    assert "np.asfortranarray" in msg and "fix:" in msg, msg
    assert not out.any()


@pytest.mark.parametrize("engine", ENGINES)
def test_padded_row_param_given_packed_data_is_refused(engine):
    x = randn(16, 64)
    out = np.zeros((16, 64), np.float32)
    with pytest.raises(PyptoError) as e:
        run(PaddedRows, x, out, config=cfg(engine))
    msg = str(e.value)
    assert "'x'" in msg and "stride=[128, 1]" in msg and "[64, 1]" in msg and "fix:" in msg, msg


def test_declared_strides_are_on_the_type_and_round_trip():
    text = _core.ir.print_program(DnParam)
    assert "pl.TensorView(stride=[1, 16], layout=pl.TensorLayout.DN)" in text, text
    again = pl.parse(text)
    assert _core.ir.structural_equal(again, DnParam)
    assert _core.ir.print_program(again) == text
    text = _core.ir.print_program(PaddedRows)
    assert "pl.TensorView(stride=[128, 1], layout=pl.TensorLayout.ND)" in text, text
    assert _core.ir.structural_equal(pl.parse(text), PaddedRows)
    # the declared layout is part of the type: a different stride is a different program
    other = text.replace("stride=[128, 1]", "stride=[256, 1]")
    assert not _core.ir.structural_equal(pl.parse(other), PaddedRows)
    param = next(f for f in DnParam.functions if f.name == "k").params[0]
    assert list(param.type.stride) == [1, 16] and param.type.dn


def test_packed_nd_view_adds_nothing_to_the_type():
    spec = pl.Tensor[[16, 64], FP32, pl.TensorView(stride=[64, 1], layout=pl.TensorLayout.ND)]
    assert spec.layout.strides(spec.shape) == []
    assert pl.TensorView(layout=pl.ND).strides([4, 8]) == []
    assert pl.TensorView(stride=[8, 1], layout=pl.ND).strides([4, 8]) == []
    dn = pl.TensorView(layout=pl.TensorLayout.DN)
    assert dn.strides([2, 4, 8]) == [32, 1, 4]


@pytest.mark.parametrize("make,expect", [
    (lambda: pl.Tensor[[16, 64], FP32, pl.TensorView(stride=[64], layout=pl.ND)], "has 1 entries for the 2 dims"),
    (lambda: pl.Tensor[[64], FP32, pl.TensorView(layout=pl.TensorLayout.DN)], "needs a tensor of rank >= 2"),
])
def test_tensor_view_errors(make, expect):
    with pytest.raises(TypeError) as e:
        make()
    assert expect in str(e.value) and "fix:" in str(e.value)

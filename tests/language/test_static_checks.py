"""pl.static_assert / pl.static_print: checks and prints that happen while the body is parsed
(closure constants and constant arithmetic fold), never at run time."""

import numpy as np
import pypto.language as pl
import pytest
from pypto.runtime import RunConfig


def make_kernel(cols):
    @pl.jit
    def kernel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        pl.static_assert(cols % 16 == 0, "cols must be a multiple of 16")
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, cols])
            pl.static_print("tile", t, "bytes", 16 * cols * 4)
            pl.static_assert(cols <= 256, msg="at most 256 columns")
            pl.store(pl.muls(t, 2.0), [0, 0], c)
        return c

    return kernel


def test_passing_checks_compile_and_print_at_parse_time(capsys):
    a = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    c = np.zeros_like(a)
    make_kernel(64)(a, c, config=RunConfig())
    np.testing.assert_array_equal(c, 2 * a)
    out = capsys.readouterr().out
    assert "test_static_checks.py:" in out
    assert "tile t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] bytes 4096" in out  # a run-time value prints its type


def test_failed_assert_reports_the_message_and_line():
    a = np.zeros((16, 40), np.float32)
    with pytest.raises(Exception) as err:
        make_kernel(40)(a, a.copy(), config=RunConfig())
    assert "pl.static_assert failed: cols must be a multiple of 16" in str(err.value)
    assert "test_static_checks.py:" in str(err.value)


def test_failed_assert_with_msg_keyword():
    a = np.zeros((16, 512), np.float32)
    with pytest.raises(Exception, match="pl.static_assert failed: at most 256 columns"):
        make_kernel(512)(a, a.copy(), config=RunConfig())


def test_failed_assert_without_message_shows_the_condition():
    @pl.jit
    def kernel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        pl.static_assert(1 + 1 == 3)
        return c

    with pytest.raises(Exception, match=r"pl.static_assert failed: 1 \+ 1 == 3"):
        kernel(np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32))


def test_run_time_condition_and_bad_arguments_are_rejected():
    @pl.jit
    def runtime_cond(a: pl.Tensor, n: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
        pl.static_assert(n > 0)
        return c

    @pl.jit
    def bad_kwarg(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        pl.static_assert(True, message="x")
        return c

    z = np.zeros((4, 8), np.float32)
    with pytest.raises(Exception) as err:
        runtime_cond(z, 3, z.copy())
    assert "the condition of pl.static_assert must be a compile-time constant, but 'n > 0' is a run-time value" in str(err.value)
    with pytest.raises(Exception, match="pl.static_assert takes a condition and an optional message"):
        bad_kwarg(z, z.copy())

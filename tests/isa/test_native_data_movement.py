"""The data movement a native kernel calls instead of compiling (include/pypto/isa/optimized/
data_movement.h: TLOAD / TSTORE copies, region copies and transposes, streaming stores), which
the package builds once per x86-64 level (src/engines/native/support/): on every target this
CPU runs (native and each forced lower one), a kernel is handed its level's table and its
copies agree bit for bit with numpy and the reference library, through every copy path
(plain rows, 16 x 16 transposed blocks with edges, partial loads, streamed rows of a large
store)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import _core
from test_matmul_fast_paths import TARGETS, use_target
from test_native_move_paths import check_transpose


@pytest.fixture(params=TARGETS)
def target(request, monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))  # compiled for this target here
    return use_target(monkeypatch, request.param)


@pytest.mark.parametrize("dt", ["BF16", "FP32", "INT8"])
@pytest.mark.parametrize("R,C,valid", [(128, 128, [128, 128]), (33, 47, [33, 47]), (64, 48, [17, 40])])
def test_transposes_match_reference_on_every_target(target, R, C, valid, dt):
    """TTRANS through the table's copy_region: 16 x 16 blocks (2- and 4-byte elements) and the
    edges, and byte elements element by element."""
    check_transpose(R, C, valid, dt, np.random.default_rng(R * 7 + C))


@pl.jit
def scale_rows(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out = 2 a (2304 x 1024 fp32) in [8, 1024] row blocks: a store of more than 8 MiB with
    rows of 4 KiB (>= 1 KiB: the streamed path on AVX targets)."""
    for i in pl.range(0, 2304, 8):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [i, 0], [8, 1024])
            pl.store(pl.mul(t, 2.0), [i, 0], out)
    return out


@pl.jit
def ragged_row_max(a: pl.Tensor, n: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
    """A load of a 16 x n window at (3, 2) into a 16 x 64 tile, padded with the lowest float,
    its row maxima stored: the pad must not win where a row has a valid element."""
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [3, 2], [16, 64], valid_shape=[16, n])
        m = pl.row_max(pl.tile.fillpad(t, pad_value=pl.PadValue.min))
        pl.store(pl.reshape(m, [1, 16]), [0, 0], c)
    return c


def test_streamed_store_on_every_target(target):
    """A 2304 x 1024 fp32 result (9 MiB) stored 8 rows at a time: every element is 2 a."""
    a = np.random.default_rng(5).standard_normal((2304, 1024)).astype(np.float32)
    out = np.zeros_like(a)
    scale_rows(a, out)
    np.testing.assert_array_equal(out, 2 * a)


@pytest.mark.parametrize("n", [1, 13, 64])
def test_partial_load_on_every_target(target, n):
    a = np.random.default_rng(n).standard_normal((24, 70)).astype(np.float32)
    out = np.zeros((1, 16), np.float32)
    ragged_row_max(a, n, out)
    np.testing.assert_array_equal(out[0], a[3:19, 2:2 + n].max(1))


def test_store_path_names_the_table_of_the_target():
    """The benchmark's `store=` path is the table's (movnt wherever the level has AVX)."""
    paths = _core.native_library_paths()
    assert "store=" in paths and paths.split("store=")[1].split()[0] in ("movnt", "plain"), paths

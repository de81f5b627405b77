"""SPMD launch in the DSL: `with pl.spmd(n):` outlines its body as one kernel launched over
n blocks; pl.get_block_idx() / pl.get_block_num() read the block's index and the count."""

import json

import numpy as np
import pytest

import pypto.language as pl
from pypto import PyptoError
from pypto.runtime import RunConfig

R, C, BAND = 64, 32, 8


@pl.jit
def band_index(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(R // BAND):
        i = pl.get_block_idx()
        t = pl.load(x, [i * BAND, 0], [BAND, C])
        out = pl.store(pl.add(t, 2.0), [i * BAND, 0], out)
    return out


def test_each_block_processes_its_band(tmp_path):
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    out = np.zeros((R, C), np.float32)
    band_index(x, out, config=RunConfig(enable_chip_swimlane=1, output_dir=str(tmp_path)))
    np.testing.assert_array_equal(out, x + 2)
    with open(tmp_path / "swimlane.json") as f:
        spans = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X" and e["pid"] == 0]  # host clock
    assert len(spans) == R // BAND  # one task per block


def test_call_carries_block_num_and_kernel_takes_block_params():
    x = np.zeros((R, C), np.float32)
    hp = band_index.compile(x, np.zeros((R, C), np.float32)).host_program
    calls = [i for i in hp.code if str(i.kind).endswith("Call")]
    assert list(calls[0].attrs["block_num"]) == [R // BAND]
    names = [p.name for p in hp.kernels[0].params]
    assert "__block_idx" in names and "__block_num" not in names


@pl.jit
def strided(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(3):
        i = pl.get_block_idx()
        n = pl.get_block_num()
        for band in pl.range(i, R // BAND, n):
            t = pl.load(x, [band * BAND, 0], [BAND, C])
            out = pl.store(pl.mul(t, -1.0), [band * BAND, 0], out)
    return out


def test_block_num_strides_over_bands():
    # 8 bands over 3 blocks: 0,3,6 / 1,4,7 / 2,5 — every band exactly once.
    x = np.random.default_rng(3).standard_normal((R, C)).astype(np.float32)
    out = np.zeros((R, C), np.float32)
    strided(x, out)
    np.testing.assert_array_equal(out, -x)


def test_block_idx_outside_spmd_is_an_error():
    @pl.jit
    def bad(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.AIV):
            i = pl.get_block_idx()
            out = pl.store(pl.load(x, [i * BAND, 0], [BAND, C]), [0, 0], out)
        return out

    with pytest.raises(PyptoError, match="outside a `with pl.spmd"):
        bad(np.zeros((R, C), np.float32), np.zeros((R, C), np.float32))


def test_block_count_must_be_positive():
    @pl.jit
    def bad(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.spmd(0):
            out = pl.store(pl.load(x, [0, 0], [BAND, C]), [0, 0], out)
        return out

    with pytest.raises(PyptoError, match="core_num of pl.spmd must be positive, got 0"):
        bad(np.zeros((R, C), np.float32), np.zeros((R, C), np.float32))

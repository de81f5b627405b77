"""Data movement against numpy slicing: TLOAD (with pad), TSTORE (with atomic add), bounds
errors, TMOV with conversion, TTRANS, TFILLPAD and TEXPANDS."""

import numpy as np
import pytest
from isa_cases import NP, random_tile, run
from pypto import _core


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32", "INT8"])
def test_tload_reads_the_window_at_offsets(rng, dtype):
    g = random_tile(rng, (3, 40, 48), dtype)
    tile = np.zeros((16, 32), NP[dtype])
    run("TLOAD", [tile], [g, [2, 8, 16]])
    np.testing.assert_array_equal(tile, g[2, 8:24, 16:48])


def test_tload_from_a_strided_view(rng):
    base = random_tile(rng, (64, 64), "FP32")
    view = base[::2, 1::3]  # non-contiguous: strides (128, 3) elements
    tile = np.zeros((8, 8), np.float32)
    run("TLOAD", [tile], [view, [4, 2]])
    np.testing.assert_array_equal(tile, view[4:12, 2:10])


@pytest.mark.parametrize(
    "pad,value",
    [("zero", 0.0), ("max", np.finfo(np.float32).max), ("min", np.finfo(np.float32).min)],
)
def test_tload_pads_outside_the_valid_region(rng, pad, value):
    g = random_tile(rng, (10, 12), "FP32")
    tile = np.full((16, 16), 3.0, np.float32)
    run("TLOAD", [tile], [g, [0, 0]], valid_shape=[10, 12], pad=pad)
    np.testing.assert_array_equal(tile[:10, :12], g)
    assert (tile[10:, :] == value).all() and (tile[:, 12:] == value).all()


def test_tload_fp16_pad_max_is_the_largest_finite():
    g = np.ones((4, 4), np.float16)
    tile = np.zeros((8, 8), np.float16)
    run("TLOAD", [tile], [g, [0, 0]], valid_shape=[4, 4], pad="max")
    assert (tile[4:, :] == np.float16(65504)).all()


def test_tload_past_the_shape_names_tile_tensor_offsets_and_shape(rng):
    g = random_tile(rng, (32, 32), "FP32")
    tile = np.zeros((16, 16), np.float32)
    with pytest.raises(_core.PyptoError) as e:
        run("TLOAD", [tile], [g, [24, 0]])
    msg = str(e.value)
    assert "tile 'out0'" in msg and "'in0'[32, 32] FP32" in msg and "offsets [24, 0]" in msg
    assert "goes past the tensor's shape" in msg


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
def test_tstore_writes_only_the_valid_region(rng, dtype):
    g = np.zeros((20, 30), NP[dtype])
    tile = random_tile(rng, (8, 16), dtype)
    run("TSTORE", [g], [tile, [4, 10]], valid_shape=[5, 9])
    expected = np.zeros_like(g)
    expected[4:9, 10:19] = tile[:5, :9]
    np.testing.assert_array_equal(g, expected)


def test_tstore_atomic_add(rng):
    g = random_tile(rng, (8, 8), "FP32")
    tile = random_tile(rng, (8, 8), "FP32")
    expected = g + tile
    run("TSTORE", [g], [tile, [0, 0]], attrs={"atomic": "add"}, memories=[None, "Acc"])
    np.testing.assert_array_equal(g, expected)


def test_tstore_past_the_shape_is_an_error(rng):
    with pytest.raises(_core.PyptoError, match="goes past the tensor's shape"):
        run("TSTORE", [np.zeros((8, 8), np.float32)], [np.zeros((8, 8), np.float32), [0, 4]])


def test_tmov_converts_fp32_to_fp16(rng):
    src = random_tile(rng, (16, 16), "FP32")
    dst = np.zeros((16, 16), np.float16)
    run("TMOV", [dst], [src], memories=["Vec", "Acc"])
    np.testing.assert_array_equal(dst, src.astype(np.float16))


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT8"])
def test_ttrans(rng, dtype):
    src = random_tile(rng, (8, 24), dtype)
    dst = np.zeros((24, 8), NP[dtype])
    np.testing.assert_array_equal(run("TTRANS", [dst], [src]), src.T)


def test_tfillpad(rng):
    src = random_tile(rng, (8, 16), "FP32")
    dst = np.zeros((8, 16), np.float32)
    _core.isa_execute("TFILLPAD", [dst], [src], valid_shape=[5, 7], pad="min")
    np.testing.assert_array_equal(dst[:5, :7], src[:5, :7])
    assert (dst[5:] == np.finfo(np.float32).min).all() and (
        dst[:, 7:] == np.finfo(np.float32).min
    ).all()


@pytest.mark.parametrize(
    "dtype,value", [("FP32", 2.5), ("FP16", -1.25), ("INT32", 7), ("INT8", -3)]
)
def test_texpands(dtype, value):
    dst = np.zeros((8, 16), NP[dtype])
    np.testing.assert_array_equal(
        run("TEXPANDS", [dst], [value]), np.full((8, 16), value, NP[dtype])
    )


def test_operand_of_the_wrong_kind_is_an_error():
    with pytest.raises(_core.PyptoError, match="operand 1 must be a scalar"):
        run(
            "TADDS",
            [np.zeros((4, 4), np.float32)],
            [np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32)],
        )

"""Data movement against numpy slicing, over every dtype the instruction table allows (BF16
as uint16 bit patterns) and the shapes of isa_cases.CASES: TLOAD (with pad), TSTORE (with
atomic add), TPREFETCH, bounds errors, TMOV (with fp32 -> fp16/bf16 conversion, rounded
once to nearest even), TTRANS, TFILLPAD and its in-place / expanding forms, TEXTRACT,
TSUBVIEW, TINSERT, TCONCAT, TRESHAPE, TASSIGN, TEXPANDS, and the pipe synchronisation
instructions (which move no data)."""

import numpy as np
import pytest
from isa_cases import (
    CASE_IDS,
    CASES,
    FLOATS,
    NP,
    check_exact,
    check_outside_kept,
    random_tile,
    round_to,
    run,
    table_dtypes,
    values,
)
from pypto import _core

ALL = table_dtypes("TLOAD")


def pad_of(dtype, pad):
    """The pad value of `pad` for `dtype`, in the dtype's storage."""
    if pad == "zero":
        return np.zeros((), NP[dtype])
    hi = pad == "max"
    if dtype in FLOATS:
        biggest = {"FP32": float(np.finfo(np.float32).max), "FP16": 65504.0, "BF16": float(2**127 * (2 - 2**-7))}[dtype]
        return round_to(np.float64(biggest if hi else -biggest), dtype)
    if dtype == "BOOL":
        return np.bool_(hi)
    info = np.iinfo(NP[dtype])
    return NP[dtype](info.max if hi else info.min)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.array_equal(a.view(f"u{a.itemsize}"), np.broadcast_to(b, a.shape).view(f"u{b.itemsize}"))


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", ALL)
def test_tload_reads_the_window_at_offsets(rng, dtype, shape, valid):
    R, C = shape
    g = random_tile(rng, (3, R + 8, C + 8), dtype)
    tile = random_tile(rng, shape, dtype)
    before = tile.copy()
    run("TLOAD", [tile], [g, [2, 4, 5]], valid_shape=valid)
    r, c = valid or shape
    assert same_bits(tile[:r, :c], g[2, 4:4 + r, 5:5 + c])
    check_outside_kept(tile, before, valid)  # no pad: the rest is left as it was


def test_tload_from_a_strided_view(rng):
    base = random_tile(rng, (64, 64), "FP32")
    view = base[::2, 1::3]  # non-contiguous: strides (128, 3) elements
    tile = np.zeros((8, 8), np.float32)
    run("TLOAD", [tile], [view, [4, 2]])
    np.testing.assert_array_equal(tile, view[4:12, 2:10])


@pytest.mark.parametrize("pad", ["zero", "max", "min"])
@pytest.mark.parametrize("dtype", ALL)
def test_tload_pads_outside_the_valid_region(rng, dtype, pad):
    g = random_tile(rng, (10, 12), dtype)
    tile = random_tile(rng, (16, 24), dtype)
    run("TLOAD", [tile], [g, [0, 0]], valid_shape=[10, 12], pad=pad)
    assert same_bits(tile[:10, :12], g)
    assert same_bits(tile[10:, :], pad_of(dtype, pad)) and same_bits(tile[:, 12:], pad_of(dtype, pad))


def test_tload_past_the_shape_names_tile_tensor_offsets_and_shape(rng):
    g = random_tile(rng, (32, 32), "FP32")
    tile = np.zeros((16, 16), np.float32)
    with pytest.raises(_core.PyptoError) as e:
        run("TLOAD", [tile], [g, [24, 0]])
    msg = str(e.value)
    assert "tile 'out0'" in msg and "'in0'[32, 32] FP32" in msg and "offsets [24, 0]" in msg
    assert "goes past the tensor's shape" in msg


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", ALL)
def test_tstore_writes_only_the_valid_region(rng, dtype, shape, valid):
    R, C = shape
    g = np.zeros((R + 6, C + 10), NP[dtype])
    tile = random_tile(rng, shape, dtype)
    run("TSTORE", [g], [tile, [4, 10]], valid_shape=valid)
    r, c = valid or shape
    expected = np.zeros_like(g)
    expected[4:4 + r, 10:10 + c] = tile[:r, :c]
    assert same_bits(g, expected)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TSTORE", exclude=("BOOL",)))
def test_tstore_atomic_add(rng, dtype, shape, valid):
    """Atomic add is one addition per element: correctly rounded (integers wrap)."""
    g = random_tile(rng, shape, dtype)
    tile = random_tile(rng, shape, dtype)
    before = g.copy()
    run("TSTORE", [g], [tile, [0, 0]], attrs={"atomic": "add"}, memories=[None, "Acc"], valid_shape=valid)
    check_exact(g, values(before, dtype) + values(tile, dtype), dtype, valid, what=f"atomic add {dtype}: ")
    check_outside_kept(g, before, valid)


def test_tstore_past_the_shape_is_an_error(rng):
    with pytest.raises(_core.PyptoError, match="goes past the tensor's shape"):
        run("TSTORE", [np.zeros((8, 8), np.float32)], [np.zeros((8, 8), np.float32), [0, 4]])


@pytest.mark.parametrize("shape", [s for s, _ in CASES], ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TPREFETCH"))
def test_tprefetch_moves_no_data(rng, dtype, shape):
    g = random_tile(rng, (shape[0] + 2, shape[1] + 2), dtype)
    before = g.copy()
    run("TPREFETCH", [], [g, [1, 2]])
    assert same_bits(g, before)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TMOV"))
def test_tmov_copies(rng, dtype, shape, valid):
    src = random_tile(rng, shape, dtype)
    dst = random_tile(rng, shape, dtype)
    before = dst.copy()
    run("TMOV", [dst], [src], valid_shape=valid)
    r, c = valid or shape
    assert same_bits(dst[:r, :c], src[:r, :c])
    check_outside_kept(dst, before, valid)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dst_dt", ["FP16", "BF16", "FP32"])
def test_tmov_converts_from_the_accumulator(rng, dst_dt, shape, valid):
    src = rng.standard_normal(shape).astype(np.float32) * np.float32(1000)
    src.reshape(-1)[:4] = [70000.0, -1e-9, 1 + 2.0**-11, 1 + 2.0**-8]  # overflow, subnormal, halfway points
    dst = np.zeros(shape, NP[dst_dt])
    run("TMOV", [dst], [src], memories=["Vec", "Acc"], valid_shape=valid)
    check_exact(dst, src.astype(np.float64), dst_dt, valid)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TTRANS"))
def test_ttrans(rng, dtype, shape, valid):
    src = random_tile(rng, (shape[1], shape[0]), dtype)
    dst = np.zeros(shape, NP[dtype])
    run("TTRANS", [dst], [src], valid_shape=valid)
    r, c = valid or shape
    assert same_bits(dst[:r, :c], src.T[:r, :c])
    check_outside_kept(dst, np.zeros_like(dst), valid)


@pytest.mark.parametrize("pad", ["zero", "max", "min"])
@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TFILLPAD"))
def test_tfillpad_forms(rng, dtype, shape, valid, pad):
    r, c = valid or shape
    src = random_tile(rng, shape, dtype)
    dst = random_tile(rng, shape, dtype)
    run("TFILLPAD", [dst], [src], valid_shape=valid, pad=pad)
    want = np.broadcast_to(pad_of(dtype, pad), shape).copy()
    want[:r, :c] = src[:r, :c]
    assert same_bits(dst, want)

    t = src.copy()
    run("TFILLPAD_INPLACE", [t], [], valid_shape=valid, pad=pad)
    assert same_bits(t, want)

    bigger = random_tile(rng, (shape[0] + 2, shape[1] + 8), dtype)
    run("TFILLPAD_EXPAND", [bigger], [src], pad=pad)
    grown = np.broadcast_to(pad_of(dtype, pad), bigger.shape).copy()
    grown[: shape[0], : shape[1]] = src
    assert same_bits(bigger, grown)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TEXTRACT"))
@pytest.mark.parametrize("name", ["TEXTRACT", "TSUBVIEW"])
def test_textract_and_tsubview(rng, name, dtype, shape, valid):
    R, C = shape
    src = random_tile(rng, (R + 4, C + 6), dtype)
    dst = np.zeros(shape, NP[dtype])
    run(name, [dst], [src, [3, 5]], valid_shape=valid)
    r, c = valid or shape
    assert same_bits(dst[:r, :c], src[3:3 + r, 5:5 + c])
    check_outside_kept(dst, np.zeros_like(dst), valid)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TINSERT"))
def test_tinsert(rng, dtype, shape, valid):
    R, C = shape
    src = random_tile(rng, shape, dtype)
    dst = random_tile(rng, (R + 4, C + 6), dtype)
    want = dst.copy()
    r, c = valid or shape
    want[2:2 + r, 1:1 + c] = src[:r, :c]
    run("TINSERT", [dst], [src, [2, 1]], valid_shape=valid)
    assert same_bits(dst, want)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TCONCAT"))
def test_tconcat(rng, dtype, shape, valid):
    R, C = shape
    a, b = random_tile(rng, shape, dtype), random_tile(rng, shape, dtype)
    dst = np.zeros((R, 2 * C), NP[dtype])
    run("TCONCAT", [dst], [a, b], valid_shape=valid)
    r, c = valid or shape
    want = np.zeros_like(dst)
    want[:r, :c] = a[:r, :c]
    want[:r, C:C + c] = b[:r, :c]  # b's columns start after a's tile width
    assert same_bits(dst, want)


RESHAPES = [((8, 8), (4, 16)), ((16, 48), (48, 16)), ((40, 8), (8, 40)), ((6, 10), (1, 60))]


@pytest.mark.parametrize("src_shape,dst_shape", RESHAPES, ids=[f"{a}to{b}" for a, b in RESHAPES])
@pytest.mark.parametrize("dtype", table_dtypes("TRESHAPE"))
def test_treshape(rng, dtype, src_shape, dst_shape):
    a = random_tile(rng, src_shape, dtype)
    out = np.zeros(dst_shape, NP[dtype])
    run("TRESHAPE", [out], [a])
    assert same_bits(out, a.reshape(dst_shape))


def test_treshape_of_another_byte_size_is_an_error(rng):
    with pytest.raises(_core.PyptoError, match="same byte size"):
        run("TRESHAPE", [np.zeros((4, 4), np.float32)], [np.zeros((4, 8), np.float32)])


@pytest.mark.parametrize("shape", [s for s, _ in CASES], ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TASSIGN"))
def test_tassign_moves_no_data(rng, dtype, shape):
    t = random_tile(rng, shape, dtype)
    before = t.copy()
    run("TASSIGN", [t], [256])
    assert same_bits(t, before)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TEXPANDS"))
def test_texpands(dtype, shape, valid):
    for value in ([2.5, -0.3, 1 + 2.0**-11 + 2.0**-40] if dtype in FLOATS else [7, -3]):
        dst = np.zeros(shape, NP[dtype])
        run("TEXPANDS", [dst], [value], valid_shape=valid)
        # a float scalar rounds once to the dtype (1 + 2^-11 + 2^-40 is just above an fp16
        # halfway point: through float it would round down)
        check_exact(dst, np.full(shape, value), dtype, valid, what=f"TEXPANDS {dtype} {value}: ")
        check_outside_kept(dst, np.zeros_like(dst), valid)


@pytest.mark.parametrize("name,attrs", [("SET_FLAG", {"src": "MTE2", "dst": "V", "event": 0}),
                                        ("WAIT_FLAG", {"src": "MTE2", "dst": "V", "event": 0}),
                                        ("PIPE_BARRIER", {"pipe": "ALL"}),
                                        ("SYNC_SET", {"pipe": "MTE3", "event": 1, "core_type": "aiv"}),
                                        ("SYNC_WAIT", {"pipe": "MTE3", "event": 1}),
                                        ("SET_FFTS", {}), ("FENCE", {}), ("CACHEINVALID", {}),
                                        ("SYNCALL", {"mode": "hard", "core_type": "mix"}),
                                        ("PIPE_INIT", {"id": 1, "slot_num": 4, "slot_size": 8192, "dir_mask": 1})])
def test_sync_instructions_move_no_data(name, attrs):
    run(name, [], [], attrs=attrs)  # timing only: the cycle model's tests check their effect


def test_operand_of_the_wrong_kind_is_an_error():
    with pytest.raises(_core.PyptoError, match="operand 1 must be a scalar"):
        run(
            "TADDS",
            [np.zeros((4, 4), np.float32)],
            [np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32)],
        )

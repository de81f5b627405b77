"""The instructions added with the complete tile library against numpy: arg-reductions,
the TPART combines, the generators (TCI up and down, TTRI, TRANDOM: Philox4x32), gather / scatter within a tile
and to / from global memory, sorting, and TSELS; every dtype the instruction table allows
(BF16 as uint16 bit patterns) over isa_cases.CASES or four shapes of the same kinds
(square, non-square, a valid region smaller than the tile). Float results are checked
bit for bit against values rounded by isa_cases.round_to (the TPART combines are single
operations, hence correctly rounded; see docs/isa.md, "Precision")."""

import pathlib

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
from pypto import _core, isa

F = ["FP32", "FP16"]


def region(shape, valid):
    return valid or shape


def check(out, want, valid, dtype):
    r, c = valid
    tol = 1e-6 if dtype == "FP32" else 1e-3
    if dtype in ("FP32", "FP16"):
        np.testing.assert_allclose(out[:r, :c].astype(np.float64), want[:r, :c], rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(out[:r, :c], want[:r, :c])


def coarse_tile(rng, shape, dtype):
    """Values from a handful of levels, so that rows and columns hold ties."""
    v = rng.integers(-3, 4, size=shape).astype(np.float64) * (0.5 if dtype in FLOATS else 7)
    if dtype == "UINT8":
        v = np.abs(v)
    return round_to(v, dtype)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name", ["TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN"])
@pytest.mark.parametrize("dtype", table_dtypes("TROWARGMAX"))
def test_arg_reductions(rng, shape, valid, dtype, name):
    a = coarse_tile(rng, shape, dtype) if rng.random() < 0.5 else random_tile(rng, shape, dtype)
    r, c = region(shape, valid)
    rows = name.startswith("TROW")
    out = np.full((shape[0], 1) if rows else (1, shape[1]), -7, np.int32)
    run(name, [out], [a], valid_shape=valid)
    sub = values(a, dtype)[:r, :c]
    f = np.argmax if name.endswith("MAX") else np.argmin  # numpy also returns the first index
    if rows:
        np.testing.assert_array_equal(out[:r, 0], f(sub, axis=1))
        assert (out[r:, 0] == -7).all()
    else:
        np.testing.assert_array_equal(out[0, :c], f(sub, axis=0))
        assert (out[0, c:] == -7).all()


PART = {"TPARTADD": np.add, "TPARTMUL": np.multiply, "TPARTMAX": np.maximum, "TPARTMIN": np.minimum}
PART_SHAPES = [(8, 8), (16, 48), (40, 8), (6, 10)]


@pytest.mark.parametrize("shape", PART_SHAPES, ids=[f"{r}x{c}" for r, c in PART_SHAPES])
@pytest.mark.parametrize("name", list(PART))
@pytest.mark.parametrize("dtype", table_dtypes("TPARTADD"))
def test_partial_combines(rng, dtype, name, shape):
    a, b = random_tile(rng, shape, dtype, -2, 2), random_tile(rng, shape, dtype, -2, 2)
    out = np.zeros(shape, NP[dtype])
    va = (shape[0] // 2, shape[1])  # a: top half valid
    vb = (shape[0], shape[1] // 2 + 1)  # b: left half valid
    av, bv = values(a, dtype), values(b, dtype)
    want = np.zeros(shape, np.float64 if dtype in FLOATS else np.int64)
    ia = np.zeros(shape, bool)
    ia[: va[0], : va[1]] = True
    ib = np.zeros(shape, bool)
    ib[: vb[0], : vb[1]] = True
    want = np.where(ia & ib, PART[name](av, bv), np.where(ia, av, np.where(ib, bv, 0)))
    run_part(name, dtype, out, a, va, b, vb)
    check_exact(out, want, dtype, what=f"{name} {dtype}: ")


def tensor_arg(a, dtype, name):
    """(data_ptr, dtype, shape, strides_in_elements, name) of a numpy array (no copy)."""
    return (a.ctypes.data, dtype, list(a.shape), [s // a.itemsize for s in a.strides], name)


def run_part(name, dt, out, a, va, b, vb):
    """One TPART call with a and b of different valid shapes, through a hand-built kernel
    (isa_execute gives every tile the same valid shape)."""
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
    from hand_built_programs import offsets, tile_instr

    c = _core
    rows, cols = out.shape
    k = c.Kernel()
    k.name = "part"
    k.params = [c.ParamDesc(n, True, dt, [rows, cols], d) for n, d in (("a", "In"), ("b", "In"), ("out", "Out"))]
    nb = (rows * cols * out.itemsize + 31) // 32 * 32
    tiles = [c.TileDesc(n, dt, "Vec", rows, cols, i * nb) for i, n in enumerate(("ta", "tb", "to"))]
    tiles[0].valid_rows, tiles[0].valid_cols = c.Scalar.imm(va[0]), c.Scalar.imm(va[1])
    tiles[1].valid_rows, tiles[1].valid_cols = c.Scalar.imm(vb[0]), c.Scalar.imm(vb[1])
    k.tiles = tiles
    T, G = c.Operand.tile, c.Operand.tensor
    k.code = [
        tile_instr("TEXPANDS", [T(2)], [c.Operand.scalar_of(c.Scalar.imm(0))]),
        tile_instr("TLOAD", [T(0)], [G(0), offsets(0, 0)]),
        tile_instr("TLOAD", [T(1)], [G(1), offsets(0, 0)]),
        tile_instr(name, [T(2)], [T(0), T(1)]),
        tile_instr("TSTORE", [G(2)], [T(2), offsets(0, 0)]),
    ]
    c.run_kernel(c.insert_sync(k), [tensor_arg(a, dt, "a"), tensor_arg(b, dt, "b"), tensor_arg(out, dt, "out")])


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TCI"))
def test_tci(shape, valid, dtype):
    r, c = region(shape, valid)
    for start in ([5, 0.5] if dtype in FLOATS else [5, -3]):
        for descending in (False, True):
            out = np.zeros(shape, NP[dtype])
            run("TCI", [out], [start], attrs={"descending": descending}, valid_shape=valid)
            step = -1 if descending else 1
            want = start + step * np.arange(r * c).reshape(r, c)  # integers wrap; floats round (bf16 past 256)
            check_exact(out, want, dtype, (r, c), what=f"TCI {dtype} from {start} (descending={descending}): ")
            check_outside_kept(out, np.zeros_like(out), valid)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TTRI"))
def test_ttri(shape, valid, dtype):
    r, c = region(shape, valid)
    for upper, diag in ((False, 0), (False, 2), (True, -1), (True, 3)):
        m = np.zeros(shape, NP[dtype])
        run("TTRI", [m], [diag], attrs={"upper": upper}, valid_shape=valid)
        want = np.triu(np.ones((r, c)), diag) if upper else np.tril(np.ones((r, c)), diag)
        check_exact(m, want, dtype, (r, c))
        check_outside_kept(m, np.zeros_like(m), valid)


M32 = 0xFFFFFFFF


def philox_block(ctr, key, rounds):
    """Philox4x32-rounds of one counter (4 words) and key (2 words), in Python integers."""
    x, (k0, k1) = list(ctr), key
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * x[0], 0xCD9E8D57 * x[2]
        x = [((p1 >> 32) ^ x[1] ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ x[3] ^ k1) & M32, p0 & M32]
    return x


def philox_words(n, key, ctr, rounds=10):
    """n words: element i is word i % 4 of the block for the 128-bit counter + i // 4."""
    base = sum(int(c) << (32 * w) for w, c in enumerate(ctr))
    words = []
    for b in range((n + 3) // 4):
        v = (base + b) % (1 << 128)
        words += philox_block([(v >> (32 * w)) & M32 for w in range(4)], key, rounds)
    return np.array(words[:n], np.uint64)


def test_philox_reference_matches_random123():
    """The known-answer vectors of Random123's philox4x32_10."""
    assert philox_block([0, 0, 0, 0], (0, 0), 10) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox_block([M32] * 4, (M32, M32), 10) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    out = np.zeros((1, 8), np.uint32)
    run("TRANDOM", [out], [0xA4093822, 0x299F31D0, 0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344])
    np.testing.assert_array_equal(out[0, :4], [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1])


SIGNIFICAND = {"FP32": 24, "FP16": 11, "BF16": 8}


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TRANDOM"))
def test_trandom_is_philox(shape, valid, dtype):
    r, c = region(shape, valid)
    out = np.zeros(shape, NP[dtype])
    key, ctr = (7, 0xDEADBEEF), (0xFFFFFFFD, M32, 5, 0)  # the block counter carries across words
    rounds = 7 if dtype in ("INT16", "BF16") else 10
    run("TRANDOM", [out], [*key, *ctr], attrs={"rounds": rounds}, valid_shape=valid)
    z = philox_words(r * c, key, ctr, rounds).reshape(r, c)
    if dtype in FLOATS:  # the top p bits as k / 2^p: exact in the dtype, in [0, 1)
        p = SIGNIFICAND[dtype]
        want = (z >> np.uint64(32 - p)).astype(np.float64) / 2.0**p
        check_exact(out, want, dtype, (r, c))
        assert (values(out, dtype)[:r, :c] < 1).all()
    else:
        np.testing.assert_array_equal(out[:r, :c], z.astype(np.uint32).astype(NP[dtype]))
    check_outside_kept(out, np.zeros_like(out), valid)


def test_trandom_uint32_words():
    out = np.zeros((4, 16), np.uint32)
    run("TRANDOM", [out], [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(out, philox_words(64, (1, 2), (3, 4, 5, 6)).reshape(4, 16).astype(np.uint32))


def test_trandom_fp16_stays_below_one():
    """24 random bits rounded to fp16 reach 1.0 (1 - 2^-12 and up); the top 11 never do."""
    out = np.zeros((64, 64), np.float16)
    run("TRANDOM", [out], [7, 100, 0, 0, 0, 0])
    assert out.max() < 1


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TGATHER"))
def test_gather_scatter_in_a_tile(rng, shape, valid, dtype):
    r, c = region(shape, valid)
    src = random_tile(rng, shape, dtype)
    idx = np.zeros(shape, np.int32)
    idx[:r, :c] = np.stack([rng.permutation(c) for _ in range(r)])
    out = np.zeros(shape, NP[dtype])
    run("TGATHER", [out], [src, idx], valid_shape=valid)
    np.testing.assert_array_equal(out[:r, :c], np.take_along_axis(src[:r, :c], idx[:r, :c], axis=1))
    check_outside_kept(out, np.zeros_like(out), valid)
    back = np.zeros(shape, NP[dtype])
    run("TSCATTER", [back], [out, idx], valid_shape=valid)
    np.testing.assert_array_equal(back[:r, :c], src[:r, :c])
    check_outside_kept(back, np.zeros_like(back), valid)


@pytest.mark.parametrize("shape,valid", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("MGATHER"))
def test_gather_scatter_global(rng, shape, valid, dtype):
    r, c = region(shape, valid)
    flat = random_tile(rng, (3, 50), dtype)
    gidx = rng.integers(0, 150, size=shape).astype(np.int32)
    got = np.zeros(shape, NP[dtype])
    run("MGATHER", [got], [flat, gidx], valid_shape=valid)
    np.testing.assert_array_equal(got[:r, :c], flat.reshape(-1)[gidx[:r, :c]])
    check_outside_kept(got, np.zeros_like(got), valid)
    size = max(150, r * c)  # unique indices: every element lands somewhere of its own
    sidx = np.full(shape, 10**6, np.int32)  # outside the valid region: never read
    sidx[:r, :c] = rng.permutation(size)[: r * c].reshape(r, c)
    vals = random_tile(rng, shape, dtype)
    dst = np.zeros(size, NP[dtype])
    run("MSCATTER", [dst], [vals, sidx], valid_shape=valid)
    want = np.zeros(size, NP[dtype])
    want[sidx[:r, :c].reshape(-1)] = vals[:r, :c].reshape(-1)
    np.testing.assert_array_equal(dst, want)


SORT_CASES = [(4, 32, None), (3, 64, None), (2, 96, None), (4, 64, (3, 40))]


@pytest.mark.parametrize("rows,cols,valid", SORT_CASES, ids=["4x32", "3x64", "2x96", "4x64v3x40"])
@pytest.mark.parametrize("dtype", table_dtypes("TSORT32"))
def test_sort32_and_mrgsort(rng, rows, cols, valid, dtype):
    shape = (rows, cols)
    src = coarse_tile(rng, shape, dtype) if dtype in ("INT8", "UINT8") else random_tile(rng, shape, dtype)
    key = values(src, dtype)
    vals, idx = np.zeros(shape, NP[dtype]), np.zeros(shape, np.int32)
    run("TSORT32", [vals, idx], [src], valid_shape=valid)
    r, c = valid or shape
    for i in range(r):
        for b0 in range(0, c, 32):
            blk = key[i, b0:min(c, b0 + 32)]
            order = np.argsort(-blk, kind="stable")  # descending, equal values keep their order
            np.testing.assert_array_equal(idx[i, b0:b0 + len(blk)], order + b0)
            np.testing.assert_array_equal(vals[i, b0:b0 + len(blk)], src[i, b0 + order])
    if valid is None and cols >= 64:  # merge the first two sorted blocks
        mv, mi = np.zeros((rows, 64), NP[dtype]), np.zeros((rows, 64), np.int32)
        run("TMRGSORT", [mv, mi], [vals[:, :32].copy(), idx[:, :32].copy(), vals[:, 32:64].copy(), idx[:, 32:64].copy()])
        order = np.argsort(-key[:, :64], axis=1, kind="stable")
        np.testing.assert_array_equal(mv, np.take_along_axis(src[:, :64], order, axis=1))
        np.testing.assert_array_equal(mi, order)



MERGE_CASES = [((4, 32), None), ((8, 8), None), ((2, 48), None), ((4, 32), (3, 13))]


@pytest.mark.parametrize("shape,valid", MERGE_CASES, ids=["4x32", "8x8", "2x48", "4x32v3x13"])
@pytest.mark.parametrize("dtype", table_dtypes("TMRGSORT"))
def test_tmrgsort(rng, dtype, shape, valid):
    """Two descending rows merge into one; equal values take a's first."""
    r, n = valid or shape
    halves = []
    for first in (0, 1000):
        v = coarse_tile(rng, shape, dtype) if rng.random() < 0.5 else random_tile(rng, shape, dtype)
        key = values(v, dtype)
        order = np.argsort(-key, axis=1, kind="stable")
        halves += [np.take_along_axis(v, order, axis=1), (first + np.arange(shape[1]) * 3 + np.zeros(shape)).astype(np.int32)]
    mv, mi = np.zeros((shape[0], 2 * shape[1]), NP[dtype]), np.zeros((shape[0], 2 * shape[1]), np.int32)
    run("TMRGSORT", [mv, mi], halves, valid_shape=valid)
    av, ai, bv, bi = halves
    both_v = np.concatenate([av[:r, :n], bv[:r, :n]], axis=1)
    both_i = np.concatenate([ai[:r, :n], bi[:r, :n]], axis=1)
    order = np.argsort(-values(both_v, dtype), axis=1, kind="stable")  # stable: a's equal values first
    np.testing.assert_array_equal(mv[:r, : 2 * n], np.take_along_axis(both_v, order, axis=1))
    np.testing.assert_array_equal(mi[:r, : 2 * n], np.take_along_axis(both_i, order, axis=1))

@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
def test_tsels_and_fillpad_forms(rng, shape, valid, dtype):
    mask = rng.integers(0, 2, size=shape).astype(np.bool_)
    a = random_tile(rng, shape, dtype)
    out = np.zeros(shape, NP[dtype])
    packed = np.packbits(mask, axis=1, bitorder="little")  # one bit per element (UINT8 mask tile)
    run("TSELS", [out], [packed, a, 2], valid_shape=valid and list(valid))
    check(out, np.where(mask, a, 2).astype(np.float64), region(shape, valid), dtype)
    r, c = region(shape, valid)
    t = a.copy()
    _core.isa_execute("TFILLPAD_INPLACE", [t], [], valid_shape=list(valid) if valid else None, pad="max")
    want = a.copy()
    big = np.finfo(NP[dtype]).max if dtype in F else np.iinfo(NP[dtype]).max
    want[r:, :] = big
    want[:, c:] = big
    np.testing.assert_array_equal(t, want)
    bigger = np.zeros((shape[0] + 2, shape[1] + 8), NP[dtype])
    _core.isa_execute("TFILLPAD_EXPAND", [bigger], [a], pad="min")
    low = np.finfo(NP[dtype]).min if dtype in F else np.iinfo(NP[dtype]).min
    want = np.full(bigger.shape, low, NP[dtype])
    want[: shape[0], : shape[1]] = a
    np.testing.assert_array_equal(bigger, want)


def test_isa_doc_is_up_to_date():
    doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "isa.md"
    assert doc.read_text() == isa.table_markdown(), "regenerate with: python tools/gen_isa_doc.py"
    from pypto.tools.zh_docs import generated_page

    zh = doc.parent / "zh" / "isa.md"
    assert zh.read_text() == generated_page("isa.md", isa.table_markdown()), "regenerate with: python tools/gen_isa_doc.py"
    for name in ["TROWARGMAX", "TSORT32", "SET_FLAG", "TGEMV_BIAS", "TRANDOM"]:
        assert f"| {name} |" in doc.read_text()

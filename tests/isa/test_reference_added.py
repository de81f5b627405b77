"""The instructions added with the complete tile library, each against numpy over several
dtypes and shapes (a valid region smaller than the tile and a non-square tile included)."""

import pathlib

import numpy as np
import pytest

from isa_cases import NP, random_tile, run
from pypto import _core, isa

SHAPES = [(8, 8), (16, 32), (4, 64), (32, 16)]
VALID = [None, None, None, (3, 5)]  # the last shape runs with a partly valid tile
CASES = list(zip(SHAPES, VALID))
F = ["FP32", "FP16"]
NUM = ["FP32", "FP16", "INT32", "INT16"]


def region(shape, valid):
    return valid or shape


def check(out, want, valid, dtype):
    r, c = valid
    tol = 1e-6 if dtype == "FP32" else 1e-3
    if dtype in ("FP32", "FP16"):
        np.testing.assert_allclose(out[:r, :c].astype(np.float64), want[:r, :c], rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(out[:r, :c], want[:r, :c])


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", NUM)
@pytest.mark.parametrize("name,fn", [("TADDC", lambda a, b, c: a + b + c), ("TSUBC", lambda a, b, c: a - b + c)])
def test_ternary(rng, shape, valid, dtype, name, fn):
    a, b, c = (random_tile(rng, shape, dtype) for _ in range(3))
    out = np.zeros(shape, NP[dtype])
    run(name, [out], [a, b, c], valid_shape=valid and list(valid))
    want = fn(*(x.astype(np.float64) for x in (a, b, c)))
    if dtype.startswith("INT"):
        want = fn(*(x.astype(np.int64) for x in (a, b, c))).astype(NP[dtype])
    check(out, want, region(shape, valid), dtype)


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", NUM)
def test_muladddst(rng, shape, valid, dtype):
    a, b, d = (random_tile(rng, shape, dtype, -2, 2) for _ in range(3))
    out = d.copy()
    run("TMULADDDST", [out], [a, b], valid_shape=valid and list(valid))
    want = (a.astype(np.int64) * b + d).astype(NP[dtype]) if dtype.startswith("INT") else a.astype(np.float64) * b + d
    check(out, want, region(shape, valid), dtype)


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", F)
def test_tpow(rng, shape, valid, dtype):
    a = random_tile(rng, shape, dtype, 0.5, 2.0)
    b = random_tile(rng, shape, dtype, -2.0, 2.0)
    out = np.zeros(shape, NP[dtype])
    run("TPOW", [out], [a, b], valid_shape=valid and list(valid))
    want = np.power(a.astype(np.float32), b.astype(np.float32)).astype(NP[dtype]).astype(np.float64)
    check(out, want, region(shape, valid), dtype)


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", ["INT32", "INT16", "INT8", "UINT8"])
@pytest.mark.parametrize("name,fn", [("TANDS", np.bitwise_and), ("TORS", np.bitwise_or), ("TXORS", np.bitwise_xor),
                                     ("TSHLS", lambda a, s: np.left_shift(a, s)), ("TSHRS", lambda a, s: np.right_shift(a, s))])
def test_int_scalar(rng, shape, valid, dtype, name, fn):
    a = random_tile(rng, shape, dtype)
    s = 3
    out = np.zeros(shape, NP[dtype])
    run(name, [out], [a, s], valid_shape=valid and list(valid))
    check(out, fn(a, NP[dtype](s)).astype(NP[dtype]), region(shape, valid), dtype)


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", NUM)
def test_trems(rng, shape, valid, dtype):
    a = random_tile(rng, shape, dtype)
    out = np.zeros(shape, NP[dtype])
    run("TREMS", [out], [a, 3], valid_shape=valid and list(valid))
    want = np.remainder(a.astype(np.float64), 3) if dtype in F else np.remainder(a, NP[dtype](3))
    check(out, want, region(shape, valid), dtype)


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", NUM)
@pytest.mark.parametrize("name", ["TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN"])
def test_arg_reductions(rng, shape, valid, dtype, name):
    a = random_tile(rng, shape, dtype)
    r, c = region(shape, valid)
    rows = name.startswith("TROW")
    out = np.zeros((shape[0], 1) if rows else (1, shape[1]), np.int32)
    _core.isa_execute(name, [out], [a], valid_shape=list(valid) if valid else None)
    sub = a[:r, :c]
    f = np.argmax if name.endswith("MAX") else np.argmin  # numpy also returns the first index
    if rows:
        np.testing.assert_array_equal(out[:r, 0], f(sub, axis=1))
    else:
        np.testing.assert_array_equal(out[0, :c], f(sub, axis=0))


@pytest.mark.parametrize("dtype", NUM)
@pytest.mark.parametrize("name,fn", [("TPARTADD", np.add), ("TPARTMUL", np.multiply), ("TPARTMAX", np.maximum), ("TPARTMIN", np.minimum)])
@pytest.mark.parametrize("shape", SHAPES)
def test_partial_combines(rng, dtype, name, fn, shape):
    a, b = random_tile(rng, shape, dtype, -2, 2), random_tile(rng, shape, dtype, -2, 2)
    out = np.zeros(shape, NP[dtype])
    ra, ca = shape[0] // 2, shape[1]        # a: top half valid
    rb, cb = shape[0], shape[1] // 2        # b: left half valid
    c = _core
    # isa_execute's valid_shape applies to every tile; give a and b their own by padding copies.
    want = np.zeros(shape, np.float64)
    for i in range(shape[0]):
        for j in range(shape[1]):
            ia, ib = i < ra and j < ca, i < rb and j < cb
            want[i, j] = fn(a[i, j], b[i, j]) if ia and ib else (a[i, j] if ia else (b[i, j] if ib else 0))
    run_part(name, out, a, (ra, ca), b, (rb, cb))
    check(out, want.astype(NP[dtype]) if dtype.startswith("INT") else want, shape, dtype)


def run_part(name, out, a, va, b, vb):
    """One TPART call with a and b of different valid shapes, through a hand-built kernel."""
    from pypto import _core as c
    import sys, os
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
    from hand_built_programs import tensor_arg, offsets, tile_instr

    rows, cols = out.shape
    dt = {np.float32: "FP32", np.float16: "FP16", np.int32: "INT32", np.int16: "INT16"}[out.dtype.type]
    k = c.Kernel()
    k.name = "part"
    k.params = [c.ParamDesc(n, True, dt, [rows, cols], d) for n, d in (("a", "In"), ("b", "In"), ("out", "Out"))]
    nb = (rows * cols * out.itemsize + 31) // 32 * 32
    k.tiles = [c.TileDesc(n, dt, "Vec", rows, cols, i * nb) for i, n in enumerate(("ta", "tb", "to"))]
    for t, (r, cc) in ((k.tiles[0], va), (k.tiles[1], vb)):
        t.valid_rows, t.valid_cols = c.Scalar.imm(r), c.Scalar.imm(cc)
    tiles = list(k.tiles)
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
    c.run_kernel(c.insert_sync(k), [tensor_arg(a, "a"), tensor_arg(b, "b"), tensor_arg(out, "out")])


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", NUM)
def test_tci_and_ttri(shape, valid, dtype):
    r, c = region(shape, valid)
    out = np.zeros(shape, NP[dtype])
    run("TCI", [out], [5], valid_shape=valid and list(valid))
    check(out, (5 + np.arange(r * c).reshape(r, c)).astype(np.float64), (r, c), dtype)
    for upper, diag in ((False, 0), (False, 2), (True, -1)):
        m = np.zeros(shape, NP[dtype])
        _core.isa_execute("TTRI", [m], [diag], {"upper": upper}, valid_shape=list(valid) if valid else None)
        want = np.triu(np.ones((r, c)), diag) if upper else np.tril(np.ones((r, c)), diag)
        check(m, want, (r, c), dtype)


def splitmix64(z):
    z = (z + np.uint64(0x9E3779B97F4A7C15))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@pytest.mark.parametrize("shape,valid", CASES)
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32", "INT16"])
def test_trandom_is_counter_based(shape, valid, dtype):
    r, c = region(shape, valid)
    out = np.zeros(shape, NP[dtype])
    run("TRANDOM", [out], [7, 100], valid_shape=valid and list(valid))
    with np.errstate(over="ignore"):
        z = splitmix64(np.uint64(7) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(100) + np.arange(r * c, dtype=np.uint64))
    if dtype in F:
        want = ((z >> np.uint64(40)).astype(np.float64) / 2**24).astype(NP[dtype]).astype(np.float64)
        np.testing.assert_array_equal(out[:r, :c].astype(np.float64), want.reshape(r, c))
    else:
        np.testing.assert_array_equal(out[:r, :c], z.astype(NP[dtype]).reshape(r, c))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32", "INT8"])
def test_gather_scatter(rng, shape, dtype):
    src = random_tile(rng, shape, dtype)
    idx = np.stack([rng.permutation(shape[1]) for _ in range(shape[0])]).astype(np.int32)
    out = np.zeros(shape, NP[dtype])
    run("TGATHER", [out], [src, idx])
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, axis=1))
    back = np.zeros(shape, NP[dtype])
    run("TSCATTER", [back], [out, idx])
    np.testing.assert_array_equal(back, src)
    flat = random_tile(rng, (3, 50), dtype)
    gidx = rng.integers(0, 150, size=shape).astype(np.int32)
    got = np.zeros(shape, NP[dtype])
    run("MGATHER", [got], [flat, gidx])
    np.testing.assert_array_equal(got, flat.reshape(-1)[gidx])
    dst = np.zeros(150, NP[dtype])
    sidx = rng.permutation(150)[: shape[0] * shape[1] % 150 or 150]
    n = min(len(sidx), shape[0] * shape[1])
    sidx = rng.permutation(150)[:min(150, shape[1])].astype(np.int32).reshape(1, -1)
    vals = src[:1, : sidx.shape[1]].copy()
    _core.isa_execute("MSCATTER", [dst], [vals, sidx])
    want = np.zeros(150, NP[dtype])
    want[sidx[0]] = vals[0]
    np.testing.assert_array_equal(dst, want)


@pytest.mark.parametrize("cols,valid", [(32, None), (64, None), (96, None), (64, (3, 40))])
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
def test_sort32_and_mrgsort(rng, cols, valid, dtype):
    shape = (4, cols)
    src = random_tile(rng, shape, dtype)
    vals, idx = np.zeros(shape, NP[dtype]), np.zeros(shape, np.int32)
    _core.isa_execute("TSORT32", [vals, idx], [src], valid_shape=list(valid) if valid else None)
    r, c = valid or shape
    for i in range(r):
        for b0 in range(0, c, 32):
            blk = src[i, b0:min(c, b0 + 32)]
            order = np.argsort(-blk.astype(np.float64), kind="stable")
            np.testing.assert_array_equal(idx[i, b0:b0 + len(blk)], order + b0)
            np.testing.assert_array_equal(vals[i, b0:b0 + len(blk)], blk[order])
    if valid is None and cols >= 64:  # merge the first two sorted blocks
        mv, mi = np.zeros((4, 64), NP[dtype]), np.zeros((4, 64), np.int32)
        _core.isa_execute("TMRGSORT", [mv, mi], [vals[:, :32].copy(), idx[:, :32].copy(), vals[:, 32:64].copy(), idx[:, 32:64].copy()])
        order = np.argsort(-src[:, :64].astype(np.float64), axis=1, kind="stable")
        np.testing.assert_array_equal(mv, np.take_along_axis(src[:, :64], order, axis=1))


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


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT8"])
def test_reshape_and_subview(rng, dtype):
    a = random_tile(rng, (8, 16), dtype)
    out = np.zeros((16, 8), NP[dtype])
    run("TRESHAPE", [out], [a])
    np.testing.assert_array_equal(out, a.reshape(16, 8))
    sub = np.zeros((4, 8), NP[dtype])
    run("TSUBVIEW", [sub], [a, [2, 4]])
    np.testing.assert_array_equal(sub, a[2:6, 4:12])


@pytest.mark.parametrize("layout", ["ND", "DN", "NZ"])
@pytest.mark.parametrize("dtype", ["FP16", "FP32", "INT8"])
@pytest.mark.parametrize("name", ["TMATMUL", "TGEMV"])
def test_cube_layouts_and_gemv(rng, layout, dtype, name):
    M, K, N = (1 if name == "TGEMV" else 32), 32, (32 if dtype == "INT8" else 16)  # NZ: cols fill 32-byte boxes
    a = random_tile(rng, (M, K), dtype, -2, 2)
    b = random_tile(rng, (K, N), dtype, -2, 2)

    def laid(x, rows_pad):
        if layout == "ND":
            return x
        if layout == "DN":
            return np.ascontiguousarray(x.T).reshape(x.shape)
        c0 = 32 // x.itemsize  # NZ: 16 x c0 boxes, down the rows first
        r = max(16, x.shape[0])
        p = np.zeros((r, x.shape[1]), x.dtype)
        p[: x.shape[0]] = x
        boxes = p.reshape(r // 16, 16, x.shape[1] // c0, c0).transpose(2, 0, 1, 3)
        return boxes.reshape(r, x.shape[1])

    acc_dt = np.int32 if dtype == "INT8" else np.float32
    la = laid(a, M)
    acc = np.zeros((la.shape[0], N), acc_dt)
    _core.isa_execute(name, [acc], [la, laid(b, K)], {"left_layout": layout, "right_layout": layout},
                      memories=["Acc", "Left", "Right"], valid_shape=None)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(acc[:M], want, rtol=1e-5, atol=1e-3)


def test_isa_doc_is_up_to_date():
    doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "isa.md"
    assert doc.read_text() == isa.table_markdown(), "regenerate with: python tools/gen_isa_doc.py"
    for name in ["TROWARGMAX", "TSORT32", "SET_FLAG", "TGEMV_BIAS", "TRANDOM"]:
        assert f"| {name} |" in doc.read_text()

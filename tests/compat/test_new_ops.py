"""PyPTO op names added for compatibility (issue 13), each in a small @pl.jit program on both
engines against a hand-written numpy reference, plus the printer round trip of the parsed
program (print -> pl.parse -> structurally equal): pl.tile.random (Philox4x32, checked
against a numpy Philox that is itself checked against Random123's known-answer vectors),
ci, fillpad_expand, fillpad_inplace, extract, sels, maximums / minimums, lrelu, prelu, addc /
subc / addsc / subsc, the tensor forms of the elementwise ones, the pl.tile.max / min /
create_tile and pl.tensor.create_tensor aliases, and pl.tile.get_block_idx() /
pl.tensor.get_block_num() inside pl.spmd."""

import numpy as np
import pypto.language as pl
import pytest
from pypto import _core
from pypto.runtime import RunConfig, _arg_specs

from .roundtrip import round_trip

ENGINES = ["native", "sim"]
rng = np.random.default_rng(1313)


def run(kernel, *args, engine):
    kernel(*args, config=RunConfig(engine=engine))




# ---- Philox4x32 in numpy ------------------------------------------------------------------

M32 = 0xFFFFFFFF


def philox_block(ctr, key, rounds=10):
    """Philox4x32-rounds of one counter (4 words) and key (2 words), in Python integers."""
    x, (k0, k1) = list(ctr), key
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * x[0], 0xCD9E8D57 * x[2]
        x = [((p1 >> 32) ^ x[1] ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ x[3] ^ k1) & M32, p0 & M32]
    return x


def philox_tile(rows, cols, key, ctr, rounds=10):
    """Element i (row-major) is word i % 4 of the block for the 128-bit counter + i // 4."""
    base = sum(int(c) << (32 * w) for w, c in enumerate(ctr))
    words = []
    for b in range((rows * cols + 3) // 4):
        n = (base + b) % (1 << 128)
        words += philox_block([(n >> (32 * w)) & M32 for w in range(4)], key, rounds)
    return np.array(words[: rows * cols], np.uint64).reshape(rows, cols).astype(np.uint32)


def test_numpy_philox_matches_the_random123_known_answers():
    assert philox_block([0, 0, 0, 0], (0, 0)) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox_block([M32] * 4, (M32, M32)) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    assert philox_block([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], (0xA4093822, 0x299F31D0)) == [
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


@pl.jit
def k_random(out: pl.Out[pl.Tensor], f: pl.Out[pl.Tensor], i: pl.Out[pl.Tensor], k1: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.tile.random(11, k1, 0xFFFFFFFE, 0xFFFFFFFF, 0, 0, [8, 16]), [0, 0], out)
        g = pl.tile.random(7, 8, 3, 0, 0, 1, shape=[8, 16], valid_shape=[5, 10], dtype=pl.FP32, rounds=7)
        pl.store(g, [0, 0], f)
        pl.store(pl.random(1, 2, 3, 4, 5, 6, [4, 8], dtype=pl.INT32), [0, 0], i)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_random_is_philox4x32(engine):
    out, f, i = np.zeros((8, 16), np.uint32), np.full((8, 16), -1, np.float32), np.zeros((4, 8), np.int32)
    run(k_random, out, f, i, 22, engine=engine)
    # counter0 = 0xFFFFFFFE: the 128-bit counter carries into counter1, then counter2.
    np.testing.assert_array_equal(out, philox_tile(8, 16, (11, 22), (0xFFFFFFFE, 0xFFFFFFFF, 0, 0)))
    words = philox_tile(5, 10, (7, 8), (3, 0, 0, 1), rounds=7)
    np.testing.assert_array_equal(f[:5, :10], (words >> 8).astype(np.float64) / 2.0**24)
    assert (f[5:] == -1).all() and (f[:, 10:] == -1).all()  # the store writes the valid region only
    np.testing.assert_array_equal(i, philox_tile(4, 8, (1, 2), (3, 4, 5, 6)).view(np.int32))
    assert "pl.tile.random(" in round_trip(k_random, out, f, i, 22)


def test_random_rejects_a_bad_round_count():
    @pl.jit
    def bad(out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.tile.random(1, 2, 3, 4, 5, 6, [8, 16], rounds=0), [0, 0], out)
        return out

    with pytest.raises(_core.PyptoError, match=r"rounds = 0 is outside 1..64[\s\S]*fix:"):
        bad(np.zeros((8, 16), np.uint32))


# ---- ci (PyPTO's order: start, shape) -------------------------------------------------------

@pl.jit
def k_ci(a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor], s: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.tile.ci(s, [4, 8]), [0, 0], a)
        pl.store(pl.tile.ci(100, [2, 16], dtype=pl.INT16, descending=True), [0, 0], b)
        pl.store(pl.tile.ci(0.5, shape=[2, 8], dtype=pl.FP32), [0, 0], c)
    return a


@pytest.mark.parametrize("engine", ENGINES)
def test_ci_counts_up_or_down(engine):
    a, b, c = np.zeros((4, 8), np.int32), np.zeros((2, 16), np.int16), np.zeros((2, 8), np.float32)
    run(k_ci, a, b, c, -3, engine=engine)
    np.testing.assert_array_equal(a, -3 + np.arange(32).reshape(4, 8))
    np.testing.assert_array_equal(b, 100 - np.arange(32).reshape(2, 16))
    np.testing.assert_array_equal(c, 0.5 + np.arange(16).reshape(2, 8))
    assert "descending=True" in round_trip(k_ci, a, b, c, -3)


# ---- fillpad_expand / fillpad_inplace ---------------------------------------------------------

@pl.jit
def k_fillpad(x: pl.Tensor, big: pl.Out[pl.Tensor], same: pl.Out[pl.Tensor], mx: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 16], valid_shape=[5, 11])
        pl.store(pl.tile.fillpad_expand(t, [16, 32], pad_value=pl.PadValue.min), [0, 0], big)
        pl.store(pl.tile.fillpad_inplace(t), [0, 0], same)
        pl.store(pl.row_max(pl.fillpad_expand(t, [8, 32], pl.PadValue.min)), [0, 0], mx)
    return big


@pytest.mark.parametrize("engine", ENGINES)
def test_fillpad_expand_and_inplace(engine):
    x = rng.uniform(-4, -1, size=(8, 16)).astype(np.float32)
    big, same, mx = np.zeros((16, 32), np.float32), np.full((8, 16), 9, np.float32), np.zeros((8, 1), np.float32)
    run(k_fillpad, x, big, same, mx, engine=engine)
    low = np.finfo(np.float32).min
    want = np.full((16, 32), low, np.float32)
    want[:5, :11] = x[:5, :11]
    np.testing.assert_array_equal(big, want)
    want = np.zeros((8, 16), np.float32)
    want[:5, :11] = x[:5, :11]
    np.testing.assert_array_equal(same, want)
    np.testing.assert_array_equal(mx[:5, 0], x[:5, :11].max(axis=1))
    np.testing.assert_array_equal(mx[5:, 0], low)  # the padded rows hold only the pad
    round_trip(k_fillpad, x, big, same, mx)


# ---- extract ------------------------------------------------------------------------------------

@pl.jit
def k_extract(x: pl.Tensor, out: pl.Out[pl.Tensor], r: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        pl.store(pl.tile.extract(t, r, 8, [4, 16], target_memory=pl.MemorySpace.Vec), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_extract_copies_a_window(engine):
    x = rng.uniform(-1, 1, size=(16, 32)).astype(np.float32)
    out = np.zeros((4, 16), np.float32)
    run(k_extract, x, out, 6, engine=engine)
    np.testing.assert_array_equal(out, x[6:10, 8:24])
    round_trip(k_extract, x, out, 6)


@pl.jit
def k_extract_matmul(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat)
        left = pl.tile.extract(ta, 16, 0, [16, 32], target_memory=pl.MemorySpace.Left)
        right = pl.tile.extract(tb, 0, 0, [32, 16], target_memory=pl.MemorySpace.Right)
        pl.store(pl.matmul(left, right), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_extract_feeds_the_cube(engine):
    a = rng.uniform(-1, 1, size=(32, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, size=(32, 16)).astype(np.float16)
    out = np.zeros((16, 16), np.float32)
    run(k_extract_matmul, a, b, out, engine=engine)
    np.testing.assert_allclose(out, a[16:].astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


# ---- elementwise: sels, maximums / minimums, lrelu, prelu, addc / subc / addsc / subsc -------

@pl.jit
def k_elementwise(a: pl.Tensor, b: pl.Tensor, c: pl.Tensor, sels: pl.Out[pl.Tensor], mx: pl.Out[pl.Tensor],
                  mn: pl.Out[pl.Tensor], lre: pl.Out[pl.Tensor], pre: pl.Out[pl.Tensor], addc: pl.Out[pl.Tensor],
                  subc: pl.Out[pl.Tensor], addsc: pl.Out[pl.Tensor], subsc: pl.Out[pl.Tensor], big: pl.Out[pl.Tensor],
                  small: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        tc = pl.load(c, [0, 0], [16, 32])
        tmp = pl.tile.create([16, 32], pl.FP32)
        mask = pl.cmp(ta, tb, cmp_type="GT")
        pl.store(pl.tile.sels(mask, ta, tmp, -7.0), [0, 0], sels)
        pl.store(pl.tile.maximums(ta, 0.25), [0, 0], mx)
        pl.store(pl.minimums(ta, -0.25), [0, 0], mn)
        pl.store(pl.tile.lrelu(ta, 0.1), [0, 0], lre)
        pl.store(pl.prelu(ta, tb, tmp), [0, 0], pre)
        pl.store(pl.tile.addc(ta, tb, tc), [0, 0], addc)
        pl.store(pl.subc(ta, tb, tc), [0, 0], subc)
        pl.store(pl.tile.addsc(ta, 2.0, tc), [0, 0], addsc)
        pl.store(pl.subsc(ta, 2.0, tc), [0, 0], subsc)
        pl.store(pl.tile.max(ta, tb), [0, 0], big)
        pl.store(pl.tile.min(ta, tb), [0, 0], small)
    return sels


@pytest.mark.parametrize("engine", ENGINES)
def test_elementwise_spellings(engine):
    a, b, c = (rng.uniform(-1, 1, size=(16, 32)).astype(np.float32) for _ in range(3))
    outs = [np.zeros((16, 32), np.float32) for _ in range(11)]
    run(k_elementwise, a, b, c, *outs, engine=engine)
    f = np.float32
    want = [np.where(a > b, a, f(-7)), np.maximum(a, f(0.25)), np.minimum(a, f(-0.25)), np.where(a > 0, a, a * f(0.1)),
            np.where(a > 0, a, a * b), (a + b) + c, (a - b) + c, (a + f(2)) + c, (a - f(2)) + c, np.maximum(a, b),
            np.minimum(a, b)]
    for name, got, exp in zip("sels mx mn lrelu prelu addc subc addsc subsc max min".split(), outs, want):
        np.testing.assert_allclose(got, exp, rtol=1e-6, atol=1e-6, err_msg=name)
    text = round_trip(k_elementwise, a, b, c, *outs)
    for op in ("sels", "maximums", "minimums", "lrelu", "prelu", "addc", "subc", "addsc", "subsc"):
        assert f"pl.tile.{op}(" in text, op
    assert "pl.tile.maximum(" in text and "pl.tile.minimum(" in text  # the aliases print as the op


@pl.jit
def k_tensor_forms(a: pl.Tensor, b: pl.Tensor, c: pl.Tensor, o1: pl.Out[pl.Tensor], o2: pl.Out[pl.Tensor],
                   o3: pl.Out[pl.Tensor], o4: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        o1[:] = pl.tensor.addc(a, b, c)
        o2[:] = pl.subsc(pl.maximums(a, 0.0), 1.5, c)
        o3[:] = pl.tensor.lrelu(pl.tensor.part_add(a, b), 0.5)
        o4[:] = pl.tensor.expands(a, 3.0)
    return o1


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_forms_are_tiled(engine):
    a, b, c = (rng.uniform(-1, 1, size=(64, 96)).astype(np.float32) for _ in range(3))
    outs = [np.zeros((64, 96), np.float32) for _ in range(4)]
    run(k_tensor_forms, a, b, c, *outs, engine=engine)
    f = np.float32
    s = a + b
    for got, exp in zip(outs, [(a + b) + c, (np.maximum(a, f(0)) - f(1.5)) + c, np.where(s > 0, s, s * f(0.5)),
                               np.full_like(a, 3)]):
        np.testing.assert_allclose(got, exp, rtol=1e-6, atol=1e-6)
    round_trip(k_tensor_forms, a, b, c, *outs)


# ---- aliases and namespaced constructs --------------------------------------------------------

@pl.jit
def k_create_alias(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.tile.create_tile([8, 16], pl.FP32)
        t = pl.tile.assemble(t, pl.load(x, [0, 0], [8, 16]), [0, 0])
        pl.store(pl.muls(t, 2.0), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_create_tile_alias(engine):
    x = rng.uniform(-1, 1, size=(8, 16)).astype(np.float32)
    out = np.zeros_like(x)
    run(k_create_alias, x, out, engine=engine)
    np.testing.assert_array_equal(out, x * 2)
    assert "pl.tile.create(" in round_trip(k_create_alias, x, out)


@pl.jit
def k_spmd(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(4):
        i = pl.tile.get_block_idx()
        n = pl.tensor.get_block_num()
        t = pl.load(x, [i * 8, 0], [8, 16])
        pl.store(pl.adds(t, i * 10 + n), [i * 8, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_namespaced_block_index(engine):
    x = rng.uniform(-1, 1, size=(32, 16)).astype(np.float32)
    out = np.zeros_like(x)
    run(k_spmd, x, out, engine=engine)
    np.testing.assert_array_equal(out, x + (np.repeat(np.arange(4), 8) * 10 + 4).astype(np.float32)[:, None])
    round_trip(k_spmd, x, out)


def test_create_tensor_alias_resolves():
    assert repr(pl.tensor.create_tensor) == "pl.tensor.create_tensor"
    assert pl.tile.get_block_idx is pl.get_block_idx and pl.tensor.get_block_num is pl.get_block_num


# ---- the PyTorch spelling (pypto.debug.torch_codegen) -------------------------------------------

CASES = {
    "random": lambda: (k_random, [np.zeros((8, 16), np.uint32), np.full((8, 16), -1, np.float32),
                                  np.zeros((4, 8), np.int32), 22]),
    "ci": lambda: (k_ci, [np.zeros((4, 8), np.int32), np.zeros((2, 16), np.int16), np.zeros((2, 8), np.float32), -3]),
    "fillpad": lambda: (k_fillpad, [rng.uniform(-4, -1, size=(8, 16)).astype(np.float32), np.zeros((16, 32), np.float32),
                                    np.zeros((8, 16), np.float32), np.zeros((8, 1), np.float32)]),
    "extract": lambda: (k_extract, [rng.uniform(-1, 1, size=(16, 32)).astype(np.float32),
                                    np.zeros((4, 16), np.float32), 6]),
    "elementwise": lambda: (k_elementwise, [rng.uniform(-1, 1, size=(16, 32)).astype(np.float32) for _ in range(3)] +
                            [np.zeros((16, 32), np.float32) for _ in range(11)]),
}


@pytest.mark.parametrize("case", sorted(CASES) + ["write", "tile_elements"])
def test_torch_script_computes_the_same(case):
    torch = pytest.importorskip("torch")
    import pypto.debug as dbg

    more = {"write": lambda: (k_write, [rng.uniform(-1, 1, size=(8, 16)).astype(np.float32),
                                        np.zeros((8, 16), np.float32), np.zeros((4, 8), np.int32)]),
            "tile_elements": lambda: (k_tile_elements, [rng.uniform(-1, 1, size=(8, 16)).astype(np.float32),
                                                        np.zeros((8, 16), np.float32), np.zeros((1, 8), np.float32), 5])}
    kernel, args = {**CASES, **more}[case]()
    namespace = {}
    exec(compile(dbg.torch_codegen(kernel, *args), f"<torch script of {case}>", "exec"), namespace)
    theirs = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    namespace["ENTRY"](*theirs)
    ours = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel(*ours, config=RunConfig(engine="sim"))
    for o, t in zip(ours, theirs):
        if isinstance(o, np.ndarray):
            np.testing.assert_allclose(t.numpy().astype(np.float64), o.astype(np.float64), rtol=1e-6, atol=1e-6)


@pl.jit
def k_tensor_expand(a: pl.Tensor, rows: pl.Out[pl.Tensor], cols: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows[:] = pl.tensor.row_expand(a, pl.tensor.row_max(a))
        cols[:] = pl.tensor.col_expand(a, pl.tensor.col_min(a))
    return rows


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_row_and_col_expand(engine):
    a = rng.uniform(-1, 1, size=(64, 96)).astype(np.float32)
    rows, cols = np.zeros_like(a), np.zeros_like(a)
    run(k_tensor_expand, a, rows, cols, engine=engine)
    np.testing.assert_array_equal(rows, np.broadcast_to(a.max(axis=1, keepdims=True), a.shape))
    np.testing.assert_array_equal(cols, np.broadcast_to(a.min(axis=0, keepdims=True), a.shape))
    round_trip(k_tensor_expand, a, rows, cols)


# ---- pl.write / pl.tensor.write: one element ------------------------------------------------------

@pl.jit
def k_write(x: pl.Tensor, out: pl.Out[pl.Tensor], s: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 16])
        pl.store(pl.muls(t, 2.0), [0, 0], out)
        pl.write(out, [1, 2], 5.0)  # in the kernel, after the store
        pl.tensor.write(out, [7, 15], pl.read(x, [3, 4]))
    pl.write(s, [0, 1], 42)  # in orchestration: the host writes
    pl.write(s, [2, 3], pl.read(s, [0, 1]) + 1)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_write_sets_one_element(engine):
    x = rng.uniform(-1, 1, size=(8, 16)).astype(np.float32)
    out, s = np.zeros_like(x), np.zeros((4, 8), np.int32)
    run(k_write, x, out, s, engine=engine)
    want = x * 2
    want[1, 2], want[7, 15] = 5, x[3, 4]
    np.testing.assert_array_equal(out, want)
    want = np.zeros((4, 8), np.int32)
    want[0, 1], want[2, 3] = 42, 43
    np.testing.assert_array_equal(s, want)
    assert "pl.tensor.write(" in round_trip(k_write, x, out, s)


def test_write_checks_the_index_and_the_value():
    @pl.jit
    def outside(s: pl.Out[pl.Tensor]):
        pl.write(s, [4, 0], 1)
        return s

    with pytest.raises(pl.ParseError, match=r"index 4 of dimension 0 is out of range 0..3[\s\S]*fix:"):
        outside(np.zeros((4, 8), np.int32))

    @pl.jit
    def wrong_dtype(x: pl.Tensor, s: pl.Out[pl.Tensor]):
        pl.write(s, [0, 0], pl.read(x, [0, 0]))
        return s

    with pytest.raises(pl.ParseError, match=r"'value' is a FP32 scalar but the tensor is INT32[\s\S]*fix: .*pl.cast"):
        wrong_dtype(np.zeros((2, 8), np.float32), np.zeros((4, 8), np.int32))

    @pl.jit
    def dynamic_outside(s: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
        pl.write(s, [i, 0], 1)
        return s

    with pytest.raises(_core.PyptoError, match=r"scalar write of .* at index \[9, 0\] is out of bounds"):
        dynamic_outside(np.zeros((4, 8), np.int32), 9)


def test_fillpad_expand_and_extract_errors():
    @pl.jit
    def shrink(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.tile.fillpad_expand(pl.load(x, [0, 0], [16, 32]), [8, 32]), [0, 0], out)
        return out

    with pytest.raises(pl.ParseError, match=r"'shape' = \[8, 32\] is smaller than the \[16, 32\] tile[\s\S]*fix:"):
        shrink(np.zeros((16, 32), np.float32), np.zeros((8, 32), np.float32))

    @pl.jit
    def past(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.tile.extract(pl.load(x, [0, 0], [16, 32]), 12, 0, [8, 32]), [0, 0], out)
        return out

    with pytest.raises(pl.ParseError, match=r"window at index_row = 12 leaves the \[16, 32\] tile[\s\S]*fix:"):
        past(np.zeros((16, 32), np.float32), np.zeros((8, 32), np.float32))


# ---- pl.tile.read / pl.tile.write: one element of a tile ---------------------------------------

@pl.jit
def k_tile_elements(x: pl.Tensor, out: pl.Out[pl.Tensor], s: pl.Out[pl.Tensor], r: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 16])
        v = pl.tile.read(t, [r, 3])
        u = pl.muls(t, 2.0)
        pl.tile.write(u, [0, 0], v)  # a statement: updates u
        u = pl.write(u, [7, 15], pl.read(u, [1, 1]) + 1.0)
        pl.store(u, [0, 0], out)
        pl.write(s, [0, 0], pl.read(t, [2, 5]))
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tile_read_and_write(engine):
    x = rng.uniform(-1, 1, size=(8, 16)).astype(np.float32)
    out, s = np.zeros_like(x), np.zeros((1, 8), np.float32)
    run(k_tile_elements, x, out, s, 5, engine=engine)
    want = x * 2
    want[0, 0] = x[5, 3]
    want[7, 15] = want[1, 1] + 1
    np.testing.assert_array_equal(out, want)
    assert s[0, 0] == x[2, 5]
    text = round_trip(k_tile_elements, x, out, s, 5)
    assert "pl.tile.write(" in text and "pl.tile.read(" in text


# ---- generated tensors: pl.tensor.full, pl.tensor.ci / arange ------------------------------------

@pl.jit
def k_tensor_generate(a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor], s: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a[:] = pl.tensor.full([200, 64], pl.FP32, 2.5)
        b[:] = pl.tensor.ci(s, [300, 128])
        c[:] = pl.tensor.arange(1000, [64, 32], dtype=pl.INT32, descending=True)
    return a


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_generators_are_tiled(engine):
    a, b, c = np.zeros((200, 64), np.float32), np.zeros((300, 128), np.int32), np.zeros((64, 32), np.int32)
    run(k_tensor_generate, a, b, c, 7, engine=engine)
    np.testing.assert_array_equal(a, np.full((200, 64), 2.5, np.float32))
    np.testing.assert_array_equal(b, 7 + np.arange(300 * 128).reshape(300, 128))
    np.testing.assert_array_equal(c, 1000 - np.arange(64 * 32).reshape(64, 32))
    round_trip(k_tensor_generate, a, b, c, 7)


def test_tensor_ci_needs_whole_rows():
    @pl.jit
    def wide(a: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            a[:] = pl.tensor.ci(0, [4, 4096])
        return a

    with pytest.raises(_core.PyptoError, match=r"counts across whole rows[\s\S]*fix: .*pl.tile.ci"):
        wide(np.zeros((4, 4096), np.int32))

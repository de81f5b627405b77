"""pypto.debug.torch_codegen of the tier-2 ops (bitwise and shifts, rem/fmod, sin/cos, part_*,
expands/expand_clone, tri/arange, arg-reductions, gather/scatter, mgather/mscatter,
sort32/mrgsort, batch_matmul, the tensor-level forms) and of mixed programs (Group functions
whose AIC and AIV parts exchange tiles through the cross-core FIFOs, in both directions): the
emitted script, run on torch tensors, gives our run's outputs, and both match numpy / torch
references. Programs are checked as parsed and after the pass pipeline."""

import pathlib
import sys

import numpy as np
import pypto.language as pl
import pytest

torch = pytest.importorskip("torch")

import pypto.debug as dbg
import pypto.runtime as rt

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "mixed"))
import mixed_programs as mp

STAGES = ["parsed", "compiled"]


def namespace_of(text):
    namespace = {}
    exec(compile(text, "<torch script>", "exec"), namespace)
    return namespace


def script_entry(fn, args, stage):
    text = dbg.torch_codegen(fn, *args) if stage == "parsed" else dbg.torch_codegen(rt.jit_compile(fn, tuple(args)))
    return namespace_of(text)["ENTRY"]


def copies(args):
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def run_both(fn, args, stage):
    ours, theirs = copies(args), copies(args)
    fn(*ours)
    script_entry(fn, args, stage)(*theirs)
    return ours, theirs


def check(fn, args, stage, want, tol=0.0):
    """Our run and the script agree on every argument, and output i matches want[i] (numpy)."""
    ours, theirs = run_both(fn, args, stage)
    for got, mine in zip(theirs, ours):
        if isinstance(mine, torch.Tensor):
            torch.testing.assert_close(got, mine, rtol=max(tol, 1e-6) if tol else 0, atol=tol)
    for i, w in want.items():
        for got in (theirs[i], ours[i]):
            np.testing.assert_allclose(got.numpy().astype(np.float64), np.asarray(w, np.float64), rtol=0, atol=tol)


rng = np.random.default_rng(77)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


# ---- bitwise and shifts (INT32, INT16) ------------------------------------------------------


@pl.jit
def k_bitwise(a: pl.Tensor, b: pl.Tensor, s: pl.Tensor, o_and: pl.Out[pl.Tensor], o_or: pl.Out[pl.Tensor],
              o_xor: pl.Out[pl.Tensor], o_shl: pl.Out[pl.Tensor], o_shr: pl.Out[pl.Tensor], o_not: pl.Out[pl.Tensor],
              o_scalar: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        ts = pl.load(s, [0, 0], [16, 32])
        pl.store(pl.and_(ta, tb), [0, 0], o_and)
        pl.store(pl.or_(ta, tb), [0, 0], o_or)
        pl.store(pl.xor(ta, tb), [0, 0], o_xor)
        pl.store(pl.shl(ta, ts), [0, 0], o_shl)
        pl.store(pl.shr(ta, ts), [0, 0], o_shr)
        pl.store(pl.not_(ta), [0, 0], o_not)
        mixed = pl.xors(pl.ors(pl.ands(ta, 0x0FF0), 0x3), 0x55)
        pl.store(pl.add(pl.shrs(pl.shls(mixed, 3), 2), mixed), [0, 0], o_scalar)
    return o_and


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("dtype", [np.int32, np.int16], ids=["int32", "int16"])
def test_bitwise_and_shifts(stage, dtype):
    bits = np.iinfo(dtype).bits
    a = rng.integers(-30000, 30000, size=(16, 32)).astype(dtype)
    b = rng.integers(-30000, 30000, size=(16, 32)).astype(dtype)
    s = rng.integers(0, bits + 4, size=(16, 32)).astype(dtype)  # some counts reach past the width
    outs = [torch.zeros(16, 32, dtype=torch.from_numpy(a).dtype) for _ in range(7)]
    wide, cnt = a.astype(np.int64), s.astype(np.int64)
    shl = np.where(cnt >= bits, 0, (wide << np.minimum(cnt, 63)) & ((1 << bits) - 1))
    shl = ((shl + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1)))  # wrap to the signed dtype
    shr = np.where(cnt >= bits, np.where(wide < 0, -1, 0), wide >> np.minimum(cnt, 63))
    mixed = (((wide & 0x0FF0) | 0x3) ^ 0x55)
    scalar = (((mixed << 3) >> 2) + mixed).astype(dtype)
    want = {3: a & b, 4: a | b, 5: a ^ b, 6: shl, 7: shr, 8: ~a, 9: scalar}
    check(k_bitwise, [t(a), t(b), t(s)] + outs, stage, want)


# ---- remainders ------------------------------------------------------------------------------


@pl.jit
def k_rem(a: pl.Tensor, b: pl.Tensor, r: pl.Out[pl.Tensor], f: pl.Out[pl.Tensor], rs: pl.Out[pl.Tensor],
          fs: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 64])
        tb = pl.load(b, [0, 0], [16, 64])
        pl.store(pl.rem(ta, tb), [0, 0], r)
        pl.store(pl.fmod(ta, tb), [0, 0], f)
        pl.store(pl.rem(ta, 3), [0, 0], rs)
        pl.store(pl.fmod(ta, -3), [0, 0], fs)
    return r


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["fp32", "int32"])
def test_rem_and_fmod_signs(stage, dtype):
    sign = rng.choice([-1, 1], size=(16, 64))
    if dtype == np.float32:
        a = rng.uniform(-20, 20, size=(16, 64)).astype(dtype)
        b = (rng.uniform(0.5, 4, size=(16, 64)) * sign).astype(dtype)
        a[0, :4] = [6.0, -6.0, 6.0, -6.0]  # exact multiples: a zero remainder takes b's sign
        b[0, :4] = [3.0, 3.0, -3.0, -3.0]
    else:
        a = rng.integers(-1000, 1000, size=(16, 64)).astype(dtype)
        b = (rng.integers(1, 17, size=(16, 64)) * sign).astype(dtype)
    outs = [torch.zeros(16, 64, dtype=torch.from_numpy(a).dtype) for _ in range(4)]
    want = {2: np.remainder(a, b), 3: np.fmod(a, b), 4: np.remainder(a, dtype(3)), 5: np.fmod(a, dtype(-3))}
    ours, theirs = run_both(k_rem, [t(a), t(b)] + outs, stage)
    for got in (theirs, ours):
        for i, w in want.items():
            np.testing.assert_allclose(got[i].numpy(), w, rtol=0, atol=1e-5)
        if dtype == np.float32:
            assert np.array_equal(np.signbit(got[2].numpy()[0, :4]), [False, False, True, True])
    for got, mine in zip(theirs[2:], ours[2:]):
        torch.testing.assert_close(got, mine, rtol=0, atol=0)


# ---- sin / cos (composite) and part_* --------------------------------------------------------


@pl.jit
def k_trig_part(a: pl.Tensor, b: pl.Tensor, s: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor], pa: pl.Out[pl.Tensor],
                pm: pl.Out[pl.Tensor], px: pl.Out[pl.Tensor], pn: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 64])
        pl.store(pl.sin(ta), [0, 0], s)
        pl.store(pl.cos(ta), [0, 0], c)
        small = pl.load(b, [0, 0], [16, 64], valid_shape=[8, 32])
        pl.store(pl.part_add(ta, small), [0, 0], pa)
        pl.store(pl.part_mul(small, ta), [0, 0], pm)
        pl.store(pl.part_max(ta, small), [0, 0], px)
        pl.store(pl.part_min(ta, small), [0, 0], pn)
    return s


@pytest.mark.parametrize("stage", STAGES)
def test_sin_cos_and_partial_combines(stage):
    a = rng.uniform(-50, 50, size=(16, 64)).astype(np.float32)
    b = rng.uniform(-5, 5, size=(16, 64)).astype(np.float32)
    outs = [torch.zeros(16, 64) for _ in range(6)]

    def part(op):
        out = a.copy()
        out[:8, :32] = op(a[:8, :32], b[:8, :32])
        return out

    ours, theirs = run_both(k_trig_part, [t(a), t(b)] + outs, stage)
    for got in (theirs, ours):
        np.testing.assert_allclose(got[2].numpy(), np.sin(a.astype(np.float64)), rtol=0, atol=2e-5)
        np.testing.assert_allclose(got[3].numpy(), np.cos(a.astype(np.float64)), rtol=0, atol=2e-5)
        for i, op in zip(range(4, 8), (np.add, np.multiply, np.maximum, np.minimum)):
            np.testing.assert_allclose(got[i].numpy(), part(op), rtol=1e-6, atol=0)


# ---- generators: expands, expand_clone, tri, arange ------------------------------------------


@pl.jit
def k_generate(a: pl.Tensor, e: pl.Out[pl.Tensor], rows: pl.Out[pl.Tensor], cols: pl.Out[pl.Tensor],
               one: pl.Out[pl.Tensor], lo: pl.Out[pl.Tensor], up: pl.Out[pl.Tensor], ar: pl.Out[pl.Tensor],
               arf: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 64])
        pl.store(pl.expands(x, 2.5), [0, 0], e)
        pl.store(pl.expand_clone(pl.row_max(x), [16, 64]), [0, 0], rows)
        pl.store(pl.expand_clone(pl.col_sum(x), [16, 64]), [0, 0], cols)
        pl.store(pl.expand_clone(pl.row_min(pl.col_min(x)), [16, 64]), [0, 0], one)
        pl.store(pl.tri(shape=[16, 64], dtype=pl.FP32, diagonal=-3), [0, 0], lo)
        pl.store(pl.tri(shape=[16, 64], dtype=pl.FP32, diagonal=2, upper=True, valid_shape=[10, 20]), [0, 0], up)
        pl.store(pl.arange(7, [16, 32], dtype=pl.INT32, valid_shape=[3, 10]), [0, 0], ar)
        pl.store(pl.arange(-2.5, [8, 64], dtype=pl.FP32), [0, 0], arf)
    return e


@pytest.mark.parametrize("stage", STAGES)
def test_expands_expand_clone_tri_arange(stage):
    a = rng.uniform(-5, 5, size=(16, 64)).astype(np.float32)
    z = torch.zeros
    args = [t(a)] + [z(16, 64) for _ in range(6)] + [torch.full((16, 32), -1, dtype=torch.int32), z(8, 64)]
    up = np.full((16, 64), 0.0)
    up[:10, :20] = np.triu(np.ones((10, 20)), 2)
    ar = np.full((16, 32), -1)
    ar[:3, :10] = np.arange(7, 37).reshape(3, 10)
    want = {1: np.full((16, 64), 2.5), 2: np.broadcast_to(a.max(1, keepdims=True), (16, 64)),
            3: np.broadcast_to(a.sum(0, keepdims=True, dtype=np.float64), (16, 64)), 4: np.full((16, 64), a.min()),
            5: np.tril(np.ones((16, 64)), -3), 6: up, 7: ar, 8: np.arange(-2.5, 509.5).reshape(8, 64)}
    check(k_generate, args, stage, want, tol=1e-4)


# ---- arg-reductions --------------------------------------------------------------------------


@pl.jit
def k_arg(a: pl.Tensor, rmax: pl.Out[pl.Tensor], rmin: pl.Out[pl.Tensor], cmax: pl.Out[pl.Tensor],
          cmin: pl.Out[pl.Tensor], ragged: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 64])
        pl.store(pl.reshape(pl.row_argmax(x), [1, 16]), [0, 0], rmax)
        pl.store(pl.reshape(pl.row_argmin(x), [1, 16]), [0, 0], rmin)
        pl.store(pl.col_argmax(x), [0, 0], cmax)
        pl.store(pl.col_argmin(x), [0, 0], cmin)
        part = pl.load(a, [0, 0], [16, 64], valid_shape=[10, 37])
        pl.store(pl.col_argmax(part), [0, 0], ragged)
    return rmax


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["fp32", "int32"])
def test_arg_reductions_first_index_int32(stage, dtype):
    a = rng.integers(-4, 4, size=(16, 64)).astype(dtype)  # many ties: the first index wins
    outs = [torch.zeros(1, 16, dtype=torch.int32), torch.zeros(1, 16, dtype=torch.int32),
            torch.zeros(1, 64, dtype=torch.int32), torch.zeros(1, 64, dtype=torch.int32),
            torch.full((1, 64), -7, dtype=torch.int32)]
    ragged = np.full((1, 64), -7)
    ragged[0, :37] = a[:10, :37].argmax(0)
    want = {1: a.argmax(1)[None], 2: a.argmin(1)[None], 3: a.argmax(0)[None], 4: a.argmin(0)[None], 5: ragged}
    ours, theirs = run_both(k_arg, [t(a)] + outs, stage)
    for got in (theirs, ours):
        for i, w in want.items():
            assert got[i].dtype == torch.int32
            np.testing.assert_array_equal(got[i].numpy(), w)


# ---- gather / scatter: along rows, through global memory, on whole tensors --------------------


@pl.jit
def k_gather_scatter(a: pl.Tensor, gi: pl.Tensor, si: pl.Tensor, g: pl.Out[pl.Tensor], s: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 64])
        gathered = pl.gather(x, pl.load(gi, [0, 0], [16, 32]))
        pl.store(gathered, [0, 0], g)
        pl.store(pl.scatter(x, pl.load(si, [0, 0], [16, 32]), gathered), [0, 0], s)
    return g


@pl.jit
def k_global(table: pl.Tensor, ii: pl.Tensor, g: pl.Out[pl.Tensor], dst: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        idx = pl.load(ii, [0, 0], [8, 32])
        got = pl.mgather(table, idx)
        pl.store(got, [0, 0], g)
        dst = pl.mscatter(pl.muls(got, 2.0), idx, dst)
    return g


@pl.jit
def k_tensor_gather_scatter(x: pl.Tensor, gi: pl.Tensor, si: pl.Tensor, src: pl.Tensor, g: pl.Out[pl.Tensor],
                            s: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g[:] = pl.adds(pl.gather(x, -1, gi), 1.0)
        s[:] = pl.tensor.scatter(x, -1, si, src)
    return g


@pytest.mark.parametrize("stage", STAGES)
def test_gather_scatter_mgather_mscatter(stage):
    a = rng.uniform(-9, 9, size=(16, 64)).astype(np.float32)
    gi = rng.integers(0, 64, size=(16, 32)).astype(np.int32)
    si = np.stack([rng.permutation(64)[:32] for _ in range(16)]).astype(np.int32)
    gathered = np.take_along_axis(a, gi, axis=1)
    scattered = a.copy()
    np.put_along_axis(scattered, si, gathered, axis=1)
    check(k_gather_scatter, [t(a), t(gi), t(si), torch.zeros(16, 32), torch.zeros(16, 64)], stage,
          {3: gathered, 4: scattered})

    table = rng.uniform(-9, 9, size=(64, 48)).astype(np.float32)
    ii = rng.permutation(64 * 48)[:256].reshape(8, 32).astype(np.int32)
    dst = np.zeros(64 * 48, np.float32)
    dst[ii.ravel()] = 2 * table.ravel()[ii.ravel()]
    check(k_global, [t(table), t(ii), torch.zeros(8, 32), torch.zeros(64, 48)], stage,
          {2: table.ravel()[ii], 3: dst.reshape(64, 48)})

    x = rng.uniform(-9, 9, size=(64, 96)).astype(np.float32)
    gi2 = rng.integers(0, 96, size=(64, 40)).astype(np.int32)
    si2 = np.stack([rng.permutation(96)[:40] for _ in range(64)]).astype(np.int32)
    src = rng.uniform(-9, 9, size=(64, 40)).astype(np.float32)
    ref = x.copy()
    np.put_along_axis(ref, si2, src, axis=1)
    check(k_tensor_gather_scatter, [t(x), t(gi2), t(si2), t(src), torch.zeros(64, 40), torch.zeros(64, 96)], stage,
          {4: np.take_along_axis(x, gi2, axis=1) + 1, 5: ref})


# ---- sort32 / mrgsort -------------------------------------------------------------------------


@pl.jit
def k_sort(a: pl.Tensor, v: pl.Out[pl.Tensor], i: pl.Out[pl.Tensor], mv: pl.Out[pl.Tensor], mi: pl.Out[pl.Tensor],
           rv: pl.Out[pl.Tensor], ri: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [8, 64])
        vals, idx = pl.sort32(x)
        pl.store(vals, [0, 0], v)
        pl.store(idx, [0, 0], i)
        merged = pl.mrgsort(pl.slice(vals, [8, 32], [0, 0]), pl.slice(idx, [8, 32], [0, 0]),
                            pl.slice(vals, [8, 32], [0, 32]), pl.slice(idx, [8, 32], [0, 32]))
        pl.store(merged[0], [0, 0], mv)
        pl.store(merged[1], [0, 0], mi)
        rvals, ridx = pl.sort32(pl.load(a, [0, 0], [8, 64], valid_shape=[5, 50]))
        pl.store(rvals, [0, 0], rv)
        pl.store(ridx, [0, 0], ri)
    return v


def descending(a):
    return np.argsort(-a.astype(np.float64), axis=-1, kind="stable")


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["fp32", "int32"])
def test_sort32_and_mrgsort(stage, dtype):
    a = rng.integers(-20, 20, size=(8, 64)).astype(dtype)  # repeated values: the sorts are stable
    like = torch.from_numpy(a).dtype
    outs = [torch.zeros(8, 64, dtype=like), torch.zeros(8, 64, dtype=torch.int32), torch.zeros(8, 64, dtype=like),
            torch.zeros(8, 64, dtype=torch.int32), torch.full((8, 64), 9, dtype=like),
            torch.full((8, 64), -1, dtype=torch.int32)]
    blocks = a.reshape(8, 2, 32)
    order = descending(blocks)
    full = descending(a)
    head, tail = a[:5, :32], a[:5, 32:50]
    rv, ri = np.full((8, 64), 9), np.full((8, 64), -1)
    rv[:5, :32], rv[:5, 32:50] = np.take_along_axis(head, descending(head), 1), np.take_along_axis(tail, descending(tail), 1)
    ri[:5, :32], ri[:5, 32:50] = descending(head), descending(tail) + 32
    want = {1: np.take_along_axis(blocks, order, axis=2).reshape(8, 64),
            2: (order + np.array([0, 32])[None, :, None]).reshape(8, 64),
            3: np.take_along_axis(a, full, axis=1), 4: full, 5: rv, 6: ri}
    check(k_sort, [t(a)] + outs, stage, want)


# ---- batch_matmul ------------------------------------------------------------------------------


@pl.jit
def k_bmm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.batch_matmul(a, b)
    return c


@pytest.mark.parametrize("stage", STAGES)
def test_batch_matmul(stage):
    a = rng.standard_normal((3, 32, 48)).astype(np.float32)
    b = rng.standard_normal((3, 48, 16)).astype(np.float32)
    check(k_bmm, [t(a), t(b), torch.zeros(3, 32, 16)], stage, {2: a.astype(np.float64) @ b}, tol=1e-4)


# ---- mixed programs (Group functions, cross-core FIFOs) -----------------------------------------


def program_entry(program, wait_s=None):
    namespace = namespace_of(dbg.torch_codegen(program))
    if wait_s is not None:
        namespace["_FIFO_WAIT_S"] = wait_s
    return namespace["ENTRY"]


def randn(*shape):
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


def _mixed_cases():
    M, K, N, H = mp.M, mp.K, mp.N, mp.H
    a, b, bias = randn(M, K), randn(K, N), randn(M, N)
    pa, pb, pbias = randn(mp.PM, mp.PK), randn(mp.PK, N), randn(mp.PM, N)
    x, w, xb = randn(mp.XM, mp.XK), randn(mp.XK, mp.XN), randn(mp.XM, mp.XN)
    sa = randn(mp.SB * mp.SR, mp.SC)
    z = torch.zeros
    return [
        ("OneCubeOneVector", [a, b, bias, z(M, N)], 3, lambda: torch.relu(a @ b + bias)),
        ("OneCubeTwoVectors", [a, b, bias, z(M, N)], 3, lambda: torch.relu(a @ b + bias)),
        ("BlockPipeline", [pa, pb, pbias, z(mp.PM, N)], 3, lambda: torch.relu(pa @ pb + pbias)),
        ("VectorFeedsCube", [x, w, z(mp.XM, mp.XN)], 2, lambda: (torch.relu(x) * 0.5) @ w),  # AIV -> AIC
        ("RoundTrip", [x, w, xb, z(mp.XM, mp.XN)], 3, lambda: (torch.relu(x) @ w + xb) * 2),  # both ways
        ("SlowConsumer", [sa, z(mp.SB * mp.SR, mp.SC)], 1, lambda: sa),
        ("GroupPerHalf", [a, b, bias, z(M, N), z(H, N)], 4, lambda: torch.relu(a[:H] @ b + bias[:H]) * 2),
    ]


MIXED = _mixed_cases()


@pytest.mark.parametrize("case", MIXED, ids=[c[0] for c in MIXED])
def test_mixed_program_script_matches_our_run_and_torch(case):
    name, args, out, reference = case
    program = getattr(mp, name)
    ours = copies(args)
    compiled = rt.run(program, *ours)
    for source in (program, compiled):
        theirs = copies(args)
        program_entry(source)(*theirs)
        for got, mine in zip(theirs, ours):
            torch.testing.assert_close(got, mine, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(theirs[out], reference(), rtol=1e-4, atol=1e-4)


def test_mixed_script_runs_group_parts_as_threads_with_fifos():
    text = dbg.torch_codegen(mp.VectorFeedsCube)
    assert "_run_group('fused', [" in text
    assert '("AIV 0", 0, prologue,' in text and '("AIC", None, cube,' in text
    assert '_tpush("AIV->AIC", None, ' in text and '_tpop("AIV->AIC", 0, 32, 64, torch.float32)' in text
    assert "_FIFO_DEPTH = 2" in text


@pytest.mark.parametrize("name,args,what", [
    ("PopWithoutPush", [torch.ones(16, 16), torch.zeros(16, 16), torch.zeros(16, 16)], "pop from the AIC->AIV FIFO"),
    # both parts end up waiting (the AIC to push into a full FIFO, the AIV to pop a tile
    # that is never pushed); whichever wait times out first reports the deadlock
    ("PushWithoutFree", [torch.ones(48, 16), torch.zeros(48, 16)], "the AIC->AIV FIFO"),
])
def test_mixed_script_reports_a_deadlock(name, args, what):
    entry = program_entry(getattr(mp, name), wait_s=3.0)  # long enough that a busy host does not time out the live part
    with pytest.raises(RuntimeError, match="mixed task 'fused'") as info:
        entry(*args)
    assert what in str(info.value.__cause__) and "deadlock" in str(info.value.__cause__)


def test_fifo_op_outside_a_group_is_a_clear_error():
    namespace = namespace_of(dbg.torch_codegen(mp.VectorFeedsCube))
    with pytest.raises(RuntimeError, match="pl.tpush runs outside a mixed task"):
        namespace["prologue"](torch.ones(mp.XM, mp.XK))

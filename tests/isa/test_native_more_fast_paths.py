"""Fast paths of the native engine for TCONCAT (RoPE's rotate-half), TTRI (causal masks), TCI
(positions), the partial ops TPARTADD / TPARTMUL / TPARTMAX / TPARTMIN where both sources
cover the result, TGATHER (by INT32 / UINT32 indices), TPRELU, FP16 / BF16 compares and
selects, the arg-reductions, and TTRANS reading its loaded source in place: bit for bit against
the reference library (engine "sim") on FP32, FP16 and BF16 tiles with partly valid shapes, and
taken (no reference fallback in the kernel)."""

import re

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig

R, C, H = 24, 64, 32


def make(DT):
    """The program for tiles of dtype DT (a closure constant)."""
    @pl.jit
    def generated(x: pl.Tensor, y: pl.Tensor, o_cat: pl.Out[pl.Tensor], o_tri: pl.Out[pl.Tensor],
                  o_triu: pl.Out[pl.Tensor], o_ci: pl.Out[pl.Tensor], o_cid: pl.Out[pl.Tensor],
                  o_part: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [R, C])
            u = pl.load(y, [0, 0], [R, C])
            cat = pl.tile.concat(pl.neg(pl.load(x, [0, H], [R, H])), pl.load(x, [0, 0], [R, H]))
            o_cat = pl.store(cat, [0, 0], o_cat)
            o_tri = pl.store(pl.tile.tri(3, [R, C], dtype=DT), [0, 0], o_tri)
            o_triu = pl.store(pl.tile.tri(-2, [R, C], dtype=DT, upper=True), [0, 0], o_triu)
            o_ci = pl.store(pl.tile.ci(5, [R, C], dtype=DT), [0, 0], o_ci)
            o_cid = pl.store(pl.tile.ci(100, [R, C], dtype=DT, descending=True), [0, 0], o_cid)
            p = pl.tile.part_add(t, u)
            q = pl.tile.part_max(p, t)
            r = pl.tile.part_mul(q, u)
            o_part = pl.store(pl.tile.part_min(r, t), [0, 0], o_part)
        return o_cat, o_tri, o_triu, o_ci, o_cid, o_part
    return generated


DTYPES = {"FP32": torch.float32, "FP16": torch.float16, "BF16": torch.bfloat16}
PL = {"FP32": pl.FP32, "FP16": pl.FP16, "BF16": pl.BF16}


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_fast_paths_match_the_reference_and_are_taken(dtype):
    generated = make(PL[dtype])
    gen = torch.Generator().manual_seed(11)
    x = (torch.randn(R, C, generator=gen) * 3).to(DTYPES[dtype])
    y = (torch.randn(R, C, generator=gen) * 3).to(DTYPES[dtype])

    def run(engine):
        outs = [torch.zeros(R, C, dtype=DTYPES[dtype]) for _ in range(6)]
        generated(x, y, *outs, config=RunConfig(engine=engine))
        return outs

    report = generated.compile(x, y, *[torch.zeros(R, C, dtype=DTYPES[dtype]) for _ in range(6)]).native_report()
    (k,) = report.values()
    for m in ("TCONCAT", "TTRI", "TCI", "TPARTADD", "TPARTMAX", "TPARTMUL", "TPARTMIN"):
        assert m in k["fast"] and m not in k["reference"], (m, k)
    native, sim = run("native"), run("sim")
    for a, b in zip(native, sim):
        assert torch.equal(a.view(torch.int16) if a.element_size() == 2 else a.view(torch.int32),
                           b.view(torch.int16) if b.element_size() == 2 else b.view(torch.int32))
    cat, tri, triu, ci, cid, part = (t.float() for t in native)
    xf, yf = x.float(), y.float()
    torch.testing.assert_close(cat, torch.cat([-xf[:, H:], xf[:, :H]], 1), rtol=0, atol=0)
    torch.testing.assert_close(tri, torch.tril(torch.ones(R, C), 3), rtol=0, atol=0)
    torch.testing.assert_close(triu, torch.triu(torch.ones(R, C), -2), rtol=0, atol=0)
    idx = torch.arange(R * C, dtype=torch.float64).view(R, C)
    torch.testing.assert_close(ci, (5 + idx).to(DTYPES[dtype]).float(), rtol=0, atol=0)
    torch.testing.assert_close(cid, (100 - idx).to(DTYPES[dtype]).float(), rtol=0, atol=0)


@pl.jit
def ragged(x: pl.Tensor, o_tri: pl.Out[pl.Tensor], o_ci: pl.Out[pl.Tensor], o_part: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        o_tri = pl.store(pl.tile.tri(0, [16, 32], valid_shape=[11, 21], dtype=pl.FP32), [0, 0], o_tri)
        o_ci = pl.store(pl.tile.ci(1, [16, 32], dtype=pl.FP32), [0, 0], o_ci)
        big = pl.load(x, [0, 0], [16, 32])
        small = pl.load(x, [0, 0], [16, 32], valid_shape=[9, 17])
        o_part = pl.store(pl.tile.part_add(big, small), [0, 0], o_part)  # only partly covered: the reference
    return o_tri, o_ci, o_part


def test_partly_valid_shapes_agree_with_the_reference():
    x = np.random.default_rng(2).standard_normal((16, 32)).astype(np.float32)

    def run(engine):
        outs = [np.full((16, 32), -7.0, np.float32) for _ in range(3)]
        ragged(x, *outs, config=RunConfig(engine=engine))
        return outs

    native, sim = run("native"), run("sim")
    for a, b in zip(native, sim):
        np.testing.assert_array_equal(a, b)
    tri, _, part = native
    np.testing.assert_array_equal(tri[:11, :21], np.tril(np.ones((11, 21), np.float32)))
    want = x.copy()
    want[:9, :17] += x[:9, :17]
    np.testing.assert_array_equal(part, want)


@pl.jit
def gather_prelu(x: pl.Tensor, i: pl.Tensor, w: pl.Tensor, o_g: pl.Out[pl.Tensor], o_p: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        o_g = pl.store(pl.tile.gather(t, pl.load(i, [0, 0], [R, H])), [0, 0], o_g)
        slope = pl.load(w, [0, 0], [R, C])
        o_p = pl.store(pl.tile.prelu(t, slope, slope), [0, 0], o_p)
    return o_g, o_p


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("index", [torch.int32, "uint32"])
def test_gather_and_prelu(dtype, index):
    gen = torch.Generator().manual_seed(12)
    x = (torch.randn(R, C, generator=gen) * 3).to(DTYPES[dtype])
    w = torch.rand(R, C, generator=gen).to(DTYPES[dtype])
    cols = torch.randint(0, C, (R, H), generator=gen)
    i = cols.to(torch.int32) if index == torch.int32 else cols.numpy().astype(np.uint32)
    (k,) = gather_prelu.compile(x, i, w, torch.zeros(R, H, dtype=DTYPES[dtype]),
                                torch.zeros(R, C, dtype=DTYPES[dtype])).native_report().values()
    assert {"TGATHER", "TPRELU"} <= set(k["fast"]) and k["reference"] == [], k

    def run(engine, idx):
        outs = [torch.zeros(R, H, dtype=DTYPES[dtype]), torch.zeros(R, C, dtype=DTYPES[dtype])]
        gather_prelu(x, idx, w, *outs, config=RunConfig(engine=engine))
        return outs

    (g, p), (gs, ps) = run("native", i), run("sim", i)
    assert torch.equal(g, gs) and torch.equal(p, ps)
    torch.testing.assert_close(g, torch.gather(x, 1, cols), rtol=0, atol=0)
    torch.testing.assert_close(p.float(), torch.where(x > 0, x, x * w).float(), rtol=0, atol=0)
    bad = i.clone() if index == torch.int32 else i.copy()
    bad[5, 7] = C + 3
    errors = []
    for engine in ("native", "sim"):
        with pytest.raises(Exception) as e:
            run(engine, bad)
        errors.append(str(e.value).splitlines()[0])
    assert errors[0] == errors[1] and "outside the source row" in errors[0], errors


@pl.jit
def transposed_pages(q: pl.Tensor, k: pl.Tensor, x: pl.Tensor, s: pl.Out[pl.Tensor], t: pl.Out[pl.Tensor],
                     n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ql = pl.move(pl.load(q, [0, 0], [8, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        for j in pl.range(2):
            kt = pl.transpose_view(pl.load(k, [j * 32, 64], [32, 64], target_memory=pl.Mem.Mat))
            s = pl.store(pl.matmul(ql, pl.move(kt, target_memory=pl.Mem.Right)), [0, j * 32], s)
        xt = pl.tile.transpose(pl.load(x, [0, 16], [16, 32], valid_shape=[n, 32]), 0, 1)
        t = pl.store(xt, [0, 0], t)
    return s, t


@pytest.mark.parametrize("n", [16, 11])
def test_transpose_reads_its_loaded_source_in_place(n):
    # A K page loaded from a wider tensor (row stride 128, column offset 64) and seen
    # transposed: TTRANS reads the tensor window, not a copy; a ragged Vec window (valid rows
    # n < 16) is copied first. Both engines against numpy.
    rng = np.random.default_rng(n)
    q = rng.uniform(-1, 1, (8, 64)).astype(np.float16)
    k = rng.uniform(-1, 1, (64, 128)).astype(np.float16)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    src = transposed_pages.compile(q, k, x, np.zeros((8, 64), np.float32), np.zeros((32, 16), np.float32),
                                   n).native_sources()
    (text,) = [v for v in src.values() if v]
    steps = re.split(r"/\* (?=T[A-Z0-9_]+ \*/)", text)  # each instruction's code
    trans = [step for step in steps if step.startswith("TTRANS */")]
    assert len(trans) == 2 and all("FB(" not in step.split("if (!ok)")[0] for step in trans), trans
    assert re.search(r"dp1 = gp\d+", trans[0]), "the K page's TTRANS does not read its window in place"
    want_s = q.astype(np.float32) @ k[:, 64:].astype(np.float32).T
    for engine in ("native", "sim"):
        s, t = np.zeros((8, 64), np.float32), np.zeros((32, 16), np.float32)
        transposed_pages(q, k, x, s, t, n, config=RunConfig(engine=engine))
        np.testing.assert_allclose(s, want_s, rtol=1e-3, atol=1e-3)
        np.testing.assert_array_equal(t[:, :n], x[:n, 16:48].T)


@pl.jit
def half_masks(x: pl.Tensor, y: pl.Tensor, o_lt: pl.Out[pl.Tensor], o_ge: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        u = pl.load(y, [0, 0], [R, C])
        lt = pl.tile.cmp(t, u, cmp_type="LT")
        o_lt = pl.store(pl.tile.sel(lt, t, u), [0, 0], o_lt)  # min(t, u) where comparable
        ge = pl.tile.cmps(t, 0.3, cmp_type="GE")
        o_ge = pl.store(pl.tile.sels(ge, t, t, 0.1), [0, 0], o_ge)  # 0.1: not exact in fp16 / bf16
    return o_lt, o_ge


@pytest.mark.parametrize("dtype", ["FP16", "BF16"])
def test_half_compares_and_scalar_selects(dtype):
    # FP16 / BF16 compares widen both sides to FP32 (a scalar compares as FP32, as in the
    # reference); a selected scalar is rounded once to the dtype. NaNs compare false.
    gen = torch.Generator().manual_seed(13)
    x = torch.randn(R, C, generator=gen).to(DTYPES[dtype])
    y = torch.randn(R, C, generator=gen).to(DTYPES[dtype])
    x[3, 5] = float("nan")
    x[4, :8] = 0.3  # rounded: compares with the FP32 scalar 0.3 as the reference does
    outs = [torch.zeros(R, C, dtype=DTYPES[dtype]) for _ in range(2)]
    (k,) = half_masks.compile(x, y, *outs).native_report().values()
    assert {"TCMP", "TCMPS", "TSEL", "TSELS"} <= set(k["fast"]) and k["reference"] == [], k
    results = {}
    for engine in ("native", "sim"):
        outs = [torch.zeros(R, C, dtype=DTYPES[dtype]) for _ in range(2)]
        half_masks(x, y, *outs, config=RunConfig(engine=engine))
        results[engine] = [o.view(torch.int16) for o in outs]
    for a, b in zip(results["native"], results["sim"]):
        assert torch.equal(a, b)
    lt, ge = (o.view(DTYPES[dtype]).float() for o in results["native"])
    xf, yf = x.float(), y.float()
    torch.testing.assert_close(lt, torch.where(xf < yf, xf, yf), rtol=0, atol=0, equal_nan=True)
    want = torch.where(xf >= 0.3, xf, torch.tensor(0.1).to(DTYPES[dtype]).float())
    torch.testing.assert_close(ge, want, rtol=0, atol=0, equal_nan=True)


@pl.jit
def arg_reductions(x: pl.Tensor, rmax: pl.Out[pl.Tensor], rmin: pl.Out[pl.Tensor], cmax: pl.Out[pl.Tensor],
                   cmin: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C], valid_shape=[R, n])
        rmax = pl.store(pl.tile.row_argmax(t), [0, 0], rmax)
        rmin = pl.store(pl.tile.row_argmin(t), [0, 0], rmin)
        cmax = pl.store(pl.tile.col_argmax(t), [0, 0], cmax)
        cmin = pl.store(pl.tile.col_argmin(t), [0, 0], cmin)
    return rmax, rmin, cmax, cmin


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_arg_reductions(dtype):
    # First index of the max / min over the valid region (n of C columns), ties and NaNs as the
    # reference walks them: a NaN is never better, a NaN first stays the answer.
    gen = torch.Generator().manual_seed(14)
    x = torch.randint(-4, 5, (R, C), generator=gen).to(DTYPES[dtype])  # many ties
    x[2, 7] = float("nan")
    x[5, 0] = float("nan")
    n = C - 9
    shapes = [(R, 1), (R, 1), (1, n), (1, n)]
    (k,) = arg_reductions.compile(x, *[torch.zeros(s, dtype=torch.int32) for s in shapes], n).native_report().values()
    assert {"TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN"} <= set(k["fast"]) and k["reference"] == [], k
    results = {}
    for engine in ("native", "sim"):
        outs = [torch.full(s, -1, dtype=torch.int32) for s in shapes]
        arg_reductions(x, *outs, n, config=RunConfig(engine=engine))
        results[engine] = outs
    for a, b in zip(results["native"], results["sim"]):
        assert torch.equal(a, b)
    v = x[:, :n].float()
    rmax, rmin, cmax, cmin = results["native"]
    assert rmax[0, 0] == int(torch.argmax(torch.nan_to_num(v[0], nan=-1e9)))  # first of the ties
    assert rmax[5, 0] == 0 and rmin[5, 0] == 0  # a NaN first is never replaced
    assert cmax[0, 7] == int(torch.argmax(torch.nan_to_num(v[:, 7], nan=-1e9)))

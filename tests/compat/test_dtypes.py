"""PyPTO's wider integer dtypes in tiles and tensors (issue 14): UINT16, UINT32 (TCI iotas,
sort32's index tiles) and INT64 compute; UINT64 loads, stores, moves and converts. Vec tiles
whose rows are under 32 bytes ([32, 1] FP32, [16, 4] FP16) are legal, their rows padded to
32 bytes in the allocation. Each program runs on both engines against numpy (or torch),
and round-trips through the printer."""

import re

import numpy as np
import pypto.language as pl
import pytest
from pypto import _core
from pypto.runtime import RunConfig, _arg_specs

from .roundtrip import round_trip

ENGINES = ["native", "sim"]
R, C = 16, 64


def run(kernel, *args, engine):
    kernel(*args, config=RunConfig(engine=engine))




def error_of(kernel, *args):
    with pytest.raises(Exception) as e:
        kernel(*args, config=RunConfig(engine="sim"))
    return str(e.value)


# ---- UINT16 / UINT32 / INT64: elementwise, scalar, compare/select, reductions, casts -------

@pl.jit
def k_int_ops(a: pl.Tensor, b: pl.Tensor, add: pl.Out[pl.Tensor], mx: pl.Out[pl.Tensor], sel: pl.Out[pl.Tensor],
              rsum: pl.Out[pl.Tensor], cmax: pl.Out[pl.Tensor], f: pl.Out[pl.Tensor], u32: pl.Out[pl.Tensor],
              i64: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [R, C])
        y = pl.load(b, [0, 0], [R, C])
        add = pl.store(pl.adds(pl.sub(pl.add(x, y), pl.mul(x, y)), 3), [0, 0], add)
        mx = pl.store(pl.maximum(x, y), [0, 0], mx)
        sel = pl.store(pl.sel(pl.cmp(x, y, cmp_type="GT"), x, pl.minimum(x, y)), [0, 0], sel)
        rsum = pl.store(pl.row_sum(x), [0, 0], rsum)     # a [16, 1] result: a narrow Vec row
        cmax = pl.store(pl.col_max(y), [0, 0], cmax)
        xf = pl.cast(x, pl.FP32)
        f = pl.store(xf, [0, 0], f)
        u32 = pl.store(pl.cast(xf, pl.UINT32, mode="trunc"), [0, 0], u32)  # saturating conversions
        i64 = pl.store(pl.cast(xf, pl.INT64, mode="trunc"), [0, 0], i64)
    return add


def operands(dtype, rng):
    info = np.iinfo(dtype)
    if dtype == np.int64:  # past 2^53 (not exact in double) and of both signs
        lo, hi = -(2**62), 2**62
    else:
        lo, hi = 0, int(info.max)
    a = rng.integers(lo, hi, size=(R, C), dtype=np.int64 if dtype == np.int64 else np.uint64).astype(dtype)
    b = rng.integers(lo, hi, size=(R, C), dtype=np.int64 if dtype == np.int64 else np.uint64).astype(dtype)
    b[::3] = a[::3]  # equal pairs for the compare
    a[0, :4] = info.max  # sums that wrap
    b[0, :4] = [1, 2, info.max, 7]
    return a, b


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.int64])
def test_wide_integer_tiles_compute(dtype, engine):
    rng = np.random.default_rng(7 + np.dtype(dtype).itemsize)
    a, b = operands(dtype, rng)
    outs = [np.zeros((R, C), dtype) for _ in range(3)] + [np.zeros((R, 1), dtype), np.zeros((1, C), dtype),
                                                         np.zeros((R, C), np.float32), np.zeros((R, C), np.uint32),
                                                         np.zeros((R, C), np.int64)]
    run(k_int_ops, a, b, *outs, engine=engine)
    add, mx, sel, rsum, cmax, f, u32, i64 = outs
    with np.errstate(over="ignore"):  # numpy's fixed-width integers wrap, as the tiles do
        np.testing.assert_array_equal(add, (a + b) - (a * b) + dtype(3))
        np.testing.assert_array_equal(rsum[:, 0], a.sum(axis=1, dtype=dtype))
    np.testing.assert_array_equal(mx, np.maximum(a, b))
    np.testing.assert_array_equal(sel, np.where(a > b, a, np.minimum(a, b)))
    np.testing.assert_array_equal(cmax[0], b.max(axis=0))
    np.testing.assert_array_equal(f, a.astype(np.float32))  # one rounding, also past 2^53
    fd = f.astype(np.float64)
    np.testing.assert_array_equal(u32, np.clip(fd, 0, 2**32 - 1).astype(np.uint32))
    fits = np.abs(fd) < 2.0**63  # fp32 values past INT64's range saturate
    np.testing.assert_array_equal(i64[fits], fd[fits].astype(np.int64))
    assert (i64[~fits] == np.where(fd[~fits] > 0, np.iinfo(np.int64).max, np.iinfo(np.int64).min)).all()
    assert f"pl.{np.dtype(dtype).name.upper()}" in round_trip(k_int_ops, a, b, *outs)


@pl.jit
def k_bits(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor], sh: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [R, C])
        y = pl.load(b, [0, 0], [R, C])
        out = pl.store(pl.xor(pl.and_(x, y), pl.or_(x, pl.shrs(y, 3))), [0, 0], out)
        sh = pl.store(pl.shls(x, 5), [0, 0], sh)
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.int64])
def test_wide_integer_bitwise_and_shifts(dtype, engine):
    rng = np.random.default_rng(3)
    a, b = operands(dtype, rng)
    out, sh = np.zeros_like(a), np.zeros_like(a)
    run(k_bits, a, b, out, sh, engine=engine)
    np.testing.assert_array_equal(out, (a & b) ^ (a | (b >> dtype(3))))  # logical >> for unsigned
    np.testing.assert_array_equal(sh, a << dtype(5))


# ---- UINT64: moved and converted, not computed on -------------------------------------------

@pl.jit
def k_u64(a: pl.Tensor, out: pl.Out[pl.Tensor], f: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [8, 32])
        out = pl.store(x, [0, 0], out)
        f = pl.store(pl.cast(x, pl.FP32), [0, 0], f)
    return out


@pl.jit
def k_u64_add(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [8, 32])
        out = pl.store(pl.add(x, x), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_uint64_loads_stores_and_converts(engine):
    rng = np.random.default_rng(64)
    a = rng.integers(0, 2**64 - 1, size=(8, 32), dtype=np.uint64)
    a[0, :3] = [2**63, 2**64 - 1, 1]  # the top bit set: unsigned, not negative
    out, f = np.zeros_like(a), np.zeros((8, 32), np.float32)
    run(k_u64, a, out, f, engine=engine)
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(f, a.astype(np.float32))
    msg = error_of(k_u64_add, a, out)
    assert "test_dtypes.py" in msg and "argument 'lhs' is UINT64; TADD accepts" in msg and "fix:" in msg


# ---- torch uint16 / uint32 arguments -----------------------------------------------------------

@pl.jit
def k_add_one(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.store(pl.adds(pl.load(a, [0, 0], [R, C]), 1), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["uint16", "uint32"])
def test_torch_unsigned_tensors(name, engine):
    torch = pytest.importorskip("torch")
    tdt = getattr(torch, name)
    a = np.random.default_rng(5).integers(0, np.iinfo(name).max, size=(R, C)).astype(name)
    a[0, 0] = np.iinfo(name).max  # wraps to 0
    at, out = torch.from_numpy(a), torch.zeros(R, C, dtype=tdt)
    k_add_one(at, out, config=RunConfig(engine=engine))
    assert out.dtype == tdt
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out.numpy(), a + np.dtype(name).type(1))


# ---- TCI (arange) of UINT32 and sort32's index tile ------------------------------------------

@pl.jit
def k_sort_idx(x: pl.Tensor, vals: pl.Out[pl.Tensor], idx: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [4, 64])
        ids = pl.adds(pl.arange(0, [4, 64], dtype=pl.UINT32), 1000)  # 1000 + r * 64 + c
        v, i = pl.sort32(t, ids)
        vals = pl.store(v, [0, 0], vals)
        idx = pl.store(i, [0, 0], idx)
    return vals


@pytest.mark.parametrize("engine", ENGINES)
def test_sort32_carries_a_uint32_index_tile(engine):
    x = np.random.default_rng(32).permutation(256).reshape(4, 64).astype(np.float32)
    vals, idx = np.zeros_like(x), np.zeros((4, 64), np.uint32)
    run(k_sort_idx, x, vals, idx, engine=engine)
    ids = (1000 + np.arange(256)).reshape(4, 64).astype(np.uint32)
    for c0 in (0, 32):
        order = np.argsort(-x[:, c0:c0 + 32], axis=1, kind="stable")
        np.testing.assert_array_equal(vals[:, c0:c0 + 32], np.take_along_axis(x[:, c0:c0 + 32], order, 1))
        np.testing.assert_array_equal(idx[:, c0:c0 + 32], np.take_along_axis(ids[:, c0:c0 + 32], order, 1))
    assert "pl.UINT32" in round_trip(k_sort_idx, x, vals, idx)


@pl.jit
def k_sort_bad_idx(x: pl.Tensor, vals: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [4, 64])
        v, _i = pl.sort32(t, pl.cast(t, pl.INT16))
        vals = pl.store(v, [0, 0], vals)
    return vals


def test_sort32_index_tile_must_be_32_bit_integers():
    x = np.zeros((4, 64), np.float32)
    msg = error_of(k_sort_bad_idx, x, x.copy())
    assert "'idx' must be a UINT32 or INT32 index tile of the values' shape [4, 64]" in msg and "fix:" in msg


# ---- Vec rows under 32 bytes: [32, 1] FP32 columns, [16, 4] FP16 -----------------------------

@pl.jit
def k_column(x: pl.Tensor, c: pl.Tensor, out: pl.Out[pl.Tensor], cols: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64])
        col = pl.load(c, [0, 3], [32, 1])           # column 3 of a [32, 8] tensor
        other = pl.load(c, [0, 6], [32, 1])         # live together with col
        both = pl.add(pl.muls(col, 2.0), other)     # elementwise on [32, 1] tiles
        s = pl.add(pl.row_sum(t), both)             # with the row-reduction result
        out = pl.store(pl.row_expand_sub(t, s), [0, 0], out)
        cols = pl.store(s, [0, 5], cols)            # into column 5 of a [32, 8] tensor
    return out


@pl.jit
def k_narrow(h: pl.Tensor, hout: pl.Out[pl.Tensor], ramp: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(h, [0, 0], [16, 4])             # 8-byte FP16 rows
        hout = pl.store(pl.mul(t, t), [0, 0], hout)
        ramp = pl.store(pl.arange(0, [4, 4]), [0, 0], ramp)  # 16-byte INT32 rows
    return hout


@pytest.mark.parametrize("engine", ENGINES)
def test_narrow_vec_rows_load_compute_and_store(engine):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    c = rng.standard_normal((32, 8)).astype(np.float32)
    out, cols = np.zeros_like(x), np.zeros((32, 8), np.float32)
    run(k_column, x, c, out, cols, engine=engine)
    s = x.sum(axis=1) + (2 * c[:, 3] + c[:, 6])
    np.testing.assert_allclose(cols[:, 5], s, rtol=1e-5, atol=1e-5)
    assert not cols[:, [0, 1, 2, 3, 4, 6, 7]].any()  # only column 5 written
    np.testing.assert_allclose(out, x - s[:, None], rtol=1e-5, atol=1e-5)
    h = rng.standard_normal((16, 4)).astype(np.float16)
    hout, ramp = np.zeros_like(h), np.zeros((4, 4), np.int32)
    run(k_narrow, h, hout, ramp, engine=engine)
    np.testing.assert_array_equal(hout, h * h)
    np.testing.assert_array_equal(ramp, np.arange(16).reshape(4, 4))


def test_narrow_vec_rows_are_padded_to_32_bytes_in_the_allocation():
    """Two [32, 1] FP32 tiles live at once: each takes 32 rows x 32 bytes = 1 KiB of UB (the
    dense 128 bytes would let them share a KiB)."""
    x, c = np.zeros((32, 64), np.float32), np.zeros((32, 8), np.float32)
    text = str(k_column.lower(x, c, x.copy(), c.copy()))
    addr = {m.group(1): int(m.group(2)) for m in
            re.finditer(r"(\w+): pl\.Tile\[\[32, 1\], pl\.FP32, pl\.Mem\.Vec, pl\.Addr\((\d+)\)", text)}
    assert "col" in addr and "other" in addr, text
    assert abs(addr["col"] - addr["other"]) >= 32 * 32, text
    round_trip(k_column, x, c, x.copy(), c.copy())


# ---- dtypes an instruction does not take: compile-time errors ---------------------------------

@pl.jit
def k_bool_row_sum(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.store(pl.row_sum(pl.load(x, [0, 0], [16, 32])), [0, 0], out)
    return out


@pl.jit
def k_cast_index(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.store(pl.cast(pl.load(x, [0, 0], [16, 32]), pl.INDEX), [0, 0], out)
    return out


def test_dtypes_outside_an_instructions_family_fail_at_compile_time():
    msg = error_of(k_bool_row_sum, np.zeros((16, 32), np.bool_), np.zeros((16, 1), np.bool_))
    assert "test_dtypes.py" in msg and "argument 'tile' is BOOL; TROWSUM accepts FP32" in msg and "fix:" in msg
    msg = error_of(k_cast_index, np.zeros((16, 32), np.float32), np.zeros((16, 32), np.int64))
    assert "the result dtype INDEX is not one a tile holds" in msg and "fix: convert to pl.INT64" in msg


# ---- class-form programs: UINT16 / INT64 parameters, a compiled program called again ----------

def program_u16_i64():
    """Built per use: a module-level program would outlive the bindings at interpreter exit."""
    @pl.program
    class Widen:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[16, 32], pl.UINT16], b: pl.Out[pl.Tensor[[16, 32], pl.INT64]]) -> pl.Tensor[[16, 32], pl.INT64]:
            t = pl.cast(pl.load(a, [0, 0], [16, 32]), pl.INT64)
            b = pl.store(pl.muls(t, 1099511627776), [0, 0], b)
            return b

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 32], pl.UINT16], b: pl.Out[pl.Tensor[[16, 32], pl.INT64]]):
            b = self.kernel(a, b)
            return b

    return Widen


@pytest.mark.parametrize("engine", ENGINES)
def test_class_form_program_with_uint16_and_int64_tensors(engine):
    from pypto import runtime

    prog = program_u16_i64()
    a = np.random.default_rng(16).integers(0, 2**16, size=(16, 32)).astype(np.uint16)
    b = np.zeros((16, 32), np.int64)
    compiled = runtime.run(prog, a, b, config=RunConfig(engine=engine))
    np.testing.assert_array_equal(b, a.astype(np.int64) << 40)  # past 2^53: exact
    a2, b2 = a[::-1].copy(), np.zeros_like(b)
    compiled(a2, b2)
    np.testing.assert_array_equal(b2, a2.astype(np.int64) << 40)
    text = _core.ir.print_program(prog)
    assert _core.ir.structural_equal(pl.parse(text), prog)


# ---- tensor-level ops (tiled by LowerTensorOps) on the new dtypes and on [N, 1] tensors -------

@pl.jit
def k_tensor_level(x: pl.Tensor, c: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(pl.muls(x, 2), c)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_level_ops_on_uint32_and_column_tensors(engine):
    u = np.random.default_rng(9).integers(0, 2**32, size=(64, 16), dtype=np.uint64).astype(np.uint32)
    out = np.zeros_like(u)
    run(k_tensor_level, u, u, out, engine=engine)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, u * np.uint32(2) + u)
    col = np.random.default_rng(10).standard_normal((32, 1)).astype(np.float32)
    cout = np.zeros_like(col)
    run(k_tensor_level, col, col, cout, engine=engine)
    np.testing.assert_allclose(cout, 3 * col, rtol=1e-6)

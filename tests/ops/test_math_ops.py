"""Remainders (TREM TFMOD TREMS TFMODS), sin/cos (no PTO instruction:
ExpandOps emits range reduction and a polynomial from vector instructions) and the partial
combines TPARTADD/MUL/MAX/MIN, end to end against numpy on several dtypes and valid shapes,
plus the errors for misuse."""

import numpy as np
import pypto.language as pl
import pytest
from pypto.runtime import RunConfig

rng = np.random.default_rng(31)


@pl.jit
def k_remainders(a: pl.Tensor, b: pl.Tensor, r: pl.Out[pl.Tensor], f: pl.Out[pl.Tensor], rs: pl.Out[pl.Tensor],
                 fs: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 64])
        tb = pl.load(b, [0, 0], [16, 64])
        pl.store(pl.rem(ta, tb), [0, 0], r)
        pl.store(pl.fmod(ta, tb), [0, 0], f)
        pl.store(pl.rem(ta, 3), [0, 0], rs)  # scalar form: pl.tile.rems
        pl.store(pl.fmod(ta, -3), [0, 0], fs)  # scalar form: pl.tile.fmods
    return r


def signed_divisors(dtype, shape, lo, hi):
    mag = rng.uniform(lo, hi, size=shape) if np.issubdtype(dtype, np.floating) else rng.integers(lo, hi, size=shape)
    return (mag * rng.choice([-1, 1], size=shape)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int16], ids=lambda d: np.dtype(d).name)
def test_rem_and_fmod_follow_numpy_signs(dtype):
    if np.issubdtype(dtype, np.floating):
        a = rng.uniform(-20, 20, size=(16, 64)).astype(dtype)
        b = signed_divisors(dtype, (16, 64), 0.5, 4.0)
    else:
        a = rng.integers(-1000, 1000, size=(16, 64)).astype(dtype)
        b = signed_divisors(dtype, (16, 64), 1, 17)
    r, f, rs, fs = (np.zeros_like(a) for _ in range(4))
    k_remainders(a, b, r, f, rs, fs, config=RunConfig())
    tol = {"rtol": 0, "atol": 2e-3 if dtype == np.float16 else 1e-5}
    np.testing.assert_allclose(r, np.remainder(a, b), **tol)
    np.testing.assert_allclose(f, np.fmod(a, b), **tol)
    np.testing.assert_allclose(rs, np.remainder(a, dtype(3)), **tol)
    np.testing.assert_allclose(fs, np.fmod(a, dtype(-3)), **tol)


@pl.jit
def k_fmods(a: pl.Tensor, f: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64], valid_shape=[16, 40])
        pl.store(pl.tile.fmods(t, 2.5), [0, 0], f)
    return f


@pl.jit
def k_fmods_int(a: pl.Tensor, f: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64], valid_shape=[16, 40])
        pl.store(pl.tile.fmods(t, -3), [0, 0], f)
    return f


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32], ids=lambda d: np.dtype(d).name)
def test_fmods_is_one_tfmods_over_the_valid_region(dtype):
    """pl.tile.fmods lowers to the one instruction TFMODS (no fill tile) and computes
    numpy.fmod(a, s) (sign of a) over the valid columns (integers: an integer divisor, -3)."""
    if np.issubdtype(dtype, np.floating):
        a = rng.uniform(-20, 20, size=(16, 64)).astype(dtype)
        kernel, s = k_fmods, dtype(2.5)
    else:
        a = rng.integers(-1000, 1000, size=(16, 64)).astype(dtype)
        kernel, s = k_fmods_int, dtype(-3)
    f = np.full_like(a, 7)
    text = "\n".join(kernel.compile(a, f).pto().values())
    assert "pto.tfmods " in text and "pto.texpands " not in text and "pto.tfmod " not in text
    kernel(a, f, config=RunConfig())
    want = np.fmod(a[:, :40], s)
    np.testing.assert_allclose(f[:, :40], want, rtol=0, atol=2e-3 if dtype == np.float16 else 1e-6)
    assert (f[:, 40:] == 7).all()  # outside the valid region nothing is stored


def test_integer_remainder_by_zero_fails_at_run_time():
    a = np.ones((16, 64), np.int32)
    b = np.ones((16, 64), np.int32)
    b[3, 5] = 0
    with pytest.raises(Exception, match="integer remainder by zero"):
        k_remainders(a, b, *(np.zeros_like(a) for _ in range(4)), config=RunConfig())


@pl.jit
def k_trig(a: pl.Tensor, s: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        pl.store(pl.sin(t), [0, 0], s)
        pl.store(pl.tile.cos(t), [0, 0], c)
    return s


@pytest.mark.parametrize("scale", [1.0, 100.0, 3.0e4])
def test_sin_cos_fp32(scale):
    x = rng.uniform(-scale, scale, size=(16, 64)).astype(np.float32)
    x[0, :8] = [0.0, np.pi / 2, -np.pi, 1e-7, -1e-30, np.pi / 4, 3 * np.pi / 2, 2.5]
    s, c = np.zeros_like(x), np.zeros_like(x)
    k_trig(x, s, c, config=RunConfig())
    xd = x.astype(np.float64)
    # Reduction error grows with |x| * ulp(pi parts); absolute error bound ~1e-7 + |x| * 1e-11.
    atol = 2e-7 + scale * 2e-11
    np.testing.assert_allclose(s, np.sin(xd), rtol=0, atol=atol)
    np.testing.assert_allclose(c, np.cos(xd), rtol=0, atol=atol)
    assert s[0, 0] == 0.0 and s[0, 3] == np.float32(1e-7)  # tiny arguments come back exactly


def test_sin_cos_fp16():
    x = rng.uniform(-10, 10, size=(16, 64)).astype(np.float16)
    s, c = np.zeros_like(x), np.zeros_like(x)
    k_trig(x, s, c, config=RunConfig())
    xd = x.astype(np.float64)
    np.testing.assert_allclose(s.astype(np.float64), np.sin(xd), rtol=0, atol=1e-3)  # fp16 rounding of [-1, 1]
    np.testing.assert_allclose(c.astype(np.float64), np.cos(xd), rtol=0, atol=1e-3)


def test_sin_cos_bf16():
    torch = pytest.importorskip("torch")
    x = torch.empty(16, 64).uniform_(-6, 6).to(torch.bfloat16)
    s, c = torch.zeros_like(x), torch.zeros_like(x)
    k_trig(x, s, c, config=RunConfig())
    xd = x.to(torch.float64)
    torch.testing.assert_close(s.to(torch.float64), torch.sin(xd), rtol=0, atol=8e-3)
    torch.testing.assert_close(c.to(torch.float64), torch.cos(xd), rtol=0, atol=8e-3)


@pl.jit
def k_trig_ragged(a: pl.Tensor, n: pl.Scalar[pl.INDEX], s: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64], valid_shape=[9, n])
        pl.store(pl.add(pl.mul(pl.sin(t), pl.sin(t)), pl.mul(pl.cos(t), pl.cos(t))), [0, 0], s)
    return s


def test_sin_cos_on_a_run_time_valid_region():
    x = rng.uniform(-50, 50, size=(16, 64)).astype(np.float32)
    s = np.full((16, 64), -1.0, np.float32)
    k_trig_ragged(x, 37, s, config=RunConfig())
    np.testing.assert_allclose(s[:9, :37], 1.0, rtol=0, atol=1e-6)  # sin^2 + cos^2
    assert (s[9:] == -1).all() and (s[:, 37:] == -1).all()


@pl.jit
def k_trig_tensor(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.sub(pl.sin(x), pl.cos(x))
    return out


def test_sin_cos_tensor_level():
    x = rng.uniform(-4, 4, size=(130, 200)).astype(np.float32)
    out = np.zeros_like(x)
    k_trig_tensor(x, out, config=RunConfig())
    np.testing.assert_allclose(out, np.sin(x.astype(np.float64)) - np.cos(x.astype(np.float64)), rtol=0, atol=5e-7)


@pl.jit
def k_part(a: pl.Tensor, b: pl.Tensor, o_add: pl.Out[pl.Tensor], o_mul: pl.Out[pl.Tensor], o_max: pl.Out[pl.Tensor],
           o_min: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 32], valid_shape=[16, 32])
        tb = pl.load(b, [0, 0], [16, 32], valid_shape=[10, 24])
        pl.store(pl.part_add(ta, tb), [0, 0], o_add)
        pl.store(pl.part_mul(tb, ta), [0, 0], o_mul)
        pl.store(pl.tile.part_max(ta, tb), [0, 0], o_max)
        pl.store(pl.part_min(ta, tb), [0, 0], o_min)
    return o_add


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8], ids=lambda d: np.dtype(d).name)
def test_partial_combines(dtype):
    if np.issubdtype(dtype, np.floating):
        a, b = (rng.uniform(-4, 4, size=(16, 32)).astype(dtype) for _ in range(2))
    else:
        a, b = (rng.integers(-10, 10, size=(16, 32)).astype(dtype) for _ in range(2))
    outs = [np.zeros_like(a) for _ in range(4)]
    k_part(a, b, *outs, config=RunConfig())
    for got, op in zip(outs, [np.add, np.multiply, np.maximum, np.minimum]):
        ref = a.copy()  # a covers the whole tile; b only [10, 24]: the rest comes from a alone
        ref[:10, :24] = op(a[:10, :24], b[:10, :24])
        np.testing.assert_array_equal(got, ref)


@pl.jit
def k_part_both_partial(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 32], valid_shape=[12, 32])
        tb = pl.load(b, [0, 0], [16, 32], valid_shape=[12, 8])
        pl.store(pl.part_add(tb, ta), [0, 0], c)
    return c


def test_partial_combine_result_is_valid_over_the_larger_region():
    a, b = (rng.uniform(-4, 4, size=(16, 32)).astype(np.float32) for _ in range(2))
    c = np.full((16, 32), 99.0, np.float32)
    k_part_both_partial(a, b, c, config=RunConfig())
    ref = a[:12].copy()
    ref[:, :8] += b[:12, :8]
    np.testing.assert_array_equal(c[:12], ref)
    assert (c[12:] == 99).all()  # the result's valid region is [12, 32]


def error_of(fn, *args):
    with pytest.raises(Exception) as err:
        fn(*args, config=RunConfig())
    return str(err.value)


def test_sin_of_an_integer_tile_is_rejected():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.sin(pl.load(a, [0, 0], [16, 32])), [0, 0], c)
        return c

    z = np.zeros((16, 32), np.int32)
    msg = error_of(bad, z, z.copy())
    assert "pl.tile.sin: argument 'tile' is INT32; TEXP accepts FP32, FP16, BF16" in msg
    assert "pl.cast(tile, pl.FP32)" in msg


def test_partial_combine_of_crossing_valid_regions_is_rejected():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, 0], [16, 32], valid_shape=[16, 8])
            tb = pl.load(a, [0, 0], [16, 32], valid_shape=[8, 32])
            pl.store(pl.part_max(ta, tb), [0, 0], c)
        return c

    z = np.zeros((16, 32), np.float32)
    msg = error_of(bad, z, z.copy())
    assert "the valid regions [16, 8] of 'lhs' and [8, 32] of 'rhs' overlap only partly" in msg
    assert "one operand's valid region must contain the other's" in msg


def test_rem_of_bool_tiles_and_shape_mismatch_are_rejected():
    @pl.jit
    def bad(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.fmod(pl.load(a, [0, 0], [16, 32]), pl.load(b, [0, 0], [8, 32])), [0, 0], c)
        return c

    z = np.zeros((16, 32), np.float32)
    msg = error_of(bad, z, z.copy(), z.copy())
    assert "pl.tile.fmod: argument 'rhs' has shape [8, 32] but 'lhs' has [16, 32]" in msg


def test_integer_remainder_by_a_float_scalar_is_rejected():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.rem(pl.load(a, [0, 0], [16, 32]), 2.5), [0, 0], c)
        return c

    z = np.zeros((16, 32), np.int32)
    msg = error_of(bad, z, z.copy())
    assert "pl.tile.rems: argument 'scalar' is a FP32 value but the tile is INT32" in msg

"""Small programs for tests/tools/test_torch_codegen.py: each exercises a family of ops
whose torch spelling must agree with the engines (valid shapes and pads, casts with every
rounding mode, compare/select and shape ops, the INT8 cube, host scalars and branches)."""

import pypto.language as pl

R, C = 16, 32


@pl.jit
def padded_row_max(x: pl.Tensor, out: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C], valid_shape=[rows, C])
        full = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
        out = pl.store(pl.row_max(full), [0, 0], out)
    return out


@pl.jit
def casts(x: pl.Tensor, ints: pl.Out[pl.Tensor], halves: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [1, 16])
        ints = pl.store(pl.cast(t, pl.INT32, mode="rint"), [0, 0], ints)
        ints = pl.store(pl.cast(t, pl.INT32, mode="round"), [1, 0], ints)
        ints = pl.store(pl.cast(t, pl.INT32, mode="floor"), [2, 0], ints)
        ints = pl.store(pl.cast(t, pl.INT32, mode="ceil"), [3, 0], ints)
        ints = pl.store(pl.cast(t, pl.INT32, mode="trunc"), [4, 0], ints)
        ints = pl.store(pl.cast(t, pl.INT32, mode="odd"), [5, 0], ints)
        halves = pl.store(pl.cast(t, pl.FP16, mode="rint"), [0, 0], halves)
        halves = pl.store(pl.cast(t, pl.FP16, mode="round"), [1, 0], halves)
        halves = pl.store(pl.cast(t, pl.FP16, mode="floor"), [2, 0], halves)
        halves = pl.store(pl.cast(t, pl.FP16, mode="ceil"), [3, 0], halves)
        halves = pl.store(pl.cast(t, pl.FP16, mode="trunc"), [4, 0], halves)
        halves = pl.store(pl.cast(t, pl.FP16, mode="odd"), [5, 0], halves)
    return ints, halves


CAST_MODES = ["rint", "round", "floor", "ceil", "trunc", "odd"]


@pl.jit
def select_and_shapes(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor], sums: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [R, C])
        tb = pl.load(b, [0, 0], [R, C])
        lo = pl.sel(pl.cmp(ta, tb, cmp_type="LT"), ta, tb)
        hi = pl.maximum(ta, tb)
        both = pl.concat(pl.slice(lo, [R, 16], [0, 0]), pl.slice(hi, [R, 16], [0, 16]))
        shifted = pl.col_expand_sub(both, pl.col_max(both))
        placed = pl.tile.assemble(shifted, pl.transpose(pl.slice(shifted, [16, 16], [0, 0])), [0, 0])
        out = pl.store(pl.abs(pl.neg(placed)), [0, 0], out)
        sums = pl.store(pl.reshape(pl.row_sum(placed), [1, R]), [0, 0], sums)
    return out, sums


@pl.jit
def int8_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.move(pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
                       target_memory=pl.MemorySpace.Left)
        right = pl.move(pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
                        target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(left, right, out_dtype=pl.INT32), [0, 0], c)
    return c


@pl.jit
def host_scalars(x: pl.Tensor, flag: pl.Tensor, out: pl.Out[pl.Tensor]):
    n = pl.tensor.dim(x, 0)
    f = pl.read(flag, [0, 0])
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(n // 16):
            t = pl.load(x, [i * 16, 0], [16, C])
            if f > 0:
                t = pl.muls(t, 2.0)
            else:
                t = pl.adds(t, 1.0)
            out = pl.store(t, [i * 16, 0], out)
    return out


@pl.jit
def packed_mask(a: pl.Tensor, b: pl.Tensor, mask: pl.Out[pl.Tensor], picked: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [R, C], valid_shape=[R, 20])
        tb = pl.load(b, [0, 0], [R, C], valid_shape=[R, 20])
        m = pl.cmps(ta, 0.0, cmp_type="GE")
        mask = pl.store(m, [0, 0], mask)
        picked = pl.store(pl.sel(m, ta, tb), [0, 0], picked)
    return mask, picked

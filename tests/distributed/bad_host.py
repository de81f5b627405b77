"""Host functions that break PyPTO's dispatch rules (tests/distributed/test_pld.py)."""

import pypto.language as pl
import pypto.language.distributed as pld

from progs import reduce_all  # noqa: F401


@pl.jit
def chip(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x, [0, 0], [8, 64]), [0, 0], y)
    return y


@pl.jit
def chip_scalar(s: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.full([8, 64], s, dtype=pl.FP32), [0, 0], y)
    return y


@pl.jit.host
def dev_expr(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(pld.world_size()):
        chip(x[r], y[r], device=r + 0)
    return y


@pl.jit.host
def scalar_first(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(pld.world_size()):
        chip_scalar(1.0, y[r], device=r)
    return y


@pl.jit.host
def outside(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    chip(x[0], y[0], device=5)
    return y

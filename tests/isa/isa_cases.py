"""Helpers for the reference-library tests: random operands per dtype and a runner that
executes one instruction on numpy arrays."""

import numpy as np
from pypto import _core

NP = {
    "FP32": np.float32,
    "FP16": np.float16,
    "INT32": np.int32,
    "INT16": np.int16,
    "INT8": np.int8,
    "UINT8": np.uint8,
    "BOOL": np.bool_,
}


def random_tile(rng, shape, dtype, low=-4.0, high=4.0):
    if dtype in ("FP32", "FP16"):
        return rng.uniform(low, high, size=shape).astype(NP[dtype])
    if dtype == "BOOL":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    info = np.iinfo(NP[dtype])
    lo, hi = max(int(low * 25), info.min), min(int(high * 25), info.max)
    return rng.integers(lo, hi + 1, size=shape).astype(NP[dtype])


def run(mnemonic, outs, ins, **kw):
    _core.isa_execute(mnemonic, outs, ins, **kw)
    return outs[0]

"""Builders for small kernels and host programs written by hand through the bindings, and
conversion of numpy arrays into run arguments (no copies)."""

import numpy as np
from pypto import _core as c

DTYPE = {np.dtype(np.float32): "FP32", np.dtype(np.float16): "FP16", np.dtype(np.int32): "INT32", np.dtype(np.int16): "INT16"}


def tensor_arg(a, name):
    """(data_ptr, dtype, shape, strides_in_elements, name) for a numpy array."""
    return (
        a.ctypes.data,
        DTYPE[a.dtype],
        list(a.shape),
        [s // a.itemsize for s in a.strides],
        name,
    )


def imm(v):
    return c.Scalar.immf(v) if isinstance(v, float) else c.Scalar.imm(v)


def offsets(*vals):
    return c.Operand.list_of([v if isinstance(v, c.Scalar) else imm(v) for v in vals])


def tile_instr(mnemonic, outs, ins, line=0, **attrs):
    i = c.Instr()
    i.kind = c.InstrKind.Tile
    i.mnemonic = mnemonic
    i.outs = outs
    i.ins = ins
    if attrs:
        i.attrs = attrs
    i.span_file, i.span_line = "test_kernel.py", line
    return i


def binary_kernel(name, mnemonic, rows, cols, dtype="FP32"):
    """out = a <mnemonic> b for [rows, cols] tensors: TLOAD, TLOAD, op, TSTORE."""
    k = c.Kernel()
    k.name = name
    k.params = [
        c.ParamDesc("a", True, dtype, [rows, cols], "In"),
        c.ParamDesc("b", True, dtype, [rows, cols], "In"),
        c.ParamDesc("out", True, dtype, [rows, cols], "Out"),
    ]
    nbytes = rows * cols * 4
    k.tiles = [
        c.TileDesc("ta", dtype, "Vec", rows, cols, 0),
        c.TileDesc("tb", dtype, "Vec", rows, cols, nbytes),
        c.TileDesc("tc", dtype, "Vec", rows, cols, 2 * nbytes),
    ]
    T, G = c.Operand.tile, c.Operand.tensor
    k.code = [
        tile_instr("TLOAD", [T(0)], [G(0), offsets(0, 0)], 10),
        tile_instr("TLOAD", [T(1)], [G(1), offsets(0, 0)], 11),
        tile_instr(mnemonic, [T(2)], [T(0), T(1)], 12),
        tile_instr("TSTORE", [G(2)], [T(2), offsets(0, 0)], 13),
    ]
    return c.insert_sync(k)  # the flags the compiler would insert (races are errors)


def call(callee, *operands):
    i = c.Instr()
    i.kind = c.InstrKind.Call
    i.callee = callee
    i.ins = [o if isinstance(o, c.Operand) else c.Operand.tensor(o) for o in operands]
    return i


def alloc(slot, dtype, shape):
    i = c.Instr()
    i.kind = c.InstrKind.AllocTensor
    i.outs = [c.Operand.tensor(slot)]
    i.attrs = {"dtype": dtype, "shape": list(shape)}
    return i

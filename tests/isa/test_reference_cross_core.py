"""Cross-core FIFOs: "TPUSH", "TPOP" and "TFREE" move a tile's valid region bit-exactly
from one core of a cluster to another, over the table's dtypes and the four shapes, in both
directions (AIC -> AIV lands in Vec, AIV -> AIC lands in Mat). The programs are hand-built
mixed tasks (a Group kernel whose parts are an AIC and an AIV kernel); the expected output
is the input array itself (numpy slicing), never our code."""

import numpy as np
import pytest
from pypto import _core as c

from isa_cases import CASE_IDS, CASES, NP, random_tile, table_dtypes

T, G = c.Operand.tile, c.Operand.tensor


def tensor_arg(a, dtype, name):
    return (a.ctypes.data, dtype, list(a.shape), [s // a.itemsize for s in a.strides], name)


def instr(mnemonic, outs, ins, line, **attrs):
    i = c.Instr()
    i.kind = c.InstrKind.Tile
    i.mnemonic = mnemonic
    i.outs, i.ins = outs, ins
    if attrs:
        i.attrs = attrs
    i.span_file, i.span_line = "fifo_test.py", line
    return i


def offsets():
    return c.Operand.list_of([c.Scalar.imm(0), c.Scalar.imm(0)])


def part_kernel(name, core, params, tile, code):
    k = c.Kernel()
    k.name, k.core, k.params, k.tiles, k.code = name, core, params, [tile], code
    return c.insert_sync(k)  # the flags the compiler would insert


def copy_program(dtype, shape, valid, direction, pop_dtype=None):
    """y = x through one FIFO: `direction` "down" (AIC loads into Mat and pushes to AIV 0, which
    pops into Vec and stores) or "up" (AIV 0 loads into Vec and pushes, the AIC pops into Mat)."""
    rows, cols = shape
    vr, vc = valid or shape
    tile = lambda n, mem, dt=dtype: c.TileDesc(n, dt, mem, rows, cols, 0, c.Scalar.imm(vr), c.Scalar.imm(vc))  # noqa: E731
    x = c.ParamDesc("x", True, dtype, [rows, cols], "In")
    y = c.ParamDesc("y", True, dtype, [rows, cols], "Out")
    src_core, dst_core = ("AIC", "AIV") if direction == "down" else ("AIV", "AIC")
    src_mem, dst_mem = ("Mat", "Vec") if direction == "down" else ("Vec", "Mat")
    to_peer, from_peer = ("AIV0", "AIC") if direction == "down" else ("AIC", "AIV0")
    producer = part_kernel("producer", src_core, [x], tile("src", src_mem), [
        instr("TLOAD", [T(0)], [G(0), offsets()], 10),
        instr("TPUSH", [], [T(0)], 11, peer=to_peer),
    ])
    consumer = part_kernel("consumer", dst_core, [y], tile("dst", dst_mem, pop_dtype or dtype), [
        instr("TPOP", [T(0)], [], 20, peer=from_peer),
        instr("TSTORE", [G(0)], [T(0), offsets()], 21),
        instr("TFREE", [T(0)], [], 22, peer=from_peer),
    ])
    group = c.Kernel()
    group.name, group.core = "copy", "Group"
    group.params = [x, y]
    parts = []
    for kernel_index, role, param in ((0, "AIC" if direction == "down" else "AIV0", 0),
                                      (1, "AIV0" if direction == "down" else "AIC", 1)):
        p = c.KernelPart()
        p.kernel, p.role = kernel_index, role
        a = c.PartArg()
        a.param = param
        p.args = [a]
        parts.append(p)
    group.parts = parts
    call = c.Instr()
    call.kind = c.InstrKind.Call
    call.callee = 2
    call.ins = [G(0), G(1)]
    prog = c.HostProgram()
    prog.name = "fifo_copy"
    prog.params = prog.tensors = [x, y]
    prog.kernels = [producer, consumer, group]
    prog.code = [call]
    return prog


def run_copy(x, dtype, valid, direction, engine="sim", pop_dtype=None):
    y = np.zeros_like(x)
    prog = copy_program(dtype, x.shape, valid, direction, pop_dtype)
    c.run_host_program(prog, [tensor_arg(x, dtype, "x"), tensor_arg(y, dtype, "y")], "a2a3sim", engine, 1)
    return y


@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", table_dtypes("TPUSH"))
def test_fifo_moves_the_valid_region_bit_exactly(dtype, case, direction, rng):
    shape, valid = case
    x = random_tile(rng, shape, dtype)
    y = run_copy(x, dtype, valid, direction)
    vr, vc = valid or shape
    want = np.zeros_like(x)
    want[:vr, :vc] = x[:vr, :vc]
    assert y.dtype == NP[dtype]
    np.testing.assert_array_equal(y.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("direction", ["down", "up"])
def test_fifo_on_the_native_engine(direction, rng):
    x = random_tile(rng, (16, 24), "FP32")
    y = run_copy(x, "FP32", (5, 13), direction, engine="native")
    want = np.zeros_like(x)
    want[:5, :13] = x[:5, :13]
    np.testing.assert_array_equal(y, want)


def test_pop_of_another_dtype_names_both_instructions(rng):
    x = random_tile(rng, (8, 8), "FP32")
    with pytest.raises(c.PyptoError) as e:
        run_copy(x, "FP32", None, "down", pop_dtype="INT32")
    msg = str(e.value)
    assert "fifo_test.py:20" in msg and "TPOP" in msg  # the pop
    assert "fifo_test.py:11" in msg and "8x8 FP32" in msg and "8x8 INT32" in msg  # the push it met


def test_fifo_instruction_outside_a_mixed_task_is_an_error():
    t = np.zeros((8, 8), np.float32)
    with pytest.raises(c.PyptoError, match="runs only inside a mixed task"):
        c.isa_execute("TPUSH", [], [t], attrs={"peer": "AIV0"})


def test_table_pipes_and_costs():
    assert c.instruction_pipe("TPOP") == "MTE2"
    assert c.instruction_pipe("TFREE") == "S"
    # Acc -> Vec at the L0C -> L1 figure, 128 GiB/s, plus 30 cycles of startup (chip-model.md).
    assert c.instruction_cost("TPUSH", "FP32", 64, 64) == pytest.approx(64 * 64 * 4 / (128 * 2**30) * 1.85e9 + 30)
    assert c.instruction_cost("TPOP", "FP32", 64, 64) == pytest.approx(30)

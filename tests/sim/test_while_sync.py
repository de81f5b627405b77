"""While loops in instruction streams: a hand-built kernel whose loop-carried tile is
reloaded every iteration races without flags (the sim engine reports it), and runs clean with
the flags InsertSync adds (the back edge orders iteration k+1's load after iteration k's
add); the .pto text; malformed while streams; a host program's while loop of tasks."""

import os
import sys

import numpy as np
import pytest
from pypto import _core as c

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
from hand_built_programs import call, imm, offsets, tensor_arg, tile_instr

BLOCK, COLS, BLOCKS = 16, 64, 6


def control(kind, jump=-1, cond=None):
    i = c.Instr()
    i.kind, i.jump = kind, jump
    if cond is not None:
        i.a = cond
    return i


def scalar_bin(dst, sop, a, b):
    i = c.Instr()
    i.kind, i.dst_reg, i.sop, i.a, i.b = c.InstrKind.ScalarBin, dst, sop, a, b
    return i


def while_sum_kernel():
    """acc = a; i = 0; while i < n: t = x[i*16 : i*16+16]; acc += t; i += 1; out = acc."""
    R, T, G, K = c.Scalar.r, c.Operand.tile, c.Operand.tensor, c.InstrKind
    k = c.Kernel()
    k.name = "while_sum"
    k.params = [c.ParamDesc("n", False, "INDEX", [], "In"),
                c.ParamDesc("a", True, "FP32", [BLOCK, COLS], "In"),
                c.ParamDesc("x", True, "FP32", [BLOCK * BLOCKS, COLS], "In"),
                c.ParamDesc("out", True, "FP32", [BLOCK, COLS], "Out")]
    k.tiles = [c.TileDesc("acc", "FP32", "Vec", BLOCK, COLS, 0), c.TileDesc("t", "FP32", "Vec", BLOCK, COLS, 4096)]
    k.num_regs, k.reg_is_float = 4, [False] * 4  # r0 = n, r1 = i, r2 = i < n, r3 = i * 16
    mov = c.Instr()
    mov.kind, mov.dst_reg, mov.a = K.ScalarMov, 1, imm(0)
    k.code = [
        tile_instr("TLOAD", [T(0)], [G(1), offsets(0, 0)], 10),
        mov,
        control(K.WhileBegin, jump=10),
        scalar_bin(2, "<", R(1), R(0)),
        control(K.WhileCond, jump=10, cond=R(2)),
        scalar_bin(3, "*", R(1), imm(BLOCK)),
        tile_instr("TLOAD", [T(1)], [G(2), offsets(R(3), 0)], 11),
        tile_instr("TADD", [T(0)], [T(0), T(1)], 12),
        scalar_bin(1, "+", R(1), imm(1)),
        control(K.WhileEnd, jump=2),
        tile_instr("TEXP", [T(0)], [T(0)], 13),
        tile_instr("TSTORE", [G(3)], [T(0), offsets(0, 0)], 14),
    ]
    return k


def run(k, n):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((BLOCK, COLS)).astype(np.float32) * 0.1
    x = rng.standard_normal((BLOCK * BLOCKS, COLS)).astype(np.float32) * 0.1
    out = np.zeros_like(a)
    c.run_kernel(k, [n, tensor_arg(a, "a"), tensor_arg(x, "x"), tensor_arg(out, "out")])
    return out, np.exp(a + x[:n * BLOCK].reshape(n, BLOCK, COLS).sum(axis=0))


def test_while_loop_without_flags_races():
    with pytest.raises(c.PyptoError, match="race"):
        run(while_sum_kernel(), 3)


def test_insert_sync_makes_the_while_loop_race_free():
    k = c.insert_sync(while_sum_kernel())
    kinds = [i.kind for i in k.code]
    begin, end = kinds.index(c.InstrKind.WhileBegin), kinds.index(c.InstrKind.WhileEnd)
    waits = [(i.attrs["src"], i.attrs["dst"]) for i in k.code[begin:end] if i.mnemonic == "WAIT_FLAG"]
    # In the body: the add waits for the load; the next iteration's load waits for the add.
    assert ("MTE2", "V") in waits and ("V", "MTE2") in waits
    for n in (0, 1, 2, BLOCKS):  # several iterations: the back edge is exercised
        out, want = run(k, n)
        np.testing.assert_allclose(out, want, rtol=1e-5)
    # Jumps still land on the loop's own instructions after the flags moved them.
    assert k.code[end].jump == begin and k.code[begin].jump == end + 1
    assert k.code[kinds.index(c.InstrKind.WhileCond)].jump == end + 1


def test_while_loop_pto_text():
    text = c.emit_pto(c.insert_sync(while_sum_kernel()))
    body = text[text.index("scf.while {"):]
    assert body.startswith("scf.while {\n    %r2 = arith.cmp.lt %r1, %r0 : index\n    scf.condition %r2\n  } do {\n"), text
    assert "pto.wait_flag[PIPE_V, PIPE_MTE2" in body[:body.index("\n  }\n")]


def test_malformed_while_streams_are_rejected():
    T, G, K = c.Operand.tile, c.Operand.tensor, c.InstrKind
    k = while_sum_kernel()
    k.code = k.code[:3] + [tile_instr("TLOAD", [T(1)], [G(2), offsets(0, 0)], 11)] + k.code[3:]
    for i in k.code:  # keep the jumps pointing where they did
        if i.kind in (K.WhileBegin, K.WhileCond):
            i.jump = 11
        if i.kind == K.WhileEnd:
            i.jump = 2
    with pytest.raises(c.PyptoError, match="between a while begin and its condition is not scalar code"):
        run(k, 1)
    k = while_sum_kernel()
    code = list(k.code)
    code[9].jump = 3
    k.code = code
    with pytest.raises(c.PyptoError, match="while begin at 2 and end at 9 do not match"):
        run(k, 1)
    k = while_sum_kernel()
    k.code = [i for n, i in enumerate(k.code) if n != 4]
    with pytest.raises(c.PyptoError, match="while end without a while condition"):
        run(k, 1)


def test_host_while_loop_submits_tasks_until_its_condition_fails():
    # host: i = 0; while i < n: fill(out, i); i += 2   kernel: out[i, :] = i
    R, T, G, K = c.Scalar.r, c.Operand.tile, c.Operand.tensor, c.InstrKind
    k = c.Kernel()
    k.name = "fill"
    k.params = [c.ParamDesc("out", True, "INT32", [8, 8], "InOut"), c.ParamDesc("i", False, "INT32", [], "In")]
    k.num_regs, k.reg_is_float = 1, [False]
    k.tiles = [c.TileDesc("t", "INT32", "Vec", 1, 8, 0)]
    k.code = [tile_instr("TEXPANDS", [T(0)], [c.Operand.scalar_of(R(0))]),
              tile_instr("TSTORE", [G(0)], [T(0), offsets(R(0), 0)])]
    p = c.HostProgram()
    p.name = "host_while"
    p.params = [c.ParamDesc("out", True, "INT32", [8, 8], "InOut"), c.ParamDesc("n", False, "INT32", [], "In")]
    p.tensors = p.params
    p.num_regs, p.reg_is_float = 3, [False] * 3  # r0 = n, r1 = i, r2 = i < n
    p.kernels = [c.insert_sync(k)]
    mov = c.Instr()
    mov.kind, mov.dst_reg, mov.a = K.ScalarMov, 1, imm(0)
    p.code = [
        mov,
        control(K.WhileBegin, jump=7),
        scalar_bin(2, "<", R(1), R(0)),
        control(K.WhileCond, jump=7, cond=R(2)),
        call(0, c.Operand.tensor(0), c.Operand.scalar_of(R(1))),
        scalar_bin(1, "+", R(1), imm(2)),
        control(K.WhileEnd, jump=1),
    ]
    for n, rows in ((0, []), (5, [0, 2, 4]), (8, [0, 2, 4, 6])):
        out = np.full((8, 8), -1, np.int32)
        c.run_host_program(p, [tensor_arg(out, "out"), n], "a2a3sim", "sim", 3)
        want = np.full((8, 8), -1, np.int32)
        for r in rows:
            want[r] = r
        np.testing.assert_array_equal(out, want)

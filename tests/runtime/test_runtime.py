"""Running hand-built programs: dependent and independent tasks on the worker pool, scalar
control flow in kernels and host code, and errors surfacing as PyptoError."""

import numpy as np
import pytest
from hand_built_programs import alloc, binary_kernel, call, imm, offsets, tensor_arg, tile_instr
from pypto import _core as c


def test_two_dependent_tasks():
    rng = np.random.default_rng(0)
    a, b, w = (rng.standard_normal((16, 64)).astype(np.float32) for _ in range(3))
    out = np.zeros((16, 64), np.float32)
    p = c.HostProgram()
    p.name = "add_then_mul"
    p.params = [
        c.ParamDesc(n, True, "FP32", [16, 64], d)
        for n, d in (("a", "In"), ("b", "In"), ("w", "In"), ("out", "Out"))
    ]
    p.tensors = p.params + [c.ParamDesc("tmp", True, "FP32", [16, 64], "InOut")]
    p.kernels = [binary_kernel("add", "TADD", 16, 64), binary_kernel("mul", "TMUL", 16, 64)]
    p.code = [alloc(4, "FP32", [16, 64]), call(0, 0, 1, 4), call(1, 4, 2, 3)]
    args = [tensor_arg(a, "a"), tensor_arg(b, "b"), tensor_arg(w, "w"), tensor_arg(out, "out")]
    for workers in (1, 4):
        out[:] = 0
        c.run_host_program(p, args, "a2a3sim", "sim", workers)
        np.testing.assert_array_equal(out, (a + b) * w)


def test_chain_of_tasks_in_place_keeps_program_order():
    # x = x + x, eight times, each task reading the previous one's output (RAW + WAR + WAW)
    x = np.ones((8, 16), np.float32)
    p = c.HostProgram()
    p.name = "doubling"
    k = binary_kernel("add", "TADD", 8, 16)
    k.params = [
        c.ParamDesc("a", True, "FP32", [8, 16], "In"),
        c.ParamDesc("b", True, "FP32", [8, 16], "In"),
        c.ParamDesc("out", True, "FP32", [8, 16], "Out"),
    ]
    p.kernels = [k]
    p.params = [
        c.ParamDesc("x", True, "FP32", [8, 16], "InOut"),
        c.ParamDesc("y", True, "FP32", [8, 16], "InOut"),
    ]
    p.tensors = p.params
    y = np.zeros_like(x)
    p.code = [call(0, 0, 0, 1) if i % 2 == 0 else call(0, 1, 1, 0) for i in range(8)]
    c.run_host_program(p, [tensor_arg(x, "x"), tensor_arg(y, "y")], "a2a3sim", "sim", 4)
    np.testing.assert_array_equal(x, np.full_like(x, 2.0**8))


def test_many_independent_tasks_from_a_host_loop():
    # for i in range(8): outs[i] = a[i] + b   (one output tensor per task, all independent)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 16, 32)).astype(np.float32)
    b = rng.standard_normal((16, 32)).astype(np.float32)
    outs = [np.zeros((16, 32), np.float32) for _ in range(8)]
    k = binary_kernel("add", "TADD", 16, 32)
    p = c.HostProgram()
    p.name = "independent"
    p.params = (
        [c.ParamDesc(f"a{i}", True, "FP32", [16, 32], "In") for i in range(8)]
        + [c.ParamDesc("b", True, "FP32", [16, 32], "In")]
        + [c.ParamDesc(f"o{i}", True, "FP32", [16, 32], "Out") for i in range(8)]
    )
    p.tensors = p.params
    p.kernels = [k]
    p.code = [call(0, i, 8, 9 + i) for i in range(8)]
    args = (
        [tensor_arg(a[i], f"a{i}") for i in range(8)]
        + [tensor_arg(b, "b")]
        + [tensor_arg(o, f"o{i}") for i, o in enumerate(outs)]
    )
    c.run_host_program(p, args, "a2a3sim", "sim", 0)
    for i in range(8):
        np.testing.assert_array_equal(outs[i], a[i] + b)


def loop_kernel(synced=True):
    """out[r0:r0+8, :] = x[r0:r0+8, :] * s for r0 in range(0, rows, 8); s is scalar param 1."""
    k = c.Kernel()
    k.name = "scale_rows"
    k.params = [
        c.ParamDesc("x", True, "FP32", [-1, 16], "In"),
        c.ParamDesc("s", False, "FP32", [], "In"),
        c.ParamDesc("rows", False, "INT32", [], "In"),
        c.ParamDesc("out", True, "FP32", [-1, 16], "Out"),
    ]
    k.num_regs = 3
    k.reg_is_float = [True, False, False]  # r0 = s, r1 = rows, r2 = loop variable
    k.tiles = [c.TileDesc("t", "FP32", "Vec", 8, 16, 0)]
    T, G, R = c.Operand.tile, c.Operand.tensor, c.Scalar.r
    begin, end = c.Instr(), c.Instr()
    begin.kind, end.kind = c.InstrKind.LoopBegin, c.InstrKind.LoopEnd
    for i in (begin, end):
        i.dst_reg, i.a, i.b, i.step = 2, imm(0), R(1), imm(8)
    begin.jump, end.jump = 5, 1
    k.code = [
        begin,
        tile_instr("TLOAD", [T(0)], [G(0), offsets(R(2), 0)], 20),
        tile_instr("TMULS", [T(0)], [T(0), c.Operand.scalar_of(R(0))], 21),
        tile_instr("TSTORE", [G(3)], [T(0), offsets(R(2), 0)], 22),
        end,
    ]
    return c.insert_sync(k) if synced else k


def test_kernel_loop_with_scalar_params():
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    out = np.zeros_like(x)
    c.run_kernel(loop_kernel(), [tensor_arg(x, "x"), 0.5, 32, tensor_arg(out, "out")])
    np.testing.assert_array_equal(out, x * np.float32(0.5))


def test_scalar_arithmetic_has_python_semantics():
    # r2 = r0 // r1, r3 = r0 % r1, then fill tiles with them and store
    k = c.Kernel()
    k.name = "floordiv_mod"
    k.params = [
        c.ParamDesc("a", False, "INT32", [], "In"),
        c.ParamDesc("b", False, "INT32", [], "In"),
        c.ParamDesc("out", True, "INT32", [2, 8], "Out"),
    ]
    k.num_regs, k.reg_is_float = 4, [False] * 4
    k.tiles = [c.TileDesc("t", "INT32", "Vec", 1, 8, 0)]
    ops = []
    for dst, sop in ((2, "//"), (3, "%")):
        i = c.Instr()
        i.kind, i.dst_reg, i.sop, i.a, i.b = (
            c.InstrKind.ScalarBin,
            dst,
            sop,
            c.Scalar.r(0),
            c.Scalar.r(1),
        )
        ops.append(i)
    T, G = c.Operand.tile, c.Operand.tensor
    k.code = ops + [
        tile_instr("TEXPANDS", [T(0)], [c.Operand.scalar_of(c.Scalar.r(2))]),
        tile_instr("TSTORE", [G(2)], [T(0), offsets(0, 0)]),
        tile_instr("TEXPANDS", [T(0)], [c.Operand.scalar_of(c.Scalar.r(3))]),
        tile_instr("TSTORE", [G(2)], [T(0), offsets(1, 0)]),
    ]
    k = c.insert_sync(k)
    for a, b in ((-7, 2), (7, -2), (9, 4)):
        out = np.zeros((2, 8), np.int32)
        c.run_kernel(k, [a, b, tensor_arg(out, "out")])
        assert (out[0] == a // b).all() and (out[1] == a % b).all()


def test_task_error_surfaces_as_pypto_error():
    # the kernel's tiles are 16 x 64 but the tensors are 8 x 64: TLOAD reads past the shape
    a = np.zeros((8, 64), np.float32)
    k = binary_kernel("add", "TADD", 16, 64)
    for prm in k.params:
        prm.shape = [8, 64]
    p = c.HostProgram()
    p.name = "bad"
    p.params = [c.ParamDesc(n, True, "FP32", [8, 64], "InOut") for n in ("a", "b", "out")]
    p.tensors = p.params
    p.kernels = [k]
    p.code = [call(0, 0, 1, 2), call(0, 0, 1, 2)]
    b, out = a.copy(), a.copy()  # the runtime holds raw pointers: keep the arrays alive
    with pytest.raises(c.PyptoError) as e:
        c.run_host_program(
            p,
            [tensor_arg(a, "a"), tensor_arg(b, "b"), tensor_arg(out, "out")],
            "a2a3sim",
            "sim",
            2,
        )
    msg = str(e.value)
    assert (
        msg.startswith("test_kernel.py:10: TLOAD:")
        and "'a'[8, 64] FP32" in msg
        and "offsets [0, 0]" in msg
    )


def test_tile_outside_its_buffer_is_an_error():
    k = binary_kernel("add", "TADD", 16, 64)
    k.tiles[2].addr = 192 * 1024 - 1024  # UB of a2a3sim is 192 KiB; the tile needs 4 KiB
    x = np.zeros((16, 64), np.float32)
    out = x.copy()  # the runtime holds raw pointers: keep the arrays alive
    with pytest.raises(c.PyptoError, match=r"tile #2 'tc' .* lies outside Vec \(196608 B on a2a3sim\)"):
        c.run_kernel(k, [tensor_arg(x, "a"), tensor_arg(x, "b"), tensor_arg(out, "out")])
    c.run_kernel(k, [tensor_arg(x, "a"), tensor_arg(x, "b"), tensor_arg(out, "out")], "a5sim")  # 256 KiB UB


def test_argument_mismatches_are_user_errors():
    k = binary_kernel("add", "TADD", 16, 64)
    x = np.zeros((16, 64), np.float32)
    with pytest.raises(c.PyptoError, match="'add' takes 3 arguments, got 2"):
        c.run_kernel(k, [tensor_arg(x, "a"), tensor_arg(x, "b")])
    small = np.zeros((8, 64), np.float32)  # kept alive while the kernel holds its pointer
    with pytest.raises(c.PyptoError, match="expected shape \\[16, 64\\]"):
        c.run_kernel(
            k,
            [
                tensor_arg(x, "a"),
                tensor_arg(x, "b"),
                tensor_arg(small, "o"),
            ],
        )


def test_engine_and_platform_names_are_checked():
    p = c.HostProgram()
    c.run_host_program(p, [], "a2a3sim", "native", 1)  # an empty program runs on both engines
    with pytest.raises(c.PyptoError, match="unknown engine 'gpu'; available engines: native, sim"):
        c.run_host_program(p, [], "a2a3sim", "gpu", 1)
    with pytest.raises(c.PyptoError, match="unknown platform 'foo'"):
        c.run_host_program(p, [], "foo", "sim", 1)
    assert c.engine_names() == ["native", "sim"]


def test_programs_are_inspectable_from_python():
    k = loop_kernel(synced=False)
    assert k.code[0].kind == c.InstrKind.LoopBegin
    assert k.code[2].mnemonic == "TMULS" and k.code[2].span_line == 21
    assert (
        k.tiles[0].dtype == "FP32" and k.tiles[0].memory == "Vec" and k.tiles[0].valid_rows.i == 8
    )
    i = tile_instr("TCVT", [], [], mode="round", dtype="FP16")
    assert i.attrs == {"mode": "round", "dtype": "FP16"}


def test_pipes_of_moves_and_stores_follow_the_source_memory():
    T, G = c.Operand.tile, c.Operand.tensor
    k = c.Kernel()
    k.tiles = [
        c.TileDesc(n, "FP32", m, 16, 16)
        for n, m in (("v", "Vec"), ("l1", "Mat"), ("acc", "Acc"), ("l0a", "Left"))
    ]
    k.code = [
        tile_instr("TMOV", [T(3)], [T(1)]),  # Mat -> Left: MTE1
        tile_instr("TMOV", [T(0)], [T(2)]),  # Acc -> Vec: FIX
        tile_instr("TMOV", [T(0)], [T(0)]),  # Vec -> Vec: V
        tile_instr("TSTORE", [G(0)], [T(2), offsets(0, 0)]),  # from Acc: FIX
        tile_instr("TSTORE", [G(0)], [T(0), offsets(0, 0)]),  # from Vec: MTE3
        tile_instr("TLOAD", [T(0)], [G(0), offsets(0, 0)]),
        tile_instr("TMATMUL", [T(2)], [T(3), T(3)]),
    ]
    assert c.kernel_pipes(k) == ["MTE1", "FIX", "V", "FIX", "MTE3", "MTE2", "M"]


def scalar_bin(dst, sop, a, b):
    i = c.Instr()
    i.kind, i.dst_reg, i.sop, i.a, i.b = c.InstrKind.ScalarBin, dst, sop, a, b
    return i


def control(kind, jump=-1, cond=None, reg=-1, start=None, stop=None, step=None):
    i = c.Instr()
    i.kind, i.jump, i.dst_reg = kind, jump, reg
    for field, v in (("a", cond or start), ("b", stop), ("step", step)):
        if v is not None:
            setattr(i, field, v)
    return i


def test_host_loop_passes_its_register_to_kernels_with_if_else():
    # host: for i in range(4): fill(out, i);  kernel: out[i, :] = i if i % 2 == 0 else -i
    R, T, G, K = c.Scalar.r, c.Operand.tile, c.Operand.tensor, c.InstrKind
    k = c.Kernel()
    k.name = "fill"
    k.params = [
        c.ParamDesc("out", True, "INT32", [4, 8], "InOut"),
        c.ParamDesc("i", False, "INT32", [], "In"),
    ]
    k.num_regs, k.reg_is_float = 4, [False] * 4
    k.tiles = [c.TileDesc("t", "INT32", "Vec", 1, 8, 0)]
    k.code = [
        scalar_bin(1, "%", R(0), imm(2)),
        scalar_bin(2, "==", R(1), imm(0)),
        scalar_bin(3, "-", imm(0), R(0)),
        control(K.If, jump=6, cond=R(2)),
        tile_instr("TEXPANDS", [T(0)], [c.Operand.scalar_of(R(0))]),
        control(K.Else, jump=7),
        tile_instr("TEXPANDS", [T(0)], [c.Operand.scalar_of(R(3))]),
        control(K.EndIf),
        tile_instr("TSTORE", [G(0)], [T(0), offsets(R(0), 0)]),
    ]
    p = c.HostProgram()
    p.name = "host_loop"
    p.params = [c.ParamDesc("out", True, "INT32", [4, 8], "InOut")]
    p.tensors = p.params
    p.num_regs, p.reg_is_float = 1, [False]
    p.kernels = [c.insert_sync(k)]
    p.code = [
        control(K.LoopBegin, jump=3, reg=0, start=imm(0), stop=imm(4), step=imm(1)),
        call(0, c.Operand.tensor(0), c.Operand.scalar_of(R(0))),
        control(K.LoopEnd, jump=1, reg=0, start=imm(0), stop=imm(4), step=imm(1)),
    ]
    out = np.zeros((4, 8), np.int32)
    c.run_host_program(p, [tensor_arg(out, "out")], "a2a3sim", "sim", 3)
    np.testing.assert_array_equal(out[:, 0], [0, -1, 2, -3])
    assert (out == out[:, :1]).all()

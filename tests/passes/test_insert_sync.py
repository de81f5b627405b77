"""InsertSync, the kernel pipeline's pass: a kernel's instruction stream in, the stream with
set_flag / wait_flag pairs out. Before and After are the kernel's .pto text, reduced to one
line per instruction (its name and, for flags, the pipes and event) with the loop structure;
the expected text is written by hand. The flagged kernel runs race-free on the sim engine,
which reports the race of the unflagged one."""

import os
import re
import textwrap

import numpy as np
import pytest

import pypto.language as pl
from pypto import PyptoError
from pypto import _core as c
from pypto.runtime import RunConfig


def tensor_arg(a, name):
    return (a.ctypes.data, "FP32", list(a.shape), [s // a.itemsize for s in a.strides], name)


def imm(v):
    return c.Scalar.immf(v) if isinstance(v, float) else c.Scalar.imm(v)


def offsets(*vals):
    return c.Operand.list_of([v if isinstance(v, c.Scalar) else imm(v) for v in vals])


def tile_instr(mnemonic, outs, ins, line):
    i = c.Instr()
    i.kind, i.mnemonic, i.outs, i.ins = c.InstrKind.Tile, mnemonic, outs, ins
    i.span_file, i.span_line = "test_insert_sync.py", line
    return i


def add_kernel():
    """out = a + b on [16, 32] FP32: TLOAD, TLOAD, TADD, TSTORE (no flags)."""
    k = c.Kernel()
    k.name = "add"
    k.params = [c.ParamDesc(n, True, "FP32", [16, 32], d) for n, d in (("a", "In"), ("b", "In"), ("out", "Out"))]
    k.tiles = [c.TileDesc(n, "FP32", "Vec", 16, 32, i * 2048) for i, n in enumerate(("ta", "tb", "tc"))]
    T, G = c.Operand.tile, c.Operand.tensor
    k.code = [
        tile_instr("TLOAD", [T(0)], [G(0), offsets(0, 0)], 10),
        tile_instr("TLOAD", [T(1)], [G(1), offsets(0, 0)], 11),
        tile_instr("TADD", [T(2)], [T(0), T(1)], 12),
        tile_instr("TSTORE", [G(2)], [T(2), offsets(0, 0)], 13),
    ]
    return k


def scale_rows_kernel():
    """out[r:r+8, :] = x[r:r+8, :] * s for r in range(0, rows, 8), one tile reused each iteration."""
    k = c.Kernel()
    k.name = "scale_rows"
    k.params = [
        c.ParamDesc("x", True, "FP32", [-1, 16], "In"),
        c.ParamDesc("s", False, "FP32", [], "In"),
        c.ParamDesc("rows", False, "INT32", [], "In"),
        c.ParamDesc("out", True, "FP32", [-1, 16], "Out"),
    ]
    k.num_regs, k.reg_is_float = 3, [True, False, False]  # r0 = s, r1 = rows, r2 = loop variable
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
    return k


def listing(kernel) -> str:
    """The kernel's .pto text, one short line per instruction: `tload`, `set_flag V MTE2 0`."""
    out = []
    for line in c.emit_pto(kernel).splitlines():
        body = line.strip()
        indent = "  " * ((len(line) - len(line.lstrip())) // 2 - 1)
        if m := re.match(r"pto\.(set_flag|wait_flag)\[PIPE_(\w+), PIPE_(\w+), EVENT_ID(\d+)\]", body):
            out.append(f"{indent}{m[1]} {m[2]} {m[3]} {m[4]}")
        elif m := re.match(r"pto\.(\w+) ", body):
            out.append(indent + m[1])
        elif m := re.match(r"scf\.for %(\w+) = (\S+) to (\S+) step (\S+) \{", body):
            out.append(f"{indent}for {m[1]} in {m[2]}..{m[3]} step {m[4]}:")
    return "\n".join(out)


def check(kernel, before: str, after: str):
    assert listing(kernel) == textwrap.dedent(before).strip()
    result = c.run_kernel_pass(kernel, "InsertSync")
    assert listing(result) == textwrap.dedent(after).strip(), listing(result)
    assert listing(kernel) == textwrap.dedent(before).strip()  # the input kernel is left as it was
    return result


def test_straight_line_kernel_gets_a_flag_pair_per_pipe_crossing():
    k = check(
        add_kernel(),
        """
        tload
        tload
        tadd
        tstore
        """,
        """
        tload
        tload
        set_flag MTE2 V 0
        wait_flag MTE2 V 0
        tadd
        set_flag V MTE3 0
        wait_flag V MTE3 0
        tstore
        """,
    )
    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    b = np.full((16, 32), 0.5, np.float32)
    out = np.zeros_like(a)
    c.run_kernel(k, [tensor_arg(a, "a"), tensor_arg(b, "b"), tensor_arg(out, "out")], "a2a3sim", "sim")
    np.testing.assert_array_equal(out, a + b)


def test_loop_carried_reuse_of_a_tile_waits_at_the_loop_head():
    # The next iteration's TLOAD (MTE2) overwrites `t`, which this iteration's TMULS (V) and
    # TSTORE (MTE3) read: write-after-read around the loop, waited for before the load.
    k = check(
        scale_rows_kernel(),
        """
        for r2 in 0..%r1 step 8:
          tload
          tmuls
          tstore
        """,
        """
        for r2 in 0..%r1 step 8:
          set_flag V MTE2 0
          wait_flag V MTE2 0
          set_flag MTE3 MTE2 0
          wait_flag MTE3 MTE2 0
          tload
          set_flag MTE2 V 0
          set_flag MTE2 MTE3 0
          wait_flag MTE2 V 0
          tmuls
          set_flag V MTE3 0
          wait_flag V MTE3 0
          wait_flag MTE2 MTE3 0
          tstore
        """,
    )
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    out = np.zeros_like(x)
    c.run_kernel(k, [tensor_arg(x, "x"), 0.5, 32, tensor_arg(out, "out")], "a2a3sim", "sim")
    np.testing.assert_array_equal(out, x * np.float32(0.5))


def test_the_sim_engine_reports_the_race_insert_sync_removes():
    a = np.ones((16, 32), np.float32)
    out = np.zeros_like(a)
    with pytest.raises(PyptoError, match="race in kernel .add.: TADD .* no flag orders MTE2 before V"):
        c.run_kernel(add_kernel(), [tensor_arg(a, "a"), tensor_arg(a, "b"), tensor_arg(out, "out")], "a2a3sim", "sim")


def test_insert_sync_is_the_kernel_pipeline_and_numbered_after_the_program_pipeline():
    assert [name for name, _ in c.kernel_pipeline_passes()] == ["InsertSync"]

    @pl.program
    class AddRows:
        @pl.function(type=pl.FunctionType.InCore)
        def add(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            ta = pl.load(a, [0, 0], [16, 32])
            tb = pl.load(b, [0, 0], [16, 32])
            return pl.store(pl.add(ta, tb), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            out = self.add(a, b, out)
            return out

    compiled = c.compile(AddRows, "a2a3sim", True, True)
    n = len(c.pipeline_passes())
    dumps = list(compiled.kernel_pass_results)
    assert [(name, kernel) for name, kernel, _ in dumps] == [(f"{n + 1:02d}_after_InsertSync", "add")]
    assert dumps[0][2] == compiled.host.kernels[0].pto_text
    assert "pto.set_flag[PIPE_MTE2, PIPE_V" in dumps[0][2]
    assert list(c.compile(AddRows, "a2a3sim", False, True).kernel_pass_results) == []  # only when asked


def test_unknown_kernel_pass_names_the_known_ones():
    with pytest.raises(PyptoError, match="no kernel pass named 'Nope'\n  fix: use one of: InsertSync"):
        c.run_kernel_pass(add_kernel(), "Nope")


@pl.jit
def add_16x32(a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 32]), pl.load(b, [0, 0], [16, 32])), [0, 0], c)
    return c


def test_dump_passes_writes_the_kernel_after_insert_sync(tmp_path):
    compiled = add_16x32.compile(config=RunConfig(dump_passes=True, output_dir=str(tmp_path)))
    dumps = sorted(os.listdir(tmp_path / "kernel_passes_dump"))
    assert len(dumps) == 1 and re.fullmatch(r"\d\d_after_InsertSync\..+\.pto", dumps[0])
    text = (tmp_path / "kernel_passes_dump" / dumps[0]).read_text()
    assert text in compiled.pto().values() and "pto.wait_flag[PIPE_MTE2, PIPE_V" in text
    assert all(d.endswith(".py") for d in os.listdir(tmp_path / "passes_dump"))  # program dumps stay apart
    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    c_out = np.zeros_like(a)
    compiled(a, a, c_out)
    np.testing.assert_array_equal(c_out, a + a)

"""Every finding of the fuzzers (fuzz/) as a regression test, and a replay of the parser's
corpus. A finding was an input that ended in something other than a PyptoError (a crash, a
bare std::bad_cast, a nanobind TypeError); each now ends in an error naming its line."""

import pathlib

import numpy as np
import pytest

import pypto as pto
import pypto.language as pl
from pypto import PyptoError
from pypto import ir as pir

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fuzz" / "corpus" / "parse"

PROGRAM = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, a: pl.Tensor[[128, 128], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):
        t: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [128, 128], target_memory=pl.Mem.Vec)
        c = pl.tile.store(t, [0, 0], c)
        return c
"""


def with_line(line, new):
    lines = PROGRAM.split("\n")
    lines[line - 1] = new
    return "\n".join(lines)


PARSE_FINDINGS = [
    # (name, text, line, message) -- found by fuzz/fuzz_parse.py
    ("attr_list_int_over_64_bits",  # was RuntimeError: std::bad_cast from the attribute conversion
     with_line(8, "        t: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [128, 18446744073709551616])"),
     8, r"the integer 18446744073709551616 does not fit in 64 bits"),
    ("shape_int_over_64_bits",  # was TypeError: __new__(): incompatible function arguments (ConstInt)
     with_line(7, "    def f(self, a: pl.Tensor[[128, 1" + "5" * 40 + "], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):"),
     7, r"does not fit in 64 bits"),
    ("tile_addr_over_64_bits",  # was TypeError: __new__(): incompatible function arguments (TileType)
     with_line(8, "        t: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec, pl.Addr(18446744073709551616)] = "
                  "pl.tile.load(a, [0, 0], [128, 128])"),
     8, r"pl\.Addr takes a byte offset between 0 and 2\*\*63 - 1"),
    ("float_dimension",  # was accepted; the printed dimension float('inf') did not parse back
     with_line(7, "    def f(self, a: pl.Tensor[[1e400, 128], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):"),
     7, r"the shape of pl\.Tensor must hold integers, got inf"),
    ("float_tile_dimension",
     with_line(8, "        t: pl.Tile[[128, 128.0], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [128, 128])"),
     8, r"the shape of pl\.Tile must hold integers, got 128\.0"),
]


@pytest.mark.parametrize("name,text,line,message", PARSE_FINDINGS, ids=[f[0] for f in PARSE_FINDINGS])
def test_parser_finding(name, text, line, message):
    with pytest.raises(PyptoError, match=message) as err:
        pl.parse(text, filename="finding.py")
    assert f"finding.py:{line}:" in str(err.value)


@pytest.mark.parametrize("value", ["float('-inf')", "float('inf')", "float('nan')", "1e30"])
def test_printed_special_floats_parse_back(value):
    """The printer writes infinities and NaN as float('inf') / float('nan'): the parser reads
    them back (a fuzz finding: `float` was not defined in parsed text)."""
    text = with_line(8, "        t: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.adds("
                        f"pl.tile.load(a, [0, 0], [128, 128]), {value})")
    program = pl.parse(text, filename="finding.py")
    printed = pir.print_program(program)
    assert pir.structural_equal(program, pl.parse(printed, filename="<printed>"))


def test_the_unmodified_program_parses():
    assert pl.parse(PROGRAM, filename="finding.py") is not None


@pytest.mark.parametrize("path", sorted(CORPUS.iterdir()), ids=lambda p: p.name)
def test_parse_corpus_replays(path):
    """What the fuzz target checks, for each input of its corpus: parse or PyptoError; a
    parsed program prints back to an equal program."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    try:
        program = pl.parse(text, filename=path.name)
    except PyptoError:
        return
    again = pl.parse(pir.print_program(program), filename="<printed>")
    assert pir.structural_equal(program, again)


@pl.jit
def offset_by(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.load(a, [n, 0], [32, 64]), [0, 0], c)
    return c


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**100])
def test_scalar_argument_over_64_bits(value):
    """Was RuntimeError: std::bad_cast from the run-argument conversion."""
    a = np.zeros((64, 64), np.float32)
    with pytest.raises(TypeError, match=r"test_fuzz_regressions\.py:\d+: offset_by\(\): argument 'n' = -?\d+ does not fit"):
        offset_by(a, np.zeros((32, 64), np.float32), value)


def test_lane_kernel_argument_over_64_bits():
    """Was RuntimeError: std::bad_cast from the launch-argument conversion."""
    @pto.kernel
    def fill(a, n):
        i = pto.get_global_id()
        if i < n:
            pto.store(a + i, 1.0)

    d = pto.alloc_tensor(1024)
    with pytest.raises(PyptoError, match=r"test_fuzz_regressions\.py:\d+: argument 'n' of kernel 'fill' = \d+ does not fit"):
        pto.launch(fill, grid=1, block=256, args=(d, 2**64))


def test_binding_conversions_reject_ints_over_64_bits():
    """The bindings themselves (used by hand-built programs) raise TypeError, not bad_cast."""
    from pypto import _core

    with pytest.raises(TypeError, match="does not fit in 64 bits"):
        _core.ir.make_op_call("tile.load", [], {}, {"shape": [2**64]}, _core.ir.Span("x.py", 1, 0))


def float_to_int_kernel():
    """out = x[16 * (int(f) == want) : ..., :]: moves the float parameter f into an integer
    register (the conversion fuzz_interpreter found undefined for NaN and huge values)."""
    from pypto import _core as c

    R, T, G, K = c.Scalar.r, c.Operand.tile, c.Operand.tensor, c.InstrKind
    k = c.Kernel()
    k.name = "float_to_int"
    k.params = [c.ParamDesc("f", False, "FP32", [], "In"), c.ParamDesc("want", False, "INDEX", [], "In"),
                c.ParamDesc("x", True, "FP32", [32, 64], "In"), c.ParamDesc("out", True, "FP32", [16, 64], "Out")]
    k.tiles = [c.TileDesc("t", "FP32", "Vec", 16, 64, 0)]
    k.num_regs, k.reg_is_float = 5, [True, False, False, False, False]  # r0 = f, r1 = want
    mov = c.Instr()
    mov.kind, mov.dst_reg, mov.a = K.ScalarMov, 2, R(0)

    def scalar_bin(dst, sop, a, b):
        i = c.Instr()
        i.kind, i.dst_reg, i.sop, i.a, i.b = K.ScalarBin, dst, sop, a, b
        return i

    def tile(mnemonic, outs, ins):
        i = c.Instr()
        i.kind, i.mnemonic, i.outs, i.ins = K.Tile, mnemonic, outs, ins
        return i

    rows = c.Operand.list_of([R(4), c.Scalar.imm(0)])
    k.code = [mov, scalar_bin(3, "==", R(2), R(1)), scalar_bin(4, "*", R(3), c.Scalar.imm(16)),
              tile("TLOAD", [T(0)], [G(2), rows]), tile("TSTORE", [G(3)], [T(0), c.Operand.list_of([c.Scalar.imm(0)] * 2)])]
    return c.insert_sync(k)


@pytest.mark.parametrize("engine", ["sim", "native"])
@pytest.mark.parametrize("f,want", [(float("nan"), 0), (1e30, 2**63 - 1), (-1e30, -(2**63)), (float("inf"), 2**63 - 1),
                                    (3.75, 3), (-3.75, -3)])
def test_float_register_to_int_saturates(engine, f, want):
    """Was UBSan: '-nan is outside the range of representable values of type long'. A float
    scalar becomes an integer truncated toward zero, saturated, NaN as 0, on both engines."""
    from pypto import _core as c

    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    out = np.zeros((16, 64), np.float32)
    args = [f, want, (x.ctypes.data, "FP32", [32, 64], [64, 1], "x"), (out.ctypes.data, "FP32", [16, 64], [64, 1], "out")]
    c.run_kernel(float_to_int_kernel(), args, engine=engine)
    np.testing.assert_array_equal(out, x[16:])  # the comparison with `want` held


def extract_kernel(offsets):
    """out = x[0:16, :] through a Vec tile and TEXTRACT with the given offset list."""
    from pypto import _core as c

    T, G = c.Operand.tile, c.Operand.tensor
    k = c.Kernel()
    k.name = "extract"
    k.params = [c.ParamDesc("x", True, "FP32", [16, 64], "In"), c.ParamDesc("out", True, "FP32", [16, 32], "Out")]
    k.tiles = [c.TileDesc("t", "FP32", "Vec", 16, 64, 0), c.TileDesc("u", "FP32", "Vec", 16, 32, 4096)]
    k.num_regs, k.reg_is_float = 0, []

    def tile(mnemonic, outs, ins):
        i = c.Instr()
        i.kind, i.mnemonic, i.outs, i.ins = c.InstrKind.Tile, mnemonic, outs, ins
        return i

    zero2 = c.Operand.list_of([c.Scalar.imm(0)] * 2)
    k.code = [tile("TLOAD", [T(0)], [G(0), zero2]),
              tile("TEXTRACT", [T(1)], [T(0), c.Operand.list_of([c.Scalar.imm(v) for v in offsets])]),
              tile("TSTORE", [G(1)], [T(1), zero2])]
    return c.insert_sync(k)


@pytest.mark.parametrize("engine", ["sim", "native"])
@pytest.mark.parametrize("offsets", [[], [8], [0, 8, 0]])
def test_tile_offsets_of_the_wrong_length_are_rejected(engine, offsets):
    """Was std::out_of_range (fuzz_interpreter): TEXTRACT / TINSERT / TSUBVIEW read offsets[1]
    of a shorter list. The validator now names the instruction and the expected [row, col]."""
    from pypto import _core as c

    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    out = np.zeros((16, 32), np.float32)
    args = [(x.ctypes.data, "FP32", [16, 64], [64, 1], "x"), (out.ctypes.data, "FP32", [16, 32], [32, 1], "out")]
    with pytest.raises(PyptoError, match=rf"TEXTRACT: the offsets into a tile are \[row, col\], got {len(offsets)} entries"):
        c.run_kernel(extract_kernel(offsets), args, engine=engine)
    assert not out.any()
    c.run_kernel(extract_kernel([0, 8]), args, engine=engine)  # the same kernel with two offsets runs
    np.testing.assert_array_equal(out, x[:, 8:40])


@pytest.mark.parametrize("mnemonic", ["TEXTRACT", "TSUBVIEW", "TINSERT"])
@pytest.mark.parametrize("offsets", [[], [1], [1, 2, 3]])
def test_single_instruction_tile_offsets_of_the_wrong_length(mnemonic, offsets):
    from pypto import _core

    big, small = np.zeros((8, 8), np.float32), np.zeros((4, 4), np.float32)
    outs, ins = ([small], [big, offsets]) if mnemonic != "TINSERT" else ([big], [small, offsets])
    with pytest.raises(PyptoError, match=r"the offsets into a tile are \[row, col\]"):
        _core.isa_execute(mnemonic, outs, ins)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan, 1e30])
def test_scatter_float_index_out_of_int_range(bad):
    """Was UBSan (fuzz_interpreter): a float index of +-inf converted to int64 is undefined.
    Float indices saturate (NaN reads as 0), so +-inf and 1e30 are reported as outside the row."""
    from pypto import _core

    idx = np.array([[bad, 0.0], [1.0, 0.0]], np.float32)
    src, dst = np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)
    if np.isnan(bad):  # index 0: a valid scatter
        _core.isa_execute("TSCATTER", [dst], [src, idx])
        np.testing.assert_array_equal(dst, [[1, 0], [1, 1]])
        return
    with pytest.raises(PyptoError, match=r"index -?9223372036854775\d+ at \(0, 0\) of 'in1' is outside the destination row"):
        _core.isa_execute("TSCATTER", [dst], [src, idx])

"""Golden text of the `.pto` emitter, one kernel per instruction family: kernels built by
hand through the bindings, emitted with `_core.emit_pto`, compared line by line with
text written by hand from docs/pto-format.md."""

import textwrap

from pypto import _core as c

T, G = c.Operand.tile, c.Operand.tensor


def S(v):
    return c.Operand.scalar_of(c.Scalar.immf(v) if isinstance(v, float) else c.Scalar.imm(v))


def R(reg):
    return c.Operand.scalar_of(c.Scalar.r(reg))


def L(*vals):
    return c.Operand.list_of([c.Scalar.imm(v) if isinstance(v, int) else v for v in vals])


def tile(mnemonic, outs, ins, **attrs):
    i = c.Instr()
    i.kind = c.InstrKind.Tile
    i.mnemonic = mnemonic
    i.outs, i.ins = outs, ins
    if attrs:
        i.attrs = attrs
    return i


def kernel(name, params, tiles, code, core="AIV", regs=()):
    k = c.Kernel()
    k.name, k.core = name, core
    k.params = [c.ParamDesc(*p) for p in params]
    k.tiles = [c.TileDesc(*t) for t in tiles]
    k.code = code
    k.num_regs = len(regs)
    k.reg_is_float = list(regs)
    return k


def check(k, expected):
    got = c.emit_pto(k).splitlines()
    want = textwrap.dedent(expected).strip("\n").splitlines()
    for n, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"line {n + 1} differs:\n got: {g}\nwant: {w}"
    assert len(got) == len(want), "\n".join(got)


# Tile types as the format spells them (docs/pto-format.md).
V0 = "!pto.tile<vec, f32, 16x64, blayout=row_major, slayout=none_box, valid=[16, 64], pad=null, addr=0x0>"
V1 = "!pto.tile<vec, f32, 16x64, blayout=row_major, slayout=none_box, valid=[16, 64], pad=null, addr=0x1000>"
V2 = "!pto.tile<vec, f32, 16x64, blayout=row_major, slayout=none_box, valid=[16, 64], pad=null, addr=0x2000>"
A_IN = "!pto.tensor<f32, 16x64, in>"
B_IN = "!pto.tensor<f32, 16x64, in>"
OUT = "!pto.tensor<f32, 16x64, out>"
VEC3 = [("ta", "FP32", "Vec", 16, 64, 0), ("tb", "FP32", "Vec", 16, 64, 0x1000), ("tc", "FP32", "Vec", 16, 64, 0x2000)]
ABO = [("a", True, "FP32", [16, 64], "In"), ("b", True, "FP32", [16, 64], "In"), ("out", True, "FP32", [16, 64], "Out")]


def test_memory_family_with_partial_valid_shape_pad_and_atomic_store():
    k = kernel(
        "k_mem",
        [("a", True, "FP32", [64, 128], "In"), ("out", True, "FP32", [64, 128], "InOut")],
        [("t", "FP32", "Vec", 16, 64, 0x40, c.Scalar.imm(10), c.Scalar.imm(60), "zero")],
        [
            tile("TLOAD", [T(0)], [G(0), L(16, 64)]),
            tile("TSTORE", [G(1)], [T(0), L(0, 0)], atomic="add"),
            tile("TPREFETCH", [], [G(0), L(32, 0)]),
        ],
    )
    t = "!pto.tile<vec, f32, 16x64, blayout=row_major, slayout=none_box, valid=[10, 60], pad=zero, addr=0x40>"
    check(
        k,
        f"""
        // pto kernel k_mem: AIV (vector core), 1 tiles, 0 scalar registers
        func.func @k_mem(%a: !pto.tensor<f32, 64x128, in>, %out: !pto.tensor<f32, 64x128, inout>) attributes {{pto.core = "aiv"}} {{
          pto.tload ins(%a[16, 64] : !pto.tensor<f32, 64x128, in>) outs(%t : {t})  // pipe MTE2
          pto.tstore ins(%t[0, 0] : {t}) outs(%out : !pto.tensor<f32, 64x128, inout>) {{atomic = "add"}}  // pipe MTE3
          pto.tprefetch ins(%a[32, 0] : !pto.tensor<f32, 64x128, in>) outs()  // pipe MTE2
          return
        }}
        """,
    )


def test_on_chip_movement_family():
    k = kernel(
        "k_move",
        [("a", True, "FP32", [16, 16], "In")],
        [
            ("m", "FP16", "Mat", 16, 16, 0),
            ("l", "FP16", "Left", 16, 16, 0),
            ("acc", "FP32", "Acc", 16, 16, 0),
            ("v", "FP16", "Vec", 16, 16, 0),
            ("vt", "FP16", "Vec", 16, 16, 0x200),
            ("sub", "FP16", "Vec", 8, 16, 0x400),
        ],
        [
            tile("TMOV", [T(1)], [T(0)]),
            tile("TMOV", [T(3)], [T(2)]),
            tile("TTRANS", [T(4)], [T(3)]),
            tile("TEXTRACT", [T(5)], [T(4), L(8, 0)]),
            tile("TFILLPAD", [T(4)], [T(5)]),
        ],
        core="AIC",
    )
    m = "!pto.tile<mat, f16, 16x16, blayout=row_major, slayout=none_box, valid=[16, 16], pad=null, addr=0x0>"
    left = "!pto.tile<left, f16, 16x16, blayout=row_major, slayout=none_box, valid=[16, 16], pad=null, addr=0x0>"
    acc = "!pto.tile<acc, f32, 16x16, blayout=row_major, slayout=none_box, valid=[16, 16], pad=null, addr=0x0>"
    v = "!pto.tile<vec, f16, 16x16, blayout=row_major, slayout=none_box, valid=[16, 16], pad=null, addr=0x0>"
    vt = "!pto.tile<vec, f16, 16x16, blayout=row_major, slayout=none_box, valid=[16, 16], pad=null, addr=0x200>"
    sub = "!pto.tile<vec, f16, 8x16, blayout=row_major, slayout=none_box, valid=[8, 16], pad=null, addr=0x400>"
    check(
        k,
        f"""
        // pto kernel k_move: AIC (cube core), 6 tiles, 0 scalar registers
        func.func @k_move(%a: !pto.tensor<f32, 16x16, in>) attributes {{pto.core = "aic"}} {{
          pto.tmov ins(%m : {m}) outs(%l : {left})  // pipe MTE1
          pto.tmov ins(%acc : {acc}) outs(%v : {v})  // pipe FIX
          pto.ttrans ins(%v : {v}) outs(%vt : {vt})  // pipe V
          pto.textract ins(%vt[8, 0] : {vt}) outs(%sub : {sub})  // pipe V
          pto.tfillpad ins(%sub : {sub}) outs(%vt : {vt})  // pipe V
          return
        }}
        """,
    )


def test_elementwise_tile_tile_family():
    code = [tile(m, [T(2)], [T(0), T(1)]) for m in ("TADD", "TSUB", "TMUL", "TDIV", "TMAX", "TMIN", "TREM")]
    code.append(tile("TADDC", [T(2)], [T(0), T(1), T(2)]))
    lines = "\n".join(
        f"  pto.{m} ins(%ta, %tb : {V0}, {V1}) outs(%tc : {V2})  // pipe V"
        for m in ("tadd", "tsub", "tmul", "tdiv", "tmax", "tmin", "trem")
    )
    check(
        kernel("k_ew", ABO, VEC3, code),
        f"""
// pto kernel k_ew: AIV (vector core), 3 tiles, 0 scalar registers
func.func @k_ew(%a: {A_IN}, %b: {B_IN}, %out: {OUT}) attributes {{pto.core = "aiv"}} {{
{lines}
  pto.taddc ins(%ta, %tb, %tc : {V0}, {V1}, {V2}) outs(%tc : {V2})  // pipe V
  return
}}
""",
    )


def test_tile_scalar_family_with_immediates_and_registers():
    code = [
        tile("TADDS", [T(1)], [T(0), S(2.0)]),
        tile("TMULS", [T(1)], [T(0), S(0.5)]),
        tile("TDIVS", [T(1)], [T(0), R(0)]),
        tile("TMAXS", [T(1)], [T(0), R(1)]),
        tile("TEXPANDS", [T(2)], [S(-1.25)]),
    ]
    check(
        kernel(
            "k_ts",
            [("s", False, "FP32", [], "In"), ("n", False, "INDEX", [], "In")],
            VEC3,
            code,
            regs=(True, False),
        ),
        f"""
        // pto kernel k_ts: AIV (vector core), 3 tiles, 2 scalar registers
        func.func @k_ts(%r0: f32, %r1: index) attributes {{pto.core = "aiv"}} {{
          pto.tadds ins(%ta, 2.0 : {V0}, f32) outs(%tb : {V1})  // pipe V
          pto.tmuls ins(%ta, 0.5 : {V0}, f32) outs(%tb : {V1})  // pipe V
          pto.tdivs ins(%ta, %r0 : {V0}, f32) outs(%tb : {V1})  // pipe V
          pto.tmaxs ins(%ta, %r1 : {V0}, index) outs(%tb : {V1})  // pipe V
          pto.texpands ins(-1.25 : f32) outs(%tc : {V2})  // pipe V
          return
        }}
        """,
    )


def test_unary_family():
    mnemonics = ("TABS", "TNEG", "TRELU", "TEXP", "TLOG", "TSQRT", "TRSQRT", "TRECIP")
    lines = "\n".join(f"  pto.{m.lower()} ins(%ta : {V0}) outs(%tb : {V1})  // pipe V" for m in mnemonics)
    check(
        kernel("k_un", ABO[:1], VEC3[:2], [tile(m, [T(1)], [T(0)]) for m in mnemonics]),
        f"""
// pto kernel k_un: AIV (vector core), 2 tiles, 0 scalar registers
func.func @k_un(%a: {A_IN}) attributes {{pto.core = "aiv"}} {{
{lines}
  return
}}
""",
    )


def test_compare_select_convert_family():
    # The packed mask of a 16x64 tile as pl.cmp makes it: UINT8, 16 rows of 32 bytes (one
    # 32-byte Vec row) of which ceil(64 / 8) = 8 hold the bits (the valid shape).
    mask_tile = ("mask", "UINT8", "Vec", 16, 32, 0x3000, c.Scalar.imm(16), c.Scalar.imm(8))
    tiles = VEC3 + [mask_tile, ("h", "FP16", "Vec", 16, 64, 0x3400)]
    code = [
        tile("TCMP", [T(3)], [T(0), T(1)], cmp="LT"),
        tile("TCMPS", [T(3)], [T(0), S(0.0)], cmp="GE"),
        tile("TSEL", [T(2)], [T(3), T(0), T(1)]),
        tile("TCVT", [T(4)], [T(2)], mode="round"),
    ]
    mask = "!pto.tile<vec, u8, 16x32, blayout=row_major, slayout=none_box, valid=[16, 8], pad=null, addr=0x3000>"
    h = "!pto.tile<vec, f16, 16x64, blayout=row_major, slayout=none_box, valid=[16, 64], pad=null, addr=0x3400>"
    check(
        kernel("k_cmp", ABO[:2], tiles, code),
        f"""
        // pto kernel k_cmp: AIV (vector core), 5 tiles, 0 scalar registers
        func.func @k_cmp(%a: {A_IN}, %b: {B_IN}) attributes {{pto.core = "aiv"}} {{
          pto.tcmp ins(%ta, %tb : {V0}, {V1}) outs(%mask : {mask}) {{cmp = "LT"}}  // pipe V
          pto.tcmps ins(%ta, 0.0 : {V0}, f32) outs(%mask : {mask}) {{cmp = "GE"}}  // pipe V
          pto.tsel ins(%mask, %ta, %tb : {mask}, {V0}, {V1}) outs(%tc : {V2})  // pipe V
          pto.tcvt ins(%tc : {V2}) outs(%h : {h}) {{mode = "round"}}  // pipe V
          return
        }}
        """,
    )


def test_reduction_and_broadcast_families():
    tiles = VEC3[:2] + [("row", "FP32", "Vec", 16, 8, 0x2000), ("col", "FP32", "Vec", 1, 64, 0x2200)]
    # The row result is a 16x8 tile whose valid shape is one column.
    tiles[2] = ("row", "FP32", "Vec", 16, 8, 0x2000, c.Scalar.imm(16), c.Scalar.imm(1))
    code = [
        tile("TROWSUM", [T(2)], [T(0)]),
        tile("TROWMAX", [T(2)], [T(0), T(1)]),
        tile("TCOLSUM", [T(3)], [T(0)]),
        tile("TROWEXPAND", [T(1)], [T(2)]),
        tile("TROWEXPANDSUB", [T(1)], [T(0), T(2)]),
        tile("TROWEXPANDEXPDIF", [T(1)], [T(0), T(2)]),
        tile("TCOLEXPANDMUL", [T(1)], [T(0), T(3)]),
    ]
    row = "!pto.tile<vec, f32, 16x8, blayout=row_major, slayout=none_box, valid=[16, 1], pad=null, addr=0x2000>"
    col = "!pto.tile<vec, f32, 1x64, blayout=row_major, slayout=none_box, valid=[1, 64], pad=null, addr=0x2200>"
    check(
        kernel("k_red", ABO[:1], tiles, code),
        f"""
        // pto kernel k_red: AIV (vector core), 4 tiles, 0 scalar registers
        func.func @k_red(%a: {A_IN}) attributes {{pto.core = "aiv"}} {{
          pto.trowsum ins(%ta : {V0}) outs(%row : {row})  // pipe V
          pto.trowmax ins(%ta, %tb : {V0}, {V1}) outs(%row : {row})  // pipe V
          pto.tcolsum ins(%ta : {V0}) outs(%col : {col})  // pipe V
          pto.trowexpand ins(%row : {row}) outs(%tb : {V1})  // pipe V
          pto.trowexpandsub ins(%ta, %row : {V0}, {row}) outs(%tb : {V1})  // pipe V
          pto.trowexpandexpdif ins(%ta, %row : {V0}, {row}) outs(%tb : {V1})  // pipe V
          pto.tcolexpandmul ins(%ta, %col : {V0}, {col}) outs(%tb : {V1})  // pipe V
          return
        }}
        """,
    )


def test_cube_matmul_family_with_operand_layouts():
    tiles = [
        ("l", "FP16", "Left", 32, 16, 0),
        ("r", "FP16", "Right", 16, 48, 0),
        ("bias", "FP32", "Bias", 1, 48, 0),
        ("acc", "FP32", "Acc", 32, 48, 0),
    ]
    code = [
        tile("TMATMUL", [T(3)], [T(0), T(1)]),
        tile("TMATMUL_ACC", [T(3)], [T(3), T(0), T(1)], right_layout="NZ"),
        tile("TMATMUL_BIAS", [T(3)], [T(0), T(1), T(2)]),
    ]
    left = "!pto.tile<left, f16, 32x16, blayout=row_major, slayout=none_box, valid=[32, 16], pad=null, addr=0x0>"
    right = "!pto.tile<right, f16, 16x48, blayout=row_major, slayout=none_box, valid=[16, 48], pad=null, addr=0x0>"
    bias = "!pto.tile<bias, f32, 1x48, blayout=row_major, slayout=none_box, valid=[1, 48], pad=null, addr=0x0>"
    acc = "!pto.tile<acc, f32, 32x48, blayout=row_major, slayout=none_box, valid=[32, 48], pad=null, addr=0x0>"
    check(
        kernel("k_mm", [], tiles, code, core="AIC"),
        f"""
        // pto kernel k_mm: AIC (cube core), 4 tiles, 0 scalar registers
        func.func @k_mm() attributes {{pto.core = "aic"}} {{
          pto.tmatmul ins(%l, %r : {left}, {right}) outs(%acc : {acc})  // pipe M
          pto.tmatmul_acc ins(%acc, %l, %r : {acc}, {left}, {right}) outs(%acc : {acc}) {{right_layout = "NZ"}}  // pipe M
          pto.tmatmul_bias ins(%l, %r, %bias : {left}, {right}, {bias}) outs(%acc : {acc})  // pipe M
          return
        }}
        """,
    )


def test_generator_and_sort_family():
    tiles = [
        ("iota", "INT32", "Vec", 8, 32, 0),
        ("vals", "FP32", "Vec", 8, 32, 0x400),
        ("sorted", "FP32", "Vec", 8, 32, 0x800),
        ("idx", "INT32", "Vec", 8, 32, 0xC00),
    ]
    code = [
        tile("TCI", [T(0)], [S(0)]),
        tile("TTRI", [T(1)], [S(0)], upper=False),
        tile("TSORT32", [T(2), T(3)], [T(1)]),
    ]
    iota = "!pto.tile<vec, i32, 8x32, blayout=row_major, slayout=none_box, valid=[8, 32], pad=null, addr=0x0>"
    vals = "!pto.tile<vec, f32, 8x32, blayout=row_major, slayout=none_box, valid=[8, 32], pad=null, addr=0x400>"
    srt = "!pto.tile<vec, f32, 8x32, blayout=row_major, slayout=none_box, valid=[8, 32], pad=null, addr=0x800>"
    idx = "!pto.tile<vec, i32, 8x32, blayout=row_major, slayout=none_box, valid=[8, 32], pad=null, addr=0xc00>"
    check(
        kernel("k_gen", [], tiles, code),
        f"""
        // pto kernel k_gen: AIV (vector core), 4 tiles, 0 scalar registers
        func.func @k_gen() attributes {{pto.core = "aiv"}} {{
          pto.tci ins(0 : index) outs(%iota : {iota})  // pipe V
          pto.ttri ins(0 : index) outs(%vals : {vals}) {{upper = false}}  // pipe V
          pto.tsort32 ins(%vals : {vals}) outs(%sorted, %idx : {srt}, {idx})  // pipe V
          return
        }}
        """,
    )


def test_sync_flags_and_barrier():
    code = [
        tile("TLOAD", [T(0)], [G(0), L(0, 0)]),
        tile("SET_FLAG", [], [], src="MTE2", dst="V", event=0),
        tile("WAIT_FLAG", [], [], src="MTE2", dst="V", event=0),
        tile("TEXP", [T(1)], [T(0)]),
        tile("SET_FLAG", [], [], src="V", dst="MTE3", event=3),
        tile("WAIT_FLAG", [], [], src="V", dst="MTE3", event=3),
        tile("TSTORE", [G(1)], [T(1), L(0, 0)]),
        tile("PIPE_BARRIER", [], [], pipe="ALL"),
    ]
    check(
        kernel("k_sync", [ABO[0], ABO[2]], VEC3[:2], code),
        f"""
        // pto kernel k_sync: AIV (vector core), 2 tiles, 0 scalar registers
        func.func @k_sync(%a: {A_IN}, %out: {OUT}) attributes {{pto.core = "aiv"}} {{
          pto.tload ins(%a[0, 0] : {A_IN}) outs(%ta : {V0})  // pipe MTE2
          pto.set_flag[PIPE_MTE2, PIPE_V, EVENT_ID0]
          pto.wait_flag[PIPE_MTE2, PIPE_V, EVENT_ID0]
          pto.texp ins(%ta : {V0}) outs(%tb : {V1})  // pipe V
          pto.set_flag[PIPE_V, PIPE_MTE3, EVENT_ID3]
          pto.wait_flag[PIPE_V, PIPE_MTE3, EVENT_ID3]
          pto.tstore ins(%tb[0, 0] : {V1}) outs(%out : {OUT})  // pipe MTE3
          pto.pipe_barrier[PIPE_ALL]
          return
        }}
        """,
    )


def scalar(kind, dst=-1, a=None, b=None, step=None, sop=None):
    i = c.Instr()
    i.kind = kind
    i.dst_reg = dst
    if a is not None:
        i.a = a
    if b is not None:
        i.b = b
    if step is not None:
        i.step = step
    if sop is not None:
        i.sop = sop
    return i


def test_scf_for_and_scf_if_structure():
    K = c.InstrKind
    imm, reg = c.Scalar.imm, c.Scalar.r
    code = [
        scalar(K.LoopBegin, 1, imm(0), reg(0), imm(64)),
        scalar(K.ScalarBin, 2, reg(1), imm(128), sop="<"),
        tile("TLOAD", [T(0)], [G(0), L(0, reg(1))]),
        scalar(K.If, a=reg(2)),
        tile("TADDS", [T(1)], [T(0), S(1.0)]),
        scalar(K.Else),
        tile("TMULS", [T(1)], [T(0), S(3.0)]),
        scalar(K.EndIf),
        tile("TSTORE", [G(2)], [T(1), L(0, reg(1))]),  # operands index params
        scalar(K.LoopEnd, 1, imm(0), reg(0), imm(64)),
    ]
    a = "!pto.tensor<f32, 16x?, in>"
    out = "!pto.tensor<f32, 16x?, out>"
    check(
        kernel(
            "k_scf",
            [("a", True, "FP32", [16, -1], "In"), ("n", False, "INDEX", [], "In"), ("out", True, "FP32", [16, -1], "Out")],
            VEC3[:2],
            code,
            regs=(False, False, False),
        ),
        f"""
        // pto kernel k_scf: AIV (vector core), 2 tiles, 3 scalar registers
        func.func @k_scf(%a: {a}, %r0: index, %out: {out}) attributes {{pto.core = "aiv"}} {{
          scf.for %r1 = 0 to %r0 step 64 {{
            %r2 = arith.cmp.lt %r1, 128 : index
            pto.tload ins(%a[0, %r1] : {a}) outs(%ta : {V0})  // pipe MTE2
            scf.if %r2 {{
              pto.tadds ins(%ta, 1.0 : {V0}, f32) outs(%tb : {V1})  // pipe V
            }} else {{
              pto.tmuls ins(%ta, 3.0 : {V0}, f32) outs(%tb : {V1})  // pipe V
            }}
            pto.tstore ins(%tb[0, %r1] : {V1}) outs(%out : {out})  // pipe MTE3
          }}
          return
        }}
        """,
    )


def test_scf_while_structure():
    K = c.InstrKind
    imm, reg = c.Scalar.imm, c.Scalar.r
    code = [
        scalar(K.ScalarMov, 1, imm(0)),
        scalar(K.WhileBegin),
        scalar(K.ScalarBin, 2, reg(1), reg(0), sop="<"),
        scalar(K.WhileCond, a=reg(2)),
        tile("TLOAD", [T(0)], [G(0), L(0, reg(1))]),
        tile("TSTORE", [G(2)], [T(0), L(0, reg(1))]),
        scalar(K.ScalarBin, 1, reg(1), imm(64), sop="+"),
        scalar(K.WhileEnd),
    ]
    a = "!pto.tensor<f32, 16x?, in>"
    out = "!pto.tensor<f32, 16x?, out>"
    check(
        kernel(
            "k_while",
            [("a", True, "FP32", [16, -1], "In"), ("n", False, "INDEX", [], "In"), ("out", True, "FP32", [16, -1], "Out")],
            VEC3[:1],
            code,
            regs=(False, False, False),
        ),
        f"""
        // pto kernel k_while: AIV (vector core), 1 tiles, 3 scalar registers
        func.func @k_while(%a: {a}, %r0: index, %out: {out}) attributes {{pto.core = "aiv"}} {{
          %r1 = arith.mov 0 : index
          scf.while {{
            %r2 = arith.cmp.lt %r1, %r0 : index
            scf.condition %r2
          }} do {{
            pto.tload ins(%a[0, %r1] : {a}) outs(%ta : {V0})  // pipe MTE2
            pto.tstore ins(%ta[0, %r1] : {V0}) outs(%out : {out})  // pipe MTE3
            %r1 = arith.add %r1, 64 : index
          }}
          return
        }}
        """,
    )


def test_dynamic_valid_shape_names_its_register():
    k = kernel(
        "k_dyn",
        [("a", True, "FP32", [16, 64], "In"), ("v", False, "INDEX", [], "In")],
        [("t", "FP32", "Vec", 16, 64, 0, c.Scalar.imm(16), c.Scalar.r(0), "max")],
        [tile("TLOAD", [T(0)], [G(0), L(0, 0)])],
        regs=(False,),
    )
    t = "!pto.tile<vec, f32, 16x64, blayout=row_major, slayout=none_box, valid=[16, %r0], pad=max, addr=0x0>"
    check(
        k,
        f"""
        // pto kernel k_dyn: AIV (vector core), 1 tiles, 1 scalar registers
        func.func @k_dyn(%a: {A_IN}, %r0: index) attributes {{pto.core = "aiv"}} {{
          pto.tload ins(%a[0, 0] : {A_IN}) outs(%t : {t})  // pipe MTE2
          return
        }}
        """,
    )


def test_compiled_program_loop_and_branch():
    """A DSL program through the whole compiler: the text's structure and types (both arms read
    the carried tile before writing its next value: no carry copy). Addresses
    (memory planning) and flags (InsertSync) are left out so the golden text states only
    what the program fixes."""
    import re

    import numpy as np
    import pypto.language as pl

    @pl.jit
    def k_loop(a: pl.Tensor, flag: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.full([16, 32], dtype=pl.FP32, value=0.0)
            for i in pl.range(2):
                t = pl.load(a, [0, i * 32], [16, 32])
                if flag > 0:
                    acc2 = pl.yield_(pl.add(acc, t))
                else:
                    acc2 = pl.yield_(pl.sub(acc, t))
                acc = acc2
            pl.store(acc, [0, 0], c)
        return c

    a = np.ones((16, 64), np.float32)
    out = np.zeros((16, 32), np.float32)
    texts = k_loop.compile(a, 1, out).pto()
    assert list(texts) == ["k_loop_incore_0"]
    lines = [
        re.sub(r"addr=0x[0-9a-f]+", "addr=*", s)
        for s in texts["k_loop_incore_0"].splitlines()
        if "_flag[" not in s and not s.lstrip().startswith("//")
    ]
    t = "!pto.tile<vec, f32, 16x32, blayout=row_major, slayout=none_box, valid=[16, 32], pad=null, addr=*>"
    a_ty, c_ty = "!pto.tensor<f32, 16x64, in>", "!pto.tensor<f32, 16x32, out>"
    want = f"""
func.func @k_loop_incore_0(%a: {a_ty}, %r0: index, %c: {c_ty}) attributes {{pto.core = "aiv"}} {{
  pto.texpands ins(0.0 : f32) outs(%acc.0 : {t})  // pipe V
  scf.for %r1 = 0 to 2 step 1 {{
    %r2 = arith.mul %r1, 32 : index
    pto.tload ins(%a[0, %r2] : {a_ty}) outs(%t : {t})  // pipe MTE2
    %r3 = arith.cmp.gt %r0, 0 : index
    scf.if %r3 {{
      pto.tadd ins(%acc.1, %t : {t}, {t}) outs(%add : {t})  // pipe V
    }} else {{
      pto.tsub ins(%acc.1, %t : {t}, {t}) outs(%sub : {t})  // pipe V
    }}
  }}
  pto.tstore ins(%acc.6[0, 0] : {t}) outs(%c : {c_ty})  // pipe MTE3
  return
}}
"""
    assert lines == want.strip("\n").splitlines()

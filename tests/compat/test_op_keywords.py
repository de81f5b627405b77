"""PyPTO's keyword names and keyword semantics of existing ops (docs/language.md, "PyPTO
compatibility" / "Op keywords"): every program runs on both engines against numpy and
round-trips through the printer (RunConfig(verify="roundtrip"))."""

import numpy as np
import pypto.language as pl
import pytest
from pypto import ir
import pypto.debug as dbg
from pypto.language import ops
from pypto.language.errors import ParseError
from pypto.runtime import RunConfig

torch = pytest.importorskip("torch")
rng = np.random.default_rng(13)
Mat, Left, Right, Vec = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Vec


def run(kernel, *args, engine):
    kernel(*args, config=RunConfig(engine=engine, verify="roundtrip"))


def roundtrip(program):
    text = ir.print_program(program)
    again = pl.parse(text)
    assert ir.structural_equal(program, again), text
    assert ir.print_program(again) == text
    return text


# -- names -----------------------------------------------------------------------------------

def test_every_spelling_lists_pypto_keywords():
    want = {
        "load": {"tensor", "offsets", "shapes", "valid_shape", "target_memory", "clamp"},
        "store": {"tile", "offsets", "output_tensor", "shapes", "atomic"},
        "assemble": {"target", "source", "offset", "atomic"},
        "slice": {"input", "shape", "offset", "valid_shape", "drop_dims", "pad_value", "clamp"},
        "cast": {"input", "target_type", "mode"},
        "exp": {"input"},
        "row_sum": {"input", "tmp_tile"},
        "row_expand_mul": {"lhs", "rhs"},
        "tile.row_expand_mul": {"tile", "row_vec"},
        "tensor.row_expand_mul": {"tensor", "row_vec"},
        "read": {"src", "offset"},
        "set_validshape": {"input", "valid_rows", "valid_cols"},
        "array.create": {"extent", "dtype"},
        "matmul_acc": {"acc", "lhs", "rhs", "a_trans", "b_trans", "init_cond"},
        "create_tensor": {"shape", "dtype", "layout", "manual_dep", "init_value"},
        "tile.create": {"shape", "dtype", "target_memory", "transpose", "flat_layout"},
        "move": {"tile", "target_memory", "blayout", "slayout"},
        "recip": {"input", "high_precision"},
        "div": {"lhs", "rhs", "high_precision"},
        "tile.sel": {"mask", "lhs", "rhs", "tmp"},
        "tile.mgather": {"mem", "idx"},
        "concat": {"src0", "src1"},
        "fillpad": {"value", "pad_value"},
    }
    for name, keywords in want.items():
        assert keywords <= ops.stub_keywords(ops.OpStub(name)), name


def test_positional_order_is_pyptos():
    def names(op):
        return [p.name for p in ir.find_op(op).params]
    assert names("tile.arange")[:2] == ["start", "shape"]
    assert names("tile.tri")[:3] == ["diagonal", "shape", "valid_shape"]
    assert names("tile.load")[:6] == ["tensor", "offsets", "shape", "valid_shape", "target_memory", "clamp"]


@pl.jit
def k_spellings(a: pl.Tensor, v: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor], e: pl.Out[pl.Tensor],
                f: pl.Out[pl.Tensor], g: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(tensor=a, offsets=[0, 0], shapes=[16, 32])
        rv = pl.row_max(pl.load(v, [0, 0], [16, 32], None, pl.MemorySpace.Vec))  # positional valid_shape, target_memory
        x = pl.exp(input=pl.muls(lhs=t, rhs=0.25))
        y = pl.row_expand_mul(lhs=x, rhs=rv)
        z = pl.tile.row_expand_sub(tile=y, row_vec=rv)
        s = pl.row_sum(input=z, tmp_tile=pl.tile.create([16, 32], dtype=pl.FP32))
        pl.store(tile=z, offsets=[0, 0], output_tensor=c)
        pl.store(s, [0, 0], d)
        pl.store(pl.cast(input=pl.recip(input=pl.adds(t, 3.0), high_precision=True), target_type=pl.FP32), [0, 0], e)
        pl.store(pl.rsqrt(pl.adds(t, 3.0), high_precision=True), [0, 0], f)
        pl.store(pl.div(t, pl.adds(t, 3.0), high_precision=True), [0, 0], g)
    return c


def test_pypto_keyword_spellings_compute_as_before(engine):
    a = rng.uniform(-1, 1, (16, 32)).astype(np.float32)
    v = rng.uniform(-1, 1, (16, 32)).astype(np.float32)
    c, d, e, f, g = (np.zeros((16, 32), np.float32), np.zeros((16, 1), np.float32), np.zeros((16, 32), np.float32),
                     np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32))
    run(k_spellings, a, v, c, d, e, f, g, engine=engine)
    rv = v.max(1, keepdims=True)
    z = np.exp(a * 0.25) * rv - rv
    np.testing.assert_allclose(c, z, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d, z.sum(1, keepdims=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(e, 1 / (a + 3), rtol=1e-5)
    np.testing.assert_allclose(f, 1 / np.sqrt(a + 3), rtol=1e-5)
    np.testing.assert_allclose(g, a / (a + 3), rtol=1e-5, atol=1e-6)


@pl.jit
def k_generators(c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor], e: pl.Out[pl.Tensor], f: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.arange(5, [8, 32]), [0, 0], c)  # PyPTO: start first, INT32 by default
        pl.store(pl.tile.arange(100, [8, 32], dtype=pl.INT32, descending=True), [0, 0], d)
        pl.store(pl.tri(1, [8, 32]), [0, 0], e)  # diagonal first, INT32 by default
        pl.store(pl.arange(2.5, [8, 32], dtype=pl.FP32, descending=True), [0, 0], f)
    return c


def test_arange_and_tri_take_start_and_diagonal_first(engine):
    c, d, e = np.zeros((8, 32), np.int32), np.zeros((8, 32), np.int32), np.zeros((8, 32), np.int32)
    f = np.zeros((8, 32), np.float32)
    run(k_generators, c, d, e, f, engine=engine)
    k = np.arange(256).reshape(8, 32)
    np.testing.assert_array_equal(c, 5 + k)
    np.testing.assert_array_equal(d, 100 - k)
    np.testing.assert_array_equal(e, np.tril(np.ones((8, 32), np.int32), 1))
    np.testing.assert_allclose(f, 2.5 - k)


# -- load clamp, store shapes / atomic -------------------------------------------------------

@pl.jit
def k_clamp(a: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(3):  # 3 blocks of 8 rows over 20 rows: the last holds 4
            t = pl.load(a, [i * 8, 0], [8, 32], clamp=True)
            c = pl.store(pl.adds(t, 1.0), [i * 8, 0], c)
        edge = pl.load(a, [16, 0], [8, 32], clamp=True)  # static offset: valid [4, 32]
        d = pl.store(pl.fillpad(edge, pl.PadValue.zero), [0, 0], d, shapes=[8, 32])
    return c


def test_load_clamp_cuts_the_valid_region_at_the_tensor_edge(engine):
    a = rng.uniform(-1, 1, (20, 32)).astype(np.float32)
    c, d = np.zeros_like(a), np.full((8, 32), 7, np.float32)
    run(k_clamp, a, c, d, engine=engine)
    np.testing.assert_allclose(c, a + 1, rtol=1e-6)
    np.testing.assert_array_equal(d[:4], a[16:])
    np.testing.assert_array_equal(d[4:], 0)


@pl.jit
def k_atomic(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(a, [0, 0], [16, 32]), [0, 0], c, atomic=pl.AtomicType.Add)
    with pl.at(level=pl.Level.CORE_GROUP):  # a second task adding into the same tensor
        pl.store(pl.muls(pl.load(a, [0, 0], [16, 32]), 2), [0, 0], c, atomic=pl.AtomicType.Add)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(a, [16, 0], [16, 32]), [16, 0], c, atomic=pl.AtomicType.None_)
    return c


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16], ids=lambda d: np.dtype(d).name)
def test_store_atomic_add_accumulates_into_global_memory(engine, dtype):
    a = rng.integers(-8, 8, (32, 32)).astype(dtype)
    c = rng.integers(-8, 8, (32, 32)).astype(dtype)
    want = c.copy()
    want[:16] += 3 * a[:16]
    want[16:] = a[16:]
    run(k_atomic, a, c, engine=engine)
    np.testing.assert_array_equal(c, want)


@pl.jit
def k_atomic_parallel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.parallel(8):  # eight tasks add into one tensor: the runtime orders them
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(a, [i * 16, 0], [16, 32]), [0, 0], c, atomic=pl.AtomicType.Add)
    return c


def test_atomic_adds_of_parallel_tasks_do_not_race(engine):
    a = rng.integers(-50, 50, (128, 32)).astype(np.float32)
    c = np.zeros((16, 32), np.float32)
    run(k_atomic_parallel, a, c, engine=engine)
    np.testing.assert_array_equal(c, a.reshape(8, 16, 32).sum(0))


# -- slice, assemble, set_validshape, concat, fillpad -----------------------------------------

@pl.jit
def k_shapes(a: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor], e: pl.Out[pl.Tensor], f: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[12, 32])
        s = pl.slice(input=t, shape=[8, 32], offset=[8, 0], pad_value=pl.PadValue.max)  # valid rows 8..11 only
        pl.store(pl.fillpad(value=s, pad_value=pl.PadValue.max), [0, 0], c)
        row = pl.slice(t, [1, 32], [2, 0], drop_dims=[0])
        pl.store(row, [0, 0], d)
        big = pl.tile.create([16, 32], dtype=pl.FP32, transpose=False, flat_layout=False)
        big = pl.tile.expands(big, 0.0)
        big = pl.assemble(big, source=pl.slice(t, [4, 32], [0, 0]), offset=[4, 0])
        pl.store(big, [0, 0], e)
        part = pl.set_validshape(pl.load(a, [0, 0], [16, 32]), 3, 32)
        pl.store(pl.concat(src0=pl.slice(pl.fillpad(part, pad_value=pl.PadValue.min), [16, 16], [0, 0]),
                           src1=pl.fillpad(pl.slice(t, [16, 16], [0, 16]))), [0, 0], f)
    return c


def test_slice_assemble_set_validshape_keywords(engine):
    a = rng.uniform(-1, 1, (16, 32)).astype(np.float32)
    c, d, e, f = np.zeros((8, 32), np.float32), np.zeros((1, 32), np.float32), np.zeros_like(a), np.zeros_like(a)
    run(k_shapes, a, c, d, e, f, engine=engine)
    np.testing.assert_array_equal(c[:4], a[8:12])
    assert (c[4:] == np.finfo(np.float32).max).all()  # validity never widens: rows 4.. are pad
    np.testing.assert_array_equal(d, a[2:3])
    want = np.zeros_like(a)
    want[4:8] = a[:4]
    np.testing.assert_array_equal(e, want)
    np.testing.assert_array_equal(f[:3, :16], a[:3, :16])
    assert (f[3:, :16] == -np.finfo(np.float32).max).all() or np.isneginf(f[3:, :16]).all()
    np.testing.assert_array_equal(f[:12, 16:], a[:12, 16:])  # the slice keeps t's 12 valid rows
    np.testing.assert_array_equal(f[12:, 16:], 0)


# -- matmul family ---------------------------------------------------------------------------

@pl.jit
def k_tensor_matmul(a: pl.Tensor, b: pl.Tensor, bt: pl.Tensor, at: pl.Tensor, c: pl.Out[pl.Tensor],
                    d: pl.Out[pl.Tensor], e: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, b, c_matrix_nz=False)
    with pl.at(level=pl.Level.CORE_GROUP):
        d[:] = pl.matmul(a, bt, b_trans=True)
    with pl.at(level=pl.Level.CORE_GROUP):
        e[:] = pl.matmul(at, bt, a_trans=True, b_trans=True)
    return c


def test_tensor_matmul_transposes_operands(engine):
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 48)).astype(np.float32)
    c, d, e = (np.zeros((32, 48), np.float32) for _ in range(3))
    run(k_tensor_matmul, a, b, np.ascontiguousarray(b.T), np.ascontiguousarray(a.T), c, d, e, engine=engine)
    for out in (c, d, e):
        np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


@pl.jit
def k_matmul_acc_init(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.tile.create([32, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Acc)
        for k in pl.range(0, 4):
            a = pl.move(pl.load(x, [0, k * 32], [32, 32], target_memory=Mat), target_memory=Left)
            b = pl.move(pl.load(w, [k * 32, 0], [32, 32], target_memory=Mat), target_memory=Right)
            acc = pl.matmul_acc(acc, a, b, init_cond=(k == 0))  # a run-time condition: a branch
        pl.store(acc, [0, 0], y)
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.move(pl.load(x, [0, 0], [32, 32], target_memory=Mat), target_memory=Left)
        b = pl.move(pl.load(w, [0, 0], [32, 32], target_memory=Mat), target_memory=Right)
        first = pl.matmul_acc(pl.tile.create([32, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Acc), a, b,
                              init_cond=True)  # a literal: the plain product
        again = pl.tile.matmul_acc(first, a, b, False)  # pl.tile order: init_cond 4th
        pl.store(again, [0, 0], z)
    return y


def test_matmul_acc_init_cond(engine):
    x = rng.standard_normal((32, 128)).astype(np.float32)
    w = rng.standard_normal((128, 32)).astype(np.float32)
    y, z = np.full((32, 32), 5, np.float32), np.zeros((32, 32), np.float32)
    run(k_matmul_acc_init, x, w, y, z, engine=engine)
    np.testing.assert_allclose(y, x @ w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(z, 2 * (x[:, :32] @ w[:32]), rtol=1e-4, atol=1e-4)


# -- create_tensor ---------------------------------------------------------------------------

@pl.jit.incore
def k_add_into(t: pl.Tensor, a: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = pl.store(pl.add(pl.load(t, [0, 0], [8, 32]), pl.load(a, [0, 0], [8, 32])), [0, 0], out)
    return out


@pl.jit
def k_init_value(a: pl.Tensor, ai: pl.Tensor, out: pl.Out[pl.Tensor], outi: pl.Out[pl.Tensor]):
    t = pl.create_tensor([8, 32], dtype=pl.FP32, init_value=1.5, layout="ND")
    ti = pl.create_tensor([8, 32], dtype=pl.INT32, init_value=-3, manual_dep=True)
    out = k_add_into(t, a, out)
    outi = k_add_into(ti, ai, outi)
    return out


def test_create_tensor_init_value_prefills(engine):
    a = rng.uniform(-1, 1, (8, 32)).astype(np.float32)
    ai = rng.integers(-9, 9, (8, 32)).astype(np.int32)
    out, outi = np.zeros_like(a), np.zeros_like(ai)
    run(k_init_value, a, ai, out, outi, engine=engine)
    np.testing.assert_allclose(out, a + 1.5, rtol=1e-6)
    np.testing.assert_array_equal(outi, ai - 3)


# -- hints kept in the IR ----------------------------------------------------------------------

def hints_program():
    """Built per use: a module-level program would outlive the bindings at interpreter exit."""
    @pl.program
    class Hints:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            t = pl.load(a, [0, 0], [16, 32], clamp=True)
            m = pl.move(t, target_memory=pl.MemorySpace.Vec, blayout="row_major", slayout="none_box")
            s = pl.tile.sel(pl.cmps(m, 0.0, cmp_type="GT"), m, pl.neg(m), tmp=pl.tile.create([16, 32], dtype=pl.FP32))
            p = pl.slice(pl.set_validshape(s, 8, 32), [16, 32], [0, 0], pad_value=pl.PadValue.min)
            b = pl.store(p, [0, 0], b, shapes=[16, 32], atomic=pl.AtomicType.Add)
            return b

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
            b = self.kernel(a, b)
            return b

    return Hints


def test_hints_print_and_parse_back():
    text = roundtrip(hints_program())
    assert "clamp=True" in text and "blayout='row_major'" in text and "slayout='none_box'" in text
    assert "tmp=" in text and "atomic='add'" in text and "shape=[16, 32]" in text
    # the slice keeps the source's 8 valid rows and takes the pad mode it names
    assert "pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec, pl.ValidShape([8, 32]), pl.PadValue.min]" in text, text


# -- errors ----------------------------------------------------------------------------------

def compile_error(fn, *args):
    with pytest.raises(ParseError) as e:
        fn(*args, config=RunConfig())
    return str(e.value)


def test_rejected_as_pypto_rejects():
    @pl.jit
    def tile_clamp(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.slice(pl.load(a, [0, 0], [16, 32]), [8, 32], [0, 0], clamp=True), [0, 0], c)
        return c

    @pl.jit
    def fp16_fill(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        t = pl.create_tensor([8, 32], dtype=pl.FP16, init_value=1.0)
        c = k_add_into(t, a, c)
        return c

    a = np.zeros((16, 32), np.float32)
    msg = compile_error(tile_clamp, a, np.zeros((8, 32), np.float32))
    assert "clamp=True applies to tensor slices only" in msg and "fix:" in msg and "test_op_keywords.py" in msg
    msg = compile_error(fp16_fill, np.zeros((8, 32), np.float16), np.zeros((8, 32), np.float16))
    assert "non-zero init_value cannot pre-fill a FP16" in msg and "fix:" in msg


def test_tile_matmul_flags_are_rejected_on_tiles():
    @pl.jit
    def k(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.move(pl.load(x, [0, 0], [32, 32], target_memory=Mat), target_memory=Left)
            b = pl.move(pl.load(x, [0, 0], [32, 32], target_memory=Mat), target_memory=Right)
            pl.store(pl.matmul_acc(pl.matmul(a, b), a, b, b_trans=True), [0, 0], y)
        return y

    msg = compile_error(k, np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32))
    assert "b_trans=True is not supported on tiles" in msg and "fix:" in msg


# -- gather / scatter / mgather ----------------------------------------------------------------

@pl.jit
def k_gather_dim(x: pl.Tensor, gi: pl.Tensor, si: pl.Tensor, src: pl.Tensor, g: pl.Out[pl.Tensor],
                 s: pl.Out[pl.Tensor], h: pl.Out[pl.Tensor], m: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g[:] = pl.tensor.gather(x, 1, gi)  # torch.gather(x, 1, gi)
    with pl.at(level=pl.Level.CORE_GROUP):
        s[:] = pl.tensor.scatter(input=x, dim=-1, index=si, src=src)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        idx = pl.load(gi, [0, 0], [16, 32])
        pl.store(pl.gather(input=t, index=idx, dim=-1), [0, 0], h)
        flat = pl.tile.mgather(mem=x, idx=idx, coalesce="row", target_memory=pl.MemorySpace.Vec, valid_shape=[8, 32])
        pl.store(flat, [0, 0], m)
    return g


def test_gather_scatter_along_dim_as_torch(engine):
    x = rng.standard_normal((16, 32)).astype(np.float32)
    gi = rng.integers(0, 32, (16, 32)).astype(np.int32)
    si = np.stack([rng.permutation(32) for _ in range(16)]).astype(np.int32)
    src = rng.standard_normal((16, 32)).astype(np.float32)
    g, s, h = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    m = np.full_like(x, 9)
    run(k_gather_dim, x, gi, si, src, g, s, h, m, engine=engine)
    want = torch.gather(torch.from_numpy(x), 1, torch.from_numpy(gi).long()).numpy()
    np.testing.assert_array_equal(g, want)
    np.testing.assert_array_equal(h, want)
    np.testing.assert_array_equal(
        s, torch.from_numpy(x).scatter(1, torch.from_numpy(si).long(), torch.from_numpy(src)).numpy())
    np.testing.assert_array_equal(m[:8], x.reshape(-1)[gi[:8]])  # valid_shape=[8, 32]: 8 rows gathered
    np.testing.assert_array_equal(m[8:], 9)


@pytest.mark.parametrize("call,keyword", [
    ("pl.tensor.gather(x, mask_pattern=pl.tile.MaskPattern.P0101)", "mask_pattern="),
    ("pl.tensor.gather(x, -1, gi, kvalue=4)", "kvalue="),
    ("pl.tensor.gather(x, -1, gi, output_dtype=pl.INT32)", "output_dtype="),
    ("pl.tensor.scatter(x, -1, gi, x, mask_pattern=pl.tile.MaskPattern.P1010)", "mask_pattern="),
    ("pl.tensor.scatter(x, -1, gi, x, dst=x)", "dst="),
    ("pl.tile.mrgsort(src0=pl.load(x, [0, 0], [16, 32]), block_len=32)", "src0="),
    ("pl.tile.mrgsort(pl.load(x, [0, 0], [16, 32]), block_len=32)", "block_len="),
])
def test_gather_scatter_forms_not_defined_fail_naming_the_keyword(tmp_path, call, keyword):
    src = tmp_path / "k.py"
    src.write_text(
        "import pypto.language as pl\n\n\n@pl.jit\n"
        "def k(x: pl.Tensor, gi: pl.Tensor, g: pl.Out[pl.Tensor]):\n"
        "    with pl.at(level=pl.Level.CORE_GROUP):\n"
        f"        g[:] = {call}\n"
        "    return g\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("k_gather_form", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = np.zeros((16, 32), np.float32)
    with pytest.raises(ParseError) as e:
        mod.k(x, np.zeros((16, 32), np.int32), np.zeros_like(x), config=RunConfig())
    msg = str(e.value)
    assert keyword in msg and "not supported" in msg and "fix:" in msg and "k.py:7" in msg


@pl.jit
def k_read(a: pl.Tensor, s: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        k = pl.tensor.dim(a, 0) - 1
        x = pl.read(src=s, offset=[1, 2])  # per-dimension
        y = pl.read(s, 7)  # one scalar: a flat row-major index (s[1, 3])
        z = pl.read(s, k * 4 + 1)  # a run-time flat index (s[k, 1])
        t = pl.load(a, [0, 0], [8, 32])
        pl.store(pl.adds(pl.adds(pl.muls(t, x), y), z), [0, 0], c)
    return c


def test_read_takes_a_flat_index_or_one_per_dimension(engine):
    a = rng.uniform(-1, 1, (8, 32)).astype(np.float32)
    s = np.arange(32, dtype=np.float32).reshape(8, 4) * 0.5
    c = np.zeros_like(a)
    run(k_read, a, s, c, engine=engine)
    np.testing.assert_allclose(c, a * s[1, 2] + s[1, 3] + s[7, 1], rtol=1e-6)


# -- the PyTorch spelling (pypto.debug.torch_codegen) of the new keywords ------------------------

@pytest.mark.parametrize("kernel,make", [
    (k_clamp, lambda: [rng.uniform(-1, 1, (20, 32)).astype(np.float32), np.zeros((20, 32), np.float32),
                       np.full((8, 32), 7, np.float32)]),
    (k_atomic, lambda: [rng.integers(-8, 8, (32, 32)).astype(np.float32), rng.integers(-8, 8, (32, 32)).astype(np.float32)]),
    (k_generators, lambda: [np.zeros((8, 32), np.int32), np.zeros((8, 32), np.int32), np.zeros((8, 32), np.int32),
                            np.zeros((8, 32), np.float32)]),
    (k_matmul_acc_init, lambda: [rng.standard_normal((32, 128)).astype(np.float32),
                                 rng.standard_normal((128, 32)).astype(np.float32), np.full((32, 32), 5, np.float32),
                                 np.zeros((32, 32), np.float32)]),
    (k_read, lambda: [rng.uniform(-1, 1, (8, 32)).astype(np.float32), np.arange(32, dtype=np.float32).reshape(8, 4),
                      np.zeros((8, 32), np.float32)]),
])
def test_torch_script_matches_our_run(kernel, make):
    args = make()
    ours = [a.copy() for a in args]
    kernel(*ours, config=RunConfig())
    namespace = {}
    exec(compile(dbg.torch_codegen(kernel, *[torch.from_numpy(a) for a in args]), "<torch script>", "exec"), namespace)
    theirs = [torch.from_numpy(a.copy()) for a in args]
    namespace["ENTRY"](*theirs)
    for got, want in zip(theirs, ours):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


@pl.jit
def k_atomic_manual(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.manual_scope():  # no edges between these tasks: the adds themselves are atomic
        for i in pl.range(16):
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.store(pl.load(a, [i * 16, 0], [16, 64]), [0, 0], c, atomic=pl.AtomicType.Add)
    return c


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=lambda d: np.dtype(d).name)
def test_atomic_adds_of_unordered_tasks_are_atomic(engine, dtype):
    a = rng.integers(-50, 50, (256, 64)).astype(dtype)
    for _ in range(3):
        c = np.zeros((16, 64), dtype)
        run(k_atomic_manual, a, c, engine=engine)
        np.testing.assert_array_equal(c, a.reshape(16, 16, 64).sum(0))


# -- create_tensor(manual_dep=True): no automatic edges through that tensor ----------------------
def _manual_dep_program(with_deps):
    @pl.jit
    def md(x: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        t = pl.create_tensor([32, 32], dtype=pl.FP32, manual_dep=True)
        with pl.at(level=pl.Level.CORE_GROUP) as a:
            t = pl.store(pl.adds(pl.load(x, [0, 0], [32, 32]), 1.0), [0, 0], t)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[a] if with_deps else None):
            out = pl.store(pl.muls(pl.load(t, [0, 0], [32, 32]), 2.0), [0, 0], out)
        return out
    return md


@pytest.mark.parametrize("engine", ["native", "sim"])
def test_manual_dep_tensor_orders_only_by_deps(engine, tmp_path):
    import json
    x = np.random.default_rng(5).uniform(-1, 1, (32, 32)).astype(np.float32)
    for with_deps in (True, False):
        out = np.zeros_like(x)
        d = tmp_path / str(with_deps)
        _manual_dep_program(with_deps)(x, out, config=RunConfig(engine=engine, enable_dep_gen=True, output_dir=str(d)))
        edges = json.load(open(d / "dfx_outputs" / "deps.json"))["edges"]
        if with_deps:  # the explicit edge orders the reader after the writer
            assert edges == [[0, 1]]
            np.testing.assert_allclose(out, (x + 1) * 2, rtol=1e-6)
        else:  # the tensor adds no RAW edge of its own (PyPTO: consumers need deps=)
            assert edges == []
